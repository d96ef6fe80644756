// Every value the UI shows goes through these: what is known is shown, what is not is a dash or
// left out, and the words null, undefined, NaN or [object Object] never reach the screen.
import type { GroupCounts } from "../api/types";

export const DASH = "—";

/** A finite number, or undefined for null/undefined/NaN/strings. */
export function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/** Any scalar as text; missing, empty, NaN and objects become `fallback` (a dash). */
export function text(v: unknown, fallback = DASH): string {
  if (v === null || v === undefined) return fallback;
  if (typeof v === "string") return v.trim() === "" ? fallback : v;
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : fallback;
  if (typeof v === "boolean") return v ? "Yes" : "No";
  return fallback;
}

/** The target count of a group (the record's instance_count when the view has no target_count). */
export function targetOf(g: GroupCounts): number | undefined {
  return num(g.target_count) ?? num(g.instance_count);
}

/**
 * The compact count of a group for lists: "1/2" when current and target differ, "2" when they agree
 * or when only the target is known (never "null/2").
 */
export function countsShort(g: GroupCounts): string {
  const target = targetOf(g);
  const current = num(g.current_count);
  if (target === undefined) return current === undefined ? "" : String(current);
  if (current === undefined || current === target) return String(target);
  return `${current}/${target}`;
}

/** The long count of a group for a detail table: "1 of 2 running", "target 2 (not observed yet)". */
export function countsLong(g: GroupCounts): string {
  const target = targetOf(g);
  const current = num(g.current_count);
  if (target === undefined && current === undefined) return DASH;
  if (current === undefined) return `target ${target} (current count not observed yet)`;
  if (target === undefined) return `${current} running`;
  return `${current} of ${target} running`;
}

/** "accel: 1/2 × ml.p5.48xlarge" (or "accel: ml.p5.48xlarge" when no count is known). */
export function groupLine(g: GroupCounts & { name: string; instance_type?: string | null }): string {
  const counts = countsShort(g);
  const type = text(g.instance_type, "");
  const what = counts && type ? `${counts} × ${type}` : counts || type;
  return what ? `${g.name}: ${what}` : g.name;
}

/** The latest counts_as_of among groups, or undefined. */
export function latestAsOf(groups: GroupCounts[] | null | undefined): string | undefined {
  let best: string | undefined;
  let bestT = -Infinity;
  for (const g of groups ?? []) {
    const t = g.counts_as_of ? Date.parse(g.counts_as_of) : NaN;
    if (!Number.isNaN(t) && t > bestT) {
      bestT = t;
      best = g.counts_as_of ?? undefined;
    }
  }
  return best;
}

/** JSON for display: keys whose value is null are dropped (not set), so no "null" is shown. */
export function jsonView(v: unknown): string {
  const strip = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.filter((i) => i !== null && i !== undefined).map(strip);
    if (x && typeof x === "object")
      return Object.fromEntries(Object.entries(x).filter(([, val]) => val !== null && val !== undefined).map(([k, val]) => [k, strip(val)]));
    return x;
  };
  const s = strip(v);
  if (s === null || s === undefined) return "{}";
  return JSON.stringify(s, null, 2);
}

/** "1 operation", "3 operations". */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** A sign-in token never reaches the screen, even inside an address shown on a page. */
export function hideToken(s: string): string {
  return s.replace(/token=[^&\s]*/gi, "token=…");
}
