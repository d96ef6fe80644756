import { useEffect, useState } from "react";

/**
 * Hash routes, one per page and tab (deep links for everything):
 *   #/clusters, #/clusters/new, #/clusters/{region}/{name}[/{tab}],
 *   #/clusters/{region}/{name}/jobs/{job}[?namespace=], #/clusters/{region}/{name}/endpoints/{endpoint},
 *   #/jobs[?cluster=&region=], #/endpoints[?cluster=&region=], #/import, #/operations, #/operations/{id},
 *   #/audit, #/settings.
 */
export const CLUSTER_TABS = ["details", "groups", "nodes", "storage", "jobs", "endpoints", "namespaces", "features", "events", "operations"] as const;
export type ClusterTab = (typeof CLUSTER_TABS)[number];

export type Route =
  | { page: "clusters" }
  | { page: "create" }
  | { page: "import"; region?: string; eks_cluster_name?: string }
  | { page: "cluster"; region: string; name: string; tab: ClusterTab }
  | { page: "job"; region: string; name: string; job: string; namespace: string }
  | { page: "endpoint"; region: string; name: string; endpoint: string }
  | { page: "jobs"; cluster?: string; region?: string }
  | { page: "endpoints"; cluster?: string; region?: string }
  | { page: "operations"; cluster?: string; status?: string }
  | { page: "operation"; id: string }
  | { page: "audit"; actor?: string; cluster?: string; action?: string; face?: string }
  | { page: "settings" }
  | { page: "notfound"; path: string };

const isTab = (s: string): s is ClusterTab => (CLUSTER_TABS as readonly string[]).includes(s);

export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#/, "") || "/clusters";
  const [path, query = ""] = raw.split("?");
  const q = new URLSearchParams(query);
  const f = (k: string) => q.get(k) || undefined;
  // A sign-in link is taken out of the address before routing; never route (or show) a token.
  if (/(^|[?&/])token=/.test(raw)) return { page: "clusters" };
  const parts = path.split("/").filter(Boolean).map(safeDecode);
  if (parts.length === 0 || (parts[0] === "clusters" && parts.length === 1)) return { page: "clusters" };
  if (parts[0] === "clusters" && parts[1] === "new" && parts.length === 2) return { page: "create" };
  if (parts[0] === "clusters" && parts.length === 3) return { page: "cluster", region: parts[1], name: parts[2], tab: "details" };
  if (parts[0] === "clusters" && parts.length === 4 && isTab(parts[3]))
    return { page: "cluster", region: parts[1], name: parts[2], tab: parts[3] };
  if (parts[0] === "clusters" && parts.length === 5 && parts[3] === "jobs")
    return { page: "job", region: parts[1], name: parts[2], job: parts[4], namespace: q.get("namespace") ?? "default" };
  if (parts[0] === "clusters" && parts.length === 5 && parts[3] === "endpoints")
    return { page: "endpoint", region: parts[1], name: parts[2], endpoint: parts[4] };
  if (parts[0] === "jobs" && parts.length === 1) return { page: "jobs", cluster: f("cluster"), region: f("region") };
  if (parts[0] === "endpoints" && parts.length === 1) return { page: "endpoints", cluster: f("cluster"), region: f("region") };
  if (parts[0] === "import" && parts.length === 1)
    return { page: "import", region: f("region"), eks_cluster_name: f("eks_cluster_name") };
  if (parts[0] === "operations" && parts.length === 1) return { page: "operations", cluster: f("cluster"), status: f("status") };
  if (parts[0] === "operations" && parts.length === 2) return { page: "operation", id: parts[1] };
  if (parts[0] === "audit" && parts.length === 1)
    return { page: "audit", actor: f("actor"), cluster: f("cluster"), action: f("action"), face: f("face") };
  if (parts[0] === "settings" && parts.length === 1) return { page: "settings" };
  return { page: "notfound", path };
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function query(f: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(f)) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}

const c = (region: string, name: string) => `#/clusters/${encodeURIComponent(region)}/${encodeURIComponent(name)}`;

export const href = {
  clusters: () => "#/clusters",
  create: () => "#/clusters/new",
  import: (prefill: { region?: string; eks_cluster_name?: string } = {}) => `#/import${query(prefill)}`,
  cluster: (region: string, name: string, tab: ClusterTab = "details") => (tab === "details" ? c(region, name) : `${c(region, name)}/${tab}`),
  /** The cluster's Endpoints tab (endpoints, model pools, models). */
  endpoints: (region: string, name: string) => `${c(region, name)}/endpoints`,
  endpoint: (region: string, name: string, endpoint: string) => `${c(region, name)}/endpoints/${encodeURIComponent(endpoint)}`,
  job: (region: string, name: string, job: string, namespace = "default") =>
    `${c(region, name)}/jobs/${encodeURIComponent(job)}` + (namespace === "default" ? "" : `?namespace=${encodeURIComponent(namespace)}`),
  allJobs: (f: { cluster?: string; region?: string } = {}) => `#/jobs${query(f)}`,
  allEndpoints: (f: { cluster?: string; region?: string } = {}) => `#/endpoints${query(f)}`,
  operations: (f: { cluster?: string; status?: string } = {}) => `#/operations${query(f)}`,
  operation: (id: string) => `#/operations/${encodeURIComponent(id)}`,
  audit: (f: { actor?: string; cluster?: string; action?: string; face?: string } = {}) => `#/audit${query(f)}`,
  settings: () => "#/settings",
};

export function navigate(to: string): void {
  if (window.location.hash !== to) window.location.hash = to;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  return route;
}
