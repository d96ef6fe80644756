import { useEffect, useState } from "react";

/** Hash routes: #/clusters, #/clusters/new, #/clusters/{region}/{name}, #/operations, #/operations/{id}. */
export type Route =
  | { page: "clusters" }
  | { page: "create" }
  | { page: "cluster"; region: string; name: string }
  | { page: "operations"; cluster?: string; status?: string }
  | { page: "operation"; id: string }
  | { page: "notfound"; path: string };

export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#/, "") || "/clusters";
  const [path, query = ""] = raw.split("?");
  const q = new URLSearchParams(query);
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts.length === 0 || (parts[0] === "clusters" && parts.length === 1)) return { page: "clusters" };
  if (parts[0] === "clusters" && parts[1] === "new" && parts.length === 2) return { page: "create" };
  if (parts[0] === "clusters" && parts.length === 3) return { page: "cluster", region: parts[1], name: parts[2] };
  if (parts[0] === "operations" && parts.length === 1)
    return { page: "operations", cluster: q.get("cluster") ?? undefined, status: q.get("status") ?? undefined };
  if (parts[0] === "operations" && parts.length === 2) return { page: "operation", id: parts[1] };
  return { page: "notfound", path };
}

export const href = {
  clusters: () => "#/clusters",
  create: () => "#/clusters/new",
  cluster: (region: string, name: string) => `#/clusters/${encodeURIComponent(region)}/${encodeURIComponent(name)}`,
  operations: (f: { cluster?: string; status?: string } = {}) => {
    const q = new URLSearchParams();
    if (f.cluster) q.set("cluster", f.cluster);
    if (f.status) q.set("status", f.status);
    const s = q.toString();
    return `#/operations${s ? `?${s}` : ""}`;
  },
  operation: (id: string) => `#/operations/${encodeURIComponent(id)}`,
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
