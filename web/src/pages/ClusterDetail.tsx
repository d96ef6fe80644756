import { useRef, useState } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import BreadcrumbGroup from "@cloudscape-design/components/breadcrumb-group";
import Button from "@cloudscape-design/components/button";
import Container from "@cloudscape-design/components/container";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import KeyValuePairs from "@cloudscape-design/components/key-value-pairs";
import Modal from "@cloudscape-design/components/modal";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Spinner from "@cloudscape-design/components/spinner";
import Table from "@cloudscape-design/components/table";
import { ApiError, api, newIdempotencyKey } from "../api/client";
import type { ClusterInstanceGroup, InstanceType, Operation } from "../api/types";
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
import { changedFields, isEmpty } from "../lib/diff";
import { useLiveEvents } from "../lib/events";
import { useFlash } from "../lib/flash";
import { mapProblem } from "../lib/problems";
import { href, navigate } from "../lib/router";
import { useAsync } from "../lib/useAsync";
import { OperationsTable } from "./Operations";

function str(v: unknown): string {
  if (v === null || v === undefined || v === "") return "—";
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}

/** Scale one group: the diff contract — only a changed instance_count is sent. */
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
  const [count, setCount] = useState(String(group.target_count));
  const [error, setError] = useState<string | undefined>();
  const [info, setInfo] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const flash = useFlash();
  const save = async () => {
    const edited = { instance_count: count.trim() === "" ? undefined : Number(count) };
    const changed = changedFields({ instance_count: group.target_count }, edited);
    if (isEmpty(changed)) {
      setInfo(`Nothing changed: ${group.name} already targets ${group.target_count}.`);
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const res = await api.patchInstanceGroup(cluster, region, group.name, changed);
      if (res.status === 202 && "id" in res.body) {
        navigate(href.operation((res.body as Operation).id));
      } else {
        flash.push({ type: "info", content: `${group.name} is already at ${count}; nothing to do.` });
        onClose();
      }
    } catch (e) {
      if (e instanceof ApiError) {
        const m = mapProblem(e.problem, ["instance_count"]);
        setError(m.fields.instance_count ?? m.unclaimed.join("; "));
      } else setError(String(e));
    } finally {
      setBusy(false);
    }
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
            <Button variant="primary" onClick={save} loading={busy}>
              Save
            </Button>
          </SpaceBetween>
        </Box>
      }
    >
      <form onSubmit={(e) => { e.preventDefault(); void save(); }}>
        <SpaceBetween size="m">
          <FormField label="Instance count" description={`Now ${group.current_count} running, target ${group.target_count}. Type, zone and capacity are fixed.`} errorText={error}>
            <Input type="number" inputMode="numeric" value={count} onChange={({ detail }) => { setCount(detail.value); setInfo(undefined); }} autoFocus />
          </FormField>
          {info && <Alert type="info">{info}</Alert>}
        </SpaceBetween>
      </form>
    </Modal>
  );
}

function AddGroupModal({ cluster, region, onClose }: { cluster: string; region: string; onClose: () => void }) {
  const [draft, setDraft] = useState<GroupDraft>(emptyGroup(""));
  const [type, setType] = useState<InstanceType | undefined>();
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [general, setGeneral] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const submission = useRef<{ key: string; body: string } | null>(null);
  const patch = (p: Partial<GroupDraft>) => {
    setDraft((d) => ({ ...d, ...p }));
    setErrors((e) => {
      const n = { ...e };
      for (const k of Object.keys(p)) delete n[k];
      return n;
    });
  };
  const submit = async () => {
    const body = toSpec(draft);
    const json = JSON.stringify(body);
    if (!submission.current || submission.current.body !== json) submission.current = { key: newIdempotencyKey(), body: json };
    setBusy(true);
    setGeneral([]);
    try {
      const op = await api.addInstanceGroup(cluster, region, body, submission.current.key);
      navigate(href.operation(op.id));
    } catch (e) {
      if (e instanceof ApiError) {
        submission.current = null;
        const m = mapProblem(e.problem, GROUP_FIELDS);
        setErrors(m.fields);
        setGeneral(m.unclaimed);
      } else setGeneral([String(e)]);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal
      visible
      size="max"
      onDismiss={onClose}
      header={`Add an instance group to ${cluster}`}
      footer={
        <Box float="right">
          <SpaceBetween direction="horizontal" size="xs">
            <Button variant="link" onClick={onClose}>
              Cancel
            </Button>
            <Button variant="primary" onClick={submit} loading={busy} disabled={!draft.instance_type}>
              Add instance group
            </Button>
          </SpaceBetween>
        </Box>
      }
    >
      <SpaceBetween size="l">
        {general.length > 0 && (
          <Alert type="error" header="The instance group was not added">
            {general.join("; ")}
          </Alert>
        )}
        <GroupNameField value={draft.name} onChange={(v) => patch({ name: v })} error={errors.name} />
        <ZonePicker region={region} value={draft.availability_zone} error={errors.availability_zone} onChange={(z) => { patch({ availability_zone: z, instance_type: "", training_plan_arn: "" }); setType(undefined); }} />
        <InstanceTypePicker region={region} zone={draft.availability_zone} value={draft.instance_type} error={errors.instance_type} onChange={(t) => { setType(t ?? undefined); patch({ instance_type: t?.name ?? "", efa_only: false, training_plan_arn: "" }); }} />
        {draft.instance_type && <CapacityFields region={region} draft={draft} instanceType={type} errors={errors} onChange={patch} />}
      </SpaceBetween>
    </Modal>
  );
}

function DeleteModal({ cluster, region, onClose }: { cluster: string; region: string; onClose: () => void }) {
  const [typed, setTyped] = useState("");
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const ok = typed === cluster;
  const del = async () => {
    if (!ok) return;
    setBusy(true);
    try {
      const op = await api.deleteCluster(cluster, region);
      navigate(href.operation(op.id));
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal
      visible
      onDismiss={onClose}
      header={`Delete ${cluster}?`}
      footer={
        <Box float="right">
          <SpaceBetween direction="horizontal" size="xs">
            <Button variant="link" onClick={onClose}>
              Cancel
            </Button>
            <Button variant="primary" onClick={del} disabled={!ok} loading={busy}>
              Delete
            </Button>
          </SpaceBetween>
        </Box>
      }
    >
      <SpaceBetween size="m">
        <Alert type="warning">
          This deletes the HyperPod cluster, its instances, the EKS cluster and the network PodStart created for it. Data in the shared S3 bucket stays.
        </Alert>
        {error && <Alert type="error">{error}</Alert>}
        <form onSubmit={(e) => { e.preventDefault(); void del(); }}>
          <FormField label={`To confirm, type the cluster name (${cluster})`}>
            <Input value={typed} onChange={({ detail }) => setTyped(detail.value)} placeholder={cluster} autoFocus />
          </FormField>
        </form>
      </SpaceBetween>
    </Modal>
  );
}

export default function ClusterDetailPage({ region, name }: { region: string; name: string }) {
  const detail = useAsync(() => api.cluster(name, region), [name, region]);
  const [modal, setModal] = useState<null | "add" | "delete" | { scale: ClusterInstanceGroup }>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useLiveEvents((ev) => {
    const t = ev.data?.target;
    if (ev.detail_type === "Feed Ready" || (t && t.cluster === name) || ev.data?.cluster === name) {
      clearTimeout(timer.current);
      timer.current = setTimeout(detail.reload, 300);
    }
  });
  const c = detail.data;
  return (
    <SpaceBetween size="l">
      <BreadcrumbGroup items={[{ text: "Clusters", href: href.clusters() }, { text: name, href: href.cluster(region, name) }]} ariaLabel="Breadcrumbs" />
      <Header
        variant="h1"
        description={`${region}`}
        actions={
          <SpaceBetween direction="horizontal" size="xs">
            <Button onClick={detail.reload} iconName="refresh" ariaLabel="Refresh" />
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
                { label: "Kubernetes version", value: str(c.kubernetes_version ?? c.eks?.version) },
                { label: "Node recovery", value: str(c.node_recovery) },
                { label: "EKS cluster", value: str(c.eks?.name ?? c.eks?.arn) },
                { label: "EKS status", value: c.eks?.status ? <Status value={String(c.eks.status)} /> : "—" },
                { label: "HyperPod cluster", value: str(c.hyperpod?.name ?? c.hyperpod?.arn) },
                { label: "HyperPod status", value: c.hyperpod?.status ? <Status value={String(c.hyperpod.status)} /> : "—" },
              ]}
            />
          </Container>
          <Table<ClusterInstanceGroup>
            header={
              <Header variant="h2" counter={`(${c.instance_groups.length})`} actions={<Button onClick={() => setModal("add")}>Add instance group</Button>}>
                Instance groups
              </Header>
            }
            items={c.instance_groups}
            trackBy="name"
            ariaLabels={{ tableLabel: "Instance groups" }}
            empty={<Box textAlign="center">No instance groups</Box>}
            columnDefinitions={[
              { id: "name", header: "Name", cell: (g) => g.name, isRowHeader: true },
              { id: "type", header: "Instance type", cell: (g) => g.instance_type },
              { id: "zone", header: "Zone", cell: (g) => g.availability_zone ?? "—" },
              { id: "cap", header: "Capacity", cell: (g) => g.capacity_type ?? "—" },
              { id: "efa", header: "EFA-only", cell: (g) => (g.efa_only ? "Yes" : "No") },
              { id: "count", header: "Instances (current / target)", cell: (g) => `${g.current_count} / ${g.target_count}` },
              { id: "status", header: "Status", cell: (g) => <Status value={g.status} /> },
              { id: "act", header: "Actions", cell: (g) => <Button variant="inline-link" ariaLabel={`Change the size of ${g.name}`} onClick={() => setModal({ scale: g })}>Change size</Button> },
            ]}
          />
          <Table
            header={<Header variant="h2">Dependencies</Header>}
            items={c.dependencies ?? []}
            ariaLabels={{ tableLabel: "Dependencies" }}
            empty={<Box textAlign="center">None reported</Box>}
            columnDefinitions={[
              { id: "name", header: "Name", cell: (d) => d.name, isRowHeader: true },
              { id: "kind", header: "Kind", cell: (d) => d.kind },
              { id: "status", header: "Status", cell: (d) => <Status value={d.status} /> },
            ]}
          />
          <Table
            header={<Header variant="h2">Storage</Header>}
            items={c.storage ?? []}
            ariaLabels={{ tableLabel: "Storage" }}
            empty={<Box textAlign="center">None</Box>}
            columnDefinitions={[
              { id: "name", header: "Name", cell: (d) => d.name, isRowHeader: true },
              { id: "kind", header: "Kind", cell: (d) => d.kind },
              { id: "status", header: "Status", cell: (d) => <Status value={d.status} /> },
            ]}
          />
          <Container header={<Header variant="h2">Operations</Header>}>
            <OperationsTable cluster={name} embedded />
          </Container>
        </SpaceBetween>
      )}
      {modal === "add" && <AddGroupModal cluster={name} region={region} onClose={() => setModal(null)} />}
      {modal === "delete" && <DeleteModal cluster={name} region={region} onClose={() => setModal(null)} />}
      {modal && typeof modal === "object" && <ScaleModal cluster={name} region={region} group={modal.scale} onClose={() => { setModal(null); detail.reload(); }} />}
    </SpaceBetween>
  );
}
