// One inference endpoint: what was asked and its live state (status read from the cluster, the operator's
// state and message), the Kubernetes objects PodStart made for it, scale and delete, and "Try it".
import { useEffect, useRef, useState } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import BreadcrumbGroup from "@cloudscape-design/components/breadcrumb-group";
import Button from "@cloudscape-design/components/button";
import Container from "@cloudscape-design/components/container";
import Header from "@cloudscape-design/components/header";
import KeyValuePairs from "@cloudscape-design/components/key-value-pairs";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Table from "@cloudscape-design/components/table";
import { api } from "../api/client";
import type { Endpoint } from "../api/types";
import { Status } from "../components/Status";
import { useLiveEvents } from "../lib/events";
import { fmtTime, text } from "../lib/format";
import { href } from "../lib/router";
import { useAsync } from "../lib/useAsync";
import { DeleteEndpointModal, ScaleModal, SETTLED, TryIt } from "./Endpoints";

const REFRESH_MS = 3000;

function autoscalingText(ep: Endpoint): string {
  const a = (ep.autoscaling ?? undefined) as Record<string, unknown> | undefined;
  if (!a) return "Off";
  const bounds = (a.keda ?? a) as Record<string, unknown>;
  const trigger = bounds.trigger ?? a.trigger;
  return `${text(bounds.min, "1")} to ${text(bounds.max)} replicas${trigger ? ` on ${typeof trigger === "string" ? trigger : JSON.stringify(trigger)}` : ""}${a.keda ? " (KEDA)" : ""}`;
}

function kvCacheText(ep: Endpoint): string {
  const c = ep.tiered_kv_cache as Record<string, unknown> | null | undefined;
  if (!c) return "Off";
  return `L1 ${c.l1 ? "on" : "off"}${c.l2_backend ? `, L2 ${String(c.l2_backend)}` : ""}`;
}

/** Who can reach a self-managed endpoint, as its request set it (the plan's exposure line, in words). */
export function reachText(ep: Endpoint): string {
  if (ep.service === "model_pool") return `Through pool ${text(ep.pool)}'s Service, inside the cluster`;
  if (ep.public) return "Public: anyone on the internet";
  if (ep.internet_facing) return `Internet-facing, from ${ep.source_ranges?.length ? ep.source_ranges.join(", ") : "the named ranges"}`;
  if (ep.service === "external") return `Inside the VPC (an internal Network Load Balancer${ep.source_ranges?.length ? `, from ${ep.source_ranges.join(", ")}` : ""})`;
  return "Inside the cluster (ClusterIP)";
}

export function apiKeyText(ep: Endpoint): string {
  return ep.api_key_required
    ? "Required: callers send Authorization: Bearer <key> or X-Api-Key: <key> (Try it sends it)"
    : "Not required: anyone who reaches it can use the model";
}

export default function EndpointDetail({ region, name, endpoint }: { region: string; name: string; endpoint: string }) {
  const detail = useAsync(() => api.endpoint(name, region, endpoint), [name, region, endpoint]);
  const [modal, setModal] = useState<null | "scale" | "delete">(null);
  const ep = detail.data;
  // Status is read live from the cluster: refresh while it moves, and when an event names this cluster.
  const reload = useRef(detail.reload);
  reload.current = detail.reload;
  const moving = ep !== undefined && !SETTLED.has(ep.status);
  useEffect(() => {
    if (!moving || modal) return;
    const t = setInterval(() => reload.current(), REFRESH_MS);
    return () => clearInterval(t);
  }, [moving, modal]);
  useLiveEvents((ev) => {
    const t = ev.data?.target;
    if (t && t.cluster === name && (!t.resource || t.resource === endpoint)) reload.current();
  });
  return (
    <SpaceBetween size="l">
      <BreadcrumbGroup
        ariaLabel="Breadcrumbs"
        items={[
          { text: "Clusters", href: href.clusters() },
          { text: name, href: href.cluster(region, name) },
          { text: "Endpoints", href: href.endpoints(region, name) },
          { text: endpoint, href: href.endpoint(region, name, endpoint) },
        ]}
      />
      <Header
        variant="h1"
        description={ep ? `${ep.mode === "managed" ? "Managed by the HyperPod inference operator" : `Self-managed ${text(ep.engine)}`} on ${name} (${region})` : `${name} (${region})`}
        actions={
          <SpaceBetween direction="horizontal" size="xs">
            <Button onClick={() => detail.reload()} iconName="refresh" ariaLabel="Refresh" />
            <Button onClick={() => setModal("scale")} disabled={!ep || ep.service === "model_pool"}
              disabledReason={ep?.service === "model_pool" ? `Served by workers of pool ${ep.pool}: assign or release them on the pool` : undefined}>Scale</Button>
            <Button onClick={() => setModal("delete")} disabled={!ep}>Delete</Button>
          </SpaceBetween>
        }
      >
        {endpoint}
      </Header>
      {detail.error && !ep && <Alert type="error">{detail.error.message}</Alert>}
      {ep && (
        <>
          {ep.status === "FAILED" && ep.message && <Alert type="error" header="The deployment failed">{ep.message}</Alert>}
          <Container header={<Header variant="h2" description={ep.live ? "Read from the cluster just now" : "From PodStart's record (the cluster was not read)"}>Overview</Header>}>
            <KeyValuePairs
              columns={3}
              items={[
                { label: "Status", value: <span data-testid="endpoint-status" data-status={ep.status}><Status value={ep.status} /></span> },
                { label: "Replicas", value: <span data-testid="endpoint-replicas">{ep.ready_replicas === null || ep.ready_replicas === undefined ? `${ep.replicas} asked` : `${ep.ready_replicas} of ${ep.replicas} ready`}</span> },
                { label: "Autoscaling", value: autoscalingText(ep) },
                { label: "Model", value: `${ep.model} (${ep.model_source})` },
                { label: "Instance type", value: `${ep.instance_type}${ep.gpus ? `, ${ep.gpus} GPU${ep.gpus > 1 ? "s" : ""} per replica` : ""}` },
                { label: "Service", value: `${ep.service}${ep.pool ? ` (pool ${ep.pool})` : ""}: ${ep.service_name}` },
                ...(ep.mode === "managed"
                  ? [
                      { label: "Operator state", value: text(ep.state) },
                      { label: "Routing", value: text(ep.routing_strategy) },
                      { label: "Tiered KV cache", value: kvCacheText(ep) },
                    ]
                  : []),
                ...(ep.mode === "managed"
                  ? []
                  : [
                      { label: "Reachable from", value: <span data-testid="endpoint-reach">{reachText(ep)}</span> },
                      { label: "API key", value: <span data-testid="endpoint-api-key">{apiKeyText(ep)}</span> },
                    ]),
                ...(ep.router ? [{ label: "Router", value: JSON.stringify(ep.router) }] : []),
                { label: "Message", value: text(ep.message) },
                { label: "Created", value: `${fmtTime(ep.created_at)} by ${ep.created_by}` },
                {
                  label: "Last operation",
                  value: ep.operation_id ? <Button variant="inline-link" href={href.operation(ep.operation_id)}>{ep.operation_id}</Button> : "-",
                },
              ]}
            />
          </Container>
          <Table
            header={<Header variant="h2" counter={`(${(ep.objects ?? []).length})`} description="What PodStart made for this endpoint; deleting it removes them">Objects</Header>}
            items={ep.objects ?? []}
            trackBy={(o) => `${o.kind}/${o.namespace}/${o.name}`}
            ariaLabels={{ tableLabel: "Objects" }}
            empty={<Box textAlign="center">None yet</Box>}
            columnDefinitions={[
              { id: "kind", header: "Kind", cell: (o) => o.kind, isRowHeader: true },
              { id: "name", header: "Name", cell: (o) => o.name },
              { id: "ns", header: "Namespace", cell: (o) => o.namespace || "(cluster)" },
              { id: "api", header: "API version", cell: (o) => o.api_version },
            ]}
          />
          <TryIt cluster={name} region={region} endpoints={[ep]} />
        </>
      )}
      {modal === "scale" && ep && <ScaleModal cluster={name} region={region} ep={ep} onClose={() => { setModal(null); detail.reload(); }} />}
      {modal === "delete" && ep && <DeleteEndpointModal cluster={name} region={region} ep={ep} onClose={() => setModal(null)} />}
    </SpaceBetween>
  );
}
