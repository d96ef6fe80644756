// Where an operation's result lives in the UI: the page (and tab) of what it acted on, so a flash and the operation
// page link back to it.
import type { Operation } from "../api/types";
import { href, type ClusterTab } from "./router";

export interface ResourceLink {
  href: string;
  /** "View cluster br-forms", "View job train". */
  text: string;
}

const TAB_OF: Record<string, ClusterTab> = {
  instance_group: "groups",
  nodes: "nodes",
  storage: "storage",
  features: "features",
  namespace: "namespaces",
  pool: "endpoints",
  model: "endpoints",
  job: "jobs",
  endpoint: "endpoints",
};

/** The page of what an operation acted on, or undefined (a deleted cluster, a training plan). */
export function resourceLink(op: Pick<Operation, "kind" | "target" | "status">): ResourceLink | undefined {
  const cluster = op.target?.cluster;
  const region = op.target?.region;
  if (!cluster || !region) return undefined;
  const [area] = op.kind.split(".");
  const resource = op.target?.resource ?? "";
  if (op.kind === "cluster.delete") return op.status === "SUCCEEDED" ? { href: href.clusters(), text: "View clusters" } : { href: href.cluster(region, cluster), text: `View cluster ${cluster}` };
  if (op.kind === "cluster.reconcile") return { href: href.cluster(region, cluster, "storage"), text: `View storage of ${cluster}` };
  if (area === "cluster" || area === "spec") return { href: href.cluster(region, cluster), text: `View cluster ${cluster}` };
  if (op.kind === "job.submit" && resource.startsWith("jobs/")) {
    const [, namespace, job] = resource.split("/");
    return { href: href.job(region, cluster, job, namespace), text: `View job ${job}` };
  }
  if (op.kind === "endpoint.deploy" || op.kind === "endpoint.update") {
    if (resource) return { href: href.endpoint(region, cluster, resource), text: `View endpoint ${resource}` };
  }
  const tab = TAB_OF[area];
  if (!tab) return { href: href.cluster(region, cluster), text: `View cluster ${cluster}` };
  const words: Record<ClusterTab, string> = {
    details: "cluster", groups: "instance groups", nodes: "nodes", storage: "storage", jobs: "jobs", endpoints: "endpoints",
    namespaces: "namespaces", features: "add-ons", events: "events", operations: "operations",
  };
  return { href: href.cluster(region, cluster, tab), text: `View ${words[tab]} of ${cluster}` };
}
