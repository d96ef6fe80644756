import { fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { Endpoint, Plan, Pool } from "../src/api/types";

const apiMock = vi.hoisted(() => ({
  cluster: vi.fn(),
  endpoints: vi.fn(),
  pools: vi.fn(),
  models: vi.fn(),
  secretNames: vi.fn(),
  downloadModel: vi.fn(),
  planDownloadModel: vi.fn(),
  deployEndpoint: vi.fn(),
  planDeployEndpoint: vi.fn(),
  invokeEndpoint: vi.fn(),
  createPool: vi.fn(),
  planCreatePool: vi.fn(),
  assignPool: vi.fn(),
  planAssignPool: vi.fn(),
}));
vi.mock("../src/api/client", async (orig) => ({ ...(await orig<typeof import("../src/api/client")>()), api: apiMock }));

import { ApiError } from "../src/api/client";
import { href, parseRoute } from "../src/lib/router";
import EndpointsPage, { byModel, deploySummary, downloadBody, endpointBody, fmtBytes, poolBody } from "../src/pages/Endpoints";

const ready: Endpoint = {
  name: "chat", cluster: "llm", region: "us-west-2", mode: "self-managed", engine: "vllm", model: "Qwen/Qwen3-0.6B/main",
  model_source: "s3", instance_type: "ml.g5.8xlarge", gpus: 1, replicas: 2, ready_replicas: 2, service: "internal",
  status: "READY", service_name: "chat", objects: [], live: true, created_by: "admin", created_at: "2026-01-01T00:00:00Z",
  internet_facing: false, public: false, source_ranges: [], api_key_required: false, ready: true,
};
const failed: Endpoint = { ...ready, name: "bad", status: "FAILED", ready_replicas: 0, message: "ErrImagePull: sandbox.invalid/vllm:v1" };

beforeEach(() => {
  for (const f of Object.values(apiMock)) f.mockReset();
  apiMock.cluster.mockResolvedValue({ name: "llm", region: "us-west-2", status: "ACTIVE", instance_groups: [
    { name: "gpu", instance_type: "ml.g5.8xlarge", availability_zone: "us-west-2a", capacity_type: "on-demand", efa_only: false,
      instance_count: 1, target_count: 1, current_count: 1, counts_as_of: null }] });
  apiMock.endpoints.mockResolvedValue({ cluster: "llm", region: "us-west-2", items: [ready, failed] });
  apiMock.pools.mockResolvedValue({ cluster: "llm", region: "us-west-2", items: [] });
  apiMock.models.mockResolvedValue({ cluster: "llm", region: "us-west-2", bucket: "podstart-data", items: [
    { model_id: "Qwen/Qwen3-0.6B", revision: "main", files: 7, bytes: 18688, last_modified: "2026-01-01T00:00:00Z",
      path: "/data/models/Qwen/Qwen3-0.6B/main/" }] });
  apiMock.secretNames.mockResolvedValue({ namespace: "default", names: ["hf-token", "other"] });
});

describe("deploy request", () => {
  it("sends only the self-managed fields, engine args one per line, the router with KEDA", () => {
    const body = endpointBody({ mode: "self-managed", name: "s", engine: "sglang", image: "lmsysorg/sglang:v1", source: "huggingface",
      model_id: "Qwen/Qwen3-0.6B", token_secret: "hf", replicas: "2", gpus: "2", instance_type: "ml.g5.12xlarge",
      engine_args: "--tp-size\n2\n", service: "internal", router: true, keda_max: "4", kv_l1: true, routing_strategy: "kvaware" });
    expect(body).toEqual({ name: "s", mode: "self-managed", instance_type: "ml.g5.12xlarge", replicas: 2, gpus: 2,
      model: { source: "huggingface", model_id: "Qwen/Qwen3-0.6B", token_secret: "hf" }, engine: "sglang", image: "lmsysorg/sglang:v1",
      engine_args: ["--tp-size", "2"], service: "internal", router: { enabled: true, policy: "cache_aware" },
      autoscaling: { keda: { max: 4, min: 1, metric: "queue_depth" } } });
  });

  it("sends only the managed fields: KV cache tiers, routing, autoscaling bounds", () => {
    const body = endpointBody({ mode: "managed", name: "m", source: "s3", uri: "/data/models/x/main/", replicas: "1", gpus: "",
      instance_type: "ml.g5.8xlarge", kv_l1: true, kv_l2: "redis", routing_strategy: "prefixaware", as_max: "3", engine: "vllm", service: "external" });
    expect(body).toEqual({ name: "m", mode: "managed", instance_type: "ml.g5.8xlarge", replicas: 1, model: { source: "s3", uri: "/data/models/x/main/" },
      routing_strategy: "prefixaware", tiered_kv_cache: { l1: true, l2_backend: "redis" }, autoscaling: { max: 3 } });
  });

  it("says what a deploy is in one line, managed or self-managed", () => {
    expect(deploySummary({ name: "m", mode: "managed", instance_type: "ml.g5.8xlarge", replicas: 2, model: { source: "huggingface", model_id: "org/m" } } as never))
      .toBe("m: managed (inference operator), 2 × ml.g5.8xlarge, model org/m");
  });

  it("routes #/clusters/{region}/{name}/endpoints and words a pool's workers by model", () => {
    expect(parseRoute("#/clusters/us-west-2/llm/endpoints")).toEqual({ page: "endpoints", region: "us-west-2", name: "llm" });
    expect(parseRoute("#/clusters/us-west-2/llm/endpoints/chat%20a")).toEqual({ page: "endpoint", region: "us-west-2", name: "llm", endpoint: "chat a" });
    expect(href.endpoint("us-west-2", "llm", "chat a")).toBe("#/clusters/us-west-2/llm/endpoints/chat%20a");
    expect(byModel({ name: "p", cluster: "c", region: "r", engine: "vllm", image: "i", instance_type: "t", gpus_per_worker: 1, workers: 3,
      by_model: { unassigned: 2, chat: 1 } })).toBe("unassigned: 2, chat: 1");
  });

  it("sends a pool's numbers as numbers and its names trimmed", () => {
    expect(poolBody({ name: " warm ", engine: "vllm", image: "vllm/vllm-openai:v0.10.1 ", instance_type: "ml.g5.8xlarge", gpus_per_worker: "1", workers: "3" }))
      .toEqual({ name: "warm", engine: "vllm", image: "vllm/vllm-openai:v0.10.1", instance_type: "ml.g5.8xlarge", gpus_per_worker: 1, workers: 3 });
  });
});

describe("download request", () => {
  it("sends the model id, and the revision and token Secret only when given", () => {
    expect(downloadBody({ model_id: " org/m ", revision: "", token_secret: "" })).toEqual({ source: "huggingface", model_id: "org/m" });
    expect(downloadBody({ model_id: "org/m", revision: "v1", token_secret: "hf" }))
      .toEqual({ source: "huggingface", model_id: "org/m", revision: "v1", token_secret: "hf" });
  });

  it("words sizes as S3 consoles do", () => {
    expect([fmtBytes(512), fmtBytes(18688), fmtBytes(4_500_000_000), fmtBytes(undefined)]).toEqual(["512 B", "19 kB", "4.5 GB", "-"]);
  });
});

describe("Endpoints page", () => {
  it("lists the bucket's models, plans a download before starting it, and lets the deploy form pick a model", async () => {
    const plan = {
      dry_run: true, valid: true, kind: "model.download", target: {},
      changes: [
        { action: "create", kind: "Kubernetes Job", name: "dl-org-m-1234abcd", step: "download", details: {} },
        { action: "update", kind: "S3 prefix", name: "s3://podstart-data/models/org/m/main/", step: "download", details: {} },
      ],
      quota: [], cost: { currency: "USD", hourly: 0, monthly_estimate: 0, lines: [] }, warnings: [],
    } as unknown as Plan;
    apiMock.planDownloadModel.mockResolvedValue({ status: 200, body: plan });
    apiMock.downloadModel.mockReturnValue(new Promise(() => {}));
    render(<EndpointsPage region="us-west-2" name="llm" />);
    const table = await screen.findByRole("table", { name: "Models" });
    await within(table).findByText("Qwen/Qwen3-0.6B");
    expect(table.textContent).toContain("19 kB");
    fireEvent.click(screen.getByRole("button", { name: "Download model" }));
    const dialog = await screen.findByRole("dialog");
    fireEvent.change(within(dialog).getByLabelText("Hugging Face model id"), { target: { value: "org/m" } });
    const secret = within(dialog).getByRole("button", { name: /Token Secret/ });
    fireEvent.mouseDown(secret);
    fireEvent.click(secret);
    fireEvent.mouseUp(await within(dialog).findByRole("option", { name: /hf-token/ }));
    fireEvent.click(within(dialog).getByRole("button", { name: "Review" }));
    expect((await within(dialog).findByTestId("plan-changes")).textContent).toBe("2 changes");
    expect(within(dialog).getByTestId("plan-change-list").textContent).toContain("create Kubernetes Job dl-org-m-1234abcd");
    const planned = apiMock.planDownloadModel.mock.calls[0][2];
    expect(planned).toEqual({ source: "huggingface", model_id: "org/m", revision: "main", token_secret: "hf-token" });
    fireEvent.click(within(dialog).getByRole("button", { name: "Download" }));
    await waitFor(() => expect(apiMock.downloadModel).toHaveBeenCalledTimes(1));
    expect(apiMock.downloadModel.mock.calls[0][2]).toEqual(planned);
  });

  it("the deploy form offers the bucket's models as paths", async () => {
    render(<EndpointsPage region="us-west-2" name="llm" />);
    await within(await screen.findByRole("table", { name: "Models" })).findByText("Qwen/Qwen3-0.6B");
    const deploy = screen.getByRole("button", { name: "Deploy endpoint" });
    await waitFor(() => expect(deploy.getAttribute("aria-disabled")).not.toBe("true"));
    fireEvent.click(deploy);
    const dialog = await screen.findByRole("dialog");
    const trigger = within(dialog).getByRole("button", { name: /Model in the bucket/ });
    fireEvent.mouseDown(trigger);
    fireEvent.click(trigger);
    fireEvent.mouseUp(await within(dialog).findByRole("option", { name: /Qwen\/Qwen3-0\.6B @ main/ }));
    await waitFor(() => expect((within(dialog).getByLabelText("Model path") as HTMLInputElement).value)
      .toBe("/data/models/Qwen/Qwen3-0.6B/main/"));
  });

  it("shows live status with the failure's message, and a refused deploy on the field it names", async () => {
    const refusal = () => new ApiError(422, { status: 422, title: "Invalid input",
      errors: [{ loc: ["body", "image"], msg: "the image tag `latest` is not pinned" }] });
    apiMock.deployEndpoint.mockRejectedValue(refusal());
    apiMock.planDeployEndpoint.mockRejectedValue(refusal());
    render(<EndpointsPage region="us-west-2" name="llm" />);
    const row = (await screen.findByText("ErrImagePull: sandbox.invalid/vllm:v1")).closest("tr")!;
    expect(row.textContent).toContain("0 of 2 ready");
    expect(screen.getByText("chat").closest("tr")!.textContent).toContain("2 of 2 ready");
    const deploy = screen.getByRole("button", { name: "Deploy endpoint" });
    await waitFor(() => expect(deploy.getAttribute("aria-disabled")).not.toBe("true"));
    fireEvent.click(deploy);
    const dialog = await screen.findByRole("dialog");
    fireEvent.change(within(dialog).getByLabelText("Endpoint name"), { target: { value: "x" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Review" }));
    // The plan is refused the same way: the plan says so, and the final button shows why at the field.
    expect((await within(dialog).findByTestId("plan-error")).textContent).toMatch(/HTTP 422/);
    fireEvent.click(within(dialog).getByRole("button", { name: "Deploy" }));
    await within(dialog).findByText("the image tag `latest` is not pinned");
    expect(within(dialog).getByLabelText("Image")).toBeTruthy();
    expect(apiMock.deployEndpoint.mock.calls[0][2]).toMatchObject({ name: "x", mode: "self-managed", instance_type: "ml.g5.8xlarge", gpus: 1 });
    expect(document.body.textContent).not.toMatch(/\bnull\b|\bundefined\b|\bNaN\b/);
  });

  it("reviews the plan (objects to create, the capacity line) before Deploy, and deploys what was planned", async () => {
    const plan = {
      dry_run: true, valid: true, kind: "endpoint.deploy", target: {},
      changes: [
        { action: "create", kind: "Kubernetes Deployment", name: "x", step: "objects", details: { replicas: 1 } },
        { action: "create", kind: "Kubernetes Service", name: "x", step: "objects", details: { type: "ClusterIP" } },
        { action: "create", kind: "PodStart endpoint", name: "x", step: null, details: { status: "DEPLOYING" } },
      ],
      quota: [],
      cost: { currency: "USD", hourly: 0, monthly_estimate: 0,
        lines: [{ item: "ml.g5.8xlarge (1 replica(s), existing nodes)", count: 1, unit_hourly: 2.452, hourly: 0, source: "sandbox price list", paid: true }] },
      warnings: [],
    } as unknown as Plan;
    apiMock.planDeployEndpoint.mockResolvedValue({ status: 200, body: plan });
    apiMock.deployEndpoint.mockReturnValue(new Promise(() => {}));
    render(<EndpointsPage region="us-west-2" name="llm" />);
    await screen.findByText("ErrImagePull: sandbox.invalid/vllm:v1");
    const deploy = screen.getByRole("button", { name: "Deploy endpoint" });
    await waitFor(() => expect(deploy.getAttribute("aria-disabled")).not.toBe("true"));
    fireEvent.click(deploy);
    const dialog = await screen.findByRole("dialog");
    fireEvent.change(within(dialog).getByLabelText("Endpoint name"), { target: { value: "x" } });
    fireEvent.change(within(dialog).getByLabelText("Model path"), { target: { value: "/data/models/q/main/" } });
    expect(apiMock.planDeployEndpoint).not.toHaveBeenCalled(); // not while typing
    fireEvent.click(within(dialog).getByRole("button", { name: "Review" }));
    expect((await within(dialog).findByTestId("plan-changes")).textContent).toBe("3 changes");
    expect(within(dialog).getByTestId("plan-hourly").textContent).toBe("$0.00 / hour");
    expect(dialog.textContent).toContain("already paid");
    expect(within(dialog).getByTestId("plan-change-list").textContent).toContain("create Kubernetes Deployment x");
    expect(within(dialog).getByTestId("deploy-summary").textContent).toBe(
      "x: self-managed vllm, 1 × ml.g5.8xlarge (1 GPU each), model /data/models/q/main/, service internal");
    expect(apiMock.planDeployEndpoint).toHaveBeenCalledTimes(1);
    const planned = apiMock.planDeployEndpoint.mock.calls[0][2];
    fireEvent.click(within(dialog).getByRole("button", { name: "Deploy" }));
    await waitFor(() => expect(apiMock.deployEndpoint).toHaveBeenCalledTimes(1));
    expect(apiMock.deployEndpoint.mock.calls[0][2]).toEqual(planned);
    expect(dialog.textContent).not.toMatch(/\bnull\b|\bundefined\b|\bNaN\b/);
  });

  const planOf = (kind: string, changes: object[], warnings: string[] = []) => ({
    dry_run: true, valid: true, kind, target: {}, changes, quota: [], warnings,
    cost: { currency: "USD", hourly: 0, monthly_estimate: 0, lines: [] },
  }) as unknown as Plan;

  it("Create pool reviews the plan before creating what was planned; a refusal goes back to the field it names", async () => {
    apiMock.planCreatePool.mockResolvedValue({ status: 200, body: planOf("pool.create", [
      { action: "create", kind: "Kubernetes Deployment", name: "pool-warm", step: "workers", details: { replicas: 3 } },
      { action: "create", kind: "PodStart pool record", name: "warm", step: null, details: {} }]) });
    apiMock.createPool.mockRejectedValue(new ApiError(422, { status: 422, title: "Invalid input",
      errors: [{ loc: ["body", "workers"], msg: "Input should be less than or equal to 64" }] }));
    render(<EndpointsPage region="us-west-2" name="llm" />);
    await screen.findByText("ErrImagePull: sandbox.invalid/vllm:v1");
    fireEvent.click(screen.getByRole("button", { name: "Create pool" }));
    const dialog = await screen.findByRole("dialog");
    fireEvent.change(within(dialog).getByLabelText("Pool name"), { target: { value: "warm" } });
    fireEvent.change(within(dialog).getByLabelText("Workers"), { target: { value: "65" } });
    expect(apiMock.planCreatePool).not.toHaveBeenCalled(); // not while typing
    fireEvent.click(within(dialog).getByRole("button", { name: "Review" }));
    expect((await within(dialog).findByTestId("plan-changes")).textContent).toBe("2 changes");
    expect(within(dialog).getByTestId("pool-summary").textContent).toBe("warm: 65 warm vllm workers × 1 GPU on ml.g5.8xlarge, image vllm/vllm-openai:v0.10.1");
    const planned = apiMock.planCreatePool.mock.calls[0][2];
    expect(planned).toEqual({ name: "warm", engine: "vllm", image: "vllm/vllm-openai:v0.10.1", instance_type: "ml.g5.8xlarge", gpus_per_worker: 1, workers: 65 });
    fireEvent.click(within(dialog).getByRole("button", { name: "Create pool" }));
    await within(dialog).findByText("Input should be less than or equal to 64");
    expect(within(dialog).getByLabelText("Workers")).toBeTruthy(); // back on the form, the message on its field
    expect(apiMock.createPool.mock.calls[0][2]).toEqual(planned);
    expect(dialog.textContent).not.toMatch(/\bnull\b|\bundefined\b|\bNaN\b/);
  });

  it("Assign shows the plan's workers and its warning before assigning", async () => {
    const pool: Pool = { name: "warm", cluster: "llm", region: "us-west-2", engine: "vllm", image: "vllm/vllm-openai:v0.10.1",
      instance_type: "ml.g5.8xlarge", gpus_per_worker: 1, workers: 3, by_model: { unassigned: 3 } };
    apiMock.pools.mockResolvedValue({ cluster: "llm", region: "us-west-2", items: [pool] });
    // two endpoints: one on the pool (the Endpoint choice, picked as the only one), one not
    const pooled: Endpoint = { ...ready, name: "pooled", service: "model_pool", pool: "warm", status: "NO_WORKERS", ready_replicas: 0, replicas: 0 };
    apiMock.endpoints.mockResolvedValue({ cluster: "llm", region: "us-west-2", items: [ready, pooled] });
    apiMock.planAssignPool.mockResolvedValue({ status: 200, body: planOf("pool.assign",
      [0, 1, 2].map((i) => ({ action: "update", kind: "Kubernetes Pod", name: `pool-warm-${i}`, step: "labels", details: {} })),
      ["pool warm has 3 unassigned workers; 4 asked: the labels step fails (NotEnoughWorkers) unless workers are released first"]) });
    apiMock.assignPool.mockReturnValue(new Promise(() => {}));
    render(<EndpointsPage region="us-west-2" name="llm" />);
    fireEvent.click(await screen.findByRole("button", { name: "Assign warm workers" }));
    const dialog = await screen.findByRole("dialog");
    expect(within(dialog).getByText("pooled (NO_WORKERS, 0 workers)")).toBeTruthy();
    fireEvent.change(within(dialog).getByLabelText("Model path"), { target: { value: "/data/models/q/main/" } });
    fireEvent.change(within(dialog).getByLabelText("Workers"), { target: { value: "4" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Review" }));
    expect((await within(dialog).findByTestId("plan-warnings")).textContent).toContain("pool warm has 3 unassigned workers; 4 asked");
    expect(within(dialog).getByTestId("assign-summary").textContent).toBe("4 of warm's unassigned workers to pooled, model /data/models/q/main/");
    const [, , poolName, planned] = apiMock.planAssignPool.mock.calls[0];
    expect([poolName, planned]).toEqual(["warm", { endpoint: "pooled", model: { source: "s3", uri: "/data/models/q/main/" }, workers: 4 }]);
    fireEvent.click(within(dialog).getByRole("button", { name: "Assign" }));
    await waitFor(() => expect(apiMock.assignPool).toHaveBeenCalledTimes(1));
    expect(apiMock.assignPool.mock.calls[0][3]).toEqual(planned);
  });

  it("Try it sends the message to the chosen ready endpoint and shows the answer", async () => {
    apiMock.invokeEndpoint.mockResolvedValue({ status: 200, body: { endpoint: "chat", status: 200, model: "Qwen", content: "Hello from Qwen: hi" } });
    render(<EndpointsPage region="us-west-2" name="llm" />);
    await screen.findByText("ErrImagePull: sandbox.invalid/vllm:v1");
    fireEvent.change(screen.getByLabelText("Message"), { target: { value: "hi" } });
    fireEvent.click(screen.getByRole("button", { name: "Send" }));
    expect((await screen.findByTestId("answer")).textContent).toContain("Hello from Qwen: hi");
    const [cluster, region, name, body] = apiMock.invokeEndpoint.mock.calls[0];
    expect([cluster, region, name, body.messages]).toEqual(["llm", "us-west-2", "chat", [{ role: "user", content: "hi" }]]);
  });
});
