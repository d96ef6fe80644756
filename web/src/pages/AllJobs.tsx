// Jobs across clusters: every job PodStart submitted on any ACTIVE cluster (GET /v1/jobs), with a cluster filter
// kept in the URL; a cluster that could not be read is named, with why.
import { useEffect, useMemo } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import FormField from "@cloudscape-design/components/form-field";
import Select from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { api } from "../api/client";
import type { ClusterJob, Unreachable } from "../api/types";
import { jobColumns } from "../components/JobsPanel";
import { ResourceTable } from "../components/ResourceTable";
import { useLiveEvents } from "../lib/events";
import { href, navigate } from "../lib/router";
import { cached, useAsync } from "../lib/useAsync";

const REFRESH_MS = 5000;

/** Every page of a list across clusters (100 a page). */
async function everything<T>(read: (token: string | null) => Promise<{ items: T[]; next_token?: string | null; unreachable?: Unreachable[] }>) {
  const items: T[] = [];
  const unreachable: Unreachable[] = [];
  let token: string | null = null;
  for (let i = 0; i < 20; i++) {
    const page: { items: T[]; next_token?: string | null; unreachable?: Unreachable[] } = await read(token);
    items.push(...page.items);
    if (i === 0) unreachable.push(...(page.unreachable ?? []));
    token = page.next_token ?? null;
    if (!token) break;
  }
  return { items, unreachable };
}

export { everything };

/** The cluster filter of a list across clusters: every cluster PodStart manages, "All clusters" first. */
export function ClusterFilter({ cluster, region, onChange }: { cluster?: string; region?: string; onChange: (c?: { name: string; region: string }) => void }) {
  const clusters = useAsync(() => cached("clusters-for-filter", () => api.clusters({ limit: 100 })), []);
  const options = useMemo(() => [
    { value: "", label: "All clusters" },
    ...(clusters.data?.items ?? []).filter((c) => c.managed).map((c) => ({ value: `${c.region}/${c.name}`, label: c.name, description: c.region })),
  ], [clusters.data]);
  const value = cluster ? `${region ?? ""}/${cluster}` : "";
  const selected = options.find((o) => o.value === value || (cluster && o.label === cluster && !region)) ?? (cluster ? { value, label: cluster } : options[0]);
  return (
    <FormField label="Cluster">
      <Select
        ariaLabel="Cluster filter"
        data-testid="cluster-filter"
        selectedOption={selected}
        options={options}
        statusType={clusters.loading ? "loading" : "finished"}
        onChange={({ detail }) => {
          const v = detail.selectedOption.value ?? "";
          if (!v) onChange(undefined);
          else {
            const [r, ...n] = v.split("/");
            onChange({ name: n.join("/"), region: r });
          }
        }}
      />
    </FormField>
  );
}

export function UnreachableAlert({ items, what }: { items: Unreachable[]; what: string }) {
  if (!items.length) return null;
  return (
    <Alert type="warning" header={`${items.length === 1 ? "One cluster was" : `${items.length} clusters were`} not read: ${what} there are not listed`}>
      <ul className="ps-plain-list">
        {items.map((u) => <li key={`${u.region}/${u.cluster}`}><b>{u.cluster}</b> ({u.region}): {u.reason}</li>)}
      </ul>
    </Alert>
  );
}

export default function AllJobs({ cluster, region }: { cluster?: string; region?: string }) {
  const list = useAsync(() => everything<ClusterJob>((t) => api.allJobs({ cluster, region, limit: 100, next_token: t })), [cluster, region]);
  useEffect(() => {
    const t = setInterval(() => list.reload(), REFRESH_MS);
    return () => clearInterval(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [cluster, region]);
  useLiveEvents((ev) => {
    if (/Job Status|Operation Status/.test(ev.detail_type)) list.reload();
  });
  const items = list.data?.items ?? [];
  return (
    <SpaceBetween size="l">
      {list.error && <Alert type="error" header="Could not list the jobs" action={<Button onClick={list.reload}>Try again</Button>}>{list.error.message}</Alert>}
      <UnreachableAlert items={list.data?.unreachable ?? []} what="their jobs" />
      <ResourceTable<ClusterJob>
        id="all-jobs"
        title="Jobs"
        headerVariant="awsui-h1-sticky"
        variant="full-page"
        testId="all-jobs"
        description="Training jobs PodStart submitted, on every cluster: open one for its pods, metrics and logs. Submit a job from its cluster's Jobs tab."
        items={items}
        loading={list.loading && !list.data}
        loadingText="Loading jobs across clusters"
        trackBy={(j) => `${j.region}/${j.cluster}/${j.namespace}/${j.name}`}
        defaultSort={{ column: "created", descending: true }}
        filterPlaceholder="Find jobs by name, status, recipe or instance type"
        filters={<ClusterFilter cluster={cluster} region={region} onChange={(c) => navigate(href.allJobs(c ? { cluster: c.name, region: c.region } : {}))} />}
        actions={<Button iconName="refresh" ariaLabel="Refresh jobs" onClick={list.reload} />}
        empty={
          <Box textAlign="center" color="inherit">
            <SpaceBetween size="xs">
              <b>No jobs</b>
              <Box color="inherit">{cluster ? `No job on ${cluster}.` : "No cluster runs a job PodStart submitted."} Submit one from a cluster's Jobs tab.</Box>
            </SpaceBetween>
          </Box>
        }
        columns={jobColumns((j) => ({ region: (j as ClusterJob).region, cluster: (j as ClusterJob).cluster }), true)}
      />
    </SpaceBetween>
  );
}
