import type { StatusIndicatorProps } from "@cloudscape-design/components/status-indicator";

/** Map any PodStart/AWS status word to a StatusIndicator type (icon + text, never colour alone). */
export function statusType(status: string | null | undefined): StatusIndicatorProps.Type {
  const s = (status ?? "").toUpperCase().replace(/[\s-]/g, "_");
  if (["SUCCEEDED", "ACTIVE", "INSERVICE", "IN_SERVICE", "AVAILABLE", "READY", "RUNNING_OK", "BOUND"].includes(s)) return "success";
  if (["FAILED", "ERROR", "DELETE_FAILED", "CREATE_FAILED", "UPDATE_FAILED", "ROLLINGBACK", "DEGRADED", "MISMATCH", "LOST", "MISCONFIGURED"].includes(s)) return "error";
  if (["RUNNING", "CREATING", "UPDATING", "DELETING", "DEPLOYING", "SYSTEMUPDATING", "SCALING", "IN_PROGRESS", "PENDING_DELETION", "IMPORTING", "TERMINATING"].includes(s))
    return "in-progress";
  if (["PENDING", "QUEUED"].includes(s)) return "pending";
  if (["CANCELLED", "SKIPPED", "STOPPED", "DELETED", "NO_WORKERS"].includes(s)) return "stopped";
  if (s === "") return "info";
  return "info";
}

export function statusText(status: string | null | undefined): string {
  if (!status) return "—";
  const map: Record<string, string> = {
    PENDING: "Pending", RUNNING: "Running", SUCCEEDED: "Succeeded", FAILED: "Failed", CANCELLED: "Cancelled", SKIPPED: "Skipped",
  };
  return map[status] ?? status;
}
