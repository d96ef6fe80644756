import StatusIndicator from "@cloudscape-design/components/status-indicator";
import { DASH } from "../lib/format";
import { statusText, statusType } from "../lib/status";

/** A status word with its icon; a dash (no icon) when nothing is reported. */
export function Status({ value, fallback = DASH }: { value: string | null | undefined; fallback?: string }) {
  if (!value) return <span>{fallback}</span>;
  return <StatusIndicator type={statusType(value)}>{statusText(value)}</StatusIndicator>;
}
