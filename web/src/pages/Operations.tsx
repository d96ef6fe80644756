import { useCallback, useEffect, useRef, useState, type ReactNode } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import FormField from "@cloudscape-design/components/form-field";
import Input from "@cloudscape-design/components/input";
import Link from "@cloudscape-design/components/link";
import Select from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { api } from "../api/client";
import type { Operation } from "../api/types";
import { CopyId } from "../components/CopyId";
import { ResourceTable, type Column } from "../components/ResourceTable";
import { Status } from "../components/Status";
import { useLiveEvents } from "../lib/events";
import { DASH, text } from "../lib/format";
import { resourceLink } from "../lib/links";
import { operationTitle, stepLabel } from "../lib/operation";
import { href, navigate } from "../lib/router";
import { statusText } from "../lib/status";
import { Time } from "../lib/time";

const STATUSES = ["", "PENDING", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"];
const PAGE = 100; // the API allows at most 100 a page


/** The operations list's columns: the id whole (with copy), what it did to what (a link back), status, step, when. */
export const operationColumns: Column<Operation>[] = [
  {
    id: "id", header: "Operation", isRowHeader: true, minWidth: 240, sortValue: (o) => o.id,
    cell: (o) => <CopyId value={o.id} label="operation id"><Link href={href.operation(o.id)}>{o.id}</Link></CopyId>,
  },
  { id: "what", header: "What", minWidth: 220, sortValue: (o) => operationTitle(o), filterText: (o) => `${operationTitle(o)} ${o.kind}`, cell: (o) => operationTitle(o) },
  { id: "kind", header: "Kind", sortValue: (o) => o.kind, cell: (o) => text(o.kind), hidden: true },
  {
    id: "cluster", header: "Cluster", sortValue: (o) => o.target?.cluster, cell: (o) => {
      const res = resourceLink(o);
      return o.target?.cluster ? (res ? <Link href={res.href}>{o.target.cluster}</Link> : o.target.cluster) : DASH;
    },
  },
  { id: "status", header: "Status", minWidth: 130, sortValue: (o) => o.status, cell: (o) => <Status value={o.status} /> },
  { id: "phase", header: "Step", sortValue: (o) => o.phase, cell: (o) => (o.phase ? stepLabel(o.phase) : DASH) },
  { id: "created", header: "Started", sortValue: (o) => o.created_at, cell: (o) => <Time value={o.created_at} /> },
  { id: "updated", header: "Updated", sortValue: (o) => o.updated_at, cell: (o) => <Time value={o.updated_at} />, hidden: true },
  { id: "who", header: "By", sortValue: (o) => o.principal?.name ?? o.principal?.sub, cell: (o) => text(o.principal?.name ?? o.principal?.sub) },
];

/** Operations list with server-side filters (cluster, status) and next_token paging (the last page's Next loads more). */
export function OperationsTable({ cluster, status, embedded, filters }: { cluster?: string; status?: string; embedded?: boolean; filters?: ReactNode }) {
  const [items, setItems] = useState<Operation[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const seq = useRef(0);

  const load = useCallback(
    async (token: string | null, append: boolean) => {
      const n = ++seq.current;
      setLoading(true);
      try {
        const page = await api.operations({ cluster: cluster || undefined, status: status || undefined, limit: PAGE, next_token: token });
        if (n !== seq.current) return;
        setItems((prev) => (append ? [...prev, ...page.items.filter((x) => !prev.some((p) => p.id === x.id))] : page.items));
        setNext(page.next_token ?? null);
        setError(null);
      } catch (e) {
        if (n === seq.current) setError((e as Error).message);
      } finally {
        if (n === seq.current) setLoading(false);
      }
    },
    [cluster, status],
  );
  useEffect(() => void load(null, false), [load]);

  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useLiveEvents((ev) => {
    const id = ev.data?.operation_id;
    if (ev.detail_type === "Operation Status Changed" && id) {
      const known = items.some((o) => o.id === id);
      if (known && typeof ev.data.status === "string") {
        setItems((prev) => prev.map((o) => (o.id === id ? { ...o, status: ev.data.status as Operation["status"] } : o)));
      } else if (!known) {
        clearTimeout(timer.current);
        timer.current = setTimeout(() => void load(null, false), 300);
      }
    } else if (ev.detail_type === "Operation Step Changed" && id && ev.data.step?.status === "RUNNING") {
      setItems((prev) => prev.map((o) => (o.id === id ? { ...o, phase: ev.data.step!.name } : o)));
    }
  });
  useEffect(() => () => clearTimeout(timer.current), []);

  return (
    <SpaceBetween size="s">
      {error && <Alert type="error" header="Could not list operations">{error}</Alert>}
      <ResourceTable<Operation>
        id={embedded ? "cluster-operations" : "operations"}
        title={embedded ? "Cluster operations" : "Operations"}
        headerVariant={embedded ? "h2" : "awsui-h1-sticky"}
        variant={embedded ? "container" : "full-page"}
        testId="operations-table"
        description={embedded ? "Every long-running change to this cluster, newest first" : "Every long-running change PodStart made, newest first. Each is resumable."}
        items={items}
        loading={loading}
        loadingText="Loading operations"
        trackBy="id"
        counter={`(${items.length}${next ? "+" : ""})`}
        defaultSort={{ column: "created", descending: true }}
        hasMore={!!next}
        onLoadMore={() => void load(next, true)}
        filters={filters}
        filterPlaceholder="Find operations in this list"
        empty={<Box textAlign="center">No operations match.</Box>}
        columns={operationColumns}
        footer={next ? (
          <Box textAlign="center">
            <Button variant="link" onClick={() => void load(next, true)} loading={loading}>Load more from the server</Button>
          </Box>
        ) : undefined}
      />
    </SpaceBetween>
  );
}

export default function Operations({ cluster, status }: { cluster?: string; status?: string }) {
  const [clusterText, setClusterText] = useState(cluster ?? "");
  useEffect(() => setClusterText(cluster ?? ""), [cluster]);
  return (
    <OperationsTable
      cluster={cluster}
      status={status}
      filters={
        <>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              navigate(href.operations({ cluster: clusterText.trim(), status }));
            }}
          >
            <SpaceBetween direction="horizontal" size="xs" alignItems="end">
              <FormField label="Cluster">
                <Input value={clusterText} onChange={({ detail }) => setClusterText(detail.value)} placeholder="Any cluster" type="search" clearAriaLabel="Clear" ariaLabel="Cluster" />
              </FormField>
              <Button formAction="submit">Apply</Button>
            </SpaceBetween>
          </form>
          <FormField label="Status">
            <Select
              ariaLabel="Status"
              selectedOption={{ value: status ?? "", label: status ? statusText(status) : "Any status" }}
              options={STATUSES.map((s) => ({ value: s, label: s ? statusText(s) : "Any status" }))}
              onChange={({ detail }) => navigate(href.operations({ cluster: clusterText.trim(), status: detail.selectedOption.value }))}
            />
          </FormField>
        </>
      }
    />
  );
}
