// PodStart's namespaces on a cluster: default and the ones an admin created (jobs, endpoints, Secrets and volumes live
// only there). Create (admin): the name, the plan, then the operation's progress here, on the cluster page. Delete
// (admin): the plan (what goes with it) and the typed name, then its progress here too.
import { useEffect, useRef, useState } from "react";
import Alert from "@cloudscape-design/components/alert";
import Badge from "@cloudscape-design/components/badge";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import Link from "@cloudscape-design/components/link";
import Modal from "@cloudscape-design/components/modal";
import SpaceBetween from "@cloudscape-design/components/space-between";
import StatusIndicator from "@cloudscape-design/components/status-indicator";
import Table from "@cloudscape-design/components/table";
import { api } from "../api/client";
import type { NamespaceCreate, NamespaceView, Operation } from "../api/types";
import { useLiveEvents } from "../lib/events";
import { useFlash } from "../lib/flash";
import { fmtTime } from "../lib/format";
import { adminOnly, useMe } from "../lib/me";
import { useMutation } from "../lib/mutation";
import { isTerminal } from "../lib/operation";
import { href } from "../lib/router";
import { ConfirmModal } from "./ConfirmModal";
import { useNamespaces } from "./NamespaceSelect";
import { PlanPanel } from "./PlanPanel";
import { ProgressPanel } from "./ProgressPanel";
import { Status } from "./Status";

/** Why a namespace's Delete is disabled for this user, or undefined. */
export function deleteReason(ns: NamespaceView, notAdmin: string | undefined): string | undefined {
  if (ns.default) return "default is the cluster's own namespace: it is never deleted.";
  if (ns.status !== "Active") return `${ns.name} is ${ns.status.toLowerCase()} already.`;
  return notAdmin;
}

/** An accepted operation followed here (the user stays on the cluster page); a flash says how it ended. */
function Progress({ header, op, setOp, onClose, done }: {
  header: string; op: Operation; setOp: (op: Operation) => void; onClose: () => void; done: (op: Operation) => void;
}) {
  return (
    <Modal visible size="large" onDismiss={onClose} header={header} closeAriaLabel="Close"
      footer={<Box float="right"><Button onClick={onClose}>{isTerminal(op) ? "Close" : "Close (it keeps running)"}</Button></Box>}>
      <SpaceBetween size="m">
        <Box>
          Operation <Link href={href.operation(op.id)}>{op.id}</Link>
        </Box>
        <ProgressPanel operationId={op.id} initial={op} onChange={(next) => { setOp(next); if (isTerminal(next)) done(next); }} />
      </SpaceBetween>
    </Modal>
  );
}

function useEnded(what: (op: Operation) => string, then: () => void) {
  const flash = useFlash();
  const told = useRef<string | undefined>(undefined);
  return (op: Operation) => {
    if (told.current === op.id) return;
    told.current = op.id;
    then();
    flash.push({
      type: op.status === "SUCCEEDED" ? "success" : "error",
      content: <>{what(op)}: {op.status.toLowerCase()}. <Link href={href.operation(op.id)} color="inverted">View operation</Link></>,
    });
  };
}

export function CreateNamespaceModal({ cluster, region, onClose, onEnded }: { cluster: string; region: string; onClose: () => void; onEnded: () => void }) {
  const [name, setName] = useState("");
  const [review, setReview] = useState(false);
  const [op, setOp] = useState<Operation | null>(null);
  const create = useMutation((body: NamespaceCreate, key: string) => api.createNamespace(cluster, region, body, key), {
    fields: ["name"],
    onAccepted: setOp,
  });
  const ended = useEnded(() => `Namespace ${name} on ${cluster}`, onEnded);
  const body: NamespaceCreate = { name: name.trim() };
  const submit = async () => {
    const out = await create.run(body);
    if (out?.kind === "failed") setReview(false);
  };
  if (op) return <Progress header={`Creating namespace ${body.name}`} op={op} setOp={setOp} onClose={onClose} done={ended} />;
  return (
    <Modal
      visible
      size="large"
      onDismiss={onClose}
      header={`Create a namespace on ${cluster}`}
      footer={
        <Box float="right">
          {review ? (
            <SpaceBetween direction="horizontal" size="xs">
              <Button variant="link" onClick={() => setReview(false)}>Back</Button>
              <Button variant="primary" loading={create.busy} onClick={() => void submit()}>Create namespace</Button>
            </SpaceBetween>
          ) : (
            <SpaceBetween direction="horizontal" size="xs">
              <Button variant="link" onClick={onClose}>Cancel</Button>
              <Button variant="primary" disabled={!body.name} onClick={() => setReview(true)}>Review</Button>
            </SpaceBetween>
          )}
        </Box>
      }
    >
      {review ? (
        <SpaceBetween size="m">
          <Box data-testid="namespace-summary">
            {`Namespace ${body.name}, labelled as PodStart's, with the Role that lets PodStart write job Secrets there and the shared data volume (podstart-data, /data in pods).`}
          </Box>
          <PlanPanel load={(signal) => api.planCreateNamespace(cluster, region, body, signal)} deps={[cluster, region, body.name]} />
        </SpaceBetween>
      ) : (
        <form onSubmit={(e) => { e.preventDefault(); if (body.name) setReview(true); }}>
          <SpaceBetween size="m">
            {create.errors.length > 0 && <Alert type="error" header="The namespace was not created">{create.errors.join("; ")}</Alert>}
            <FormField label="Name" errorText={create.fieldErrors.name}
              description="A DNS label (lowercase letters, digits, '-'); not a system namespace (kube-*, aws-*, amazon-*, HyperPod's, the add-ons')">
              <Input ariaLabel="Name" value={name} autoFocus onChange={({ detail }) => { setName(detail.value); create.clearField("name"); }} />
            </FormField>
          </SpaceBetween>
        </form>
      )}
    </Modal>
  );
}

export function DeleteNamespaceModal({ cluster, region, namespace, onClose, onEnded }: { cluster: string; region: string; namespace: string; onClose: () => void; onEnded: () => void }) {
  const [op, setOp] = useState<Operation | null>(null);
  const del = useMutation((_: null, key: string) => api.deleteNamespace(cluster, region, namespace, key), { onAccepted: setOp });
  const ended = useEnded(() => `Deleting namespace ${namespace} on ${cluster}`, onEnded);
  if (op) return <Progress header={`Deleting namespace ${namespace}`} op={op} setOp={setOp} onClose={onClose} done={ended} />;
  return (
    <ConfirmModal
      header={`Delete namespace ${namespace}?`}
      confirmLabel="Delete namespace"
      typeToConfirm={namespace}
      warning={`This deletes namespace ${namespace} and everything in it: its jobs stop, its Secrets and volume claims go. Files in the buckets stay.`}
      busy={del.busy}
      errors={del.errors}
      onConfirm={() => void del.run(null)}
      onCancel={onClose}
    >
      <PlanPanel load={(signal) => api.planDeleteNamespace(cluster, region, namespace, signal)} deps={[cluster, region, namespace]} />
    </ConfirmModal>
  );
}

function Present({ on, yes, no }: { on: boolean; yes: string; no: string }) {
  return <StatusIndicator type={on ? "success" : "warning"}>{on ? yes : no}</StatusIndicator>;
}

/** The Namespaces panel of the cluster page. */
export function NamespacesPanel({ cluster, region }: { cluster: string; region: string }) {
  const list = useNamespaces(cluster, region);
  const { me } = useMe();
  // A namespace operation followed elsewhere (or closed here while running) still updates the list when it moves.
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useLiveEvents((ev) => {
    const t = ev.data?.target;
    if (t?.cluster === cluster && String(t.resource ?? "").startsWith("namespaces/")) {
      clearTimeout(timer.current);
      timer.current = setTimeout(list.reload, 300);
    }
  });
  useEffect(() => () => clearTimeout(timer.current), []);
  const notAdmin = (action: string) => adminOnly(me, action);
  const [modal, setModal] = useState<null | "create" | { del: string }>(null);
  const items = list.data ?? [];
  const createReason = notAdmin("create namespaces");
  return (
    <>
      <Table<NamespaceView>
        header={
          <Header
            variant="h2"
            counter={`(${items.length})`}
            description="Jobs, endpoints, Secrets and volumes live only in PodStart's namespaces: default and the ones an admin created here"
            actions={
              <SpaceBetween direction="horizontal" size="xs">
                <Button onClick={list.reload} iconName="refresh" ariaLabel="Refresh namespaces" />
                <Button onClick={() => setModal("create")} disabled={!!createReason} disabledReason={createReason}>Create namespace</Button>
              </SpaceBetween>
            }
          >
            Namespaces
          </Header>
        }
        loading={list.loading && !list.data}
        loadingText="Loading namespaces"
        items={items}
        trackBy="name"
        ariaLabels={{ tableLabel: "Namespaces" }}
        empty={<Box textAlign="center">{list.error ? list.error.message : "None"}</Box>}
        columnDefinitions={[
          {
            id: "name", header: "Name", isRowHeader: true,
            cell: (n) => <SpaceBetween direction="horizontal" size="xs"><span>{n.name}</span>{n.default && <Badge>default</Badge>}</SpaceBetween>,
          },
          { id: "status", header: "Status", cell: (n) => <span data-testid={`namespace-${n.name}`} data-status={n.status}><Status value={n.status} /></span> },
          { id: "volume", header: "Data volume", cell: (n) => <Present on={n.data_volume} yes="podstart-data (/data)" no="No data volume" /> },
          { id: "secrets", header: "Secrets access", cell: (n) => <Present on={n.secrets_access} yes="PodStart may write job Secrets" no="No Secrets Role" /> },
          { id: "created", header: "Created", cell: (n) => fmtTime(n.created_at) },
          {
            id: "act", header: "Actions", cell: (n) => {
              const why = deleteReason(n, notAdmin("delete namespaces"));
              return (
                <Button variant="inline-link" ariaLabel={`Delete namespace ${n.name}`} disabled={!!why} disabledReason={why}
                  onClick={() => setModal({ del: n.name })}>Delete</Button>
              );
            },
          },
        ]}
      />
      {modal === "create" && <CreateNamespaceModal cluster={cluster} region={region} onClose={() => { setModal(null); list.reload(); }} onEnded={list.reload} />}
      {modal && typeof modal === "object" && (
        <DeleteNamespaceModal cluster={cluster} region={region} namespace={modal.del} onClose={() => { setModal(null); list.reload(); }} onEnded={list.reload} />
      )}
    </>
  );
}
