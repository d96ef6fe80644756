// A cluster's page: its aspects in tabs (the tab in the URL): Details (with what it costs per hour now), Instance
// groups, Nodes, Storage, Jobs, Endpoints, Namespaces, Add-ons, Events, Operations. Actions start here and stay
// here: a flash follows each operation, and the page updates live.
import { useEffect, useRef, useState } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Checkbox from "@cloudscape-design/components/checkbox";
import Container from "@cloudscape-design/components/container";
import ExpandableSection from "@cloudscape-design/components/expandable-section";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import KeyValuePairs from "@cloudscape-design/components/key-value-pairs";
import Link from "@cloudscape-design/components/link";
import Modal from "@cloudscape-design/components/modal";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Spinner from "@cloudscape-design/components/spinner";
import Table from "@cloudscape-design/components/table";
import Tabs from "@cloudscape-design/components/tabs";
import { api } from "../api/client";
import type { AdviceOption, ClusterDetail, ClusterInstanceGroup, InstanceGroupSpec, InstanceType, Plan, SoftwareUpdate, StorageItem } from "../api/types";
import { CapacityAdvisor } from "../components/CapacityAdvisor";
import { ConfirmModal } from "../components/ConfirmModal";
import { CopyId } from "../components/CopyId";
import { PlanPanel, hourlyText, usd, usePlanGate } from "../components/PlanPanel";
import {
  CapacityFields,
  GROUP_FIELDS,
  GroupNameField,
  InstanceTypePicker,
  ZonePicker,
  emptyGroup,
  toSpec,
  type GroupDraft,
} from "../components/InstanceGroupFields";
import { ResourceTable } from "../components/ResourceTable";
import { Status } from "../components/Status";
import { ClusterEvents, NodesPanel } from "../components/NodesPanel";
import { JobsPanel } from "../components/JobsPanel";
import { FeaturesPanel } from "../components/FeaturesPanel";
import { StoragePanel } from "../components/StoragePanel";
import { NamespacesPanel } from "../components/NamespacesPanel";
import { ProgressPanel } from "../components/ProgressPanel";
import { changedFields, isEmpty } from "../lib/diff";
import { useLiveEvents } from "../lib/events";
import { DASH, countsLong, targetOf, text } from "../lib/format";
import { adminOnly, canMutate, useMe } from "../lib/me";
import { useMutation } from "../lib/mutation";
import { href, navigate, type ClusterTab } from "../lib/router";
import { Time } from "../lib/time";
import { useAsync } from "../lib/useAsync";
import { useDebounced } from "../lib/useDebounced";
import { validate } from "../lib/validate";
import { EndpointsPanel } from "./Endpoints";
import { OperationsTable } from "./Operations";

const STORAGE_KIND: Record<string, string> = { "s3-mountpoint": "S3 (Mountpoint)", "fsx-lustre": "FSx for Lustre" };

/** The storage item's own state: FSx lifecycle, else its status (the PVC phase for S3). */
export function storageState(s: StorageItem): string | undefined {
  return s.lifecycle || s.status || s.pvc?.phase || undefined;
}

/** "Bound (podstart-data in default)", "Pending (...)", "No claim". */
export function pvcText(s: StorageItem): string {
  const pvc = s.pvc;
  if (!pvc) return s.pvc === null ? "No claim" : DASH;
  const where = pvc.namespace ? `${pvc.name} in ${pvc.namespace}` : pvc.name;
  return pvc.phase ? `${pvc.phase} (${where})` : `${where} (phase not reported)`;
}

/** The count typed in the scale form, when it is a whole number (anything else is left to the server's field error). */
function wantedCount(s: string): number | undefined {
  return /^\s*\d+\s*$/.test(s) ? Number(s) : undefined;
}

/** Scale one group: the diff contract — only a changed instance_count is sent. The plan of the typed count
 * (cost delta, quota, a scale-in warning) shows before Save, once the count has stopped changing. */
export function ScaleModal({
  cluster,
  region,
  group,
  onClose,
}: {
  cluster: string;
  region: string;
  group: ClusterInstanceGroup;
  onClose: () => void;
}) {
  const target = targetOf(group);
  const [count, setCount] = useState(target === undefined ? "" : String(target));
  const [info, setInfo] = useState<string | undefined>();
  const scale = useMutation(
    (changed: Record<string, unknown>, key: string) => api.patchInstanceGroup(cluster, region, group.name, changed, key),
    { fields: ["instance_count"], unchangedMessage: `Nothing to change: ${group.name} already has that many instances.`, afterAccepted: onClose },
  );
  const gate = usePlanGate();
  const debounced = useDebounced(count);
  const planned = wantedCount(debounced);
  const local = validate("InstanceGroupPatch", { instance_count: wantedCount(count) ?? (count.trim() === "" ? undefined : count) }).instance_count
    ?? (count.trim() !== "" && wantedCount(count) === undefined ? "Input should be a valid integer, unable to parse string as an integer" : undefined);
  const error = scale.fieldErrors.instance_count ?? local ?? gate.fieldErrors(["instance_count"]).instance_count ?? (scale.errors.length ? scale.errors.join("; ") : undefined);
  const why = local ? "Fix the instance count first." : count !== debounced ? "Wait for the plan: it is being computed." : gate.reason;
  const save = () => {
    const edited = { instance_count: count.trim() === "" ? undefined : Number(count) };
    const changed = changedFields({ instance_count: target }, edited);
    if (isEmpty(changed)) {
      setInfo(`Nothing to change: ${group.name} already targets ${text(target)}.`);
      return;
    }
    void scale.run(changed);
  };
  return (
    <Modal
      visible
      onDismiss={onClose}
      header={`Change the size of ${group.name}`}
      footer={
        <Box float="right">
          <SpaceBetween direction="horizontal" size="xs">
            <Button variant="link" onClick={onClose}>
              Cancel
            </Button>
            <Button variant="primary" onClick={save} loading={scale.busy} disabled={!!why} disabledReason={why}>
              Save
            </Button>
          </SpaceBetween>
        </Box>
      }
    >
      <form onSubmit={(e) => { e.preventDefault(); if (!why) save(); }}>
        <SpaceBetween size="m">
          <FormField label="Instance count" description={`Now ${countsLong(group)}. Type, zone and capacity are fixed.`} errorText={error}>
            <Input type="number" inputMode="numeric" value={count} onChange={({ detail }) => { setCount(detail.value); setInfo(undefined); scale.clearField("instance_count"); }} autoFocus />
          </FormField>
          {(info ?? scale.notice) && <Alert type="info">{info ?? scale.notice}</Alert>}
          {planned !== undefined && planned !== target && !local && (
            <gate.Provider>
              <PlanPanel
                load={(signal) => api.planScaleInstanceGroup(cluster, region, group.name, { instance_count: planned }, signal)}
                deps={[cluster, region, group.name, planned]}
              />
            </gate.Provider>
          )}
        </SpaceBetween>
      </form>
    </Modal>
  );
}

/** Add a group: the form, then a review with its plan (same checks as the add, nothing changed) before the final
 * button. A refused add goes back to the form, where the fields show why. */
/** The group draft of a capacity advisor option (its one add_instance_groups request). */
export function draftOf(o: AdviceOption): GroupDraft | undefined {
  const body = (o.add_instance_groups ?? [])[0]?.body as unknown as InstanceGroupSpec | undefined;
  if (!body) return undefined;
  return {
    ...emptyGroup(body.name),
    availability_zone: body.availability_zone,
    instance_type: body.instance_type,
    capacity_type: body.capacity_type ?? "on-demand",
    training_plan_arn: body.training_plan_arn ?? "",
    instance_count: String(body.instance_count),
  };
}

export function AddGroupModal({ cluster, region, onClose, initial }: {
  cluster: string; region: string; onClose: () => void;
  /** A capacity advisor option's group: the modal opens on its review (plan and cost). */
  initial?: GroupDraft;
}) {
  const [draft, setDraft] = useState<GroupDraft>(initial ?? emptyGroup(""));
  const [type, setType] = useState<InstanceType | undefined>();
  const [review, setReview] = useState(!!initial);
  const add = useMutation((body: InstanceGroupSpec, key: string) => api.addInstanceGroup(cluster, region, body, key), {
    fields: GROUP_FIELDS,
    afterAccepted: onClose,
  });
  const gate = usePlanGate();
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const patch = (p: Partial<GroupDraft>) => {
    setDraft((d) => ({ ...d, ...p }));
    setTouched((t) => new Set([...t, ...Object.keys(p)]));
    add.clearField(...Object.keys(p));
  };
  const spec = toSpec(draft);
  const specKey = JSON.stringify(spec);
  // checked as the user types (the schema's limits), then the plan (quota, zone, name taken) on the review
  const local: Record<string, string> = { ...validate("InstanceGroupSpec", spec) };
  if (!draft.name.trim()) local.name = "Name the group.";
  if (!draft.availability_zone) local.availability_zone = "Choose an availability zone.";
  if (!draft.instance_type) local.instance_type = "Choose an instance type.";
  if (draft.capacity_type === "training-plan" && !draft.training_plan_arn) local.training_plan_arn = "Choose a training plan.";
  const errors: Record<string, string | undefined> = Object.fromEntries(GROUP_FIELDS.map((f) => [f,
    add.fieldErrors[f] ?? (touched.has(f) || review ? local[f] : undefined) ?? gate.fieldErrors(GROUP_FIELDS)[f]]));
  const invalid = Object.keys(local).length > 0;
  const submit = async () => {
    const out = await add.run(spec);
    if (out?.kind === "failed") setReview(false);
  };
  return (
    <Modal
      visible
      size="max"
      onDismiss={onClose}
      header={`Add an instance group to ${cluster}`}
      footer={
        <Box float="right">
          {review ? (
            <SpaceBetween direction="horizontal" size="xs">
              <Button variant="link" onClick={() => setReview(false)}>
                Back
              </Button>
              <Button variant="primary" onClick={() => void submit()} loading={add.busy} disabled={!!gate.reason} disabledReason={gate.reason}>
                Add instance group
              </Button>
            </SpaceBetween>
          ) : (
            <SpaceBetween direction="horizontal" size="xs">
              <Button variant="link" onClick={onClose}>
                Cancel
              </Button>
              <Button variant="primary" onClick={() => setReview(true)} disabled={invalid}
                disabledReason={invalid ? `Fix first: ${Object.keys(local).map((f) => f.replace(/_/g, " ")).join(", ")}.` : undefined}>
                Review
              </Button>
            </SpaceBetween>
          )}
        </Box>
      }
    >
      {review ? (
        <SpaceBetween size="l">
          <Box data-testid="add-group-summary">
            {`${spec.name || "(no name)"}: ${text(spec.instance_count)} × ${spec.instance_type} in ${spec.availability_zone || "(no zone)"}, `
              + `${spec.capacity_type}${spec.efa_only ? ", EFA-only" : ""}, ${text(spec.volume_size_gb)} GiB per instance`}
          </Box>
          <gate.Provider>
            <PlanPanel load={async (signal) => (await api.planAddInstanceGroup(cluster, region, spec, signal)).body} deps={[cluster, region, specKey]} />
          </gate.Provider>
        </SpaceBetween>
      ) : (
        <SpaceBetween size="l">
          {add.errors.length > 0 && (
            <Alert type="error" header="The instance group was not added">
              {add.errors.join("; ")}
            </Alert>
          )}
          <GroupNameField value={draft.name} onChange={(v) => patch({ name: v })} error={errors.name} />
          <ZonePicker region={region} value={draft.availability_zone} error={errors.availability_zone} onChange={(z) => { patch({ availability_zone: z, instance_type: "", training_plan_arn: "" }); setType(undefined); }} />
          <InstanceTypePicker region={region} zone={draft.availability_zone} value={draft.instance_type} error={errors.instance_type} capacityType={draft.capacity_type}
            onChange={(t) => { setType(t ?? undefined); patch({ instance_type: t?.name ?? "", efa_only: false, training_plan_arn: "" }); }} />
          {draft.instance_type && <CapacityFields region={region} draft={draft} instanceType={type} errors={errors} onChange={patch} />}
        </SpaceBetween>
      )}
    </Modal>
  );
}

function DeleteModal({ cluster, region, onClose }: { cluster: string; region: string; onClose: () => void }) {
  const del = useMutation((_: null, key: string) => api.deleteCluster(cluster, region, key), { afterAccepted: onClose });
  return (
    <ConfirmModal
      header={`Delete ${cluster}?`}
      confirmLabel="Delete"
      typeToConfirm={cluster}
      warning="This deletes the HyperPod cluster, its instances, the EKS cluster and the network PodStart created for it. Data in the shared S3 bucket stays."
      busy={del.busy}
      errors={del.errors}
      onConfirm={() => void del.run(null)}
      onCancel={onClose}
    />
  );
}

/** Delete one instance group: type its name, set how long a PodDisruptionBudget may hold the drain, read the plan
 * (drain, update, capacity removed), confirm; the operation page then follows drain, update and watch to the end. */
export function DeleteGroupModal({ cluster, region, group, onClose }: { cluster: string; region: string; group: string; onClose: () => void }) {
  const [drainS, setDrainS] = useState("600");
  const debounced = useDebounced(drainS, 400);
  const del = useMutation((t: string, key: string) => api.deleteInstanceGroup(cluster, region, group, key, t), { fields: ["drain_timeout_s"], afterAccepted: onClose });
  const [planErrors, setPlanErrors] = useState<Record<string, string>>({});
  return (
    <ConfirmModal
      header={`Delete instance group ${group}?`}
      confirmLabel="Delete group"
      typeToConfirm={group}
      warning="Its nodes are drained (pods evicted, PodDisruptionBudgets respected), then its instances are terminated: instance storage is lost."
      busy={del.busy}
      errors={del.errors}
      onConfirm={() => void del.run(drainS)}
      onCancel={onClose}
      disabledReason={drainS !== debounced ? "Wait for the plan: it is being computed." : undefined}
      planFields={["drain_timeout_s"]}
      onPlanFieldErrors={setPlanErrors}
    >
      <FormField label="Drain timeout (seconds)" errorText={del.fieldErrors.drain_timeout_s ?? planErrors.drain_timeout_s}
        description="How long a pod a PodDisruptionBudget keeps may hold the drain; past it the operation fails naming the pod and nothing is deleted (0 to 3000)">
        <Input type="number" inputMode="numeric" value={drainS} ariaLabel="Drain timeout (seconds)"
          onChange={({ detail }) => { setDrainS(detail.value); del.clearField("drain_timeout_s"); }} />
      </FormField>
      <PlanPanel load={(signal) => api.planDeleteInstanceGroup(cluster, region, group, signal, debounced)} deps={[cluster, region, group, debounced]} />
    </ConfirmModal>
  );
}

/** Each group's batches as the plan computed them (instances, batches, from/to image). */
function SoftwareBatches({ plan }: { plan: Plan }) {
  const groups = (plan.changes ?? []).filter((c) => c.kind === "AWS::SageMaker::ClusterInstanceGroup");
  return (
    <ul data-testid="plan-batches">
      {groups.map((c) => {
        const d = (c.details ?? {}) as Record<string, unknown>;
        return (
          <li key={c.name}>
            <b>{c.name}</b>: {String(d.instances)} instance(s) in {String(d.batches)} batch(es) of at most {String(d.batch_size)}; {String(d.from_image)} → {String(d.to_image)}
          </li>
        );
      })}
    </ul>
  );
}

/** Update the HyperPod platform software: pick groups and the batch percent, read the plan (batches, the nodes
 * restarting batch by batch), confirm; the operation page then follows update and watch batch by batch. */
export function SoftwareUpdateModal({ cluster, region, groups, onClose }: { cluster: string; region: string; groups: string[]; onClose: () => void }) {
  const [picked, setPicked] = useState<string[]>(groups);
  const [percent, setPercent] = useState("20");
  const n = Number(percent);
  const body: SoftwareUpdate = {
    ...(picked.length === groups.length ? {} : { groups: picked }),
    rolling: { batch_percent: Number.isInteger(n) ? n : 0 },
  };
  const update = useMutation((_: null, key: string) => api.updateClusterSoftware(cluster, region, body, key), {
    fields: ["groups", "rolling.batch_percent"],
    afterAccepted: onClose,
  });
  const percentOk = Number.isInteger(n) && n >= 1 && n <= 100;
  const toggle = (g: string, on: boolean) => {
    setPicked((p) => groups.filter((x) => (x === g ? on : p.includes(x))));
    update.clearField("groups");
  };
  return (
    <ConfirmModal
      header={`Update the software of ${cluster}?`}
      confirmLabel="Update software"
      warning="HyperPod restarts the nodes of the groups batch by batch onto the new platform software: pods running on a batch's nodes are disrupted."
      busy={update.busy}
      errors={update.errors}
      onConfirm={() => { if (picked.length && percentOk) void update.run(null); }}
      onCancel={onClose}
      disabledReason={!picked.length ? "No group is chosen yet." : !percentOk ? "The batch size needs fixing first." : undefined}
    >
      <FormField label="Instance groups" errorText={update.fieldErrors.groups ?? (picked.length ? undefined : "Choose at least one group")}>
        <SpaceBetween size="xxs">
          {groups.map((g) => (
            <Checkbox key={g} checked={picked.includes(g)} onChange={({ detail }) => toggle(g, detail.checked)}>{g}</Checkbox>
          ))}
        </SpaceBetween>
      </FormField>
      <FormField label="Batch size (% of each group)" description="At most this percent of a group's instances restart at once (1-100)"
        errorText={update.fieldErrors["rolling.batch_percent"] ?? (percentOk ? undefined : "A whole number from 1 to 100")}>
        <Input ariaLabel="Batch percent" type="number" inputMode="numeric" value={percent}
          onChange={({ detail }) => { setPercent(detail.value); update.clearField("rolling.batch_percent"); }} />
      </FormField>
      {picked.length > 0 && percentOk && (
        <PlanPanel load={(signal) => api.planClusterSoftwareUpdate(cluster, region, body, signal)}
          deps={[cluster, region, picked.join(","), percent]} summary={(plan) => <SoftwareBatches plan={plan} />} />
      )}
    </ConfirmModal>
  );
}

/** Storage: what it is, its own state (FSx lifecycle / S3 PVC phase) and the PVC's binding. */
export function StorageTable({ items }: { items: StorageItem[] }) {
  return (
    <ResourceTable<StorageItem>
      id="cluster-storage"
      title="Storage"
      items={items}
      trackBy="name"
      empty={<Box textAlign="center">None</Box>}
      columns={[
        { id: "name", header: "Name", cell: (d) => d.name, isRowHeader: true, sortValue: (d) => d.name },
        { id: "kind", header: "Kind", cell: (d) => STORAGE_KIND[d.kind] ?? text(d.kind), sortValue: (d) => d.kind },
        { id: "resource", header: "Resource", cell: (d) => text(d.file_system_id ?? d.bucket), sortValue: (d) => d.file_system_id ?? d.bucket },
        { id: "status", header: "Status", cell: (d) => <Status value={storageState(d)} />, sortValue: (d) => storageState(d) },
        { id: "pvc", header: "Volume claim", cell: (d) => <span data-testid={`pvc-${d.name}`}>{pvcText(d)}</span>, filterText: pvcText },
      ]}
    />
  );
}
/** What the cluster costs per hour now: its running instances, EKS, the NAT gateway, FSx (unknown prices say so). */
function CostNow({ c }: { c: ClusterDetail }) {
  const cost = c.cost;
  return (
    <Container header={<Header variant="h2" description={cost?.note ?? "From the AWS Price List: the instances running now, the EKS control plane, the NAT gateway and FSx."}>Cost now</Header>}>
      {!cost ? (
        <Box color="text-body-secondary">unknown (no prices were read for this cluster)</Box>
      ) : (
        <SpaceBetween size="m">
          <KeyValuePairs
            columns={3}
            items={[
              { label: "Cost per hour", value: <span data-testid="cost-hourly">{hourlyText(cost)}</span> },
              { label: "Monthly estimate (730 h)", value: cost.hourly === null || cost.hourly === undefined ? "unknown" : usd(cost.hourly * 730) },
              { label: "As of", value: <Time value={cost.as_of} /> },
            ]}
          />
          <Table
            variant="embedded"
            ariaLabels={{ tableLabel: "Cost now" }}
            items={cost.lines ?? []}
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
        </SpaceBetween>
      )}
    </Container>
  );
}

function DetailsTab({ c }: { c: ClusterDetail }) {
  // A cluster not ACTIVE yet (creating, importing, failed, deleting): its latest operation, step by step, here; once
  // shown it stays on the page to its end (the cluster turning ACTIVE does not take it away).
  const busy = c.operation_id && c.status !== "ACTIVE" ? c.operation_id : undefined;
  const [shown, setShown] = useState<string | undefined>(busy);
  useEffect(() => {
    if (busy) setShown(busy);
  }, [busy]);
  return (
    <SpaceBetween size="l">
      {shown && (
        <SpaceBetween size="s">
          <Box>
            {c.status === "ACTIVE" ? "The cluster's latest operation" : `The cluster is ${(c.status ?? "").toLowerCase()}: its operation`}{" "}
            <Link href={href.operation(shown)}>{shown}</Link> runs step by step below.
          </Box>
          <ProgressPanel operationId={shown} />
        </SpaceBetween>
      )}
      <Container header={<Header variant="h2">Summary</Header>}>
        <KeyValuePairs
          columns={4}
          items={[
            { label: "Status", value: <Status value={c.status} /> },
            { label: "Region", value: c.region },
            { label: "Kubernetes version", value: text(c.kubernetes_version ?? c.eks?.version) },
            { label: "Node recovery", value: text(c.node_recovery) },
            { label: "EKS cluster", value: text(c.eks?.name) },
            { label: "EKS status", value: <Status value={c.eks?.status} /> },
            { label: "HyperPod cluster", value: text(c.hyperpod?.name) },
            { label: "HyperPod status", value: <Status value={c.hyperpod?.status} /> },
            { label: "HyperPod ARN", value: c.hyperpod?.arn ? <CopyId value={c.hyperpod.arn} label="HyperPod ARN" /> : DASH },
            { label: "VPC CIDR", value: text(c.vpc_cidr) },
            { label: "Created", value: <Time value={c.created_at} /> },
            { label: "Created by", value: text(c.created_by) },
          ]}
        />
        {c.hyperpod?.failure_message && <Alert type="error" header="HyperPod reports a failure">{c.hyperpod.failure_message}</Alert>}
      </Container>
      <CostNow c={c} />
      <ResourceTable
        id="cluster-dependencies"
        title="Dependencies"
        description="EKS add-ons and the Kubernetes components PodStart installed"
        items={c.dependencies ?? []}
        trackBy={(d) => `${d.kind}/${d.name}`}
        empty={<Box textAlign="center">None reported</Box>}
        pageSize={10}
        columns={[
          { id: "name", header: "Name", cell: (d) => d.name, isRowHeader: true, sortValue: (d) => d.name },
          { id: "kind", header: "Kind", cell: (d) => text(d.kind), sortValue: (d) => d.kind },
          { id: "version", header: "Version", cell: (d) => text(d.version), sortValue: (d) => d.version },
          { id: "status", header: "Status", cell: (d) => <Status value={d.status} />, sortValue: (d) => d.status },
        ]}
      />
    </SpaceBetween>
  );
}

function GroupsTab({ c, region, name, onModal, gpus }: {
  c: ClusterDetail; region: string; name: string;
  onModal: (m: Modal_) => void;
  gpus: { group: string; gpus_used: number; gpus_free: number; gpus_total: number }[] | undefined;
}) {
  const groups = c.instance_groups ?? [];
  const { me } = useMe();
  const viewer = me && !canMutate(me) ? `Only operators and admins change instance groups (you are ${me.role}).` : undefined;
  const deleteWhy = adminOnly(me, "delete an instance group: it terminates its instances");
  return (
    <SpaceBetween size="l">
      <ResourceTable<ClusterInstanceGroup>
        id="cluster-groups"
        title="Instance groups"
        description="Each group: one instance type in one zone, with its counts as HyperPod reports them"
        items={groups}
        trackBy="name"
        actions={
          <SpaceBetween direction="horizontal" size="xs">
            <Button onClick={() => onModal("software")} disabled={!groups.length || !c.hyperpod?.name || !!viewer} disabledReason={viewer}>Update software</Button>
            <Button variant="primary" onClick={() => onModal("add")} disabled={!!viewer} disabledReason={viewer}>Add instance group</Button>
          </SpaceBetween>
        }
        empty={<Box textAlign="center">No instance groups</Box>}
        columns={[
          { id: "name", header: "Name", cell: (g) => g.name, isRowHeader: true, sortValue: (g) => g.name },
          { id: "type", header: "Instance type", cell: (g) => text(g.instance_type), sortValue: (g) => g.instance_type },
          { id: "zone", header: "Zone", cell: (g) => text(g.availability_zone), sortValue: (g) => g.availability_zone },
          { id: "cap", header: "Capacity", cell: (g) => text(g.capacity_type), sortValue: (g) => g.capacity_type },
          { id: "efa", header: "EFA-only", cell: (g) => (g.efa_only ? "Yes" : "No"), hidden: true },
          {
            id: "count",
            header: "Instances",
            minWidth: 170,
            sortValue: (g) => targetOf(g),
            filterText: (g) => countsLong(g),
            cell: (g) => (
              <span data-testid={`counts-${g.name}`}>
                {countsLong(g)}
                {g.counts_as_of && (
                  <Box variant="small" color="text-body-secondary" display="block">
                    <Time value={g.counts_as_of} prefix="observed" />
                  </Box>
                )}
              </span>
            ),
          },
          {
            id: "gpus",
            header: "GPUs used / free",
            minWidth: 170,
            cell: (g) => {
              const x = gpus?.find((y) => y.group === g.name);
              return <span data-testid={`gpus-${g.name}`}>{x ? `${x.gpus_used} used / ${x.gpus_free} free of ${x.gpus_total}` : c.status === "ACTIVE" ? "unknown" : DASH}</span>;
            },
          },
          { id: "status", header: "Status", minWidth: 130, cell: (g) => <Status value={g.status} />, sortValue: (g) => g.status },
          {
            id: "act", header: "Actions", actions: true, minWidth: 190, cell: (g) => (
              <SpaceBetween direction="horizontal" size="xs">
                <Button variant="inline-link" ariaLabel={`Change size of ${g.name}`} disabled={!!viewer} disabledReason={viewer} onClick={() => onModal({ scale: g })}>Change size</Button>
                <Button variant="inline-link" ariaLabel={`Delete ${g.name}`} disabled={!!deleteWhy} disabledReason={deleteWhy} onClick={() => onModal({ remove: g.name })}>Delete</Button>
              </SpaceBetween>
            ),
          },
        ]}
      />
      {c.status === "ACTIVE" && (
        <ExpandableSection variant="container" headerText="Capacity advisor" data-testid="group-advisor"
          headerDescription="More GPUs for this cluster: ranked options in its region (zone, type, capacity, quota, price, start); one opens Add instance group with it.">
          <CapacityAdvisor region={region} cluster={name} useLabel="Add this group"
            onUse={(o) => { const d = draftOf(o); if (d) onModal({ advised: d }); }} />
        </ExpandableSection>
      )}
    </SpaceBetween>
  );
}

type Modal_ = null | "add" | "delete" | "software" | { scale: ClusterInstanceGroup } | { remove: string } | { advised: GroupDraft };

const TABS: { id: ClusterTab; label: string; needsActive?: boolean; needsHyperPod?: boolean }[] = [
  { id: "details", label: "Details" },
  { id: "groups", label: "Instance groups" },
  { id: "nodes", label: "Nodes", needsHyperPod: true },
  { id: "storage", label: "Storage" },
  { id: "jobs", label: "Jobs", needsActive: true },
  { id: "endpoints", label: "Endpoints", needsActive: true },
  { id: "namespaces", label: "Namespaces", needsActive: true },
  { id: "features", label: "Add-ons" },
  { id: "events", label: "Events", needsHyperPod: true },
  { id: "operations", label: "Operations" },
];

export default function ClusterDetailPage({ region, name, tab = "details" }: { region: string; name: string; tab?: ClusterTab }) {
  const detail = useAsync(() => api.cluster(name, region), [name, region]);
  const [modal, setModal] = useState<Modal_>(null);
  const active = detail.data?.status === "ACTIVE";
  const gpus = useAsync(() => api.clusterGpus(name, region), [name, region, detail.data?.status], active && tab === "groups");
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useLiveEvents((ev) => {
    const t = ev.data?.target;
    if (ev.detail_type === "Feed Ready" || (t && t.cluster === name) || ev.data?.cluster === name) {
      clearTimeout(timer.current);
      timer.current = setTimeout(() => { detail.reload(); if (active && tab === "groups") gpus.reload(); }, 300);
    }
  });
  useEffect(() => () => clearTimeout(timer.current), []);
  const { me } = useMe();
  const deleteWhy = adminOnly(me, "delete a cluster");
  const c = detail.data;
  const groups = c?.instance_groups ?? [];
  const closeAndReload = () => { setModal(null); detail.reload(); };
  const why = (t: (typeof TABS)[number]) =>
    t.needsActive && c && c.status !== "ACTIVE" ? `Available once the cluster is ACTIVE (it is ${(c.status ?? "").toLowerCase()}).`
      : t.needsHyperPod && c && !c.hyperpod?.name ? "Available once the HyperPod cluster exists." : undefined;
  const content = (id: ClusterTab) => {
    if (!c) return null;
    switch (id) {
      case "details": return <DetailsTab c={c} />;
      case "groups": return <GroupsTab c={c} region={region} name={name} onModal={setModal} gpus={gpus.data?.groups} />;
      case "nodes": return <NodesPanel cluster={name} region={region} groups={groups.map((g) => g.name)} />;
      case "storage": return <StoragePanel cluster={name} region={region} />;
      case "jobs": return <JobsPanel cluster={name} region={region} groups={groups} />;
      case "endpoints": return <EndpointsPanel cluster={name} region={region} groups={groups} />;
      case "namespaces": return <NamespacesPanel cluster={name} region={region} />;
      case "features": return <FeaturesPanel cluster={name} region={region} groups={groups.map((g) => g.name)} />;
      case "events": return <ClusterEvents cluster={name} region={region} />;
      case "operations": return <OperationsTable cluster={name} embedded />;
    }
  };
  return (
    <SpaceBetween size="l">
      <Header
        variant="h1"
        description={c ? <SpaceBetween direction="horizontal" size="xs"><span>{region}</span><Status value={c.status} /></SpaceBetween> : region}
        actions={
          <SpaceBetween direction="horizontal" size="xs">
            <Button onClick={detail.reload} iconName="refresh" ariaLabel="Refresh" />
            <Button onClick={() => setModal("delete")} disabled={!c || !!deleteWhy} disabledReason={deleteWhy}>
              Delete
            </Button>
          </SpaceBetween>
        }
      >
        {name}
      </Header>
      {detail.error && (
        <Alert type="error" header="Could not load the cluster" action={<Button onClick={detail.reload}>Try again</Button>}>
          {detail.error.message}
        </Alert>
      )}
      {!c && detail.loading && <Spinner size="large" />}
      {c && (
        <Tabs
          ariaLabel={`${name} tabs`}
          i18nStrings={{ scrollLeftAriaLabel: "Scroll the tabs left", scrollRightAriaLabel: "Scroll the tabs right" }}
          activeTabId={tab}
          onChange={({ detail: d }) => navigate(href.cluster(region, name, d.activeTabId as ClusterTab))}
          tabs={TABS.map((t) => ({
            id: t.id,
            label: t.label,
            href: href.cluster(region, name, t.id),
            disabled: !!why(t),
            disabledReason: why(t),
            content: t.id === tab ? <div data-testid={`tab-${t.id}`}>{content(t.id)}</div> : null,
          }))}
        />
      )}
      {(modal === "add" || (modal && typeof modal === "object" && "advised" in modal)) && (
        <AddGroupModal cluster={name} region={region} initial={modal && typeof modal === "object" && "advised" in modal ? modal.advised : undefined} onClose={closeAndReload} />
      )}
      {modal === "delete" && <DeleteModal cluster={name} region={region} onClose={closeAndReload} />}
      {modal === "software" && <SoftwareUpdateModal cluster={name} region={region} groups={groups.map((g) => g.name)} onClose={closeAndReload} />}
      {modal && typeof modal === "object" && "remove" in modal && <DeleteGroupModal cluster={name} region={region} group={modal.remove} onClose={closeAndReload} />}
      {modal && typeof modal === "object" && "scale" in modal && <ScaleModal cluster={name} region={region} group={modal.scale} onClose={closeAndReload} />}
    </SpaceBetween>
  );
}
