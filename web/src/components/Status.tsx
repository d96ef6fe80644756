import StatusIndicator, { type StatusIndicatorProps } from "@cloudscape-design/components/status-indicator";
import { DASH } from "../lib/format";
import { statusText, statusType } from "../lib/status";

/**
 * The one status component: every status (operation, step, node, job, endpoint, feature, volume) is an icon and
 * words, never colour alone, never wrapped mid-word. `type`/`children` override the mapping for statuses whose
 * words are the UI's own (a node's health label, a check's result); a dash (no icon) when nothing is reported.
 */
export function Status({ value, type, children, fallback = DASH }: {
  value?: string | null;
  type?: StatusIndicatorProps.Type;
  children?: string;
  fallback?: string;
}) {
  if (!value && !children) return <span>{fallback}</span>;
  return (
    <StatusIndicator type={type ?? statusType(value)} wrapText={false}>
      {children ?? statusText(value)}
    </StatusIndicator>
  );
}
