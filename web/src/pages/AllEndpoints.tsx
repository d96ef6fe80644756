// Endpoints across clusters (GET /v1/endpoints), with a cluster filter in the URL: each with its live status and URL,
// a link to its page (its test console) and to its cluster's Endpoints tab.
import { useEffect } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { api } from "../api/client";
import type { Endpoint } from "../api/types";
import { ResourceTable } from "../components/ResourceTable";
import { useLiveEvents } from "../lib/events";
import { href, navigate } from "../lib/router";
import { useAsync } from "../lib/useAsync";
import { ClusterFilter, UnreachableAlert, everything } from "./AllJobs";
import { SETTLED, endpointColumns } from "./Endpoints";

export default function AllEndpoints({ cluster, region }: { cluster?: string; region?: string }) {
  const list = useAsync(() => everything<Endpoint>((t) => api.allEndpoints({ cluster, region, limit: 100, next_token: t })), [cluster, region]);
  const items = list.data?.items ?? [];
  const moving = items.some((x) => !SETTLED.has(x.status));
  useEffect(() => {
    if (!moving) return;
    const t = setInterval(() => list.reload(), 3000);
    return () => clearInterval(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [moving, cluster, region]);
  useLiveEvents((ev) => {
    if (/Endpoint Status|Operation Status/.test(ev.detail_type)) list.reload();
  });
  return (
    <SpaceBetween size="l">
      {list.error && <Alert type="error" header="Could not list the endpoints" action={<Button onClick={list.reload}>Try again</Button>}>{list.error.message}</Alert>}
      <UnreachableAlert items={list.data?.unreachable ?? []} what="their endpoints" />
      <ResourceTable<Endpoint>
        id="all-endpoints"
        title="Endpoints"
        headerVariant="awsui-h1-sticky"
        variant="full-page"
        testId="all-endpoints"
        description="Inference endpoints on every cluster, status read live: open one to test it. Deploy from a cluster's Endpoints tab."
        items={items}
        loading={list.loading && !list.data}
        loadingText="Loading endpoints across clusters"
        trackBy={(x) => `${x.region}/${x.cluster}/${x.name}`}
        defaultSort={{ column: "name" }}
        filterPlaceholder="Find endpoints by name, model, status or engine"
        filters={<ClusterFilter cluster={cluster} region={region} onChange={(c) => navigate(href.allEndpoints(c ? { cluster: c.name, region: c.region } : {}))} />}
        actions={<Button iconName="refresh" ariaLabel="Refresh endpoints" onClick={list.reload} />}
        empty={
          <Box textAlign="center" color="inherit">
            <SpaceBetween size="xs">
              <b>No endpoints</b>
              <Box color="inherit">{cluster ? `No endpoint on ${cluster}.` : "No cluster serves an endpoint."} Deploy one from a cluster's Endpoints tab.</Box>
            </SpaceBetween>
          </Box>
        }
        columns={endpointColumns(undefined, true)}
      />
    </SpaceBetween>
  );
}
