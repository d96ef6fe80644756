import { useEffect, useState, type ReactNode } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Container from "@cloudscape-design/components/container";
import ExpandableSection from "@cloudscape-design/components/expandable-section";
import Header from "@cloudscape-design/components/header";
import KeyValuePairs from "@cloudscape-design/components/key-value-pairs";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Spinner from "@cloudscape-design/components/spinner";
import type { Plan } from "../api/types";
import { plural } from "../lib/format";
import { fieldPath, type Problem } from "../lib/problems";

export function usd(v: number | null | undefined, maxDigits = 2): string {
  if (v === null || v === undefined) return "no price";
  const sign = v < 0 ? "-" : "";
  return `${sign}$${Math.abs(v).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: maxDigits })}`;
}

/** Why the plan was refused, as the request would be: a 422's field errors (at most 5), else the problem's detail. */
export function refusal(status: number, detail: string, problem?: Problem): string {
  const errors = status === 422 ? problem?.errors ?? [] : [];
  const why = errors.length
    ? errors.slice(0, 5).map((x) => (fieldPath(x.loc ?? []) ? `${fieldPath(x.loc ?? [])}: ${x.msg}` : x.msg)).join("; ") + (errors.length > 5 ? ` (and ${errors.length - 5} more)` : "")
    : detail;
  return `The request would be refused (HTTP ${status}): ${why}`;
}

/** A plan's exposure line (functions.domain.planners.inference.exposure): upper case when it reaches the internet. */
export const isExposure = (w: string) => /^exposure:/i.test(w);

/**
 * The plan of a mutation (its `?dry_run=true` answer), shown on a form's review step before the final button:
 * the hourly cost delta, quota, warnings, and what will be created/changed. `load` runs whenever `deps` change.
 */
export function PlanPanel({ load, deps, summary }: {
  load: (signal: AbortSignal) => Promise<Plan>;
  deps: unknown[];
  /** What a form shows of the plan's own details (e.g. a software update's batches), above the warnings. */
  summary?: (plan: Plan) => ReactNode;
}) {
  const [plan, setPlan] = useState<Plan | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const ctl = new AbortController();
    setPlan(null);
    setError(null);
    load(ctl.signal)
      .then((p) => { if (!ctl.signal.aborted) setPlan(p); })
      .catch((e: Error & { status?: number; problem?: Problem }) => {
        if (ctl.signal.aborted || e.name === "AbortError") return;
        setError(e.status && e.status < 500 ? refusal(e.status, e.message, e.problem) : e.message);
      });
    return () => ctl.abort();
  }, deps);

  const header = <Header variant="h2" description="What this will change and cost, computed by the same checks as the real request. Nothing is changed yet.">Plan and cost</Header>;
  if (error) return <Container header={header}><Box data-testid="plan-error" color="text-status-error">{error}</Box></Container>;
  if (!plan) return <Container header={header}><Spinner /> Computing the plan…</Container>;
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
            { label: "Hourly cost", value: <span data-testid="plan-hourly">{usd(cost?.hourly)} / hour</span> },
            { label: "Monthly estimate (730 h)", value: usd(cost?.monthly_estimate) },
            { label: "Changes", value: <span data-testid="plan-changes">{plural(changes.length, "change")}</span> },
          ]}
        />
        {summary?.(plan)}
        {warnings.length > 0 && (
          <Alert type="warning" header={`This plan has ${plural(warnings.length, "warning")}`}>
            <ul data-testid="plan-warnings">{warnings.map((w) => <li key={w}>{w}</li>)}</ul>
          </Alert>
        )}
        <table className="ps-plan" aria-label="Cost lines">
          <thead><tr><th>Item</th><th>Count</th><th>Unit / hour</th><th>Hourly</th><th>Source</th></tr></thead>
          <tbody>
            {(cost?.lines ?? []).map((l) => (
              <tr key={l.item}>
                <td>{l.item}</td><td>{l.count}</td><td>{usd(l.unit_hourly, 4)}</td>
                <td>{l.paid ? "already paid" : usd(l.hourly)}</td><td>{l.source}</td>
              </tr>
            ))}
          </tbody>
        </table>
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
