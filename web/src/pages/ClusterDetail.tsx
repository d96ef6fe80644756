import { useRef, useState } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import BreadcrumbGroup from "@cloudscape-design/components/breadcrumb-group";
import Button from "@cloudscape-design/components/button";
import Checkbox from "@cloudscape-design/components/checkbox";
import Container from "@cloudscape-design/components/container";
import ExpandableSection from "@cloudscape-design/components/expandable-section";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import KeyValuePairs from "@cloudscape-design/components/key-value-pairs";
import Modal from "@cloudscape-design/components/modal";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Spinner from "@cloudscape-design/components/spinner";
import Table from "@cloudscape-design/components/table";
import { api } from "../api/client";
import type { AdviceOption, ClusterInstanceGroup, InstanceGroupSpec, InstanceType, Plan, SoftwareUpdate, StorageItem } from "../api/types";
import { CapacityAdvisor } from "../components/CapacityAdvisor";
import { ConfirmModal } from "../components/ConfirmModal";
import { PlanPanel } from "../components/PlanPanel";
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
import { Status } from "../components/Status";
import { NodesPanel } from "../components/NodesPanel";
import { JobsPanel } from "../components/JobsPanel";
import { FeaturesPanel } from "../components/FeaturesPanel";
import { StoragePanel } from "../components/StoragePanel";
import { NamespacesPanel } from "../components/NamespacesPanel";
import { changedFields, isEmpty } from "../lib/diff";
import { useLiveEvents } from "../lib/events";
import { DASH, asOf, countsLong, targetOf, text } from "../lib/format";
import { useMutation } from "../lib/mutation";
import { href } from "../lib/router";
import { useAsync } from "../lib/useAsync";
import { useDebounced } from "../lib/useDebounced";
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
    { fields: ["instance_count"], unchangedMessage: `Nothing to change: ${group.name} already has that many instances.` },
  );
  const error = scale.fieldErrors.instance_count ?? (scale.errors.length ? scale.errors.join("; ") : undefined);
  const planned = wantedCount(useDebounced(count));
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
            <Button variant="primary" onClick={save} loading={scale.busy}>
              Save
            </Button>
          </SpaceBetween>
        </Box>
      }
    >
      <form onSubmit={(e) => { e.preventDefault(); save(); }}>
        <SpaceBetween size="m">
          <FormField label="Instance count" description={`Now ${countsLong(group)}. Type, zone and capacity are fixed.`} errorText={error}>
            <Input type="number" inputMode="numeric" value={count} onChange={({ detail }) => { setCount(detail.value); setInfo(undefined); scale.clearField("instance_count"); }} autoFocus />
          </FormField>
          {(info ?? scale.notice) && <Alert type="info">{info ?? scale.notice}</Alert>}
          {planned !== undefined && planned !== target && (
            <PlanPanel
              load={(signal) => api.planScaleInstanceGroup(cluster, region, group.name, { instance_count: planned }, signal)}
              deps={[cluster, region, group.name, planned]}
            />
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
  });
  const errors = add.fieldErrors;
  const patch = (p: Partial<GroupDraft>) => {
    setDraft((d) => ({ ...d, ...p }));
    add.clearField(...Object.keys(p));
  };
  const spec = toSpec(draft);
  const specKey = JSON.stringify(spec);
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
              <Button variant="primary" onClick={() => void submit()} loading={add.busy}>
                Add instance group
              </Button>
            </SpaceBetween>
          ) : (
            <SpaceBetween direction="horizontal" size="xs">
              <Button variant="link" onClick={onClose}>
                Cancel
              </Button>
              <Button variant="primary" onClick={() => setReview(true)} disabled={!draft.instance_type}>
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
          <PlanPanel load={async (signal) => (await api.planAddInstanceGroup(cluster, region, spec, signal)).body} deps={[cluster, region, specKey]} />
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
          <InstanceTypePicker region={region} zone={draft.availability_zone} value={draft.instance_type} error={errors.instance_type} onChange={(t) => { setType(t ?? undefined); patch({ instance_type: t?.name ?? "", efa_only: false, training_plan_arn: "" }); }} />
          {draft.instance_type && <CapacityFields region={region} draft={draft} instanceType={type} errors={errors} onChange={patch} />}
        </SpaceBetween>
      )}
    </Modal>
  );
}

function DeleteModal({ cluster, region, onClose }: { cluster: string; region: string; onClose: () => void }) {
  const del = useMutation((_: null, key: string) => api.deleteCluster(cluster, region, key));
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
  const del = useMutation((t: string, key: string) => api.deleteInstanceGroup(cluster, region, group, key, t), { fields: ["drain_timeout_s"] });
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
    >
      <FormField label="Drain timeout (seconds)" errorText={del.fieldErrors.drain_timeout_s}
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
    <Table<StorageItem>
      header={<Header variant="h2">Storage</Header>}
      items={items}
      trackBy="name"
      ariaLabels={{ tableLabel: "Storage" }}
      empty={<Box textAlign="center">None</Box>}
      columnDefinitions={[
        { id: "name", header: "Name", cell: (d) => d.name, isRowHeader: true },
        { id: "kind", header: "Kind", cell: (d) => STORAGE_KIND[d.kind] ?? text(d.kind) },
        { id: "resource", header: "Resource", cell: (d) => text(d.file_system_id ?? d.bucket) },
        { id: "status", header: "Status", cell: (d) => <Status value={storageState(d)} /> },
        { id: "pvc", header: "Volume claim", cell: (d) => <span data-testid={`pvc-${d.name}`}>{pvcText(d)}</span> },
      ]}
    />
  );
}

export default function ClusterDetailPage({ region, name }: { region: string; name: string }) {
  const detail = useAsync(() => api.cluster(name, region), [name, region]);
  const [modal, setModal] = useState<null | "add" | "delete" | "software" | { scale: ClusterInstanceGroup } | { remove: string } | { advised: GroupDraft }>(null);
  const gpus = useAsync(() => api.clusterGpus(name, region), [name, region, detail.data?.status], detail.data?.status === "ACTIVE");
  const gpusOf = (group: string) => gpus.data?.groups.find((g) => g.group === group);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useLiveEvents((ev) => {
    const t = ev.data?.target;
    if (ev.detail_type === "Feed Ready" || (t && t.cluster === name) || ev.data?.cluster === name) {
      clearTimeout(timer.current);
      timer.current = setTimeout(detail.reload, 300);
    }
  });
  const c = detail.data;
  const groups = c?.instance_groups ?? [];
  return (
    <SpaceBetween size="l">
      <BreadcrumbGroup items={[{ text: "Clusters", href: href.clusters() }, { text: name, href: href.cluster(region, name) }]} ariaLabel="Breadcrumbs" />
      <Header
        variant="h1"
        description={`${region}`}
        actions={
          <SpaceBetween direction="horizontal" size="xs">
            <Button onClick={detail.reload} iconName="refresh" ariaLabel="Refresh" />
            <Button href={href.endpoints(region, name)}>Endpoints</Button>
            <Button onClick={() => setModal("delete")} disabled={!c}>
              Delete
            </Button>
          </SpaceBetween>
        }
      >
        {name}
      </Header>
      {detail.error && (
        <Alert type="error" header="Could not load the cluster">
          {detail.error.message}
        </Alert>
      )}
      {!c && detail.loading && <Spinner size="large" />}
      {c && (
        <SpaceBetween size="l">
          <Container header={<Header variant="h2">Summary</Header>}>
            <KeyValuePairs
              columns={4}
              items={[
                { label: "Status", value: <Status value={c.status} /> },
                { label: "Region", value: c.region },
                { label: "Kubernetes version", value: text(c.kubernetes_version ?? c.eks?.version) },
                { label: "Node recovery", value: text(c.node_recovery) },
                { label: "EKS cluster", value: text(c.eks?.name ?? c.eks?.arn) },
                { label: "EKS status", value: <Status value={c.eks?.status} /> },
                { label: "HyperPod cluster", value: text(c.hyperpod?.name ?? c.hyperpod?.arn) },
                { label: "HyperPod status", value: <Status value={c.hyperpod?.status} /> },
              ]}
            />
          </Container>
          <Table<ClusterInstanceGroup>
            header={
              <Header variant="h2" counter={`(${groups.length})`} actions={
                <SpaceBetween direction="horizontal" size="xs">
                  <Button onClick={() => setModal("software")} disabled={!groups.length || !c.hyperpod?.name}>Update software</Button>
                  <Button onClick={() => setModal("add")}>Add instance group</Button>
                </SpaceBetween>
              }>
                Instance groups
              </Header>
            }
            items={groups}
            trackBy="name"
            ariaLabels={{ tableLabel: "Instance groups" }}
            empty={<Box textAlign="center">No instance groups</Box>}
            columnDefinitions={[
              { id: "name", header: "Name", cell: (g) => g.name, isRowHeader: true },
              { id: "type", header: "Instance type", cell: (g) => text(g.instance_type) },
              { id: "zone", header: "Zone", cell: (g) => text(g.availability_zone) },
              { id: "cap", header: "Capacity", cell: (g) => text(g.capacity_type) },
              { id: "efa", header: "EFA-only", cell: (g) => (g.efa_only ? "Yes" : "No") },
              {
                id: "count",
                header: "Instances",
                cell: (g) => (
                  <span data-testid={`counts-${g.name}`}>
                    {countsLong(g)}
                    {asOf(g.counts_as_of) && (
                      <Box variant="small" color="text-body-secondary" display="block">
                        {asOf(g.counts_as_of)}
                      </Box>
                    )}
                  </span>
                ),
              },
              {
                id: "gpus",
                header: "GPUs used / free",
                cell: (g) => {
                  const x = gpusOf(g.name);
                  return <span data-testid={`gpus-${g.name}`}>{x ? `${x.gpus_used} used / ${x.gpus_free} free of ${x.gpus_total}` : DASH}</span>;
                },
              },
              { id: "status", header: "Status", cell: (g) => <Status value={g.status} /> },
              { id: "act", header: "Actions", cell: (g) => (
                <SpaceBetween direction="horizontal" size="xs">
                  <Button variant="inline-link" ariaLabel={`Change the size of ${g.name}`} onClick={() => setModal({ scale: g })}>Change size</Button>
                  <Button variant="inline-link" ariaLabel={`Delete ${g.name}`} onClick={() => setModal({ remove: g.name })}>Delete</Button>
                </SpaceBetween>
              ) },
            ]}
          />
          {c.status === "ACTIVE" && (
            <ExpandableSection variant="container" headerText="Capacity advisor" data-testid="group-advisor"
              headerDescription="More GPUs for this cluster: ranked options in its region (zone, type, capacity, quota, price, start); one opens Add instance group with it.">
              <CapacityAdvisor region={region} cluster={name} useLabel="Add this group"
                onUse={(o) => { const d = draftOf(o); if (d) setModal({ advised: d }); }} />
            </ExpandableSection>
          )}
          <Table
            header={<Header variant="h2">Dependencies</Header>}
            items={c.dependencies ?? []}
            ariaLabels={{ tableLabel: "Dependencies" }}
            empty={<Box textAlign="center">None reported</Box>}
            columnDefinitions={[
              { id: "name", header: "Name", cell: (d) => d.name, isRowHeader: true },
              { id: "kind", header: "Kind", cell: (d) => text(d.kind) },
              { id: "version", header: "Version", cell: (d) => text(d.version) },
              { id: "status", header: "Status", cell: (d) => <Status value={d.status} /> },
            ]}
          />
          {c.hyperpod?.name && (
            <Container>
              <NodesPanel cluster={name} region={region} groups={groups.map((g) => g.name)} />
            </Container>
          )}
          {c.status === "ACTIVE" && <NamespacesPanel cluster={name} region={region} />}
          <StoragePanel cluster={name} region={region} />
          {c.status === "ACTIVE" && (
            <JobsPanel cluster={name} region={region} instanceTypes={[...new Set((c.instance_groups ?? []).map((g) => g.instance_type).filter((t): t is string => !!t))]} />
          )}
          <FeaturesPanel cluster={name} region={region} groups={groups.map((g) => g.name)} />
          <Container header={<Header variant="h2">Operations</Header>}>
            <OperationsTable cluster={name} embedded />
          </Container>
        </SpaceBetween>
      )}
      {modal === "add" && <AddGroupModal cluster={name} region={region} onClose={() => setModal(null)} />}
      {modal && typeof modal === "object" && "advised" in modal && <AddGroupModal cluster={name} region={region} initial={modal.advised} onClose={() => setModal(null)} />}
      {modal === "delete" && <DeleteModal cluster={name} region={region} onClose={() => setModal(null)} />}
      {modal === "software" && <SoftwareUpdateModal cluster={name} region={region} groups={groups.map((g) => g.name)} onClose={() => setModal(null)} />}
      {modal && typeof modal === "object" && "remove" in modal && <DeleteGroupModal cluster={name} region={region} group={modal.remove} onClose={() => setModal(null)} />}
      {modal && typeof modal === "object" && "scale" in modal && <ScaleModal cluster={name} region={region} group={modal.scale} onClose={() => { setModal(null); detail.reload(); }} />}
    </SpaceBetween>
  );
}
