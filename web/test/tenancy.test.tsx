// Tenancy and security in the UI (issue 24): the exposure rule as the user types, the bucket and namespace choices,
// admin-only actions disabled with their reason, the plan's exposure line on its own.
import { fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import type { ReactNode } from "react";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { Me, NamespaceView, Plan, Volume } from "../src/api/types";

const apiMock = vi.hoisted(() => ({
  me: vi.fn(),
  namespaces: vi.fn(),
  createNamespace: vi.fn(),
  planCreateNamespace: vi.fn(),
  deleteNamespace: vi.fn(),
  planDeleteNamespace: vi.fn(),
  volumes: vi.fn(),
  buckets: vi.fn(),
  addStorage: vi.fn(),
  reconcile: vi.fn(),
  cluster: vi.fn(),
  endpoints: vi.fn(),
  pools: vi.fn(),
  models: vi.fn(),
  secretNames: vi.fn(),
  planDeployEndpoint: vi.fn(),
  deployEndpoint: vi.fn(),
  operation: vi.fn(),
}));
vi.mock("../src/api/client", async (orig) => ({ ...(await orig<typeof import("../src/api/client")>()), api: apiMock }));

import { ApiError } from "../src/api/client";
import { NamespacesPanel, deleteReason } from "../src/components/NamespacesPanel";
import { namespaceOptions } from "../src/components/NamespaceSelect";
import { PlanPanel } from "../src/components/PlanPanel";
import { StoragePanel, bucketOptions, registrationScope } from "../src/components/StoragePanel";
import { parseRanges, sourceRangesProblem } from "../src/lib/exposure";
import { MeProvider, adminOnly } from "../src/lib/me";
import EndpointsPage, { endpointBody } from "../src/pages/Endpoints";
import { apiKeyText, reachText } from "../src/pages/EndpointDetail";

const ADMIN: Me = { sub: "a", name: "sandbox-admin", role: "admin", can_mutate: true, can_administer: true };
const OPERATOR: Me = { sub: "o", name: "sandbox-operator", role: "operator", can_mutate: true, can_administer: false };
const NS: NamespaceView[] = [
  { name: "default", status: "Active", created_at: "2026-01-01T00:00:00Z", data_volume: true, secrets_access: true, default: true },
  { name: "team-a", status: "Active", created_at: "2026-01-02T00:00:00Z", data_volume: true, secrets_access: true, default: false },
];
const BUCKETS = [
  { bucket: "podstart-data-1", prefix: "", owned: true },
  { bucket: "team-datasets-1", prefix: "", owned: false },
  { bucket: "shared-corpora", prefix: "curated/", owned: false },
];

const withMe = (ui: ReactNode) => render(<MeProvider>{ui}</MeProvider>);
/** The message describes the field's control (aria-describedby), not just somewhere in the dialog. */
async function atField(dialog: HTMLElement, label: string, message: RegExp) {
  await waitFor(() => {
    const ids = (within(dialog).getByLabelText(label).getAttribute("aria-describedby") ?? "").split(" ").filter(Boolean);
    expect(ids.map((id) => document.getElementById(id)?.textContent ?? "").join(" ")).toMatch(message);
  });
}
const openSelect = (trigger: HTMLElement) => { fireEvent.mouseDown(trigger); fireEvent.click(trigger); };

beforeEach(() => {
  for (const f of Object.values(apiMock)) f.mockReset();
  apiMock.namespaces.mockResolvedValue({ cluster: "c", region: "us-west-2", items: NS });
  apiMock.buckets.mockResolvedValue({ items: BUCKETS });
  apiMock.secretNames.mockResolvedValue({ namespace: "default", names: ["chat-key"] });
});

describe("who can reach an endpoint, as the user types (EndpointCreate's rule)", () => {
  it("asks internet-facing endpoints for narrow ranges unless public", () => {
    expect(sourceRangesProblem(true, false, [])).toMatch(/names the CIDRs allowed to reach it/);
    expect(sourceRangesProblem(true, false, ["10.0.0.0/8", "0.0.0.0/0"])).toMatch(/^0\.0\.0\.0\/0 is everyone on the internet/);
    expect(sourceRangesProblem(true, false, ["::/0"])).toMatch(/^::\/0 is everyone/);
    expect(sourceRangesProblem(true, false, ["203.0.113.0/24", "2001:db8::/32"])).toBeUndefined();
    expect(sourceRangesProblem(true, true, [])).toBeUndefined(); // an admin's public endpoint
    expect(sourceRangesProblem(false, false, [])).toBeUndefined(); // internal NLB: the VPC
  });

  it("reads CIDRs as the API does: no host bits, no nonsense", () => {
    expect(sourceRangesProblem(false, false, ["203.0.113.7/24"])).toMatch(/203\.0\.113\.7\/24 is not a CIDR block/);
    expect(sourceRangesProblem(false, false, ["300.0.0.0/8"])).toMatch(/not a CIDR/);
    expect(sourceRangesProblem(false, false, ["10.0.0.0"])).toMatch(/not a CIDR/);
    expect(sourceRangesProblem(false, false, ["10.0.0.0/33"])).toMatch(/not a CIDR/);
    expect(parseRanges(" 10.0.0.0/8,\n203.0.113.0/24 ,")).toEqual(["10.0.0.0/8", "203.0.113.0/24"]);
  });

  it("sends public and the API key Secret only where they apply", () => {
    const base = { mode: "self-managed", name: "e", engine: "vllm", image: "i:v1", source: "s3", uri: "/data/models/m/", replicas: "1", gpus: "1", instance_type: "t" };
    expect(endpointBody({ ...base, service: "external", internet_facing: true, public: true, api_key_secret: "k" }))
      .toMatchObject({ service: "external", internet_facing: true, public: true, api_key_secret: "k" });
    const internal = endpointBody({ ...base, service: "internal", internet_facing: true, public: true, api_key_secret: "k" });
    expect(internal).not.toHaveProperty("public");
    expect(internal).not.toHaveProperty("internet_facing");
    expect(internal.api_key_secret).toBe("k");
    expect(endpointBody({ ...base, service: "model_pool", pool: "p", api_key_secret: "k" })).not.toHaveProperty("api_key_secret");
  });

  it("says on the endpoint's page who can reach it and whether a key is needed", () => {
    const ep = { service: "external", internet_facing: true, public: false, source_ranges: ["203.0.113.0/24"], api_key_required: true } as never;
    expect(reachText(ep)).toBe("Internet-facing, from 203.0.113.0/24");
    expect(reachText({ ...(ep as object), public: true } as never)).toBe("Public: anyone on the internet");
    expect(reachText({ service: "internal", source_ranges: [] } as never)).toBe("Inside the cluster (ClusterIP)");
    expect(apiKeyText(ep)).toMatch(/^Required: callers send Authorization: Bearer <key> or X-Api-Key/);
    expect(apiKeyText({ api_key_required: false } as never)).toMatch(/^Not required/);
  });
});

describe("choices instead of free text", () => {
  it("offers PodStart's bucket to everyone and registered ones to admins, with the prefix they cover", () => {
    const op = bucketOptions(BUCKETS, false);
    expect(op.map((o) => [o.value, o.tags[0], o.disabled])).toEqual([
      ["podstart-data-1", "PodStart's", false], ["team-datasets-1", "registered — admin", true], ["shared-corpora", "registered — admin", true]]);
    expect(op[1].disabledReason).toMatch(/only an admin can mount it/);
    expect(bucketOptions(BUCKETS, true).every((o) => !o.disabled)).toBe(true);
    expect(registrationScope(BUCKETS[2])).toBe("registered for keys under curated/ only");
    expect(registrationScope(BUCKETS[1])).toBe("registered: the whole bucket");
  });

  it("offers PodStart's namespaces (default before the list answers; a terminating one disabled)", () => {
    expect(namespaceOptions(undefined).map((o) => o.value)).toEqual(["default"]);
    const opts = namespaceOptions([...NS, { ...NS[1], name: "old", status: "Terminating" }]);
    expect(opts.map((o) => [o.value, o.disabled])).toEqual([["default", false], ["team-a", false], ["old", true]]);
  });

  it("says why an admin's action is not offered", () => {
    expect(adminOnly(OPERATOR, "create namespaces")).toBe("Only an admin can create namespaces (you are operator).");
    expect(adminOnly(ADMIN, "create namespaces")).toBeUndefined();
    expect(deleteReason(NS[0], undefined)).toMatch(/never deleted/);
    expect(deleteReason(NS[1], "no")).toBe("no");
    expect(deleteReason(NS[1], undefined)).toBeUndefined();
  });
});

describe("Namespaces panel", () => {
  it("lists the namespaces; an operator sees Create and Delete disabled with the reason", async () => {
    apiMock.me.mockResolvedValue(OPERATOR);
    withMe(<NamespacesPanel cluster="c" region="us-west-2" />);
    const table = await screen.findByRole("table", { name: "Namespaces" });
    await within(table).findByText("team-a");
    const row = within(table).getAllByRole("row").find((r) => r.textContent?.startsWith("default"))!;
    expect(row.textContent).toMatch(/^defaultdefault/); // the name and its badge
    const create = screen.getByRole("button", { name: "Create namespace" });
    await waitFor(() => expect(create.getAttribute("aria-disabled")).toBe("true"));
    expect(document.body.textContent).toContain("Only an admin can create namespaces (you are operator).");
    expect(within(table).getByRole("button", { name: "Delete namespace team-a" }).getAttribute("aria-disabled")).toBe("true");
    expect(document.body.textContent).not.toMatch(/\bnull\b|\bundefined\b|\bNaN\b/);
  });

  it("an admin creates one: a refused name lands on the field, a good one is planned before it is created", async () => {
    apiMock.me.mockResolvedValue(ADMIN);
    apiMock.createNamespace.mockRejectedValueOnce(new ApiError(422, { status: 422, title: "Invalid request",
      errors: [{ loc: ["body", "name"], msg: "kube-system is a system namespace" }] }));
    apiMock.planCreateNamespace.mockResolvedValue({ dry_run: true, valid: true, kind: "namespace.create", target: {}, quota: [], warnings: [],
      changes: [{ action: "create", kind: "Kubernetes Namespace", name: "team-b", step: "namespace", details: {} }],
      cost: { currency: "USD", hourly: 0, monthly_estimate: 0, lines: [] } } as unknown as Plan);
    apiMock.createNamespace.mockReturnValue(new Promise(() => {}));
    withMe(<NamespacesPanel cluster="c" region="us-west-2" />);
    const create = await screen.findByRole("button", { name: "Create namespace" });
    await waitFor(() => expect(create.getAttribute("aria-disabled")).not.toBe("true"));
    fireEvent.click(create);
    const dialog = await screen.findByRole("dialog");
    fireEvent.change(within(dialog).getByLabelText("Name"), { target: { value: "kube-system" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Review" }));
    fireEvent.click(within(dialog).getByRole("button", { name: "Create namespace" }));
    await within(dialog).findByText("kube-system is a system namespace"); // back on the form, at the field
    fireEvent.change(within(dialog).getByLabelText("Name"), { target: { value: "team-b" } });
    expect(within(dialog).queryByText("kube-system is a system namespace")).toBeNull();
    fireEvent.click(within(dialog).getByRole("button", { name: "Review" }));
    expect((await within(dialog).findByTestId("plan-changes")).textContent).toBe("1 change");
    fireEvent.click(within(dialog).getByRole("button", { name: "Create namespace" }));
    await waitFor(() => expect(apiMock.createNamespace).toHaveBeenCalledTimes(2));
    expect(apiMock.createNamespace.mock.calls[1][2]).toEqual({ name: "team-b" });
    expect(apiMock.planCreateNamespace.mock.calls.at(-1)?.[2]).toEqual({ name: "team-b" });
  });
});

describe("the plan's exposure line", () => {
  it("stands alone as a warning, above the other warnings", async () => {
    const plan = { dry_run: true, valid: true, kind: "endpoint.deploy", changes: [], quota: [],
      cost: { currency: "USD", hourly: 0, monthly_estimate: 0, lines: [] },
      warnings: ["service external: an NLB, billed by the hour", "EXPOSURE: internet-facing, reachable from 203.0.113.0/24; no API key"] } as unknown as Plan;
    render(<PlanPanel load={async () => plan} deps={[]} />);
    const exposure = await screen.findByTestId("plan-exposure");
    expect(exposure.textContent).toBe("EXPOSURE: internet-facing, reachable from 203.0.113.0/24; no API key");
    expect(exposure.closest('[class*="type-warning"]')).not.toBeNull();
    expect(screen.getByTestId("plan-warnings").textContent).not.toContain("EXPOSURE");
    expect(screen.getByText("This plan has 1 warning")).toBeTruthy();
  });
});

describe("Storage panel", () => {
  const volumes: Volume[] = [
    { name: "scratch", kind: "fsx_lustre", file_system_id: "fs-1", status: "AVAILABLE", removable: true } as Volume,
    { name: "corpus", kind: "s3", bucket: "podstart-data-1", prefix: "corpus/", status: "AVAILABLE", removable: true } as Volume,
  ];

  it("removing an FSx file system is an admin's; an S3 mount an operator may remove; registered buckets are not choosable", async () => {
    apiMock.me.mockResolvedValue(OPERATOR);
    apiMock.volumes.mockResolvedValue({ cluster: "c", region: "us-west-2", items: volumes });
    withMe(<StoragePanel cluster="c" region="us-west-2" />);
    const fsx = await screen.findByRole("button", { name: "Remove scratch" });
    await waitFor(() => expect(fsx.getAttribute("aria-disabled")).toBe("true"));
    expect(document.body.textContent).toContain("Only an admin can remove an FSx file system");
    expect(screen.getByRole("button", { name: "Remove corpus" }).getAttribute("aria-disabled")).not.toBe("true");

    fireEvent.click(screen.getByRole("button", { name: "Add storage" }));
    const dialog = await screen.findByRole("dialog");
    await waitFor(() => expect(within(dialog).getByRole("button", { name: /^Bucket/ }).textContent).toContain("podstart-data-1"));
    expect(within(dialog).queryByRole("textbox", { name: "Namespace" })).toBeNull();
    openSelect(within(dialog).getByRole("button", { name: /^Bucket/ }));
    const team = await within(dialog).findByRole("option", { name: /team-datasets-1/ });
    expect(team.getAttribute("aria-disabled")).toBe("true");
  });
});

describe("deploy form exposure", () => {
  beforeEach(() => {
    apiMock.cluster.mockResolvedValue({ name: "llm", region: "us-west-2", status: "ACTIVE", instance_groups: [
      { name: "gpu", instance_type: "ml.g5.8xlarge", availability_zone: "us-west-2a", capacity_type: "on-demand", efa_only: false,
        instance_count: 1, target_count: 1, current_count: 1, counts_as_of: null }] });
    apiMock.endpoints.mockResolvedValue({ cluster: "llm", region: "us-west-2", items: [] });
    apiMock.pools.mockResolvedValue({ cluster: "llm", region: "us-west-2", items: [] });
    apiMock.models.mockResolvedValue({ cluster: "llm", region: "us-west-2", bucket: "b", items: [] });
  });

  async function openExternal() {
    const deploy = await screen.findByRole("button", { name: "Deploy endpoint" });
    await waitFor(() => expect(deploy.getAttribute("aria-disabled")).not.toBe("true"));
    fireEvent.click(deploy);
    const dialog = await screen.findByRole("dialog");
    openSelect(within(dialog).getByRole("button", { name: /^Service/ }));
    fireEvent.mouseUp(await within(dialog).findByRole("option", { name: "External (Network Load Balancer)" }));
    fireEvent.click(await within(dialog).findByLabelText("Internet-facing"));
    return dialog;
  }

  it("an operator: ranges required at the field as typed, Review waits, no Public; the API key Secret by name", async () => {
    apiMock.me.mockResolvedValue(OPERATOR);
    withMe(<EndpointsPage region="us-west-2" name="llm" />);
    await waitFor(() => expect(apiMock.me).toHaveBeenCalled());
    const dialog = await openExternal();
    await atField(dialog, "Allowed source ranges", /names the CIDRs allowed to reach it/);
    expect(within(dialog).getByRole("button", { name: "Review" }).getAttribute("aria-disabled")).toBe("true");
    expect(within(dialog).queryByLabelText("Public (anyone on the internet)")).toBeNull();
    fireEvent.change(within(dialog).getByLabelText("Allowed source ranges"), { target: { value: "::/0" } });
    await atField(dialog, "Allowed source ranges", /::\/0 is everyone on the internet/);
    fireEvent.change(within(dialog).getByLabelText("Allowed source ranges"), { target: { value: "203.0.113.0/24" } });
    await waitFor(() => expect(within(dialog).getByRole("button", { name: "Review" }).getAttribute("aria-disabled")).not.toBe("true"));
    expect(dialog.textContent).toContain("Authorization: Bearer <key>");
    openSelect(within(dialog).getByRole("button", { name: /^API key Secret/ }));
    fireEvent.mouseUp(await within(dialog).findByRole("option", { name: "chat-key" }));
    apiMock.planDeployEndpoint.mockResolvedValue({ status: 200, body: { dry_run: true, valid: true, kind: "endpoint.deploy", changes: [], quota: [],
      cost: { currency: "USD", hourly: 0, monthly_estimate: 0, lines: [] }, warnings: ["EXPOSURE: internet-facing, reachable from 203.0.113.0/24; callers must send the API key in Secret chat-key"] } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Review" }));
    await within(dialog).findByTestId("plan-exposure");
    expect(apiMock.planDeployEndpoint.mock.calls[0][2]).toMatchObject({ service: "external", internet_facing: true, source_ranges: ["203.0.113.0/24"], api_key_secret: "chat-key" });
    expect(apiMock.planDeployEndpoint.mock.calls[0][2]).not.toHaveProperty("public");
  });

  it("an admin may make it public: then ranges are optional", async () => {
    apiMock.me.mockResolvedValue(ADMIN);
    withMe(<EndpointsPage region="us-west-2" name="llm" />);
    await waitFor(() => expect(apiMock.me).toHaveBeenCalled());
    const dialog = await openExternal();
    await atField(dialog, "Allowed source ranges", /names the CIDRs allowed to reach it/);
    fireEvent.click(within(dialog).getByLabelText("Public (anyone on the internet)"));
    await waitFor(() => expect(within(dialog).queryAllByText(/names the CIDRs allowed to reach it/)).toHaveLength(0));
    expect(within(dialog).getByRole("button", { name: "Review" }).getAttribute("aria-disabled")).not.toBe("true");
  });
});
