import { createContext, useCallback, useContext, useEffect, useId, useMemo, useState, type ReactNode } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Container from "@cloudscape-design/components/container";
import ExpandableSection from "@cloudscape-design/components/expandable-section";
import Header from "@cloudscape-design/components/header";
import KeyValuePairs from "@cloudscape-design/components/key-value-pairs";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Spinner from "@cloudscape-design/components/spinner";
import Table from "@cloudscape-design/components/table";
import type { Plan } from "../api/types";
import { plural } from "../lib/format";
import { fieldPath, mapProblem, type Problem } from "../lib/problems";

/** A price, or "unknown" (never $0.00 for a price nobody found). */
export function usd(v: number | null | undefined, maxDigits = 2): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "unknown";
  const sign = v < 0 ? "-" : "";
  return `${sign}$${Math.abs(v).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: maxDigits })}`;
}

type CostLike = { hourly?: number | null; lines?: { hourly?: number | null; paid?: boolean | null }[] | null };

/** "$7.08 / hour"; "unknown (at least $2.00 / hour)" when a line has no price; the known part is never shown as the whole. */
export function hourlyText(cost: CostLike | null | undefined): string {
  if (!cost) return "unknown";
  const missing = (cost.lines ?? []).some((l) => !l.paid && (l.hourly === null || l.hourly === undefined));
  if (missing) {
    const known = cost.hourly ?? 0;
    return known ? `unknown (at least ${usd(known)} / hour; some prices were not found)` : "unknown (no price found)";
  }
  return `${usd(cost.hourly)} / hour`;
}

/** Why the plan was refused, as the request would be: a 422's field errors (at most 5), else the problem's detail. */
export function refusal(status: number, detail: string, problem?: Problem): string {
  const errors = status === 422 ? problem?.errors ?? [] : [];
  const why = errors.length
    ? errors.slice(0, 5).map((x) => (fieldPath(x.loc ?? []) ? `${fieldPath(x.loc ?? [])}: ${x.msg}` : x.msg)).join("; ") + (errors.length > 5 ? ` (and ${errors.length - 5} more)` : "")
    : detail;
  return `The request would be refused (HTTP ${status}): ${why}`;
}

/** A plan's exposure line (functions.domain.inference.plan.exposure): upper case when it reaches the internet. */
export const isExposure = (w: string) => /^exposure:/i.test(w);

export type PlanState =
  | { state: "loading" }
  | { state: "ready"; plan: Plan }
  /** A 4xx: the real request would be refused the same way (its fields say why). */
  | { state: "refused"; status: number; message: string; problem?: Problem }
  /** A 5xx or a network error: nothing is known about the request itself. */
  | { state: "error"; message: string };

// ---------------------------------------------------------------------------------------------- the gate
// A form's primary button waits for its plans: disabled while one is computing or refused (the refusal's field
// errors show at the fields). Plans inside a `PlanGate` report to it.

type Report = (id: string, s: PlanState | undefined) => void;
const GateCtx = createContext<Report | null>(null);

export interface Gate {
  /** Wrap the form's content: plans inside report here. */
  Provider: (p: { children: ReactNode }) => ReactNode;
  /** A plan is computing. */
  planning: boolean;
  /** A plan was refused: the request would be. */
  refused: boolean;
  /** Why the primary button is disabled, or undefined. */
  reason: string | undefined;
  /** The refusals' field errors, on the form's field paths (see mapProblem). */
  fieldErrors: (fields: string[], aliases?: Record<string, string>) => Record<string, string>;
}

export function usePlanGate(): Gate {
  const [states, setStates] = useState<Record<string, PlanState>>({});
  const report = useCallback<Report>((id, s) => {
    setStates((prev) => {
      if (s === undefined) {
        if (!(id in prev)) return prev;
        const next = { ...prev };
        delete next[id];
        return next;
      }
      return prev[id] === s ? prev : { ...prev, [id]: s };
    });
  }, []);
  const Provider = useMemo(() => function PlanGateProvider({ children }: { children: ReactNode }) {
    return <GateCtx.Provider value={report}>{children}</GateCtx.Provider>;
  }, [report]);
  const list = Object.values(states);
  const planning = list.some((s) => s.state === "loading");
  const refusals = list.filter((s): s is Extract<PlanState, { state: "refused" }> => s.state === "refused");
  return {
    Provider,
    planning,
    refused: refusals.length > 0,
    reason: planning ? "Wait for the plan: it is being computed." : refusals.length ? "Fix what the plan says first: the request would be refused." : undefined,
    fieldErrors: (fields, aliases) => {
      const out: Record<string, string> = {};
      for (const r of refusals) if (r.problem) Object.assign(out, mapProblem(r.problem, fields, aliases).fields);
      return out;
    },
  };
}

/** Load a plan whenever `deps` change (the latest wins; an older answer is dropped), reporting to the gate. */
export function usePlan(load: ((signal: AbortSignal) => Promise<Plan>) | null, deps: unknown[]): PlanState {
  const [s, setS] = useState<PlanState>({ state: "loading" });
  const report = useContext(GateCtx);
  const id = useId();
  useEffect(() => {
    if (!load) return;
    const ctl = new AbortController();
    setS({ state: "loading" });
    // The answer reaches the gate in the same render as the panel (not an effect later): a form that leaves the
    // review at once (Back) still has the refusal's field errors.
    const settle = (next: PlanState) => {
      setS(next);
      report?.(id, next);
    };
    load(ctl.signal)
      .then((plan) => { if (!ctl.signal.aborted) settle({ state: "ready", plan }); })
      .catch((e: Error & { status?: number; problem?: Problem }) => {
        if (ctl.signal.aborted || e.name === "AbortError") return;
        if (e.status && e.status >= 400 && e.status < 500) settle({ state: "refused", status: e.status, message: refusal(e.status, e.message, e.problem), problem: e.problem });
        else settle({ state: "error", message: e.message });
      });
    return () => ctl.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  useEffect(() => {
    report?.(id, load ? s : undefined);
  }, [report, id, s, load]);
  useEffect(() => () => report?.(id, undefined), [report, id]);
  return s;
}

/**
 * The plan of a mutation (its `?dry_run=true` answer), shown on a form's review before the final button: the hourly
 * cost delta, quota, warnings, and what will be created/changed. `load` runs whenever `deps` change.
 */
export function PlanPanel({ load, deps, summary }: {
  load: (signal: AbortSignal) => Promise<Plan>;
  deps: unknown[];
  /** What a form shows of the plan's own details (e.g. a software update's batches), above the warnings. */
  summary?: (plan: Plan) => ReactNode;
}) {
  return <PlanView state={usePlan(load, deps)} summary={summary} />;
}

/** A plan as the review shows it (loading, refused, or its cost, changes and warnings). */
export function PlanView({ state: s, summary }: { state: PlanState; summary?: (plan: Plan) => ReactNode }) {
  const header = <Header variant="h2" description="What this will change and cost, computed by the same checks as the real request. Nothing is changed yet.">Plan and cost</Header>;
  if (s.state === "refused" || s.state === "error")
    return <Container header={header}><Box data-testid="plan-error" color="text-status-error">{s.message}</Box></Container>;
  if (s.state === "loading") return <Container header={header}><span data-testid="plan-loading"><Spinner /> Computing the plan…</span></Container>;
  const plan = s.plan;
  const cost = plan.cost;
  const changes = (plan.changes ?? []).filter((c) => c.action !== "none");
  // Who can reach what the plan deploys ("EXPOSURE: ..." on the internet, "exposure: ..." inside): said on its own,
  // first, so nobody confirms an internet-facing endpoint without reading it.
  const exposure = (plan.warnings ?? []).filter(isExposure);
  const warnings = (plan.warnings ?? []).filter((w) => !isExposure(w));
  return (
    <Container header={header}>
      <SpaceBetween size="m">
        {exposure.map((w) => (
          <Alert key={w} type={w.startsWith("EXPOSURE:") ? "warning" : "info"} header="Who can reach it">
            <span data-testid="plan-exposure">{w}</span>
          </Alert>
        ))}
        <KeyValuePairs
          columns={3}
          items={[
            { label: "Hourly cost", value: <span data-testid="plan-hourly">{hourlyText(cost)}</span> },
            { label: "Monthly estimate (730 h)", value: hourlyText(cost).startsWith("unknown") ? "unknown" : usd(cost?.monthly_estimate) },
            { label: "Changes", value: <span data-testid="plan-changes">{plural(changes.length, "change")}</span> },
          ]}
        />
        {summary?.(plan)}
        {warnings.length > 0 && (
          <Alert type="warning" header={`This plan has ${plural(warnings.length, "warning")}`}>
            <ul data-testid="plan-warnings">{warnings.map((w) => <li key={w}>{w}</li>)}</ul>
          </Alert>
        )}
        {(cost?.lines ?? []).length > 0 && (
          <Table
            variant="embedded"
            ariaLabels={{ tableLabel: "Cost lines" }}
            items={cost?.lines ?? []}
            trackBy="item"
            wrapLines
            columnDefinitions={[
              { id: "item", header: "Item", cell: (l) => l.item, isRowHeader: true },
              { id: "count", header: "Count", cell: (l) => String(l.count) },
              { id: "unit", header: "Unit / hour", cell: (l) => usd(l.unit_hourly, 4) },
              { id: "hourly", header: "Hourly", cell: (l) => (l.paid ? "already paid" : usd(l.hourly)) },
              { id: "source", header: "Source", cell: (l) => l.source },
            ]}
          />
        )}
        {(plan.quota ?? []).map((q) => (
          <Box key={q.instance_type} color={q.ok ? "text-body-secondary" : "text-status-error"}>
            Quota {q.instance_type}: {q.requested} requested, {q.in_use} in use of {q.limit} {q.ok ? "(fits)" : "(exceeds the quota)"}
          </Box>
        ))}
        <ExpandableSection headerText={`What will change (${changes.length})`}>
          <ul data-testid="plan-change-list">
            {changes.map((c, i) => <li key={i}>{c.action} {c.kind} <b>{c.name}</b>{c.step ? ` (step ${c.step})` : ""}</li>)}
          </ul>
        </ExpandableSection>
      </SpaceBetween>
    </Container>
  );
}
