import { render } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { captureTokenFromUrl, getToken, loadConfig } from "../src/auth";
import { VirtualTable } from "../src/components/VirtualTable";
import { parseRoute } from "../src/lib/router";
import { buildBody } from "../src/pages/CreateCluster";
import { emptyGroup } from "../src/components/InstanceGroupFields";

describe("sign-in token", () => {
  it("takes the token from the fragment, stores it for the tab and removes it from the address bar", () => {
    window.history.replaceState(null, "", "/#token=s3cr3t-abc");
    expect(captureTokenFromUrl()).toBe(true);
    expect(getToken()).toBe("s3cr3t-abc");
    expect(window.location.href).not.toContain("s3cr3t");
    expect(window.location.hash).toBe("#/clusters");
  });

  it("keeps a route that came with the token", () => {
    window.history.replaceState(null, "", "/#/operations/op-1?token=t2");
    captureTokenFromUrl();
    expect(getToken()).toBe("t2");
    expect(window.location.hash).toBe("#/operations/op-1");
  });

  it("treats an HTML answer for /config.json (the sandbox SPA fallback) as sandbox mode", async () => {
    const html = async () => new Response("<!doctype html>", { headers: { "content-type": "text/html" } });
    expect((await loadConfig(html as typeof fetch)).auth).toBe("sandbox");
    const cognito = async () =>
      new Response(JSON.stringify({ auth: "cognito", userPoolDomain: "https://x.auth.us-west-2.amazoncognito.com/", clientId: "c", apiUrl: "https://api.example/" }), {
        headers: { "content-type": "application/json" },
      });
    expect(await loadConfig(cognito as typeof fetch)).toMatchObject({ auth: "cognito", clientId: "c", apiUrl: "https://api.example", userPoolDomain: "https://x.auth.us-west-2.amazoncognito.com" });
  });
});

describe("routes", () => {
  it("parses the hash routes", () => {
    expect(parseRoute("")).toEqual({ page: "clusters" });
    expect(parseRoute("#/clusters/new")).toEqual({ page: "create" });
    expect(parseRoute("#/clusters/us-west-2/llm")).toEqual({ page: "cluster", region: "us-west-2", name: "llm" });
    expect(parseRoute("#/operations?cluster=llm&status=FAILED")).toEqual({ page: "operations", cluster: "llm", status: "FAILED" });
    expect(parseRoute("#/operations/op-1")).toEqual({ page: "operation", id: "op-1" });
  });
});

describe("create request body", () => {
  it("sends the contract's fields, optional ones only when set", () => {
    const group = { ...emptyGroup("workers"), availability_zone: "us-west-2a", instance_type: "ml.g5.8xlarge", instance_count: "2" };
    const body = buildBody({ region: "us-west-2", name: " llm ", group, kubernetes_version: "", vpc_cidr: "", node_recovery: "automatic", s3: true, fsx: false, fsx_capacity: "1200" });
    expect(body).toEqual({
      name: "llm",
      region: "us-west-2",
      node_recovery: "automatic",
      instance_groups: [{ name: "workers", instance_type: "ml.g5.8xlarge", instance_count: 2, availability_zone: "us-west-2a", capacity_type: "on-demand", efa_only: false, volume_size_gb: 500 }],
      storage: { s3: true, fsx_lustre: null },
    });
  });
});

describe("VirtualTable", () => {
  it("renders 2,000 rows as a window of rows, fast", () => {
    // jsdom does no layout: give elements the size a browser would.
    for (const [prop, v] of [["offsetHeight", 600], ["offsetWidth", 1000], ["clientHeight", 600]] as const)
      Object.defineProperty(HTMLElement.prototype, prop, { configurable: true, get: () => v });
    HTMLElement.prototype.getBoundingClientRect = () => ({ width: 1000, height: 600, top: 0, left: 0, right: 1000, bottom: 600, x: 0, y: 0, toJSON: () => ({}) });
    const items = Array.from({ length: 2000 }, (_, i) => ({ id: `op-${i}`, n: i }));
    const t0 = performance.now();
    const { container } = render(
      <VirtualTable label="Operations" items={items} rowKey={(r) => r.id} columns={[{ id: "id", header: "Operation", cell: (r) => r.id }]} height={600} />,
    );
    const ms = performance.now() - t0;
    const rows = container.querySelectorAll("tbody tr:not([aria-hidden])");
    expect(rows.length).toBeGreaterThan(5);
    expect(rows.length).toBeLessThan(100);
    expect(container.querySelector("table")?.getAttribute("aria-rowcount")).toBe("2001");
    expect(ms).toBeLessThan(1000);
  });
});
