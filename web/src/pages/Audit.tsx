import { useCallback, useEffect, useRef, useState } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import FormField from "@cloudscape-design/components/form-field";
import Input from "@cloudscape-design/components/input";
import Link from "@cloudscape-design/components/link";
import Select from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { api } from "../api/client";
import type { AuditRecord } from "../api/types";
import { CopyId } from "../components/CopyId";
import { ResourceTable, type Column } from "../components/ResourceTable";
import { useLiveEvents } from "../lib/events";
import { text } from "../lib/format";
import { Time } from "../lib/time";
import { useMe } from "../lib/me";
import { href, navigate } from "../lib/router";

const FACES = ["", "ui", "rest", "mcp"];
const PAGE = 100;

export interface AuditFilters {
  actor?: string;
  cluster?: string;
  action?: string;
  face?: string;
}

const columns: Column<AuditRecord>[] = [
  { id: "at", header: "When", isRowHeader: true, sortValue: (r) => r.at, cell: (r) => <Time value={r.at} /> },
  { id: "who", header: "Who", sortValue: (r) => r.principal.name ?? r.principal.sub, filterText: (r) => `${r.principal.name ?? r.principal.sub} ${r.principal.role}`, cell: (r) => `${r.principal.name ?? r.principal.sub} (${r.principal.role})` },
  { id: "face", header: "Face", sortValue: (r) => r.face, cell: (r) => <span data-face={r.face}>{r.face}</span> },
  { id: "action", header: "Action", minWidth: 170, sortValue: (r) => r.action, cell: (r) => r.action + (r.replay ? " (replay)" : "") },
  {
    id: "target", header: "Target", minWidth: 160, sortValue: (r) => r.target?.cluster, filterText: (r) => [r.target?.cluster, r.target?.resource].filter(Boolean).join(" "),
    cell: (r) => text([r.target?.cluster, r.target?.resource].filter(Boolean).join(" / ")),
  },
  {
    id: "result", header: "Result", minWidth: 260, sortValue: (r) => r.result.status, filterText: (r) => `${r.result.status} ${r.result.operation_id ?? ""}`,
    cell: (r) =>
      r.result.operation_id
        ? <CopyId value={r.result.operation_id} label="operation id"><Link href={href.operation(r.result.operation_id)}>{`${r.result.status} ${r.result.operation_id}`}</Link></CopyId>
        : String(r.result.status),
  },
  { id: "from", header: "From", sortValue: (r) => r.source_ip, cell: (r) => text(r.source_ip), hidden: true },
];

/** The audit trail: every mutation, who did it and through which face, newest first (admin; others see their own). */
export default function Audit(filters: AuditFilters) {
  const { me } = useMe();
  const admin = me?.role === "admin";
  const actor = admin ? filters.actor : "me";
  const [items, setItems] = useState<AuditRecord[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [form, setForm] = useState<AuditFilters>(filters);
  useEffect(() => setForm(filters), [filters.actor, filters.cluster, filters.action, filters.face]); // eslint-disable-line
  const seq = useRef(0);

  const load = useCallback(
    async (token: string | null, append: boolean) => {
      if (!me) return;
      const n = ++seq.current;
      setLoading(true);
      try {
        const page = await api.audit({ actor, cluster: filters.cluster, action: filters.action, face: filters.face, limit: PAGE, next_token: token });
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
    [me, actor, filters.cluster, filters.action, filters.face],
  );
  useEffect(() => void load(null, false), [load]);

  // Live: a new operation or status change means a new record; reload the first page (debounced).
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useLiveEvents((ev) => {
    if (ev.detail_type !== "Operation Status Changed") return;
    clearTimeout(timer.current);
    timer.current = setTimeout(() => void load(null, false), 500);
  });
  useEffect(() => () => clearTimeout(timer.current), []);

  const apply = (f: AuditFilters) => navigate(href.audit({ ...f, actor: admin ? f.actor?.trim() : undefined, cluster: f.cluster?.trim(), action: f.action?.trim() }));
  return (
    <SpaceBetween size="l">
      {error && <Alert type="error" header="Could not list the audit trail">{error}</Alert>}
      <ResourceTable<AuditRecord>
        id="audit"
        title="Audit"
        headerVariant="awsui-h1-sticky"
        variant="full-page"
        testId="audit-table"
        description={admin ? "Every change made through PodStart: who, through which face (ui, rest, mcp), and what came of it. Newest first." : "The changes you made through PodStart, newest first."}
        items={items}
        loading={loading}
        loadingText="Loading the audit trail"
        trackBy="id"
        counter={`(${items.length}${next ? "+" : ""})`}
        defaultSort={{ column: "at", descending: true }}
        hasMore={!!next}
        onLoadMore={() => void load(next, true)}
        filterPlaceholder="Find records in this list"
        empty={<Box textAlign="center">No records match.</Box>}
        columns={columns}
        footer={next ? <Box textAlign="center"><Button variant="link" onClick={() => void load(next, true)} loading={loading}>Load more from the server</Button></Box> : undefined}
        filters={
          <form onSubmit={(e) => { e.preventDefault(); apply(form); }}>
            <SpaceBetween direction="horizontal" size="xs" alignItems="end">
              {admin && (
                <FormField label="Actor">
                  <Input value={form.actor ?? ""} onChange={({ detail }) => setForm({ ...form, actor: detail.value })} placeholder="Anyone (or me)" type="search" clearAriaLabel="Clear" ariaLabel="Actor" />
                </FormField>
              )}
              <FormField label="Cluster">
                <Input value={form.cluster ?? ""} onChange={({ detail }) => setForm({ ...form, cluster: detail.value })} placeholder="Any cluster" type="search" clearAriaLabel="Clear" ariaLabel="Cluster" />
              </FormField>
              <FormField label="Action">
                <Input value={form.action ?? ""} onChange={({ detail }) => setForm({ ...form, action: detail.value })} placeholder="e.g. create_cluster" type="search" clearAriaLabel="Clear" ariaLabel="Action" />
              </FormField>
              <FormField label="Face">
                <Select
                  data-testid="face-select"
                  ariaLabel="Face"
                  selectedOption={{ value: filters.face ?? "", label: filters.face || "Any face" }}
                  options={FACES.map((f) => ({ value: f, label: f || "Any face" }))}
                  onChange={({ detail }) => apply({ ...form, face: detail.selectedOption.value })}
                />
              </FormField>
              <Button formAction="submit">Apply</Button>
            </SpaceBetween>
          </form>
        }
      />
    </SpaceBetween>
  );
}
