// The console's shared pieces: the API's rules checked as the user types (pydantic's words), one status wording,
// one time format, where an operation links back to, the plan's unknown prices, the test console's request, answer
// and curl.
import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api } from "../src/api/client";
import type { Endpoint, Plan } from "../src/api/types";
import { PlanView, hourlyText } from "../src/components/PlanPanel";
import { TestConsole, curlOf, templateBody } from "../src/components/TestConsole";
import { resourceLink } from "../src/lib/links";
import { operationTitle } from "../src/lib/operation";
import { statusText, statusType } from "../src/lib/status";
import { Time, absoluteTime, relativeTime } from "../src/lib/time";
import { checkValue, ruleOf, validate } from "../src/lib/validate";
import { createOperation } from "./fixtures";

afterEach(() => vi.restoreAllMocks());

describe("checks as the user types: the API's rules, pydantic's words", () => {
  it("finds each broken rule at the path the API names", () => {
    const body = {
      name: "Bad_Name", region: "us-west-2", node_recovery: "sometimes",
      instance_groups: [{ name: "w", instance_type: "ml.g5.8xlarge", instance_count: 2001, availability_zone: "us-west-2a", volume_size_gb: 10 }],
      storage: { s3: true, fsx_lustre: { storage_capacity_gib: 1000, throughput_mb_per_tib: 300 } },
    };
    expect(validate("ClusterCreate", body)).toEqual({
      name: "String should match pattern '^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$'",
      node_recovery: "Input should be 'automatic' or 'none'",
      "instance_groups.0.instance_count": "Input should be less than or equal to 2000",
      "instance_groups.0.volume_size_gb": "Input should be greater than or equal to 50",
      "storage.fsx_lustre.storage_capacity_gib": "Input should be greater than or equal to 1200",
      "storage.fsx_lustre.throughput_mb_per_tib": "Input should be 125, 250, 500 or 1000",
    });
    expect(validate("ClusterCreate", { region: "us-west-2" }, { required: true })).toMatchObject({ name: "Field required", instance_groups: "Field required" });
    expect(validate("ClusterCreate", { ...body, name: "llm", node_recovery: "none", instance_groups: [], storage: { s3: true, fsx_lustre: null } }))
      .toEqual({ instance_groups: "List should have at least 1 item after validation, not 0" });
  });

  it("words types and lengths as pydantic does, and gives a field's limits", () => {
    expect(checkValue({ type: "integer", minimum: 1 }, "two" as unknown as number)).toMatch(/valid integer/);
    expect(checkValue({ type: "integer" }, 1.5)).toMatch(/fractional part/);
    expect(checkValue({ type: "string", maxLength: 3 }, "abcd")).toBe("String should have at most 3 characters");
    expect(checkValue({ type: "string", minLength: 1 }, "")).toBe("String should have at least 1 character");
    expect(checkValue({ type: "string", nullable: true }, null)).toBeUndefined();
    expect(ruleOf("ClusterCreate", "instance_groups.0.instance_count")).toMatchObject({ minimum: 1, maximum: 2000 });
    expect(validate("InvokeRequest", { prompt: "hi", max_tokens: 5000 })).toEqual({ max_tokens: "Input should be less than or equal to 4096" });
  });
});

describe("one status component, one time format", () => {
  it("words every status the same way, whatever its source", () => {
    expect(["CREATE_FAILED", "InService", "DISABLED", "Running", "in-progress", "DeepHealthCheckInProgress"].map(statusText))
      .toEqual(["Create failed", "In service", "Disabled", "Running", "In progress", "Deep health check in progress"]);
    expect(["InService", "DISABLED", "SystemUpdating", "NO_WORKERS", "Bound", "MISSING"].map(statusType))
      .toEqual(["success", "stopped", "in-progress", "stopped", "success", "error"]);
  });

  it("says times relative, with the absolute time and its zone on hover", () => {
    const now = Date.parse("2026-03-01T12:00:00Z");
    expect(relativeTime("2026-03-01T11:57:00Z", now)).toBe("3 minutes ago");
    expect(relativeTime("2026-03-01T11:59:58Z", now)).toBe("just now");
    expect(relativeTime("2026-02-28T12:00:00Z", now)).toBe("yesterday");
    expect(relativeTime("2026-03-01T14:00:00Z", now)).toBe("in 2 hours");
    expect(relativeTime("not a time", now)).toBe("");
    expect(absoluteTime("2026-03-01T11:57:00Z")).toMatch(/^Mar 1, 2026, \d\d:57:00 \S+/);
    const { container } = render(<><Time value="2026-03-01T11:57:00Z" /><Time value={null} /></>);
    expect(container.querySelector("time")!.getAttribute("title")).toBe(absoluteTime("2026-03-01T11:57:00Z"));
    expect(container.textContent).toContain("—");
  });
});

describe("an operation links back to what it acted on", () => {
  it("names it and links its page or tab", () => {
    const op = (kind: string, resource: string | null = null) => createOperation({ kind, target: { cluster: "llm", region: "us-west-2", resource } });
    expect(operationTitle(op("instance_group.scale", "accel"))).toBe("Change the size of accel on llm");
    expect(operationTitle(op("cluster.create"))).toBe("Create cluster llm");
    expect(operationTitle(op("nodes.reboot", "nodes"))).toBe("Reboot nodes of llm");
    expect(resourceLink(op("job.submit", "jobs/team/train"))).toEqual({ href: "#/clusters/us-west-2/llm/jobs/train?namespace=team", text: "View job train" });
    expect(resourceLink(op("endpoint.deploy", "chat")))?.toEqual({ href: "#/clusters/us-west-2/llm/endpoints/chat", text: "View endpoint chat" });
    expect(resourceLink(op("nodes.reboot", "nodes"))?.href).toBe("#/clusters/us-west-2/llm/nodes");
    expect(resourceLink(op("storage.add", "storage/train"))?.href).toBe("#/clusters/us-west-2/llm/storage");
    expect(resourceLink({ ...op("cluster.delete"), status: "SUCCEEDED" })?.href).toBe("#/clusters");
  });
});

describe("unknown numbers say unknown, never 0", () => {
  it("a cost with a line of no price is unknown, with the known part", () => {
    expect(hourlyText({ hourly: 2.1, lines: [{ hourly: 2.1 }, { hourly: null }] })).toBe("unknown (at least $2.10 / hour; some prices were not found)");
    expect(hourlyText({ hourly: 0, lines: [{ hourly: null }] })).toBe("unknown (no price found)");
    expect(hourlyText({ hourly: 0, lines: [{ hourly: null, paid: true }] })).toBe("$0.00 / hour");
    const plan = { dry_run: true, valid: true, kind: "cluster.create", target: {}, changes: [], quota: [], warnings: [],
      cost: { currency: "USD", hourly: 0.1, monthly_estimate: 73, lines: [{ item: "EKS", count: 1, unit_hourly: 0.1, hourly: 0.1, source: "list" }, { item: "HyperPod ml.x", count: 2, unit_hourly: null, hourly: null, source: "unknown" }] } } as unknown as Plan;
    render(<PlanView state={{ state: "ready", plan }} />);
    expect(screen.getByTestId("plan-hourly").textContent).toMatch(/^unknown/);
    expect(screen.getByRole("table", { name: "Cost lines" }).textContent).toContain("unknown");
    expect(screen.getByRole("table", { name: "Cost lines" }).textContent).not.toContain("$0.00");
  });
});

describe("the endpoint test console", () => {
  const ep = {
    name: "chat", cluster: "llm", region: "us-west-2", mode: "self-managed", engine: "vllm", model: "Qwen/Qwen3-0.6B", model_source: "s3",
    instance_type: "ml.g5.8xlarge", replicas: 1, ready_replicas: 1, service: "external", status: "READY", service_name: "chat",
    url: "http://chat-nlb.elb.us-west-2.amazonaws.com", ready: true, how_to_call: "POST .../v1/chat/completions", api_key_required: true,
    internet_facing: false, public: false, source_ranges: [], objects: [], live: true, created_by: "admin", created_at: "2026-01-01T00:00:00Z",
  } as unknown as Endpoint;

  it("copies the request as curl: the endpoint's URL and the engine's path, the model, the key header; or through PodStart", () => {
    const body = templateBody("completion", "Once", 16, 0.5) as unknown as Record<string, unknown>;
    expect(curlOf(ep, body, "completion", "direct")).toBe([
      "curl -sS -X POST 'http://chat-nlb.elb.us-west-2.amazonaws.com/v1/completions'",
      "  -H 'Content-Type: application/json'",
      '  -H "Authorization: Bearer $API_KEY"',
      `  -d '{"model":"Qwen/Qwen3-0.6B","prompt":"Once","max_tokens":16,"temperature":0.5,"stream":false}'`,
    ].join(" \\\n"));
    const through = curlOf({ ...ep, url: null }, { messages: [{ role: "user", content: "it's" }] }, "chat", "direct", "https://api.example");
    expect(through).toContain("'https://api.example/v1/clusters/llm/endpoints/chat/invoke?region=us-west-2'");
    expect(through).toContain('"Authorization: Bearer $PODSTART_TOKEN"');
    expect(through).toContain(`'{"messages":[{"role":"user","content":"it'\\''s"}]}'`); // a quote in the body survives the shell
  });

  it("sends the template's body, then shows the answer, latency, tokens in/out and the response JSON", async () => {
    const invoke = vi.spyOn(api, "invokeEndpoint").mockResolvedValue({ status: 200, body: {
      endpoint: "chat", status: 200, model: "Qwen/Qwen3-0.6B", content: "Hello there", truncated: false, path: "/v1/chat/completions", latency_ms: 42,
      response: { object: "chat.completion", usage: { prompt_tokens: 7, completion_tokens: 3 } },
    } });
    render(<TestConsole cluster="llm" region="us-west-2" endpoints={[ep]} fixed />);
    const console_ = screen.getByTestId("test-console");
    expect(within(console_).getByTestId("endpoint-url").textContent).toContain("http://chat-nlb.elb.us-west-2.amazonaws.com");
    const send = within(console_).getByRole("button", { name: "Send" });
    expect(send.getAttribute("aria-disabled")).toBe("true"); // nothing typed yet
    fireEvent.change(within(console_).getByLabelText("Message"), { target: { value: "hi" } });
    await waitFor(() => expect(JSON.parse((within(console_).getByLabelText("Request body (JSON)") as HTMLTextAreaElement).value))
      .toEqual({ messages: [{ role: "user", content: "hi" }], max_tokens: 256, temperature: 0.7, stream: false }));
    await act(async () => fireEvent.click(within(console_).getByRole("button", { name: "Send" })));
    await within(console_).findByText("Hello there");
    expect(invoke.mock.calls[0][3]).toEqual({ messages: [{ role: "user", content: "hi" }], max_tokens: 256, temperature: 0.7, stream: false });
    expect(within(console_).getByTestId("answer-tokens").textContent).toBe("7 / 3");
    expect(within(console_).getByTestId("answer-latency").textContent).toMatch(/^\d+ ms \(engine 42 ms\)$/);
    expect(JSON.parse(within(console_).getByTestId("answer-json").textContent!)).toMatchObject({ object: "chat.completion" });
    // a body edited by hand that the API would refuse: Send waits, and says why
    fireEvent.change(within(console_).getByLabelText("Request body (JSON)"), { target: { value: '{"prompt": "x", "max_tokens": 9999}' } });
    await waitFor(() => expect(within(console_).getByRole("button", { name: "Send" }).getAttribute("aria-disabled")).toBe("true"));
  });
});
