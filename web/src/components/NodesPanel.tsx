import { useEffect, useMemo, useRef, useState } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Checkbox from "@cloudscape-design/components/checkbox";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import KeyValuePairs from "@cloudscape-design/components/key-value-pairs";
import Modal from "@cloudscape-design/components/modal";
import Select from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import StatusIndicator, { type StatusIndicatorProps } from "@cloudscape-design/components/status-indicator";
import Table from "@cloudscape-design/components/table";
import Tabs from "@cloudscape-design/components/tabs";
import { api } from "../api/client";
import type { ClusterEvent, HealthCheckStart, NodeDetail, NodeHealthResult, NodeRow, NodesReplace, Operation } from "../api/types";
import { useLiveEvents } from "../lib/events";
import { fmtTime, plural, text } from "../lib/format";
import { useMutation } from "../lib/mutation";
import { useAsync } from "../lib/useAsync";
import { ConfirmModal } from "./ConfirmModal";
import { PlanPanel } from "./PlanPanel";
import { ProgressPanel } from "./ProgressPanel";
import { LightStatus, Status } from "./Status";
import { statusText, statusType } from "../lib/status";
import { VirtualTable, type Column } from "./VirtualTable";

const HEALTH: Record<string, [StatusIndicatorProps.Type, string]> = {
  Schedulable: ["success", "Schedulable"],
  Unschedulable: ["warning", "Unschedulable"],
  UnschedulablePendingReboot: ["error", "Pending reboot"],
  UnschedulablePendingReplacement: ["error", "Pending replacement"],
};
const PLAN_REASON = "(reason still to be written)"; // a plan does not depend on the reason; the real request needs one
const RUNG: Record<string, string> = { investigate: "1 Investigate", reboot: "2 Reboot", replace: "3 Replace" };
const PAGE = 500;

/** The node's health label as a badge (icon and words, never colour alone). */
export function HealthBadge({ health }: { health: string | null | undefined }) {
  if (!health) return <span>{text(health)}</span>;
  const [type, words] = HEALTH[health] ?? ["info", health];
  return <StatusIndicator type={type}>{words}</StatusIndicator>;
}

/** Every page of the list (500 a page): two calls per page on the server, whatever the cluster size. */
async function allNodes(cluster: string, region: string, group: string, health: string): Promise<NodeRow[]> {
  const rows: NodeRow[] = [];
  let token: string | null | undefined;
  do {
    const page = await api.nodes(cluster, region, { group: group || undefined, health: health || undefined, limit: PAGE, next_token: token });
    rows.push(...page.items);
    token = page.next_token;
  } while (token);
  return rows;
}

function ReasonField({ value, onChange, error }: { value: string; onChange: (v: string) => void; error?: string }) {
  return (
    <FormField label="Reason" description="Recorded on the operation and shown as the node's last action" errorText={error}>
      <Input ariaLabel="Reason" value={value} onChange={({ detail }) => onChange(detail.value)} />
    </FormField>
  );
}

function RebootModal({ cluster, region, ids, onClose }: { cluster: string; region: string; ids: string[]; onClose: () => void }) {
  const [reason, setReason] = useState("");
  const reboot = useMutation((_: null, key: string) => api.rebootNodes(cluster, region, { node_ids: ids, reason }, key), {
    fields: ["reason", "node_ids"],
  });
  return (
    <ConfirmModal
      header={`Reboot ${plural(ids.length, "node")}?`}
      confirmLabel="Reboot"
      busy={reboot.busy}
      errors={[...reboot.errors, ...(reboot.fieldErrors.node_ids ? [reboot.fieldErrors.node_ids] : [])]}
      onConfirm={() => void reboot.run(null)}
      onCancel={onClose}
    >
      <Box>Pods on {ids.length === 1 ? "it" : "them"} stop while the instance restarts; PodStart watches each node back to Running and Ready. {ids.join(", ")}</Box>
      <ReasonField value={reason} onChange={(v) => { setReason(v); reboot.clearField("reason"); }} error={reboot.fieldErrors.reason} />
      <PlanPanel
        load={async (signal) => (await api.planNodes(cluster, region, "reboot", { node_ids: ids, reason: PLAN_REASON }, signal)).body}
        deps={[cluster, region, ids.join(",")]}
      />
    </ConfirmModal>
  );
}

function ReplaceModal({ cluster, region, ids, onClose }: { cluster: string; region: string; ids: string[]; onClose: () => void }) {
  const [reason, setReason] = useState("");
  const [force, setForce] = useState(false);
  const replace = useMutation(
    (_: null, key: string) => api.replaceNodes(cluster, region, { node_ids: ids, reason, confirm: "replace", force } as NodesReplace, key),
    { fields: ["reason", "node_ids"] },
  );
  return (
    <ConfirmModal
      header={`Replace ${plural(ids.length, "node")}?`}
      confirmLabel="Replace"
      typeToConfirm="replace"
      warning="Replacement terminates the instance and launches a new one with a new id: everything on its instance storage is wiped. Reboot first unless you know a reboot cannot help."
      busy={replace.busy}
      errors={[...replace.errors, ...(replace.fieldErrors.node_ids ? [replace.fieldErrors.node_ids] : [])]}
      onConfirm={() => void replace.run(null)}
      onCancel={onClose}
    >
      <Box>{ids.join(", ")}</Box>
      <ReasonField value={reason} onChange={(v) => { setReason(v); replace.clearField("reason"); }} error={replace.fieldErrors.reason} />
      <Checkbox checked={force} onChange={({ detail }) => setForce(detail.checked)} description="Skip the ladder's reboot-first rule; the reason is recorded">
        Force (not rebooted first)
      </Checkbox>
      <PlanPanel
        load={async (signal) =>
          (await api.planNodes(cluster, region, "replace", { node_ids: ids, reason: reason.trim() || PLAN_REASON, confirm: "replace", force } as NodesReplace, signal)).body}
        deps={[cluster, region, ids.join(","), force]}
      />
    </ConfirmModal>
  );
}

const CHECKS: { id: HealthCheckStart["checks"] extends (infer C)[] | undefined ? C : never; label: string; description: string }[] = [
  { id: "InstanceStress", label: "InstanceStress", description: "Accelerators, memory and CPU under load" },
  { id: "InstanceConnectivity", label: "InstanceConnectivity", description: "EFA and network links" },
];

/** Per-node results of a finished nodes.health_check: passed or failed per check, with the reason. */
function HealthResults({ op }: { op: Operation }) {
  const result = (op.result ?? {}) as { results?: NodeHealthResult[]; failed?: number; passed?: number };
  const rows = result.results ?? [];
  const checks = [...new Set(rows.flatMap((r) => r.checks.map((c) => c.check)))];
  return (
    <div data-testid="health-results">
      <Table<NodeHealthResult>
        header={<Header variant="h3" description={`${result.passed ?? 0} passed, ${result.failed ?? 0} failed`}>Results</Header>}
        items={rows}
        trackBy="node_id"
        ariaLabels={{ tableLabel: "Health check results" }}
        wrapLines
        empty={<Box textAlign="center">No results</Box>}
        columnDefinitions={[
          { id: "node", header: "Node", cell: (r) => r.node_id, isRowHeader: true },
          { id: "verdict", header: "Result", cell: (r) => <StatusIndicator type={r.passed ? "success" : "error"}>{r.passed ? "Passed" : "Failed"}</StatusIndicator> },
          ...checks.map((check) => ({
            id: check,
            header: check,
            cell: (r: NodeHealthResult) => {
              const c = r.checks.find((x) => x.check === check);
              if (!c) return "-";
              return <StatusIndicator type={c.passed ? "success" : "error"}>{c.passed ? "Passed" : `Failed: ${text(c.reason)}`}</StatusIndicator>;
            },
          })),
          { id: "health", header: "Health now", cell: (r) => <HealthBadge health={r.health} /> },
        ]}
      />
    </div>
  );
}

/** Deep health checks on the selected nodes (or a whole group): checks, plan, confirm, progress, results. */
function HealthCheckModal({ cluster, region, ids, rows, groups, onClose }: {
  cluster: string; region: string; ids: string[]; rows: NodeRow[]; groups: string[]; onClose: () => void;
}) {
  const selectedGroups = [...new Set(rows.filter((r) => ids.includes(r.node_id)).map((r) => r.group))];
  const [group, setGroup] = useState(selectedGroups[0] ?? groups[0] ?? "");
  const [checks, setChecks] = useState<string[]>(CHECKS.map((c) => c.id));
  const [op, setOp] = useState<Operation | null>(null);
  const body = { group, checks, ...(ids.length ? { node_ids: ids } : {}) } as HealthCheckStart;
  const start = useMutation((_: null, key: string) => api.startHealthCheck(cluster, region, body, key), {
    fields: ["group", "node_ids", "checks"],
    onAccepted: setOp,
  });
  if (op) {
    return (
      <Modal visible size="large" onDismiss={onClose} closeAriaLabel="Close health check" header="Deep health check"
        footer={<Box float="right"><Button onClick={onClose}>Close</Button></Box>}>
        <SpaceBetween size="l">
          <ProgressPanel operationId={op.id} initial={op} onChange={setOp} />
          {op.status === "SUCCEEDED" && <HealthResults op={op} />}
        </SpaceBetween>
      </Modal>
    );
  }
  const toggle = (id: string, on: boolean) => { setChecks((cs) => (on ? [...cs.filter((c) => c !== id), id] : cs.filter((c) => c !== id))); start.clearField("checks"); };
  const mixed = selectedGroups.length > 1;
  return (
    <ConfirmModal
      header={ids.length ? `Health check ${plural(ids.length, "node")}?` : `Health check group ${group}?`}
      confirmLabel="Start health check"
      busy={start.busy}
      errors={[...start.errors, ...(mixed ? ["The selected nodes are in more than one group: select one group's nodes."] : []),
        ...[start.fieldErrors.group, start.fieldErrors.node_ids].filter((e): e is string => !!e)]}
      onConfirm={() => { if (!mixed && checks.length) void start.run(null); }}
      onCancel={onClose}
    >
      <Box>HyperPod runs the deep health checks on {ids.length ? ids.join(", ") : `every node of ${group}`}; the nodes take no new pods meanwhile. A node that fails is marked for replacement.</Box>
      {!ids.length && (
        <FormField label="Group">
          <Select ariaLabel="Health check group" selectedOption={{ value: group, label: group }} onChange={({ detail }) => setGroup(detail.selectedOption.value ?? "")}
            options={groups.map((g) => ({ value: g, label: g }))} />
        </FormField>
      )}
      <FormField label="Checks" errorText={start.fieldErrors.checks ?? (checks.length ? undefined : "Choose at least one check")}>
        <SpaceBetween size="xxs">
          {CHECKS.map((c) => (
            <Checkbox key={c.id} checked={checks.includes(c.id)} description={c.description} onChange={({ detail }) => toggle(c.id, detail.checked)}>
              {c.label}
            </Checkbox>
          ))}
        </SpaceBetween>
      </FormField>
      {checks.length > 0 && !mixed && group && (
        <PlanPanel load={async (signal) => (await api.planHealthCheck(cluster, region, body, signal)).body} deps={[cluster, region, group, ids.join(","), checks.join(",")]} />
      )}
    </ConfirmModal>
  );
}

function NodeDetailModal({ cluster, region, nodeId, onClose }: { cluster: string; region: string; nodeId: string; onClose: () => void }) {
  const d = useAsync(() => api.node(cluster, region, nodeId), [cluster, region, nodeId]);
  const n: NodeDetail | undefined = d.data;
  return (
    <Modal visible size="large" onDismiss={onClose} closeAriaLabel="Close details" header={`Node ${nodeId}`}>
      {d.error && <Alert type="error">{d.error.message}</Alert>}
      {n && (
        <SpaceBetween size="l">
          <KeyValuePairs
            columns={3}
            items={[
              { label: "Health", value: <HealthBadge health={n.health} /> },
              { label: "Status", value: <Status value={n.status} /> },
              { label: "Ladder", value: <span data-testid="node-ladder">{`${RUNG[n.ladder.rung] ?? n.ladder.rung}: ${n.ladder.reason}`}</span> },
              { label: "Group", value: n.group },
              { label: "Type", value: n.instance_type },
              { label: "Zone", value: text(n.zone) },
              { label: "Kubernetes node", value: text(n.kubernetes_node) },
              { label: "Private IP", value: text(n.private_ip) },
              { label: "Last action", value: n.last_action ? `${n.last_action.action} ${fmtTime(n.last_action.at)}` : "None" },
            ]}
          />
          <Table
            header={<Header variant="h3">Conditions</Header>}
            items={n.conditions ?? []}
            ariaLabels={{ tableLabel: "Conditions" }}
            empty={<Box textAlign="center">None reported</Box>}
            columnDefinitions={[
              { id: "type", header: "Type", cell: (c) => c.type, isRowHeader: true },
              { id: "status", header: "Status", cell: (c) => c.status },
              { id: "reason", header: "Reason", cell: (c) => text(c.reason) },
              { id: "message", header: "Message", cell: (c) => text(c.message) },
            ]}
          />
          <Box>Taints: {(n.taints ?? []).length ? (n.taints ?? []).map((t) => `${String(t.key)}=${String(t.value ?? "")}:${String(t.effect)}`).join(", ") : "None"}</Box>
          <Box>Pods: {(n.pods ?? []).length ? (n.pods ?? []).map((p) => `${p.namespace}/${p.name} (${text(p.phase)})`).join(", ") : "None"}</Box>
          <EventsTable items={n.events ?? []} />
        </SpaceBetween>
      )}
    </Modal>
  );
}

function EventsTable({ items }: { items: ClusterEvent[] }) {
  return (
    <Table<ClusterEvent>
      header={<Header variant="h3">Events</Header>}
      items={items}
      trackBy="event_id"
      ariaLabels={{ tableLabel: "Cluster events" }}
      empty={<Box textAlign="center">No events</Box>}
      columnDefinitions={[
        { id: "time", header: "Time", cell: (e) => fmtTime(e.time) },
        { id: "level", header: "Level", cell: (e) => text(e.level) },
        { id: "node", header: "Node", cell: (e) => text(e.node_id) },
        { id: "description", header: "Description", cell: (e) => e.description },
      ]}
    />
  );
}

function ClusterEvents({ cluster, region }: { cluster: string; region: string }) {
  const ev = useAsync(() => api.clusterEvents(cluster, region, { limit: 50 }), [cluster, region]);
  return ev.error ? <Alert type="error">{ev.error.message}</Alert> : <EventsTable items={ev.data?.items ?? []} />;
}

/** Nodes: every instance with its HyperPod status, health label and readiness; filters; reboot and replace. */
function NodesTable({ cluster, region, groups }: { cluster: string; region: string; groups: string[] }) {
  const [group, setGroup] = useState("");
  const [health, setHealth] = useState("");
  const list = useAsync(() => allNodes(cluster, region, group, health), [cluster, region, group, health]);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [modal, setModal] = useState<null | "reboot" | "replace" | "health" | { node: string }>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useLiveEvents((e) => {
    if (e.data?.cluster !== cluster && e.data?.target?.cluster !== cluster) return;
    clearTimeout(timer.current); // a burst of events (a 60-node reboot) is one reload
    timer.current = setTimeout(list.reload, 1000);
  });
  const rows = useMemo(() => list.data ?? [], [list.data]);
  useEffect(() => setSelected((s) => new Set([...s].filter((id) => rows.some((r) => r.node_id === id)))), [rows]);
  const toggle = (id: string, on: boolean) => setSelected((s) => { const n = new Set(s); if (on) n.add(id); else n.delete(id); return n; });
  const ids = [...selected];
  const columns: Column<NodeRow>[] = [
    // plain HTML in the rows (2,000 of them scroll by): a native checkbox and button, a light status
    { id: "sel", header: "", width: 40, cell: (r) => <input type="checkbox" className="ps-check" aria-label={`Select ${r.node_id}`} checked={selected.has(r.node_id)} onChange={(e) => toggle(r.node_id, e.target.checked)} /> },
    { id: "id", header: "Node", cell: (r) => <button type="button" className="ps-link" aria-label={`Details of ${r.node_id}`} onClick={() => setModal({ node: r.node_id })}>{r.node_id}</button> },
    { id: "group", header: "Group", cell: (r) => r.group },
    { id: "type", header: "Type", cell: (r) => r.instance_type },
    { id: "status", header: "Status", cell: (r) => (r.status ? <LightStatus type={statusType(r.status)}>{statusText(r.status)}</LightStatus> : text(r.status)) },
    { id: "health", header: "Health", cell: (r) => <span data-testid={`health-${r.node_id}`}>{r.health ? <LightStatus type={(HEALTH[r.health] ?? ["info"])[0]}>{(HEALTH[r.health] ?? ["", r.health])[1]}</LightStatus> : text(r.health)}</span> },
    { id: "ready", header: "Ready", cell: (r) => (r.ready === true ? "Ready" : r.ready === false ? "NotReady" : text(r.ready)) },
    { id: "gpus", header: "GPUs", cell: (r) => text(r.gpus_allocatable) },
    { id: "last", header: "Last action", cell: (r) => (r.last_action ? `${r.last_action.action} ${fmtTime(r.last_action.at)}` : "None") },
  ];
  const opt = (v: string, label?: string) => ({ value: v, label: label ?? (v || "All") });
  return (
    <SpaceBetween size="s">
      <Header
        variant="h2"
        counter={list.data ? `(${rows.length})` : undefined}
        description="HyperPod instances as Kubernetes nodes. Ladder: investigate, then reboot, then replace."
        actions={
          <SpaceBetween direction="horizontal" size="xs">
            <Button onClick={list.reload} iconName="refresh" ariaLabel="Refresh nodes" />
            <Button disabled={!ids.length} onClick={() => setModal("reboot")}>Reboot</Button>
            <Button disabled={!ids.length} onClick={() => setModal("replace")}>Replace</Button>
            <Button disabled={!ids.length && !groups.length} onClick={() => setModal("health")}>Health check</Button>
          </SpaceBetween>
        }
      >
        Nodes
      </Header>
      <SpaceBetween direction="horizontal" size="s">
        <FormField label="Group">
          <Select ariaLabel="Group filter" selectedOption={opt(group)} onChange={({ detail }) => setGroup(detail.selectedOption.value ?? "")} options={[opt(""), ...groups.map((g) => opt(g))]} />
        </FormField>
        <FormField label="Health">
          <Select ariaLabel="Health filter" selectedOption={opt(health, health ? HEALTH[health]?.[1] : "All")} onChange={({ detail }) => setHealth(detail.selectedOption.value ?? "")} options={[opt(""), ...Object.entries(HEALTH).map(([v, [, l]]) => opt(v, l))]} />
        </FormField>
      </SpaceBetween>
      {list.error && <Alert type="error" header="Could not load the nodes">{list.error.message}</Alert>}
      <VirtualTable items={rows} columns={columns} rowKey={(r) => r.node_id} label="Nodes" height={420} empty={list.loading ? "Loading" : "No nodes"} />
      {modal === "reboot" && <RebootModal cluster={cluster} region={region} ids={ids} onClose={() => setModal(null)} />}
      {modal === "replace" && <ReplaceModal cluster={cluster} region={region} ids={ids} onClose={() => setModal(null)} />}
      {modal === "health" && <HealthCheckModal cluster={cluster} region={region} ids={ids} rows={rows} groups={groups} onClose={() => setModal(null)} />}
      {modal && typeof modal === "object" && <NodeDetailModal cluster={cluster} region={region} nodeId={modal.node} onClose={() => setModal(null)} />}
    </SpaceBetween>
  );
}

/** The cluster page's Nodes and Events tabs. */
export function NodesPanel({ cluster, region, groups }: { cluster: string; region: string; groups: string[] }) {
  return (
    <Tabs
      ariaLabel="Nodes and events"
      tabs={[
        { id: "nodes", label: "Nodes", content: <NodesTable cluster={cluster} region={region} groups={groups} /> },
        { id: "events", label: "Events", content: <ClusterEvents cluster={cluster} region={region} /> },
      ]}
    />
  );
}
