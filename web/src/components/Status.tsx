import StatusIndicator from "@cloudscape-design/components/status-indicator";
import { DASH } from "../lib/format";
import { statusText, statusType } from "../lib/status";

/** A status word with its icon; a dash (no icon) when nothing is reported. */
export function Status({ value, fallback = DASH }: { value: string | null | undefined; fallback?: string }) {
  if (!value) return <span>{fallback}</span>;
  return <StatusIndicator type={statusType(value)}>{statusText(value)}</StatusIndicator>;
}

const MARK: Record<string, string> = {
  success: "✓", error: "✕", warning: "!", info: "i", "in-progress": "↻", pending: "…", stopped: "–", loading: "…",
};

/** The same icon-and-words status in plain HTML, for rows of long virtualized tables: mounting a row must cost
 * microseconds while scrolling (Cloudscape's StatusIndicator is the right choice everywhere else). */
export function LightStatus({ type, children }: { type: string; children: string }) {
  return (
    <span className={`ps-status ps-status-${type}`}>
      <span aria-hidden="true" className="ps-status-mark">{MARK[type] ?? "i"}</span>
      {children}
    </span>
  );
}
