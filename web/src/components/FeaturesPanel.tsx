import { useRef, useState } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import FormField from "@cloudscape-design/components/form-field";
import Input from "@cloudscape-design/components/input";
import Multiselect from "@cloudscape-design/components/multiselect";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Toggle from "@cloudscape-design/components/toggle";
import { api } from "../api/client";
import type { FeatureView, FeaturesDocument } from "../api/types";
import { changedFields, isEmpty } from "../lib/diff";
import { text } from "../lib/format";
import { useMutation } from "../lib/mutation";
import { Time } from "../lib/time";
import { useAsync } from "../lib/useAsync";
import { PlanPanel, usePlanGate } from "./PlanPanel";
import { ResourceTable } from "./ResourceTable";
import { Status } from "./Status";

/** The user's edits of one feature; a field left undefined was not touched. */
export interface FeatureDraft {
  enabled?: boolean;
  memory_percent?: string;
  instance_groups?: string[];
}
export type Drafts = Record<string, FeatureDraft>;
type Row = FeatureView & { name: string };

const FIELDS = ["tiered_checkpointing.memory_percent", "autoscaling.instance_groups"];

function rows(doc: FeaturesDocument | undefined): Row[] {
  return doc ? Object.entries(doc).map(([name, v]) => ({ ...(v as FeatureView), name })) : [];
}

/** The PATCH body: per feature, only the fields whose edited value differs from the live one (the diff contract). */
export function featuresPatch(doc: FeaturesDocument, drafts: Drafts): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [name, d] of Object.entries(drafts)) {
    const live = (doc as unknown as Record<string, FeatureView>)[name];
    if (!live) continue;
    const memory = d.memory_percent === undefined || d.memory_percent.trim() === "" ? undefined : Number(d.memory_percent);
    const changed = changedFields<Record<string, unknown>>(
      { enabled: live.enabled, memory_percent: live.memory_percent ?? undefined, instance_groups: [...(live.instance_groups ?? [])].sort() },
      { enabled: d.enabled, memory_percent: memory, instance_groups: d.instance_groups ? [...d.instance_groups].sort() : undefined },
    );
    if (!isEmpty(changed)) out[name] = changed;
  }
  return out;
}

/** Every feature `name` needs, transitively (the document's depends_on). */
function needs(doc: Record<string, FeatureView>, name: string): string[] {
  const seen = new Set<string>();
  const stack = [...(doc[name]?.depends_on ?? [])];
  while (stack.length) {
    const d = stack.pop()!;
    if (!seen.has(d)) {
      seen.add(d);
      stack.push(...(doc[d]?.depends_on ?? []));
    }
  }
  return Object.keys(doc).filter((n) => seen.has(n)); // in the document's order
}

/**
 * Dependency notes for what the user is about to change: a feature being turned on names the prerequisites
 * the same operation installs; one being turned off names the enabled features that still need it.
 */
export function dependencyNotes(doc: FeaturesDocument, drafts: Drafts): Record<string, string> {
  const all = doc as unknown as Record<string, FeatureView>;
  const on = (n: string) => drafts[n]?.enabled ?? all[n]?.enabled ?? false;
  const title = (n: string) => all[n]?.title || n;
  const notes: Record<string, string> = {};
  for (const name of Object.keys(all)) {
    const live = all[name];
    if (on(name) && !live.enabled) {
      const missing = needs(all, name).filter((d) => !on(d));
      if (missing.length) notes[name] = `Needs ${missing.map(title).join(", ")}: will be installed first.`;
    } else if (!on(name) && live.enabled) {
      const users = Object.keys(all).filter((n) => n !== name && on(n) && needs(all, n).includes(name));
      if (users.length) notes[name] = `Needed by ${users.map(title).join(", ")}: turn ${users.length > 1 ? "those" : "that"} off too, or the change is refused.`;
    }
  }
  return notes;
}

function describe(patch: Record<string, Record<string, unknown>>, doc: FeaturesDocument): string {
  const all = doc as unknown as Record<string, FeatureView>;
  return Object.entries(patch)
    .map(([n, p]) => {
      const what = p.enabled === true ? "turn on" : p.enabled === false ? "turn off" : "change";
      const settings = Object.keys(p).filter((k) => k !== "enabled");
      return `${what} ${all[n]?.title || n}${settings.length ? ` (${settings.join(", ")})` : ""}`;
    })
    .join("; ");
}

function settingsCell(row: Row, draft: FeatureDraft, groups: string[], errors: Record<string, string>, set: (d: FeatureDraft) => void) {
  const on = draft.enabled ?? row.enabled;
  if (row.name === "tiered_checkpointing") {
    return (
      <FormField label="Instance memory (%)" errorText={errors["tiered_checkpointing.memory_percent"]} description="0-100; default 20">
        <Input
          ariaLabel="Instance memory for checkpoints (%)"
          type="number"
          inputMode="numeric"
          disabled={!on}
          value={draft.memory_percent ?? (row.memory_percent == null ? "" : String(row.memory_percent))}
          placeholder="20"
          onChange={({ detail }) => set({ memory_percent: detail.value })}
        />
      </FormField>
    );
  }
  if (row.name === "autoscaling") {
    const chosen = draft.instance_groups ?? row.instance_groups ?? [];
    return (
      <FormField
        label="Instance groups"
        errorText={errors["autoscaling.instance_groups"]}
        description="Karpenter scales these HyperPod instance groups only, never general EC2 capacity."
      >
        <Multiselect
          ariaLabel="Instance groups Karpenter manages"
          disabled={!on}
          placeholder="Choose HyperPod instance groups"
          selectedOptions={chosen.map((g) => ({ value: g, label: g }))}
          options={groups.map((g) => ({ value: g, label: g }))}
          onChange={({ detail }) => set({ instance_groups: detail.selectedOptions.map((o) => String(o.value)) })}
        />
        {(row.node_pools ?? []).map((p) => (
          <Box key={p.name} variant="small" display="block">
            {`${p.name}: ${p.instance_groups.join(", ")}, ${p.nodes} node${p.nodes === 1 ? "" : "s"} launched`}
          </Box>
        ))}
      </FormField>
    );
  }
  return null;
}

function chain(row: Row): string | undefined {
  const links = row.identity?.links;
  if (!links || (!row.enabled && row.status === "DISABLED")) return undefined;
  return links.map((l) => `${l.name} ${l.intact ? "ok" : "missing"}`).join(", ");
}

/**
 * Advanced features: one switch per managed feature with its live status (from AWS and Kubernetes), version,
 * what it needs and what needs it, its settings; Apply sends only what the user changed (once its plan is computed)
 * and a flash follows the operation (one step per feature) while the page stays.
 */
export function FeaturesPanel({ cluster, region, groups }: { cluster: string; region: string; groups: string[] }) {
  const fresh = useRef(false); // the next load reads every part live (the Refresh button)
  const doc = useAsync(() => {
    const refresh = fresh.current;
    fresh.current = false;
    return api.features(cluster, region, refresh);
  }, [cluster, region]);
  const [drafts, setDrafts] = useState<Drafts>({});
  const gate = usePlanGate();
  const update = useMutation(
    (patch: Record<string, Record<string, unknown>>, key: string) => api.patchFeatures(cluster, region, patch, key),
    { fields: FIELDS, unchangedMessage: "Nothing to change: every feature is already as requested.", afterAccepted: () => { setDrafts({}); doc.reload(); } },
  );
  const live = doc.data;
  const patch = live ? featuresPatch(live, drafts) : {};
  const notes = live ? dependencyNotes(live, drafts) : {};
  const set = (name: string, d: FeatureDraft) => {
    setDrafts((x) => ({ ...x, [name]: { ...x[name], ...d } }));
    update.clearField(...Object.keys(d).map((k) => `${name}.${k}`));
  };
  const items = rows(live);
  return (
    <SpaceBetween size="s">
      <ResourceTable<Row>
        id="cluster-features"
        title="Advanced features"
        wrapLines
        description={
          <>
            Managed features, from EKS add-ons, HyperPod and Kubernetes
            {live?.training_operator?.read_at ? (
              <span data-testid="features-read-at"> (read in full <Time value={live.training_operator.read_at} />)</span>
            ) : null}
            . Apply
            sends only what you changed.
          </>
        }
        actions={
          <SpaceBetween direction="horizontal" size="xs">
            <Button iconName="refresh" ariaLabel="Refresh: read every feature live now" loading={doc.loading && !!live}
              onClick={() => { fresh.current = true; doc.reload(); }}>
              Refresh
            </Button>
            <Button onClick={() => { setDrafts({}); update.reset(); doc.reload(); }} disabled={isEmpty(drafts)}>Reset</Button>
            <Button variant="primary" onClick={() => void update.run(patch)} loading={update.busy} disabled={isEmpty(patch) || !!gate.reason}
              disabledReason={isEmpty(patch) ? "Change a feature first." : gate.reason}>
              Apply changes
            </Button>
          </SpaceBetween>
        }
        loading={doc.loading && !live}
        items={items}
        trackBy="name"
        pageSize={20}
        empty={<Box textAlign="center">{doc.error ? doc.error.message : "None"}</Box>}
        columns={[
          {
            id: "feature",
            header: "Feature",
            isRowHeader: true,
            minWidth: 220,
            sortValue: (r) => r.title || r.name,
            filterText: (r) => `${r.title} ${r.name} ${r.summary ?? ""}`,
            cell: (r) => (
              <>
                <Box fontWeight="bold">{r.title || r.name}</Box>
                <Box variant="small" display="block">{r.summary}</Box>
              </>
            ),
          },
          {
            id: "on",
            header: "Enabled",
            sortValue: (r) => (r.enabled ? 0 : 1),
            cell: (r) => (
              <Toggle
                checked={drafts[r.name]?.enabled ?? r.enabled}
                onChange={({ detail }) => set(r.name, { enabled: detail.checked })}
                ariaLabel={`Enable ${r.title || r.name}`}
              >
                {(drafts[r.name]?.enabled ?? r.enabled) ? "On" : "Off"}
              </Toggle>
            ),
          },
          {
            id: "status",
            header: "Status",
            minWidth: 150,
            sortValue: (r) => r.status,
            cell: (r) => (
              <span data-testid={`feature-${r.name}`} data-status={r.status}>
                <Status value={r.status} />
                {r.reason && <Box variant="small" display="block">{r.reason}</Box>}
                {chain(r) && <Box variant="small" display="block">{`Identity chain: ${chain(r)}`}</Box>}
              </span>
            ),
          },
          { id: "version", header: "Version", cell: (r) => text(r.version), sortValue: (r) => r.version },
          {
            id: "deps",
            header: "Dependencies",
            minWidth: 180,
            cell: (r) => (
              <span data-testid={`deps-${r.name}`}>
                {notes[r.name] ? (
                  <Box color="text-status-warning">{notes[r.name]}</Box>
                ) : (
                  <>
                    {r.depends_on?.length ? <Box variant="small" display="block">{`Needs ${r.depends_on.map((d) => (live as unknown as Record<string, FeatureView>)[d]?.title || d).join(", ")}`}</Box> : null}
                    {r.required_by?.length ? <Box variant="small" display="block">{`Needed by ${r.required_by.map((d) => (live as unknown as Record<string, FeatureView>)[d]?.title || d).join(", ")}`}</Box> : null}
                    {!r.depends_on?.length && !r.required_by?.length ? text(undefined) : null}
                  </>
                )}
              </span>
            ),
          },
          { id: "settings", header: "Settings", minWidth: 220, cell: (r) => settingsCell(r, drafts[r.name] ?? {}, groups, update.fieldErrors, (d) => set(r.name, d)) },
        ]}
      />
      {!isEmpty(patch) && live && <Alert type="info" header="Pending changes">{`Apply will ${describe(patch, live)}.`}</Alert>}
      {!isEmpty(patch) && live && (
        <gate.Provider>
          <PlanPanel load={(signal) => api.planFeatures(cluster, region, patch, signal)} deps={[cluster, region, JSON.stringify(patch)]} />
        </gate.Provider>
      )}
      {update.notice && <Alert type="success">{update.notice}</Alert>}
      {update.errors.length > 0 && <Alert type="error" header="The features were not changed">{update.errors.join("; ")}</Alert>}
    </SpaceBetween>
  );
}
