import { useCallback, useEffect, useRef, useState } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Container from "@cloudscape-design/components/container";
import Header from "@cloudscape-design/components/header";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Spinner from "@cloudscape-design/components/spinner";
import * as tokens from "@cloudscape-design/design-tokens";
import { ApiError, api } from "../api/client";
import type { Operation, Step } from "../api/types";
import { absoluteTime, relativeTime } from "../lib/time";
import { useLiveEvents } from "../lib/events";
import { useMutation } from "../lib/mutation";
import { applyEvent, displaySteps, elapsed, isTerminal, stepLabel } from "../lib/operation";
import { statusText, statusType } from "../lib/status";
import { ConfirmModal } from "./ConfirmModal";
import { Status } from "./Status";

const BORDER: Record<string, string> = {
  RUNNING: tokens.colorBorderStatusInfo,
  SUCCEEDED: tokens.colorBorderStatusSuccess,
  FAILED: tokens.colorBorderStatusError,
};

function useNow(active: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [active]);
  return now;
}

function StepRow({ step, now, index }: { step: Step; now: number; index: number }) {
  const time =
    step.status === "RUNNING"
      ? elapsed(step.started_at, null, now)
      : step.status === "SUCCEEDED" || step.status === "FAILED"
        ? elapsed(step.started_at, step.ended_at, now)
        : "";
  return (
    <li className="ps-step" data-step={step.name} data-status={step.status} aria-label={`Step ${index + 1}: ${stepLabel(step.name)}, ${statusText(step.status)}`}
      style={{ borderLeftColor: BORDER[step.status] ?? tokens.colorBorderDividerDefault }}>
      <div className="ps-step-head">
        <span className="ps-step-name"><Status type={statusType(step.status)}>{stepLabel(step.name)}</Status></span>
        <Box variant="small" color="text-body-secondary">
          {statusText(step.status)}
          {time && ` · ${step.status === "RUNNING" ? "running for " : "took "}${time}`}
          {step.attempts && step.attempts > 1 ? ` · attempt ${step.attempts}` : ""}
        </Box>
      </div>
      {step.message && step.status !== "FAILED" && (
        <Box variant="small" color="text-body-secondary">
          {step.message}
        </Box>
      )}
      {step.status === "FAILED" && step.error && (
        <div role="group" aria-label={`${stepLabel(step.name)} error`}>
          <Box color="text-status-error">
            <Box variant="code">{step.error.code}</Box> <span>{step.error.message}</span>
            {step.error.retryable && <Box variant="small" color="inherit">{" "}(transient: retrying is safe)</Box>}
          </Box>
        </div>
      )}
      {step.status === "FAILED" && !step.error && step.message && <Box color="text-status-error">{step.message}</Box>}
    </li>
  );
}

/** The steps of one operation, as data. Pure: the container below keeps it live. */
export function StepsView({
  op,
  now = Date.now(),
  onRetry,
  onCancel,
  busy,
}: {
  op: Operation;
  now?: number;
  onRetry?: () => void;
  onCancel?: () => void;
  busy?: boolean;
}) {
  const steps = displaySteps(op);
  const done = steps.filter((s) => s.status === "SUCCEEDED" || s.status === "SKIPPED").length;
  const failed = steps.find((s) => s.status === "FAILED");
  const canRetry = op.status === "FAILED" || op.status === "CANCELLED";
  const canCancel = !isTerminal(op);
  return (
    <Container
      header={
        <Header
          variant="h2"
          description={[op.kind, op.target?.cluster ? `${op.target.cluster}${op.target.region ? ` (${op.target.region})` : ""}` : "", `${done} of ${steps.length} steps done`].filter(Boolean).join(" · ")}
          actions={
            <SpaceBetween direction="horizontal" size="xs">
              {canCancel && onCancel && (
                <Button onClick={onCancel} disabled={busy}>
                  Cancel
                </Button>
              )}
              {canRetry && onRetry && (
                <Button variant="primary" onClick={onRetry} loading={busy}>
                  Retry
                </Button>
              )}
            </SpaceBetween>
          }
        >
          Progress
        </Header>
      }
    >
      <SpaceBetween size="m">
        <div role="status" aria-live="polite" data-testid="operation-status" data-status={op.status}>
          <Status type={statusType(op.status)}>
            {`Operation ${statusText(op.status).toLowerCase()}${op.status === "RUNNING" && op.phase ? `: ${stepLabel(op.phase)}` : ""}${
              elapsed(op.created_at, isTerminal(op) ? op.updated_at : null, now) ? ` · ${elapsed(op.created_at, isTerminal(op) ? op.updated_at : null, now)}` : ""}`}
          </Status>
        </div>
        {op.status === "FAILED" && (
          <Alert type="error" header={failed ? `${stepLabel(failed.name)} failed` : "The operation failed"}>
            {failed?.error?.message ?? (op.error as { message?: string } | null)?.message ?? "See the step below."}{" "}
            {onRetry && "Retry resumes at the failed step; steps that succeeded are skipped."}
          </Alert>
        )}
        {(op.attempts ?? []).length > 0 && (
          <Box variant="small" color="text-body-secondary" data-testid="operation-history">
            {(op.attempts ?? [])
              .map((a, i) => (
                <span key={i} title={absoluteTime(a.at)}>
                  {i > 0 ? " · " : ""}
                  {`${a.action === "start" ? "Started" : a.action === "retry" ? "Retried" : a.action === "cancel" ? "Cancelled" : a.action} by ${a.principal.name ?? a.principal.sub} (${a.principal.role}) ${relativeTime(a.at, now)}`}
                </span>
              ))}
          </Box>
        )}
        <ol className="ps-steps" aria-label="Steps">
          {steps.map((s, i) => (
            <StepRow key={s.name} step={s} now={now} index={i} />
          ))}
        </ol>
      </SpaceBetween>
    </Container>
  );
}

/**
 * A live operation: loads it, applies /ws events as they arrive, refreshes the record after each,
 * and long-polls (?wait=20&version=N) while the live feed is down.
 */
export function ProgressPanel({
  operationId,
  initial,
  onChange,
}: {
  operationId: string;
  initial?: Operation;
  onChange?: (op: Operation) => void;
}) {
  const [op, setOp] = useState<Operation | null>(initial ?? null);
  const [error, setError] = useState<string | null>(null);
  const [confirmCancel, setConfirmCancel] = useState(false);
  const opRef = useRef(op);
  opRef.current = op;
  const refreshTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  const accept = useCallback(
    (next: Operation) => {
      setOp((prev) => (prev && prev.id === next.id && prev.version > next.version ? prev : next));
      onChange?.(next);
    },
    [onChange],
  );

  const refresh = useCallback(async () => {
    try {
      accept(await api.operation(operationId));
      setError(null);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
    }
  }, [operationId, accept]);

  useEffect(() => {
    if (!initial || initial.id !== operationId) setOp(null);
    void refresh();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [operationId]);

  const live = useLiveEvents((ev) => {
    if (ev.detail_type === "Feed Ready") {
      void refresh();
      return;
    }
    if (ev.data?.operation_id !== operationId) return;
    setOp((prev) => (prev ? applyEvent(prev, ev) : prev));
    // The event is a hint; the record is the truth (timestamps, attempts, links). Coalesce refreshes.
    clearTimeout(refreshTimer.current);
    refreshTimer.current = setTimeout(() => void refresh(), 150);
  });
  useEffect(() => () => clearTimeout(refreshTimer.current), []);

  // Fallback: long poll while the live feed is not connected.
  useEffect(() => {
    if (live === "live") return;
    const ctrl = new AbortController();
    let stop = false;
    (async () => {
      while (!stop) {
        const cur = opRef.current;
        if (cur && isTerminal(cur)) break;
        try {
          const next = cur ? await api.operation(operationId, { seconds: 20, version: cur.version }, ctrl.signal) : await api.operation(operationId, undefined, ctrl.signal);
          if (!stop) accept(next);
        } catch (e) {
          if ((e as Error).name === "AbortError" || stop) break;
          await new Promise((r) => setTimeout(r, 3000));
        }
      }
    })();
    return () => {
      stop = true;
      ctrl.abort();
    };
  }, [live, operationId, accept, op?.status]);

  const running = !!op && !isTerminal(op);
  const now = useNow(running);

  // Retry and cancel answer the same operation (202): stay here and show it.
  const retry = useMutation((id: string, key: string) => api.retry(id, key), { onAccepted: accept });
  const cancel = useMutation((id: string, key: string) => api.cancel(id, key), {
    onAccepted: (next) => {
      setConfirmCancel(false);
      accept(next);
    },
  });
  const actionError = retry.errors.join("; ") || (confirmCancel ? "" : cancel.errors.join("; "));

  if (!op) {
    return error ? (
      <Alert type="error" header="Could not load the operation">
        {error}
      </Alert>
    ) : (
      <Spinner size="large" />
    );
  }
  return (
    <SpaceBetween size="s">
      {(error || actionError) && (
        <Alert type="error" dismissible onDismiss={() => { setError(null); retry.reset(); cancel.reset(); }}>
          {[error, actionError].filter(Boolean).join("; ")}
        </Alert>
      )}
      <StepsView
        op={op}
        now={now}
        busy={retry.busy || cancel.busy}
        onRetry={() => void retry.run(operationId)}
        onCancel={() => setConfirmCancel(true)}
      />
      {confirmCancel && (
        <ConfirmModal
          header={`Cancel ${op.kind} on ${op.target?.cluster ?? operationId}?`}
          confirmLabel="Cancel operation"
          busy={cancel.busy}
          errors={cancel.errors}
          onConfirm={() => void cancel.run(operationId)}
          onCancel={() => {
            setConfirmCancel(false);
            cancel.reset();
          }}
        >
          PodStart stops the workflow now and marks the running step failed. Steps that finished stay done, and AWS finishes any call already made. Retry resumes from the stopped step.
        </ConfirmModal>
      )}
    </SpaceBetween>
  );
}
