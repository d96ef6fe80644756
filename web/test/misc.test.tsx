import { render } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { captureTokenFromUrl, getToken, loadConfig } from "../src/auth";
import { fireEvent, screen } from "@testing-library/react";
import { breadcrumbs, titleOf } from "../src/App";
import { ResourceTable } from "../src/components/ResourceTable";
import { href, parseRoute } from "../src/lib/router";
import { buildBody, clientErrors, emptyDraft, knownFields, stepOf } from "../src/pages/CreateCluster";
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
  it("parses the hash routes: every page and tab has its own", () => {
    expect(parseRoute("")).toEqual({ page: "clusters" });
    expect(parseRoute("#/clusters/new")).toEqual({ page: "create" });
    expect(parseRoute("#/clusters/us-west-2/llm")).toEqual({ page: "cluster", region: "us-west-2", name: "llm", tab: "details" });
    expect(parseRoute("#/clusters/us-west-2/llm/nodes")).toEqual({ page: "cluster", region: "us-west-2", name: "llm", tab: "nodes" });
    expect(parseRoute("#/clusters/us-west-2/llm/bogus")).toEqual({ page: "notfound", path: "/clusters/us-west-2/llm/bogus" });
    expect(parseRoute("#/clusters/us-west-2/llm/jobs/train?namespace=team")).toEqual({ page: "job", region: "us-west-2", name: "llm", job: "train", namespace: "team" });
    expect(parseRoute("#/jobs?cluster=llm&region=us-west-2")).toEqual({ page: "jobs", cluster: "llm", region: "us-west-2" });
    expect(parseRoute("#/endpoints")).toEqual({ page: "endpoints", cluster: undefined, region: undefined });
    expect(parseRoute("#/settings")).toEqual({ page: "settings" });
    expect(parseRoute("#/operations?cluster=llm&status=FAILED")).toEqual({ page: "operations", cluster: "llm", status: "FAILED" });
    expect(parseRoute("#/operations/op-1")).toEqual({ page: "operation", id: "op-1" });
    expect(href.cluster("us-west-2", "llm", "groups")).toBe("#/clusters/us-west-2/llm/groups");
    expect(href.cluster("us-west-2", "llm")).toBe("#/clusters/us-west-2/llm");
    expect(href.allJobs({ cluster: "llm", region: "us-west-2" })).toBe("#/jobs?cluster=llm&region=us-west-2");
  });

  it("gives every page breadcrumbs and a title", () => {
    expect(breadcrumbs(parseRoute("#/clusters/us-west-2/llm/jobs/train")).map((b) => b.text)).toEqual(["Clusters", "llm", "Jobs", "train"]);
    expect(breadcrumbs(parseRoute("#/clusters/us-west-2/llm/nodes")).map((b) => b.href)).toEqual(["#/clusters", "#/clusters/us-west-2/llm", "#/clusters/us-west-2/llm/nodes"]);
    expect(breadcrumbs(parseRoute("#/settings")).map((b) => b.text)).toEqual(["Settings"]);
    expect(titleOf(parseRoute("#/clusters/us-west-2/llm/groups"))).toBe("Instance groups · llm");
  });
});

describe("create request body", () => {
  it("sends the contract's fields for every group, optional ones only when set", () => {
    const workers = { ...emptyGroup("workers"), availability_zone: "us-west-2a", instance_type: "ml.g5.8xlarge", instance_count: "2" };
    const cpu = { ...emptyGroup("cpu"), availability_zone: "us-west-2b", instance_type: "ml.c5.large", instance_count: "1" };
    const body = buildBody({ ...emptyDraft(), region: "us-west-2", name: " llm ", groups: [workers, cpu], fsx: true, fsx_capacity: "2400" });
    expect(body).toEqual({
      name: "llm",
      region: "us-west-2",
      node_recovery: "automatic",
      instance_groups: [
        { name: "workers", instance_type: "ml.g5.8xlarge", instance_count: 2, availability_zone: "us-west-2a", capacity_type: "on-demand", efa_only: false, volume_size_gb: 500 },
        { name: "cpu", instance_type: "ml.c5.large", instance_count: 1, availability_zone: "us-west-2b", capacity_type: "on-demand", efa_only: false, volume_size_gb: 500 },
      ],
      storage: { s3: true, fsx_lustre: { storage_capacity_gib: 2400, throughput_mb_per_tib: 250 } },
    });
  });

  it("says what is wrong at each field as it is typed, on the step that shows it", () => {
    const draft = { ...emptyDraft(), name: "Bad_Name", region: "us-west-2", fsx: true, fsx_capacity: "1000",
      groups: [{ ...emptyGroup("a"), availability_zone: "us-west-2a", instance_type: "ml.c5.large" }, { ...emptyGroup("a"), instance_count: "0" }] };
    const e = clientErrors(draft);
    expect(e.name).toBe("String should match pattern '^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$'");
    expect(e["storage.fsx_lustre.storage_capacity_gib"]).toBe("Input should be greater than or equal to 1200");
    expect(e["instance_groups.1.name"]).toMatch(/unique/);
    expect(e["instance_groups.1.instance_count"]).toBe("Input should be greater than or equal to 1");
    expect(e["instance_groups.1.instance_type"]).toBe("Choose an instance type.");
    expect(["name", "instance_groups.1.name", "storage.fsx_lustre.storage_capacity_gib", "node_recovery"].map(stepOf)).toEqual([0, 1, 2, 3]);
    expect(knownFields(2)).toContain("instance_groups.1.instance_count");
  });
});

describe("ResourceTable", () => {
  const items = Array.from({ length: 2000 }, (_, i) => ({ id: `op-${String(i).padStart(4, "0")}`, n: i, at: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString() }));
  const columns = [
    { id: "id", header: "Operation", cell: (r: (typeof items)[number]) => r.id, sortValue: (r: (typeof items)[number]) => r.id, isRowHeader: true },
    { id: "n", header: "Number", cell: (r: (typeof items)[number]) => String(r.n), sortValue: (r: (typeof items)[number]) => r.n },
  ];

  it("shows 2,000 rows a page at a time, sorted, filtered, with its preferences saved", () => {
    localStorage.clear();
    // how fast it renders is the bench's to say (tests/browser/bench.mjs, a 2,000-row table in Chromium), not a
    // timed assertion here: under make test's load a jsdom render took 5 s
    const { container, unmount } = render(<ResourceTable id="t1" title="Operations" items={items} columns={columns} trackBy="id" defaultSort={{ column: "n", descending: true }} />);
    const rows = () => [...container.querySelectorAll("tbody tr")].map((r) => r.textContent ?? "");
    expect(rows()).toHaveLength(20); // a page
    expect(rows()[0]).toContain("op-1999"); // newest first
    expect(screen.getByRole("heading", { name: /Operations/ }).textContent).toContain("(2000)");
    fireEvent.change(screen.getByLabelText("Filter operations"), { target: { value: "op-0042" } });
    expect(rows()).toHaveLength(1);
    expect(rows()[0]).toContain("op-0042");
    unmount();
    localStorage.setItem("podstart.table.t1", JSON.stringify({ pageSize: 50, contentDisplay: [{ id: "id", visible: true }, { id: "n", visible: false }] }));
    const again = render(<ResourceTable id="t1" title="Operations" items={items} columns={columns} trackBy="id" />);
    expect(again.container.querySelectorAll("tbody tr")).toHaveLength(50);
    expect(again.container.querySelector("thead")?.textContent).not.toContain("Number");
  });
});
