// One time format everywhere: relative words ("3 minutes ago"), with the absolute local time and its zone on
// hover ("Jan 2, 2026, 10:32:05 GMT+1"). Relative words move on with a shared 30-second clock.
import { useSyncExternalStore } from "react";
import { DASH } from "./format";

const TICK_MS = 30_000;
let now = Date.now();
const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | undefined;

function subscribe(fn: () => void): () => void {
  listeners.add(fn);
  if (!timer) {
    timer = setInterval(() => {
      now = Date.now();
      for (const l of listeners) l();
    }, TICK_MS);
  }
  return () => {
    listeners.delete(fn);
    if (!listeners.size && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

/** The shared clock (re-renders every 30 s while something shows a relative time). */
export function useClock(): number {
  return useSyncExternalStore(subscribe, () => now, () => now);
}

function parse(iso: string | null | undefined): Date | undefined {
  if (!iso) return undefined;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

const ABSOLUTE = new Intl.DateTimeFormat("en-US", {
  year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit",
  hour12: false, timeZoneName: "short",
});

/** "Jan 2, 2026, 10:32:05 UTC" in the browser's zone, the zone named; "" when unknown. */
export function absoluteTime(iso: string | null | undefined): string {
  const d = parse(iso);
  return d ? ABSOLUTE.format(d) : "";
}

const RELATIVE = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
const STEPS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["second", 60], ["minute", 60], ["hour", 24], ["day", 7], ["week", 4.35], ["month", 12], ["year", Infinity],
];

/** "just now", "3 minutes ago", "in 2 hours", "yesterday"; "" when unknown. */
export function relativeTime(iso: string | null | undefined, at = Date.now()): string {
  const d = parse(iso);
  if (!d) return "";
  let v = (d.getTime() - at) / 1000;
  if (Math.abs(v) < 10) return "just now";
  for (const [unit, size] of STEPS) {
    if (Math.abs(v) < size) return RELATIVE.format(Math.round(v), unit);
    v /= size;
  }
  return RELATIVE.format(Math.round(v), "year");
}

/** A time as the UI shows it: relative words, the absolute time with its zone on hover (and in the DOM's
 * dateTime); `fallback` (a dash) when unknown. */
export function Time({ value, fallback = DASH, prefix }: { value: string | null | undefined; fallback?: string; prefix?: string }) {
  const at = useClock();
  const d = parse(value);
  if (!d) return <span>{fallback}</span>;
  return (
    <time className="ps-time" dateTime={d.toISOString()} title={absoluteTime(value)}>
      {prefix ? `${prefix} ` : ""}
      {relativeTime(value, Math.max(at, Date.now() - TICK_MS))}
    </time>
  );
}
