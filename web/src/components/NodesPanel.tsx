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
import type { StatusIndicatorProps } from "@cloudscape-design/components/status-indicator";
import Table from "@cloudscape-design/components/table";
import { api } from "../api/client";
import type { ClusterEvent, HealthCheckStart, NodeDetail, NodeHealthResult, NodeRow, NodesReplace, Operation } from "../api/types";
import { useLiveEvents } from "../lib/events";
import { useFlash } from "../lib/flash";
import { plural, text } from "../lib/format";
import { canMutate, useMe } from "../lib/me";
import { Time } from "../lib/time";
import { useMutation } from "../lib/mutation";
import { useAsync } from "../lib/useAsync";
import { ConfirmModal } from "./ConfirmModal";
import { PlanPanel } from "./PlanPanel";
import { ProgressPanel } from "./ProgressPanel";
import { CopyId } from "./CopyId";
import { ResourceTable, type Column } from "./ResourceTable";
import { Status } from "./Status";

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
  return <Status type={type}>{words}</Status>;
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
    afterAccepted: onClose,
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
    { fields: ["reason", "node_ids"], afterAccepted: onClose },
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
          { id: "verdict", header: "Result", cell: (r) => <Status type={r.passed ? "success" : "error"}>{r.passed ? "Passed" : "Failed"}</Status> },
          ...checks.map((check) => ({
            id: check,
            header: check,
            cell: (r: NodeHealthResult) => {
              const c = r.checks.find((x) => x.check === check);
              if (!c) return "-";
              return <Status type={c.passed ? "success" : "error"}>{c.passed ? "Passed" : `Failed: ${text(c.reason)}`}</Status>;
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
  const flash = useFlash();
  const body = { group, checks, ...(ids.length ? { node_ids: ids } : {}) } as HealthCheckStart;
  const start = useMutation((_: null, key: string) => api.startHealthCheck(cluster, region, body, key), {
    fields: ["group", "node_ids", "checks"],
    onAccepted: (o) => { flash.track(o); setOp(o); },
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
      disabledReason={mixed ? "Select one group's nodes." : !checks.length ? "Choose at least one check." : undefined}
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
              { label: "Node id", value: <CopyId value={n.node_id} label="node id" /> },
              { label: "Last action", value: n.last_action ? <span>{n.last_action.action} <Time value={n.last_action.at} /></span> : "None" },
            ]}
          />
          <Table
            header={<Header variant="h3">Conditions</Header>}
            items={n.conditions ?? []}
            variant="embedded"
            wrapLines
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
          <EventsTable items={n.events ?? []} title="Recent events" />
        </SpaceBetween>
      )}
    </Modal>
  );
}

export function EventsTable({ items, title = "Events", loading }: { items: ClusterEvent[]; title?: string; loading?: boolean }) {
  return (
    <ResourceTable<ClusterEvent>
      id="cluster-events"
      title={title}
      variant={title === "Events" ? "container" : "embedded"}
      items={items}
      loading={loading}
      trackBy="event_id"
      defaultSort={{ column: "time", descending: true }}
      empty={<Box textAlign="center">No events</Box>}
      columns={[
        { id: "time", header: "Time", cell: (e) => <Time value={e.time} />, sortValue: (e) => e.time },
        { id: "level", header: "Level", cell: (e) => (e.level ? <Status value={e.level} type={e.level === "Error" ? "error" : e.level === "Warning" ? "warning" : "info"}>{e.level}</Status> : text(e.level)), sortValue: (e) => e.level },
        { id: "node", header: "Node", minWidth: 220, cell: (e) => (e.node_id ? <CopyId value={e.node_id} label="node id" /> : text(e.node_id)), sortValue: (e) => e.node_id },
        { id: "description", header: "Description", minWidth: 260, cell: (e) => e.description, filterText: (e) => e.description },
      ]}
    />
  );
}

/** The cluster's Events tab: HyperPod cluster events, newest first, refreshed when an event names the cluster. */
export function ClusterEvents({ cluster, region }: { cluster: string; region: string }) {
  const ev = useAsync(() => api.clusterEvents(cluster, region, { limit: 100 }), [cluster, region]);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useLiveEvents((e) => {
    if (e.data?.cluster !== cluster && e.data?.target?.cluster !== cluster) return;
    clearTimeout(timer.current);
    timer.current = setTimeout(ev.reload, 1000);
  });
  useEffect(() => () => clearTimeout(timer.current), []);
  return ev.error ? <Alert type="error" header="Could not read the events">{ev.error.message}</Alert> : <EventsTable items={ev.data?.items ?? []} loading={ev.loading} />;
}

const HEALTH_TYPE = (h: string | null | undefined) => (h ? (HEALTH[h] ?? ["info", h]) : undefined);

/** Nodes: every instance with its HyperPod status, health label and readiness; filters; reboot, replace, health check. */
export function NodesPanel({ cluster, region, groups }: { cluster: string; region: string; groups: string[] }) {
  const [group, setGroup] = useState("");
  const [health, setHealth] = useState("");
  const list = useAsync(() => allNodes(cluster, region, group, health), [cluster, region, group, health]);
  const [selected, setSelected] = useState<NodeRow[]>([]);
  const [modal, setModal] = useState<null | "reboot" | "replace" | "health" | { node: string }>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useLiveEvents((e) => {
    if (e.data?.cluster !== cluster && e.data?.target?.cluster !== cluster) return;
    clearTimeout(timer.current); // a burst of events (a 60-node reboot) is one reload
    timer.current = setTimeout(list.reload, 1000);
  });
  useEffect(() => () => clearTimeout(timer.current), []);
  const rows = useMemo(() => list.data ?? [], [list.data]);
  useEffect(() => setSelected((s) => s.filter((x) => rows.some((r) => r.node_id === x.node_id))), [rows]);
  const ids = selected.map((r) => r.node_id);
  const { me } = useMe();
  const viewer = me && !canMutate(me) ? `Only operators and admins act on nodes (you are ${me.role}).` : undefined;
  const none = "Select one or more nodes first.";
  const opt = (v: string, label?: string) => ({ value: v, label: label ?? (v || "All") });
  const columns: Column<NodeRow>[] = [
    {
      id: "id", header: "Node", isRowHeader: true, minWidth: 250, sortValue: (r) => r.node_id,
      filterText: (r) => `${r.node_id} ${r.kubernetes_node ?? ""}`,
      cell: (r) => (
        <CopyId value={r.node_id} label="node id">
          <Button variant="inline-link" ariaLabel={`Details of ${r.node_id}`} onClick={() => setModal({ node: r.node_id })}>{r.node_id}</Button>
        </CopyId>
      ),
    },
    { id: "group", header: "Group", sortValue: (r) => r.group, cell: (r) => r.group },
    { id: "type", header: "Type", sortValue: (r) => r.instance_type, cell: (r) => r.instance_type },
    { id: "status", header: "Status", minWidth: 130, sortValue: (r) => r.status, cell: (r) => <Status value={r.status} /> },
    {
      id: "health", header: "Health", minWidth: 170, sortValue: (r) => r.health, filterText: (r) => HEALTH_TYPE(r.health)?.[1],
      cell: (r) => {
        const h = HEALTH_TYPE(r.health);
        return <span data-testid={`health-${r.node_id}`}>{h ? <Status type={h[0]}>{h[1]}</Status> : text(r.health)}</span>;
      },
    },
    { id: "ready", header: "Ready", sortValue: (r) => (r.ready === true ? 0 : r.ready === false ? 1 : 2), cell: (r) => (r.ready === true ? <Status type="success">Ready</Status> : r.ready === false ? <Status type="error">Not ready</Status> : "unknown") },
    { id: "gpus", header: "GPUs", sortValue: (r) => r.gpus_allocatable, cell: (r) => text(r.gpus_allocatable, "unknown") },
    { id: "zone", header: "Zone", sortValue: (r) => r.zone, cell: (r) => text(r.zone), hidden: true },
    { id: "launched", header: "Launched", sortValue: (r) => r.launch_time, cell: (r) => <Time value={r.launch_time} />, hidden: true },
    {
      id: "last", header: "Last action", minWidth: 170, sortValue: (r) => r.last_action?.at, filterText: (r) => r.last_action?.action,
      cell: (r) => (r.last_action ? <span>{r.last_action.action} <Time value={r.last_action.at} /></span> : "None"),
    },
  ];
  return (
    <SpaceBetween size="s">
      {list.error && <Alert type="error" header="Could not load the nodes">{list.error.message}</Alert>}
      <ResourceTable<NodeRow>
        id="cluster-nodes"
        title="Nodes"
        testId="nodes-table"
        description="HyperPod instances as Kubernetes nodes. Ladder: investigate, then reboot, then replace."
        items={rows}
        loading={list.loading}
        loadingText="Loading nodes"
        trackBy="node_id"
        pageSize={50}
        selectionType="multi"
        selectedItems={selected}
        onSelectionChange={setSelected}
        defaultSort={{ column: "id" }}
        filterPlaceholder="Find nodes by id, group, status or health"
        actions={
          <SpaceBetween direction="horizontal" size="xs">
            <Button onClick={list.reload} iconName="refresh" ariaLabel="Refresh nodes" />
            <Button disabled={!ids.length || !!viewer} disabledReason={viewer ?? (ids.length ? undefined : none)} onClick={() => setModal("reboot")}>Reboot</Button>
            <Button disabled={!ids.length || !!viewer} disabledReason={viewer ?? (ids.length ? undefined : none)} onClick={() => setModal("replace")}>Replace</Button>
            <Button disabled={(!ids.length && !groups.length) || !!viewer} disabledReason={viewer} onClick={() => setModal("health")}>Health check</Button>
          </SpaceBetween>
        }
        filters={
          <>
            <FormField label="Group">
              <Select ariaLabel="Group filter" selectedOption={opt(group)} onChange={({ detail }) => setGroup(detail.selectedOption.value ?? "")} options={[opt(""), ...groups.map((g) => opt(g))]} />
            </FormField>
            <FormField label="Health">
              <Select ariaLabel="Health filter" selectedOption={opt(health, health ? HEALTH[health]?.[1] : "All")} onChange={({ detail }) => setHealth(detail.selectedOption.value ?? "")} options={[opt(""), ...Object.entries(HEALTH).map(([v, [, l]]) => opt(v, l))]} />
            </FormField>
          </>
        }
        empty={<Box textAlign="center">{group || health ? "No nodes match the group and health chosen." : "No nodes"}</Box>}
        columns={columns}
      />
      {modal === "reboot" && <RebootModal cluster={cluster} region={region} ids={ids} onClose={() => { setModal(null); list.reload(); }} />}
      {modal === "replace" && <ReplaceModal cluster={cluster} region={region} ids={ids} onClose={() => { setModal(null); list.reload(); }} />}
      {modal === "health" && <HealthCheckModal cluster={cluster} region={region} ids={ids} rows={rows} groups={groups} onClose={() => setModal(null)} />}
      {modal && typeof modal === "object" && <NodeDetailModal cluster={cluster} region={region} nodeId={modal.node} onClose={() => setModal(null)} />}
    </SpaceBetween>
  );
}
