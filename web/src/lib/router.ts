import { useEffect, useState } from "react";

/**
 * Hash routes: #/clusters, #/clusters/new, #/clusters/{region}/{name}, #/clusters/{region}/{name}/endpoints,
 * #/clusters/{region}/{name}/endpoints/{endpoint},
 * #/clusters/{region}/{name}/jobs/{job}, #/import, #/operations, #/operations/{id}.
 */
export type Route =
  | { page: "clusters" }
  | { page: "create" }
  | { page: "import"; region?: string; eks_cluster_name?: string }
  | { page: "cluster"; region: string; name: string }
  | { page: "job"; region: string; name: string; job: string; namespace: string }
  | { page: "endpoints"; region: string; name: string }
  | { page: "endpoint"; region: string; name: string; endpoint: string }
  | { page: "operations"; cluster?: string; status?: string }
  | { page: "operation"; id: string }
  | { page: "audit"; actor?: string; cluster?: string; action?: string; face?: string }
  | { page: "notfound"; path: string };

export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#/, "") || "/clusters";
  const [path, query = ""] = raw.split("?");
  const q = new URLSearchParams(query);
  // A sign-in link is taken out of the address before routing; never route (or show) a token.
  if (/(^|[?&/])token=/.test(raw)) return { page: "clusters" };
  const parts = path.split("/").filter(Boolean).map(safeDecode);
  if (parts.length === 0 || (parts[0] === "clusters" && parts.length === 1)) return { page: "clusters" };
  if (parts[0] === "clusters" && parts[1] === "new" && parts.length === 2) return { page: "create" };
  if (parts[0] === "clusters" && parts.length === 3) return { page: "cluster", region: parts[1], name: parts[2] };
  if (parts[0] === "clusters" && parts.length === 5 && parts[3] === "jobs")
    return { page: "job", region: parts[1], name: parts[2], job: parts[4], namespace: q.get("namespace") ?? "default" };
  if (parts[0] === "clusters" && parts.length === 4 && parts[3] === "endpoints")
    return { page: "endpoints", region: parts[1], name: parts[2] };
  if (parts[0] === "clusters" && parts.length === 5 && parts[3] === "endpoints")
    return { page: "endpoint", region: parts[1], name: parts[2], endpoint: parts[4] };
  if (parts[0] === "import" && parts.length === 1)
    return { page: "import", region: q.get("region") ?? undefined, eks_cluster_name: q.get("eks_cluster_name") ?? undefined };
  if (parts[0] === "operations" && parts.length === 1)
    return { page: "operations", cluster: q.get("cluster") ?? undefined, status: q.get("status") ?? undefined };
  if (parts[0] === "operations" && parts.length === 2) return { page: "operation", id: parts[1] };
  if (parts[0] === "audit" && parts.length === 1) {
    const f = (k: string) => q.get(k) || undefined;
    return { page: "audit", actor: f("actor"), cluster: f("cluster"), action: f("action"), face: f("face") };
  }
  return { page: "notfound", path };
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export const href = {
  clusters: () => "#/clusters",
  create: () => "#/clusters/new",
  import: (prefill: { region?: string; eks_cluster_name?: string } = {}) => {
    const q = new URLSearchParams();
    if (prefill.region) q.set("region", prefill.region);
    if (prefill.eks_cluster_name) q.set("eks_cluster_name", prefill.eks_cluster_name);
    const s = q.toString();
    return `#/import${s ? `?${s}` : ""}`;
  },
  cluster: (region: string, name: string) => `#/clusters/${encodeURIComponent(region)}/${encodeURIComponent(name)}`,
  endpoints: (region: string, name: string) => `#/clusters/${encodeURIComponent(region)}/${encodeURIComponent(name)}/endpoints`,
  endpoint: (region: string, name: string, endpoint: string) =>
    `#/clusters/${encodeURIComponent(region)}/${encodeURIComponent(name)}/endpoints/${encodeURIComponent(endpoint)}`,
  operations: (f: { cluster?: string; status?: string } = {}) => {
    const q = new URLSearchParams();
    if (f.cluster) q.set("cluster", f.cluster);
    if (f.status) q.set("status", f.status);
    const s = q.toString();
    return `#/operations${s ? `?${s}` : ""}`;
  },
  operation: (id: string) => `#/operations/${encodeURIComponent(id)}`,
  audit: (f: { actor?: string; cluster?: string; action?: string; face?: string } = {}) => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(f)) if (v) q.set(k, v);
    const s = q.toString();
    return `#/audit${s ? `?${s}` : ""}`;
  },
  job: (region: string, name: string, job: string, namespace = "default") =>
    `#/clusters/${encodeURIComponent(region)}/${encodeURIComponent(name)}/jobs/${encodeURIComponent(job)}` +
    (namespace === "default" ? "" : `?namespace=${encodeURIComponent(namespace)}`),
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
