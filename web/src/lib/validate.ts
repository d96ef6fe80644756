// Checks as the user types, from the API's own rules (src/api/rules.ts, generated from the OpenAPI document that
// the pydantic models produce), with pydantic's words: a field says what the API would say, before any request.
// What only the server knows (quota, zone offerings, a custom validator) comes from a dry run.
import { RULES } from "../api/rules";

export interface Rule {
  type?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  maxItems?: number;
  enum?: unknown[];
  const?: unknown;
  nullable?: boolean;
  ref?: string;
  items?: Rule;
}

export interface SchemaRules {
  required: string[];
  properties: Record<string, Rule>;
}

const quote = (v: unknown) => (typeof v === "string" ? `'${v}'` : String(v));

function enumText(values: unknown[]): string {
  const q = values.map(quote);
  return q.length > 1 ? `${q.slice(0, -1).join(", ")} or ${q[q.length - 1]}` : q.join("");
}

/** Why `value` breaks `rule` (pydantic's message), or undefined. Objects are checked field by field elsewhere. */
export function checkValue(rule: Rule, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (value === null) return rule.nullable ? undefined : "Input should not be null";
  if (rule.enum && !rule.enum.includes(value)) return `Input should be ${enumText(rule.enum)}`;
  if (rule.const !== undefined && value !== rule.const) return `Input should be ${quote(rule.const)}`;
  const type = rule.type;
  if (type === "integer" || type === "number") {
    if (typeof value !== "number" || !Number.isFinite(value))
      return type === "integer" ? "Input should be a valid integer, unable to parse string as an integer" : "Input should be a valid number, unable to parse string as a number";
    if (type === "integer" && !Number.isInteger(value)) return "Input should be a valid integer, got a number with a fractional part";
    if (rule.minimum !== undefined && value < rule.minimum) return `Input should be greater than or equal to ${rule.minimum}`;
    if (rule.exclusiveMinimum !== undefined && value <= rule.exclusiveMinimum) return `Input should be greater than ${rule.exclusiveMinimum}`;
    if (rule.maximum !== undefined && value > rule.maximum) return `Input should be less than or equal to ${rule.maximum}`;
    if (rule.exclusiveMaximum !== undefined && value >= rule.exclusiveMaximum) return `Input should be less than ${rule.exclusiveMaximum}`;
    return undefined;
  }
  if (type === "string") {
    if (typeof value !== "string") return "Input should be a valid string";
    if (rule.minLength !== undefined && value.length < rule.minLength)
      return `String should have at least ${rule.minLength} character${rule.minLength === 1 ? "" : "s"}`;
    if (rule.maxLength !== undefined && value.length > rule.maxLength)
      return `String should have at most ${rule.maxLength} character${rule.maxLength === 1 ? "" : "s"}`;
    if (rule.pattern !== undefined && !patternOf(rule.pattern).test(value)) return `String should match pattern '${rule.pattern}'`;
    return undefined;
  }
  if (type === "array" && Array.isArray(value)) {
    if (rule.minItems !== undefined && value.length < rule.minItems)
      return `List should have at least ${rule.minItems} item${rule.minItems === 1 ? "" : "s"} after validation, not ${value.length}`;
    if (rule.maxItems !== undefined && value.length > rule.maxItems)
      return `List should have at most ${rule.maxItems} item${rule.maxItems === 1 ? "" : "s"} after validation, not ${value.length}`;
  }
  if (type === "boolean" && typeof value !== "boolean") return "Input should be a valid boolean";
  return undefined;
}

const patterns = new Map<string, RegExp>();
function patternOf(p: string): RegExp {
  let re = patterns.get(p);
  if (!re) {
    // Python's re and JavaScript agree on the patterns the API uses (anchors, classes, quantifiers); `u` for \d etc.
    re = new RegExp(p, "u");
    patterns.set(p, re);
  }
  return re;
}

/**
 * Every rule `body` breaks in schema `name`, as `{"a.0.b": message}` (the paths the API's errors use, so
 * mapProblem places them on the same fields). Missing required fields count only when `required` is true (a form
 * still being filled in says "required" once the user moves on, not on the first keystroke).
 */
export function validate(name: string, body: unknown, opts: { required?: boolean } = {}, rules: Record<string, SchemaRules> = RULES): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (schema: string, value: unknown, path: string[]) => {
    const s = rules[schema];
    if (!s || !value || typeof value !== "object" || Array.isArray(value)) return;
    const obj = value as Record<string, unknown>;
    if (opts.required)
      for (const r of s.required) if (obj[r] === undefined || obj[r] === "") out[[...path, r].join(".")] = "Field required";
    for (const [prop, rule] of Object.entries(s.properties)) {
      const v = obj[prop];
      if (v === undefined) continue;
      const at = [...path, prop];
      if (rule.ref && v !== null) {
        walk(rule.ref, v, at);
        continue;
      }
      const msg = checkValue(rule, v);
      if (msg) {
        out[at.join(".")] = msg;
        continue;
      }
      if (rule.items && Array.isArray(v))
        v.forEach((item, i) => {
          if (rule.items!.ref) walk(rule.items!.ref, item, [...at, String(i)]);
          else {
            const m = checkValue(rule.items!, item);
            if (m) out[[...at, String(i)].join(".")] = m;
          }
        });
    }
  };
  walk(name, body, []);
  return out;
}

/** The limits of one field, for its constraint text: "1 to 2000", "at most 32 characters". */
export function ruleOf(schema: string, path: string, rules: Record<string, SchemaRules> = RULES): Rule | undefined {
  let s: string | undefined = schema;
  let rule: Rule | undefined;
  for (const part of path.split(".")) {
    if (/^\d+$/.test(part)) {
      rule = rule?.items;
      s = rule?.ref;
      continue;
    }
    rule = s ? rules[s]?.properties[part] : undefined;
    s = rule?.ref;
  }
  return rule;
}
