import { act, render, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it, vi, beforeEach } from "vitest";
import type { LiveEvent, Operation } from "../src/api/types";
import { LiveContext, type LiveFeed } from "../src/lib/events";
import { applyEvent, elapsed, stepLabel } from "../src/lib/operation";
import { createOperation } from "./fixtures";

const apiMock = vi.hoisted(() => ({ operation: vi.fn(), retry: vi.fn(), cancel: vi.fn() }));
vi.mock("../src/api/client", async (orig) => ({ ...(await orig<typeof import("../src/api/client")>()), api: apiMock }));

import { ProgressPanel, StepsView } from "../src/components/ProgressPanel";

function stepItem(name: string): HTMLElement {
  return document.querySelector(`[data-step="${name}"]`) as HTMLElement;
}

function fakeFeed(): LiveFeed & { emit: (ev: LiveEvent) => void } {
  const listeners = new Set<(ev: LiveEvent) => void>();
  return {
    state: "live",
    subscribe: (fn) => {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    follow: () => () => {},
    emit: (ev) => listeners.forEach((fn) => fn(ev)),
  };
}

const stepEvent = (step: Record<string, unknown>, id = "op-0001"): LiveEvent => ({
  type: "event",
  detail_type: "Operation Step Changed",
  metadata: { created_at: "2026-01-01T00:12:00Z" },
  data: { operation_id: id, kind: "cluster.create", target: { cluster: "llm" }, step: step as LiveEvent["data"]["step"] },
});
const statusEvent = (status: string, id = "op-0001"): LiveEvent => ({
  type: "event",
  detail_type: "Operation Status Changed",
  metadata: { created_at: "2026-01-01T00:20:00Z" },
  data: { operation_id: id, kind: "cluster.create", status },
});

describe("StepsView renders an Operation's steps", () => {
  it("shows each step with its state as text, the running one with elapsed time", () => {
    render(<StepsView op={createOperation()} now={Date.parse("2026-01-01T00:11:10Z")} />);
    const items = within(screen.getByRole("list", { name: "Steps" })).getAllByRole("listitem");
    expect(items.map((li) => li.getAttribute("data-step"))).toEqual(["eks_control_plane", "activate", "dependencies", "hyperpod_cluster", "storage"]);
    expect(stepItem("eks_control_plane").textContent).toContain("Succeeded");
    expect(stepItem("eks_control_plane").textContent).toContain("took 9m 30s");
    expect(stepItem("dependencies").textContent).toContain("running for 1m 30s");
    expect(stepItem("hyperpod_cluster").textContent).toContain("Pending");
    expect(screen.getByText(/2 of 5 steps done/)).toBeTruthy();
    expect(screen.queryByRole("button", { name: "Retry" })).toBeNull();
  });

  it("shows a failed step's error and a Retry button that calls back", () => {
    const onRetry = vi.fn();
    const op = createOperation({
      status: "FAILED",
      steps: createOperation().steps.map((s) =>
        s.name === "dependencies"
          ? { ...s, status: "FAILED", ended_at: "2026-01-01T00:10:00Z", error: { code: "ThrottlingException", message: "Rate exceeded", retryable: true } }
          : s,
      ),
    });
    render(<StepsView op={op} onRetry={onRetry} />);
    expect(stepItem("dependencies").textContent).toContain("ThrottlingException");
    expect(stepItem("dependencies").textContent).toContain("Rate exceeded");
    expect(screen.getAllByText(/Dependencies failed/).length).toBeGreaterThan(0);
    screen.getByRole("button", { name: "Retry" }).click();
    expect(onRetry).toHaveBeenCalledOnce();
  });

  it("lists the kind's steps as pending before the record reports them", () => {
    render(<StepsView op={createOperation({ status: "PENDING", steps: [] })} />);
    expect(document.querySelectorAll("[data-step]").length).toBe(5);
    expect(stepItem("eks_control_plane").getAttribute("data-status")).toBe("PENDING");
  });
});

describe("applyEvent", () => {
  it("moves a step through running to succeeded and marks the operation", () => {
    let op = createOperation({ status: "PENDING", phase: null, steps: [] });
    op = applyEvent(op, stepEvent({ name: "eks_control_plane", status: "RUNNING" }));
    expect(op.status).toBe("RUNNING");
    expect(op.phase).toBe("eks_control_plane");
    expect(op.steps[0]).toMatchObject({ name: "eks_control_plane", status: "RUNNING", started_at: "2026-01-01T00:12:00Z" });
    op = applyEvent(op, stepEvent({ name: "eks_control_plane", status: "SUCCEEDED", message: "ACTIVE" }));
    expect(op.steps[0]).toMatchObject({ status: "SUCCEEDED", message: "ACTIVE", ended_at: "2026-01-01T00:12:00Z" });
    op = applyEvent(op, statusEvent("SUCCEEDED"));
    expect(op.status).toBe("SUCCEEDED");
  });

  it("ignores other operations' events (same object back)", () => {
    const op = createOperation();
    expect(applyEvent(op, stepEvent({ name: "storage", status: "RUNNING" }, "op-other"))).toBe(op);
    expect(applyEvent(op, statusEvent("FAILED", "op-other"))).toBe(op);
  });

  it("labels and times", () => {
    expect(stepLabel("eks_control_plane")).toBe("EKS control plane");
    expect(stepLabel("hyperpod_cluster")).toBe("HyperPod cluster");
    expect(elapsed("2026-01-01T00:00:00Z", "2026-01-01T01:02:03Z")).toBe("1h 2m 3s");
  });
});

describe("ProgressPanel follows live events", () => {
  beforeEach(() => {
    apiMock.operation.mockReset();
    apiMock.retry.mockReset();
  });

  it("loads the operation, then updates steps from /ws events", async () => {
    const initial = createOperation();
    apiMock.operation.mockResolvedValue(initial);
    const feed = fakeFeed();
    render(
      <LiveContext.Provider value={feed}>
        <ProgressPanel operationId="op-0001" />
      </LiveContext.Provider>,
    );
    await waitFor(() => expect(stepItem("dependencies").getAttribute("data-status")).toBe("RUNNING"));
    // Later refreshes return the record as the server would after the events.
    const after = createOperation({ version: 9 });
    after.steps = after.steps.map((s) => (s.name === "dependencies" ? { ...s, status: "SUCCEEDED", ended_at: "2026-01-01T00:12:00Z" } : s.name === "hyperpod_cluster" ? { ...s, status: "RUNNING", started_at: "2026-01-01T00:12:00Z" } : s));
    apiMock.operation.mockResolvedValue(after);
    act(() => {
      feed.emit(stepEvent({ name: "dependencies", status: "SUCCEEDED" }));
      feed.emit(stepEvent({ name: "hyperpod_cluster", status: "RUNNING" }));
    });
    // Applied at once from the events, before any refresh.
    expect(stepItem("dependencies").getAttribute("data-status")).toBe("SUCCEEDED");
    expect(stepItem("hyperpod_cluster").getAttribute("data-status")).toBe("RUNNING");
    await waitFor(() => expect(apiMock.operation).toHaveBeenCalledTimes(2));
  });

  it("shows a failure from an event and retries through the API", async () => {
    apiMock.operation.mockResolvedValue(createOperation());
    const feed = fakeFeed();
    render(
      <LiveContext.Provider value={feed}>
        <ProgressPanel operationId="op-0001" />
      </LiveContext.Provider>,
    );
    await waitFor(() => expect(stepItem("dependencies")).toBeTruthy());
    const failed: Operation = createOperation({ status: "FAILED", version: 8 });
    failed.steps = failed.steps.map((s) => (s.name === "dependencies" ? { ...s, status: "FAILED", error: { code: "ValidationException", message: "bad add-on", retryable: false } } : s));
    apiMock.operation.mockResolvedValue(failed);
    act(() => {
      feed.emit(stepEvent({ name: "dependencies", status: "FAILED", error: { code: "ValidationException", message: "bad add-on", retryable: false } }));
      feed.emit(statusEvent("FAILED"));
    });
    const retry = await screen.findByRole("button", { name: "Retry" });
    expect(stepItem("dependencies").textContent).toContain("bad add-on");
    apiMock.retry.mockResolvedValue({ status: 202, body: createOperation({ status: "RUNNING", version: 10 }) });
    act(() => retry.click());
    // One user action, one Idempotency-Key.
    await waitFor(() => expect(apiMock.retry).toHaveBeenCalledWith("op-0001", expect.stringMatching(/^[0-9a-f-]{36}$/)));
    await waitFor(() => expect(screen.queryByRole("button", { name: "Retry" })).toBeNull());
  });
});
