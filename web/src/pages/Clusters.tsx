import { useEffect, useRef, useState } from "react";
import Alert from "@cloudscape-design/components/alert";
import Badge from "@cloudscape-design/components/badge";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import FormField from "@cloudscape-design/components/form-field";
import Link from "@cloudscape-design/components/link";
import Select from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { ApiError, api } from "../api/client";
import type { ClusterPage, ClusterSummary, Preferences } from "../api/types";
import { ResourceTable, type Column } from "../components/ResourceTable";
import { Status } from "../components/Status";
import { changedFields, isEmpty } from "../lib/diff";
import { useLiveEvents } from "../lib/events";
import { useFlash } from "../lib/flash";
import { DASH, countsLong, groupLine, latestAsOf, num, text } from "../lib/format";
import { isAdmin, useMe } from "../lib/me";
import { useMutation } from "../lib/mutation";
import { href, navigate } from "../lib/router";
import { Time } from "../lib/time";

export const isExternal = (c: Pick<ClusterSummary, "origin">) => c.origin === "external";

export function groupsText(c: Pick<ClusterSummary, "instance_groups">): string {
  return (c.instance_groups ?? []).map(groupLine).join(", ");
}

/** The instance groups cell: "accel: 1/2 × ml.p5.48xlarge", with when the counts were observed. */
export function GroupsCell({ cluster }: { cluster: Pick<ClusterSummary, "instance_groups"> }) {
  const groups = cluster.instance_groups ?? [];
  if (groups.length === 0) return <>{DASH}</>;
  const when = latestAsOf(groups);
  const unknown = groups.some((g) => num(g.current_count) === undefined);
  const title = groups
    .map((g) => `${g.name}: ${countsLong(g)}`)
    .join("; ");
  return (
    <span title={title}>
      {groupsText(cluster)}
      {(when || unknown) && (
        <Box variant="small" color="text-body-secondary" display="block">
          {when ? <Time value={when} prefix="counts observed" /> : "target counts; current counts not observed yet"}
        </Box>
      )}
    </span>
  );
}

interface Discovery {
  at: string | null;
  unread: string[];
}

async function allClusters(): Promise<{ items: ClusterSummary[]; discovery: Discovery }> {
  const out: ClusterSummary[] = [];
  let token: string | null | undefined = null;
  let discovery: Discovery = { at: null, unread: [] };
  for (let i = 0; i < 20; i++) {
    const page: ClusterPage = await api.clusters({ limit: 100, next_token: token });
    if (i === 0) discovery = { at: page.discovered_at ?? null, unread: page.undiscovered_regions ?? [] };
    out.push(...page.items);
    token = page.next_token;
    if (!token) break;
  }
  return { items: out, discovery };
}

/** Where the untracked clusters of other regions come from: the last scan, or none yet. */
function DiscoveryNote({ discovery }: { discovery: Discovery }) {
  return (
    <Box variant="small" color="text-body-secondary" data-testid="discovery-note">
      {discovery.at ? (
        <>
          Clusters PodStart does not manage, in regions without its clusters: <Time value={discovery.at} prefix="as of the scan" />
          {" "}(every 10 minutes).
          {discovery.unread.length > 0 && ` Not read in the last scan: ${discovery.unread.join(", ")}.`}
        </>
      ) : (
        "Regions without PodStart's clusters are scanned every 10 minutes for clusters it could import; not scanned yet."
      )}
    </Box>
  );
}

export default function Clusters() {
  const [clusters, setClusters] = useState<ClusterSummary[] | null>(null);
  const [discovery, setDiscovery] = useState<Discovery | null>(null);
  const [error, setError] = useState<ApiError | Error | null>(null);
  const [loading, setLoading] = useState(true);
  const [prefs, setPrefs] = useState<Preferences | null>(null);
  const flash = useFlash();
  const seq = useRef(0);

  const load = async () => {
    const n = ++seq.current;
    try {
      const { items, discovery: scanned } = await allClusters();
      if (n !== seq.current) return;
      setClusters(items);
      setDiscovery(scanned);
      setError(null);
    } catch (e) {
      if (n === seq.current) setError(e as Error);
    } finally {
      if (n === seq.current) setLoading(false);
    }
  };
  useEffect(() => {
    void load();
    api.preferences().then(setPrefs, () => {});
  }, []);

  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useLiveEvents((ev) => {
    if (ev.detail_type === "Feed Ready" || /Operation Status|Cluster Status|Operation Step/.test(ev.detail_type)) {
      clearTimeout(timer.current);
      timer.current = setTimeout(() => void load(), 250);
    }
  });
  useEffect(() => () => clearTimeout(timer.current), []);

  const active = prefs?.active_cluster ?? null;
  const choose = useMutation(
    (body: Partial<Preferences>, key: string) => api.putPreferences(body, key),
    {
      onDone: (p) => {
        setPrefs(p);
        void load();
        const next = p.active_cluster;
        flash.push({ type: "success", content: next ? `Active cluster: ${next.name} (${next.region}).` : "No active cluster." });
      },
      onUnchanged: (p) => setPrefs(p),
    },
  );
  useEffect(() => {
    if (choose.errors.length) flash.push({ type: "error", header: "Could not set the active cluster", content: choose.errors.join("; ") });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [choose.errors]);
  const setActive = (value: string) => {
    const [region, name] = value ? value.split("/") : ["", ""];
    const next = value ? { name, region } : null;
    const body = changedFields<Record<string, unknown>>({ active_cluster: active }, { active_cluster: next });
    if (isEmpty(body)) return;
    void choose.run(body as Partial<Preferences>);
  };
  const { me } = useMe();
  const admin = isAdmin(me);
  const importReason = me && !admin ? `Importing grants PodStart cluster-admin on the EKS cluster: only an admin can import (you are ${me.role}).` : undefined;

  const notAvailable = error instanceof ApiError && error.status === 404;
  const options = [
    { value: "", label: "None" },
    ...(clusters ?? []).filter((c) => !isExternal(c)).map((c) => ({ value: `${c.region}/${c.name}`, label: c.name, description: c.region })),
  ];
  const activeValue = active ? `${active.region}/${active.name}` : "";

  const columns: Column<ClusterSummary>[] = [
    {
      id: "name",
      header: "Name",
      isRowHeader: true,
      minWidth: 160,
      sortValue: (c) => c.name,
      filterText: (c) => `${c.name} ${c.origin} ${isExternal(c) ? "not managed" : ""}`,
      cell: (c) =>
        isExternal(c) ? (
          <SpaceBetween direction="horizontal" size="xxs" alignItems="center">
            <span>{c.name}</span>
            <Badge>Not managed</Badge>
          </SpaceBetween>
        ) : (
          <SpaceBetween direction="horizontal" size="xxs" alignItems="center">
            <Link href={href.cluster(c.region, c.name)}>{c.name}</Link>
            {c.origin === "imported" && <Badge>Imported</Badge>}
          </SpaceBetween>
        ),
    },
    { id: "region", header: "Region", sortValue: (c) => c.region, cell: (c) => c.region },
    { id: "status", header: "Status", minWidth: 130, sortValue: (c) => c.status ?? c.hyperpod_status, cell: (c) => <Status value={c.status ?? c.hyperpod_status} /> },
    { id: "k8s", header: "Kubernetes", sortValue: (c) => c.kubernetes_version, cell: (c) => text(c.kubernetes_version) },
    { id: "groups", header: "Instance groups", minWidth: 200, filterText: (c) => groupsText(c), cell: (c) => <GroupsCell cluster={c} /> },
    { id: "active", header: "Active", sortValue: (c) => (c.active ? 0 : 1), cell: (c) => (c.active ? <Badge color="blue">Active</Badge> : <span className="ps-sr-only">No</span>) },
    { id: "created", header: "Created", sortValue: (c) => c.created_at, cell: (c) => <Time value={c.created_at} />, hidden: true },
    {
      id: "op",
      header: "Actions",
      actions: true,
      cell: (c) =>
        isExternal(c) ? (
          c.importable === false ? (
            DASH
          ) : (
            <Button
              variant="inline-link"
              ariaLabel={`Import ${c.name}`}
              disabled={!!importReason}
              disabledReason={importReason}
              onClick={() => navigate(href.import({ region: c.region, eks_cluster_name: c.eks_cluster_name ?? c.name }))}
            >
              Import
            </Button>
          )
        ) : c.operation_id && c.status !== "ACTIVE" ? (
          <Link href={href.operation(c.operation_id)} ariaLabel={`Progress of ${c.name}`}>Progress</Link>
        ) : (
          <span className="ps-sr-only">None</span>
        ),
    },
  ];

  return (
    <SpaceBetween size="l">
      {error && !notAvailable && (
        <Alert type="error" header="Could not list clusters" action={<Button onClick={() => void load()}>Try again</Button>}>
          {error.message}
        </Alert>
      )}
      <ResourceTable<ClusterSummary>
        id="clusters"
        title="Clusters"
        headerVariant="awsui-h1-sticky"
        variant="full-page"
        testId="clusters-table"
        description="HyperPod clusters on EKS in your account: those PodStart manages, and those it can import. The active cluster is the default for agents and the CLI."
        actions={
          <SpaceBetween direction="horizontal" size="xs" alignItems="end">
            <FormField label="Active cluster">
              <Select
                selectedOption={options.find((o) => o.value === activeValue) ?? { value: activeValue, label: active?.name ?? "None" }}
                options={options}
                onChange={({ detail }) => setActive(detail.selectedOption.value ?? "")}
                disabled={choose.busy || !clusters}
                statusType={choose.busy ? "loading" : "finished"}
                ariaLabel="Active cluster"
                data-testid="active-select"
              />
            </FormField>
            <Button disabled={!!importReason} disabledReason={importReason} onClick={() => navigate(href.import())}>
              Import cluster
            </Button>
            <Button variant="primary" href={href.create()} onFollow={(e) => { e.preventDefault(); navigate(href.create()); }}>
              Create cluster
            </Button>
          </SpaceBetween>
        }
        items={clusters ?? []}
        loading={loading}
        loadingText="Loading clusters"
        trackBy={(c) => `${c.origin ?? ""}/${c.region}/${c.name}`}
        defaultSort={{ column: "name" }}
        filterPlaceholder="Find clusters by name, region, status or type"
        empty={
          notAvailable ? (
            <Box textAlign="center" color="inherit">
              <b>Clusters are not available on this backend yet</b>
              <Box variant="p" color="inherit">
                The API answered: {error?.message}
              </Box>
            </Box>
          ) : (
            <Box textAlign="center" color="inherit">
              <SpaceBetween size="s">
                <b>No clusters</b>
                <Box variant="p" color="inherit">
                  Create a HyperPod cluster: PodStart checks zones, instance types and quotas first.
                </Box>
                <Button href={href.create()}>Create cluster</Button>
              </SpaceBetween>
            </Box>
          )
        }
        columns={columns}
      />
      {discovery && <DiscoveryNote discovery={discovery} />}
    </SpaceBetween>
  );
}
