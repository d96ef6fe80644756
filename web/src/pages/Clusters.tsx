import { useEffect, useRef, useState } from "react";
import Alert from "@cloudscape-design/components/alert";
import Badge from "@cloudscape-design/components/badge";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Link from "@cloudscape-design/components/link";
import Select from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Table from "@cloudscape-design/components/table";
import { ApiError, api } from "../api/client";
import type { ClusterSummary, Page, Preferences } from "../api/types";
import { Status } from "../components/Status";
import { useLiveEvents } from "../lib/events";
import { href, navigate } from "../lib/router";
import { changedFields } from "../lib/diff";
import { useFlash } from "../lib/flash";

export function groupsText(c: ClusterSummary): string {
  return (c.instance_groups ?? [])
    .map((g) => `${g.name}: ${g.current_count === g.target_count ? g.current_count : `${g.current_count}/${g.target_count}`} × ${g.instance_type}`)
    .join(", ");
}

async function allClusters(): Promise<ClusterSummary[]> {
  const out: ClusterSummary[] = [];
  let token: string | null | undefined = null;
  for (let i = 0; i < 20; i++) {
    const page: Page<ClusterSummary> = await api.clusters({ limit: 100, next_token: token });
    out.push(...page.items);
    token = page.next_token;
    if (!token) break;
  }
  return out;
}

export default function Clusters() {
  const [clusters, setClusters] = useState<ClusterSummary[] | null>(null);
  const [error, setError] = useState<ApiError | Error | null>(null);
  const [loading, setLoading] = useState(true);
  const [prefs, setPrefs] = useState<Preferences | null>(null);
  const [saving, setSaving] = useState(false);
  const flash = useFlash();
  const seq = useRef(0);

  const load = async () => {
    const n = ++seq.current;
    try {
      const items = await allClusters();
      if (n !== seq.current) return;
      setClusters(items);
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
  const setActive = async (value: string) => {
    const [region, name] = value ? value.split("/") : ["", ""];
    const next = value ? { name, region } : null;
    const body = changedFields<Record<string, unknown>>({ active_cluster: active }, { active_cluster: next });
    if (Object.keys(body).length === 0) return;
    setSaving(true);
    try {
      setPrefs(await api.putPreferences(body as Partial<Preferences>));
      await load();
      flash.push({ type: "success", content: next ? `Active cluster: ${next.name} (${next.region}).` : "No active cluster." });
    } catch (e) {
      flash.push({ type: "error", header: "Could not set the active cluster", content: (e as Error).message });
    } finally {
      setSaving(false);
    }
  };

  const notAvailable = error instanceof ApiError && error.status === 404;
  const options = [
    { value: "", label: "None" },
    ...(clusters ?? []).map((c) => ({ value: `${c.region}/${c.name}`, label: c.name, description: c.region })),
  ];
  const activeValue = active ? `${active.region}/${active.name}` : "";

  return (
    <SpaceBetween size="l">
      {error && !notAvailable && (
        <Alert type="error" header="Could not list clusters" action={<Button onClick={() => void load()}>Try again</Button>}>
          {error.message}
        </Alert>
      )}
      <Table<ClusterSummary>
        header={
          <Header
            variant="h1"
            counter={clusters ? `(${clusters.length})` : undefined}
            description="HyperPod clusters on EKS that PodStart manages. The active cluster is the default for agents and the CLI."
            actions={
              <SpaceBetween direction="horizontal" size="xs" alignItems="end">
                <FormField label="Active cluster">
                  <Select
                    selectedOption={options.find((o) => o.value === activeValue) ?? { value: activeValue, label: active?.name ?? "None" }}
                    options={options}
                    onChange={({ detail }) => void setActive(detail.selectedOption.value ?? "")}
                    disabled={saving || !clusters}
                    statusType={saving ? "loading" : "finished"}
                  />
                </FormField>
                <Button variant="primary" href={href.create()} onFollow={(e) => { e.preventDefault(); navigate(href.create()); }}>
                  Create cluster
                </Button>
              </SpaceBetween>
            }
          >
            Clusters
          </Header>
        }
        items={clusters ?? []}
        loading={loading}
        loadingText="Loading clusters"
        trackBy={(c) => `${c.region}/${c.name}`}
        ariaLabels={{ tableLabel: "Clusters" }}
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
        columnDefinitions={[
          { id: "name", header: "Name", isRowHeader: true, cell: (c) => <Link href={href.cluster(c.region, c.name)}>{c.name}</Link> },
          { id: "region", header: "Region", cell: (c) => c.region },
          { id: "status", header: "Status", cell: (c) => <Status value={c.status} /> },
          { id: "k8s", header: "Kubernetes", cell: (c) => c.kubernetes_version ?? "—" },
          { id: "groups", header: "Instance groups", cell: (c) => groupsText(c) || "—" },
          { id: "active", header: "Active", cell: (c) => (c.active ? <Badge color="blue">Active</Badge> : <span className="ps-sr-only">No</span>) },
          { id: "op", header: "Operation", cell: (c) => (c.operation_id ? <Link href={href.operation(c.operation_id)}>Progress</Link> : "") },
        ]}
      />
    </SpaceBetween>
  );
}
