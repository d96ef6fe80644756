// application/problem+json (RFC 9457) -> per-field errors the forms can show.

export interface ProblemError {
  loc: (string | number)[];
  msg: string;
}

export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  instance?: string;
  errors?: ProblemError[];
}

/** The form path of an error location: ["body","instance_groups",0,"instance_type"] -> "instance_groups.0.instance_type". */
export function fieldPath(loc: (string | number)[]): string {
  const parts = [...loc];
  if (parts.length > 0 && ["body", "query", "path", "header"].includes(String(parts[0]))) parts.shift();
  return parts.map(String).join(".");
}

export interface FieldErrors {
  /** form path -> message(s), joined with "; " */
  fields: Record<string, string>;
  /** errors no field on the form claimed, plus the problem's detail when nothing was claimed */
  unclaimed: string[];
}

/**
 * Map a problem's errors onto the form's fields.
 * `known` is the list of form paths the current form renders; an error is claimed by the
 * longest known path that equals its path or is a prefix of it (so an error at
 * "instance_groups.0" lands on the group, one at "storage.fsx_lustre.storage_capacity_gib"
 * on the FSx field). `aliases` rename server paths to form paths (e.g. "instance_groups.0.*" -> "group.*").
 */
export function mapProblem(problem: Problem, known: string[], aliases: Record<string, string> = {}): FieldErrors {
  const fields: Record<string, string> = {};
  const unclaimed: string[] = [];
  for (const err of problem.errors ?? []) {
    let path = fieldPath(err.loc ?? []);
    for (const [from, to] of Object.entries(aliases)) {
      if (path === from || path.startsWith(from + ".")) {
        path = to + path.slice(from.length);
        break;
      }
    }
    const owner = known
      .filter((k) => path === k || path.startsWith(k + "."))
      .sort((a, b) => b.length - a.length)[0];
    if (owner !== undefined) {
      fields[owner] = fields[owner] ? `${fields[owner]}; ${err.msg}` : err.msg;
    } else {
      unclaimed.push(path ? `${path}: ${err.msg}` : err.msg);
    }
  }
  if (Object.keys(fields).length === 0 && unclaimed.length === 0) {
    unclaimed.push(problem.detail || problem.title || `Request failed${problem.status ? ` (${problem.status})` : ""}`);
  }
  return { fields, unclaimed };
}
