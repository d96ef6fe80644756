import { useEffect, useState } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Checkbox from "@cloudscape-design/components/checkbox";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import Modal from "@cloudscape-design/components/modal";
import SegmentedControl from "@cloudscape-design/components/segmented-control";
import Select from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Table from "@cloudscape-design/components/table";
import { api } from "../api/client";
import type { BucketRegistration, StorageAdd, Volume } from "../api/types";
import { text } from "../lib/format";
import { adminOnly, isAdmin, useMe } from "../lib/me";
import { useMutation } from "../lib/mutation";
import { useAsync } from "../lib/useAsync";
import { ConfirmModal } from "./ConfirmModal";
import { NamespaceSelect } from "./NamespaceSelect";
import { Status } from "./Status";

const KIND: Record<string, string> = { s3: "S3 (Mountpoint)", fsx_lustre: "FSx for Lustre" };
const FIELDS = ["kind", "name", "namespace", "bucket", "prefix", "read_only", "storage_capacity_gib", "throughput_mb_per_tib"];

function claim(v: Volume): string {
  const pvc = v.pvc;
  if (!pvc) return "No claim";
  return `${pvc.phase ?? "phase not reported"} (${pvc.name} in ${pvc.namespace})`;
}

/** Only the fields the user filled in are sent; the server applies its defaults to the rest. */
export function storageBody(d: Record<string, string | boolean>): Partial<StorageAdd> {
  const body: Record<string, unknown> = { kind: d.kind };
  for (const k of ["name", "namespace"]) if (d[k]) body[k] = d[k];
  if (d.kind === "s3") {
    body.bucket = d.bucket;
    if (d.prefix) body.prefix = d.prefix;
    if (d.read_only) body.read_only = true;
  } else {
    if (d.storage_capacity_gib) body.storage_capacity_gib = Number(d.storage_capacity_gib);
    if (d.throughput_mb_per_tib) body.throughput_mb_per_tib = Number(d.throughput_mb_per_tib);
  }
  return body as Partial<StorageAdd>;
}

/** The bucket choice: PodStart's data bucket (any operator) and the buckets an admin registered (admins only; a
 * registration may cover one prefix). Nothing else can be mounted, so nothing else is offered. */
export function bucketOptions(items: BucketRegistration[], admin: boolean) {
  return items.map((b) => ({
    value: b.bucket,
    label: b.bucket,
    tags: [b.owned ? "PodStart's" : "registered — admin"],
    description: b.owned ? "PodStart's data bucket: any operator may mount it" : registrationScope(b),
    disabled: !b.owned && !admin,
    disabledReason: !b.owned && !admin ? "A registered bucket PodStart does not own: only an admin can mount it (operators mount PodStart's data bucket)." : undefined,
  }));
}

/** "keys under curated/ only" or "the whole bucket". */
export function registrationScope(b: BucketRegistration): string {
  return b.prefix ? `registered for keys under ${b.prefix} only` : "registered: the whole bucket";
}

function AddStorageModal({ cluster, region, onClose }: { cluster: string; region: string; onClose: () => void }) {
  const { me } = useMe();
  const admin = isAdmin(me);
  const buckets = useAsync(() => api.buckets(), []);
  const [d, setD] = useState<Record<string, string | boolean>>({ kind: "s3", namespace: "default", bucket: "", storage_capacity_gib: "1200", throughput_mb_per_tib: "250" });
  const add = useMutation((body: Partial<StorageAdd>, key: string) => api.addStorage(cluster, region, body, key), { fields: FIELDS });
  const e = add.fieldErrors;
  const set = (k: string, v: string | boolean) => {
    setD((x) => ({ ...x, [k]: v }));
    add.clearField(k);
  };
  const registrations = buckets.data?.items ?? [];
  const chosen = registrations.find((b) => b.bucket === d.bucket);
  useEffect(() => {
    // PodStart's data bucket is the one choice every operator has.
    const own = registrations.find((b) => b.owned);
    if (!d.bucket && own) setD((x) => ({ ...x, bucket: own.bucket }));
  }, [registrations, d.bucket]);
  const input = (k: string, label: string, description?: string) => (
    <FormField label={label} description={description} errorText={e[k]}>
      <Input ariaLabel={label} value={String(d[k] ?? "")} onChange={({ detail }) => set(k, detail.value)} />
    </FormField>
  );
  const options = bucketOptions(registrations, admin);
  return (
    <Modal
      visible
      onDismiss={onClose}
      header={`Add storage to ${cluster}`}
      footer={
        <Box float="right">
          <SpaceBetween direction="horizontal" size="xs">
            <Button variant="link" onClick={onClose}>Cancel</Button>
            <Button variant="primary" loading={add.busy} onClick={() => void add.run(storageBody(d))}>Add storage</Button>
          </SpaceBetween>
        </Box>
      }
    >
      <SpaceBetween size="m">
        {add.errors.length > 0 && <Alert type="error" header="The storage was not added">{add.errors.join("; ")}</Alert>}
        <SegmentedControl
          label="Kind"
          selectedId={String(d.kind)}
          onChange={({ detail }) => set("kind", detail.selectedId)}
          options={[{ id: "s3", text: "Existing S3 bucket" }, { id: "fsx_lustre", text: "New FSx for Lustre" }]}
        />
        {d.kind === "s3" ? (
          <>
            <FormField label="Bucket" errorText={e.bucket ?? (buckets.error ? `The buckets could not be read: ${buckets.error.message}` : undefined)}
              description={admin
                ? "PodStart's data bucket, or a bucket an admin registered at deploy time. PodStart never deletes it."
                : "PodStart's data bucket. Registered buckets are an admin's to mount. PodStart never deletes a bucket."}>
              <Select
                ariaLabel="Bucket"
                statusType={buckets.loading && !buckets.data ? "loading" : "finished"}
                loadingText="Loading buckets"
                selectedOption={options.find((o) => o.value === d.bucket) ?? null}
                options={options}
                placeholder="Choose a bucket"
                onChange={({ detail }) => {
                  const b = registrations.find((x) => x.bucket === detail.selectedOption.value);
                  setD((x) => ({ ...x, bucket: b?.bucket ?? "", prefix: b?.prefix || "" }));
                  add.clearField("bucket", "prefix");
                }}
              />
            </FormField>
            {input("prefix", "Prefix", chosen?.prefix
              ? `Mount only this key prefix: within ${chosen.prefix} (the bucket is registered for that prefix only)`
              : "Mount only this key prefix (empty: the whole bucket)")}
            <Checkbox checked={Boolean(d.read_only)} onChange={({ detail }) => set("read_only", detail.checked)}>Read-only</Checkbox>
          </>
        ) : (
          <>
            {input("storage_capacity_gib", "Capacity (GiB)", "1200, 2400 or a multiple of 2400")}
            {input("throughput_mb_per_tib", "Throughput (MB/s per TiB)", "125, 250, 500 or 1000")}
          </>
        )}
        {input("name", "Volume name", "The claim's name (empty: derived from the bucket or capacity)")}
        <NamespaceSelect cluster={cluster} region={region} value={String(d.namespace)} error={e.namespace} onChange={(v) => set("namespace", v)}
          description="Where the PersistentVolumeClaim is made: one of PodStart's namespaces" />
      </SpaceBetween>
    </Modal>
  );
}

function RemoveModal({ cluster, region, volume, onClose }: { cluster: string; region: string; volume: Volume; onClose: () => void }) {
  const fsx = volume.kind === "fsx_lustre";
  const del = useMutation((_: null, key: string) => api.removeStorage(cluster, region, volume.name, fsx ? volume.name : undefined, key));
  return (
    <ConfirmModal
      header={`Remove ${volume.name}?`}
      confirmLabel="Remove"
      typeToConfirm={fsx ? volume.name : undefined}
      warning={fsx
        ? `This deletes FSx file system ${volume.file_system_id ?? ""} and every file on it, and its claim.`
        : `This removes the claim, the volume and the role PodStart made for it. Bucket ${volume.bucket ?? ""} and its data stay.`}
      busy={del.busy}
      errors={del.errors}
      onConfirm={() => void del.run(null)}
      onCancel={onClose}
    />
  );
}

/** Storage: the cluster's volumes (shared bucket, FSx, volumes added later); add, remove, re-reconcile. */
export function StoragePanel({ cluster, region }: { cluster: string; region: string }) {
  const list = useAsync(() => api.volumes(cluster, region), [cluster, region]);
  const { me } = useMe();
  const [modal, setModal] = useState<null | "add" | { remove: Volume }>(null);
  const reconcile = useMutation((_: null, key: string) => api.reconcile(cluster, region, key));
  const items = list.data?.items ?? [];
  return (
    <>
      <Table<Volume>
        header={
          <Header
            variant="h2"
            counter={`(${items.length})`}
            description="S3 buckets mounted through Mountpoint and FSx for Lustre file systems, each as a PersistentVolumeClaim"
            actions={
              <SpaceBetween direction="horizontal" size="xs">
                <Button onClick={() => void reconcile.run(null)} loading={reconcile.busy}>Reconcile dependencies</Button>
                <Button onClick={() => setModal("add")}>Add storage</Button>
              </SpaceBetween>
            }
          >
            Storage
          </Header>
        }
        loading={list.loading && !list.data}
        items={items}
        trackBy="name"
        ariaLabels={{ tableLabel: "Storage" }}
        empty={<Box textAlign="center">{list.error ? list.error.message : "None"}</Box>}
        columnDefinitions={[
          { id: "name", header: "Name", cell: (v) => v.name, isRowHeader: true },
          { id: "kind", header: "Kind", cell: (v) => KIND[v.kind] ?? v.kind },
          { id: "resource", header: "Resource", cell: (v) => text(v.file_system_id ?? (v.bucket ? `${v.bucket}/${v.prefix ?? ""}` : undefined)) },
          { id: "status", header: "Status", cell: (v) => <Status value={v.status} /> },
          { id: "pvc", header: "Volume claim", cell: (v) => <span data-testid={`pvc-${v.name}`}>{claim(v)}</span> },
          {
            id: "act",
            header: "Actions",
            cell: (v) => {
              if (!v.removable) return <Box variant="small">{text(v.message)}</Box>;
              const why = v.kind === "fsx_lustre" ? adminOnly(me, "remove an FSx file system: it deletes the file system and its data") : undefined;
              return <Button variant="inline-link" ariaLabel={`Remove ${v.name}`} disabled={!!why} disabledReason={why} onClick={() => setModal({ remove: v })}>Remove</Button>;
            },
          },
        ]}
      />
      {reconcile.errors.length > 0 && <Alert type="error" header="Reconcile was not started">{reconcile.errors.join("; ")}</Alert>}
      {modal === "add" && <AddStorageModal cluster={cluster} region={region} onClose={() => setModal(null)} />}
      {modal && typeof modal === "object" && <RemoveModal cluster={cluster} region={region} volume={modal.remove} onClose={() => { setModal(null); list.reload(); }} />}
    </>
  );
}
