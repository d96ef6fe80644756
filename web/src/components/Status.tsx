import StatusIndicator from "@cloudscape-design/components/status-indicator";
import { statusText, statusType } from "../lib/status";

export function Status({ value }: { value: string | null | undefined }) {
  return <StatusIndicator type={statusType(value)}>{statusText(value)}</StatusIndicator>;
}
