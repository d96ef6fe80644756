import { useCallback, useEffect, useRef, useState } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Container from "@cloudscape-design/components/container";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import Link from "@cloudscape-design/components/link";
import Select from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { api } from "../api/client";
import type { Operation } from "../api/types";
import { Status } from "../components/Status";
import { VirtualTable, type Column } from "../components/VirtualTable";
import { useLiveEvents } from "../lib/events";
import { fmtTime, plural, text } from "../lib/format";
import { stepLabel } from "../lib/operation";
import { href, navigate } from "../lib/router";

const STATUSES = ["", "PENDING", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"];
const PAGE = 100; // the API allows at most 100 a page


export const operationColumns: Column<Operation>[] = [
  { id: "id", header: "Operation", cell: (o) => <Link href={href.operation(o.id)}>{o.id}</Link>, width: "24%" },
  { id: "kind", header: "Kind", cell: (o) => text(o.kind) },
  { id: "cluster", header: "Cluster", cell: (o) => text(o.target?.cluster, "") },
  { id: "status", header: "Status", cell: (o) => <Status value={o.status} /> },
  { id: "phase", header: "Step", cell: (o) => (o.phase ? stepLabel(o.phase) : "") },
  { id: "created", header: "Started", cell: (o) => fmtTime(o.created_at) },
  { id: "who", header: "By", cell: (o) => text(o.principal?.name ?? o.principal?.sub, "") },
];

/** Operations list with server-side filters (cluster, status) and next_token paging. */
export function OperationsTable({ cluster, status, embedded }: { cluster?: string; status?: string; embedded?: boolean }) {
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
        setItems((prev) => (append ? [...prev, ...page.items] : page.items));
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
      <VirtualTable
        label={embedded ? "Cluster operations" : "Operations"}
        items={items}
        columns={operationColumns}
        rowKey={(o) => o.id}
        height={embedded ? 320 : 600}
        empty={loading ? "Loading operations…" : "No operations match."}
      />
      <Box color="text-body-secondary" variant="small">
        {plural(items.length, "operation")} shown{next ? "; more on the server" : ""}.
      </Box>
      {next && (
        <Button onClick={() => void load(next, true)} loading={loading}>
          Load more
        </Button>
      )}
    </SpaceBetween>
  );
}

export default function Operations({ cluster, status }: { cluster?: string; status?: string }) {
  const [clusterText, setClusterText] = useState(cluster ?? "");
  useEffect(() => setClusterText(cluster ?? ""), [cluster]);
  return (
    <SpaceBetween size="l">
      <Header variant="h1" description="Every long-running change PodStart made, newest first. Each is resumable.">
        Operations
      </Header>
      <Container>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            navigate(href.operations({ cluster: clusterText.trim(), status }));
          }}
        >
          <SpaceBetween direction="horizontal" size="m" alignItems="end">
            <FormField label="Cluster">
              <Input value={clusterText} onChange={({ detail }) => setClusterText(detail.value)} placeholder="Any cluster" type="search" />
            </FormField>
            <FormField label="Status">
              <Select
                selectedOption={{ value: status ?? "", label: status || "Any status" }}
                options={STATUSES.map((s) => ({ value: s, label: s || "Any status" }))}
                onChange={({ detail }) => navigate(href.operations({ cluster: clusterText.trim(), status: detail.selectedOption.value }))}
              />
            </FormField>
            <Button formAction="submit">Apply</Button>
          </SpaceBetween>
        </form>
      </Container>
      <OperationsTable cluster={cluster} status={status} />
    </SpaceBetween>
  );
}
