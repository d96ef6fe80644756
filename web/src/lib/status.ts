import type { StatusIndicatorProps } from "@cloudscape-design/components/status-indicator";

/** Map any PodStart/AWS status word to a StatusIndicator type (icon + text, never colour alone). */
export function statusType(status: string | null | undefined): StatusIndicatorProps.Type {
  const s = (status ?? "").replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase().replace(/[\s-]/g, "_");
  if (["SUCCEEDED", "ACTIVE", "INSERVICE", "IN_SERVICE", "AVAILABLE", "READY", "RUNNING_OK", "BOUND", "ENABLED", "CREATED", "COMPLETE", "PASSED", "SCHEDULABLE"].includes(s)) return "success";
  if (["FAILED", "ERROR", "DELETE_FAILED", "CREATE_FAILED", "UPDATE_FAILED", "ROLLINGBACK", "ROLLING_BACK", "DEGRADED", "MISMATCH", "LOST", "MISCONFIGURED", "MISSING", "FAILURE", "HANGING"].includes(s)) return "error";
  if (["RUNNING", "CREATING", "UPDATING", "DELETING", "DEPLOYING", "SYSTEMUPDATING", "SYSTEM_UPDATING", "SCALING", "IN_PROGRESS", "PENDING_DELETION", "IMPORTING", "TERMINATING", "RESTARTING", "ENABLING", "DISABLING", "DEEP_HEALTH_CHECK_IN_PROGRESS", "SHUTTING_DOWN", "STARTING", "STOPPING"].includes(s))
    return "in-progress";
  if (["PENDING", "QUEUED", "SCHEDULED"].includes(s)) return "pending";
  if (["CANCELLED", "SKIPPED", "STOPPED", "DELETED", "NO_WORKERS", "DISABLED", "NOT_FOUND", "OFF"].includes(s)) return "stopped";
  if (["WARNING", "UNSCHEDULABLE", "DRIFT", "NOT_READY"].includes(s)) return "warning";
  return "info";
}

/** A status word as the UI shows it, the same way for every source: "CREATE_FAILED", "InService" and
 * "create-failed" become "Create failed", "In service"; a dash when nothing is reported. */
export function statusText(status: string | null | undefined): string {
  if (!status) return "—";
  const words = status
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/[_-]+/g, " ")
    .trim()
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
