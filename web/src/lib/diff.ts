// The diff contract: updates send only the fields the user changed.

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === "number" && typeof b === "number") return Number.isNaN(a) && Number.isNaN(b);
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => same(v, b[i]));
  const ka = Object.keys(a as object).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b as object).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/**
 * The fields of `edited` that differ from `original`, top level only (a changed nested object or
 * array is sent whole, as the server compares it whole). Fields left `undefined` in `edited` are
 * "not touched" and never sent. Returns an empty object when nothing changed.
 */
export function changedFields<T extends Record<string, unknown>>(original: Partial<T>, edited: Partial<T>): Partial<T> {
  const out: Partial<T> = {};
  for (const key of Object.keys(edited) as (keyof T)[]) {
    const value = edited[key];
    if (value === undefined) continue;
    if (!same(original[key], value)) out[key] = value;
  }
  return out;
}

export function isEmpty(o: object): boolean {
  return Object.keys(o).length === 0;
}
