import { act, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiError, api, request, type Answer } from "../src/api/client";
import { ConfirmModal } from "../src/components/ConfirmModal";
import Flashbar from "@cloudscape-design/components/flashbar";
import { FlashProvider, useFlash } from "../src/lib/flash";
import { useMutation, type Mutation, type MutationOptions } from "../src/lib/mutation";
import { createOperation } from "./fixtures";

function Flashes() {
  return <Flashbar items={useFlash().items} />;
}

type Send = (args: { n: number }, key: string) => Promise<Answer<unknown>>;

/** Renders the hook and hands its latest value to the test. */
function harness(send: Send, options: MutationOptions<unknown> = {}) {
  const ref: { current: Mutation<{ n: number }, unknown> | null } = { current: null };
  function Probe() {
    ref.current = useMutation(send, { retryDelayMs: 1, ...options });
    const m = ref.current;
    return (
      <div>
        <span data-testid="busy">{String(m.busy)}</span>
        <span data-testid="errors">{m.errors.join("|")}</span>
        <span data-testid="fields">{JSON.stringify(m.fieldErrors)}</span>
        <span data-testid="notice">{m.notice ?? ""}</span>
      </div>
    );
  }
  render(<FlashProvider><Probe /><Flashes /></FlashProvider>);
  return ref as { current: Mutation<{ n: number }, unknown> };
}

const accepted = (id = "op-abc123"): Answer<unknown> => ({ status: 202, body: createOperation({ id }) });
const networkError = () => new ApiError(0, { title: "Network error", detail: "Could not reach the PodStart API: Failed to fetch" });
const text = (id: string) => screen.getByTestId(id).textContent;

describe("useMutation", () => {
  beforeEach(() => {
    window.history.replaceState(null, "", "/#/clusters");
    // the flash reads the operation once it follows it
    vi.spyOn(api, "operation").mockImplementation(async (id: string) => createOperation({ id, status: "SUCCEEDED", phase: null }));
  });
  afterEach(() => vi.restoreAllMocks());

  it("stays on the page after a 202: a flash follows the operation (links to it and to its cluster); busy meanwhile", async () => {
    let release!: (a: Answer<unknown>) => void;
    const send = vi.fn<Send>(() => new Promise((r) => (release = r)));
    const m = harness(send);
    let done!: Promise<unknown>;
    act(() => {
      done = m.current.run({ n: 1 });
    });
    expect(text("busy")).toBe("true");
    await act(async () => {
      release(accepted("op-abc123"));
      await done;
    });
    expect(text("busy")).toBe("false");
    expect(window.location.hash).toBe("#/clusters");
    const flash = document.querySelector('[data-testid="flash-operation"]')!;
    expect(flash.getAttribute("data-operation")).toBe("op-abc123");
    expect(flash.getAttribute("data-status")).toBe("RUNNING");
    expect(screen.getByRole("link", { name: "View operation" }).getAttribute("href")).toBe("#/operations/op-abc123");
    expect(screen.getByRole("link", { name: "View cluster llm" }).getAttribute("href")).toBe("#/clusters/us-west-2/llm");
    // the flash reads the record and follows it to its end
    await waitFor(() => expect(document.querySelector('[data-testid="flash-operation"]')!.getAttribute("data-status")).toBe("SUCCEEDED"));
  });

  it("afterAccepted runs after the flash (a dialog closes); onAccepted replaces the default", async () => {
    const after = vi.fn();
    const m = harness(vi.fn<Send>(async () => accepted("op-after1")), { afterAccepted: after });
    await act(() => m.current.run({ n: 1 }));
    expect(after).toHaveBeenCalledWith(expect.objectContaining({ id: "op-after1" }));
    expect(document.querySelector('[data-operation="op-after1"]')).not.toBeNull();
    const own = vi.fn();
    const m2 = harness(vi.fn<Send>(async () => accepted("op-own1")), { onAccepted: own });
    await act(() => m2.current.run({ n: 1 }));
    expect(own).toHaveBeenCalledOnce();
    expect(document.querySelector('[data-operation="op-own1"]')).toBeNull();
  });

  it("sends a fresh Idempotency-Key for each user action", async () => {
    const send = vi.fn<Send>(async () => accepted());
    const m = harness(send, { onAccepted: () => {} });
    await act(() => m.current.run({ n: 1 }));
    await act(() => m.current.run({ n: 1 }));
    const [k1, k2] = send.mock.calls.map((c) => c[1]);
    expect(k1).toMatch(/^[0-9a-f-]{36}$/);
    expect(k2).toMatch(/^[0-9a-f-]{36}$/);
    expect(k1).not.toBe(k2);
  });

  it("retries a request lost to a network error with the same key", async () => {
    const send = vi.fn<Send>().mockRejectedValueOnce(networkError()).mockResolvedValueOnce(accepted("op-retried1"));
    const m = harness(send);
    await act(() => m.current.run({ n: 1 }));
    expect(send).toHaveBeenCalledTimes(2);
    expect(send.mock.calls[0][1]).toBe(send.mock.calls[1][1]);
    expect(document.querySelector('[data-operation="op-retried1"]')).not.toBeNull();
  });

  it("after retries run out, says resending is safe, and a resend of the same request reuses the key", async () => {
    const send = vi.fn<Send>().mockRejectedValue(networkError());
    const m = harness(send, { retries: 1 });
    await act(() => m.current.run({ n: 1 }));
    expect(send).toHaveBeenCalledTimes(2);
    expect(text("errors")).toMatch(/Could not reach the PodStart API.*same Idempotency-Key/);
    send.mockResolvedValueOnce(accepted());
    await act(() => m.current.run({ n: 1 }));
    const keys = send.mock.calls.map((c) => c[1]);
    expect(new Set(keys).size).toBe(1);
    // A different request is a different action: a new key.
    send.mockResolvedValueOnce(accepted());
    await act(() => m.current.run({ n: 2 }));
    expect(send.mock.calls.at(-1)![1]).not.toBe(keys[0]);
  });

  it("puts problem+json field errors on the form's fields and the rest in errors; a refusal is not retried", async () => {
    const send = vi.fn<Send>().mockRejectedValue(
      new ApiError(422, {
        status: 422,
        title: "Invalid request",
        errors: [
          { loc: ["body", "name"], msg: "not a valid cluster name; try 'my-cluster'" },
          { loc: ["body", "bogus"], msg: "Extra inputs are not permitted" },
        ],
      }),
    );
    const m = harness(send, { fields: ["name", "region"] });
    await act(() => m.current.run({ n: 1 }));
    expect(send).toHaveBeenCalledOnce();
    expect(JSON.parse(text("fields")!)).toEqual({ name: "not a valid cluster name; try 'my-cluster'" });
    expect(text("errors")).toBe("bogus: Extra inputs are not permitted");
    act(() => m.current.clearField("name"));
    expect(JSON.parse(text("fields")!)).toEqual({});
    // After a refusal the next submit is a new action with a new key.
    send.mockResolvedValueOnce(accepted());
    await act(() => m.current.run({ n: 1 }));
    expect(send.mock.calls[0][1]).not.toBe(send.mock.calls[1][1]);
  });

  it('says "nothing to change" on 200 {"changed": false} and stays on the page', async () => {
    const onUnchanged = vi.fn();
    const send = vi.fn<Send>(async () => ({ status: 200, body: { changed: false } }));
    const m = harness(send, { onUnchanged });
    await act(() => m.current.run({ n: 1 }));
    expect(text("notice")).toMatch(/Nothing to change/);
    expect(onUnchanged).toHaveBeenCalledOnce();
    expect(window.location.hash).toBe("#/clusters");
  });

  it("hands a plain 200 to onDone and ignores a second run while one is in flight", async () => {
    let release!: (a: Answer<unknown>) => void;
    const send = vi.fn<Send>(() => new Promise((r) => (release = r)));
    const onDone = vi.fn();
    const m = harness(send, { onDone });
    let first!: Promise<unknown>;
    act(() => {
      first = m.current.run({ n: 1 });
    });
    await act(async () => {
      expect(await m.current.run({ n: 1 })).toBeUndefined();
    });
    await act(async () => {
      release({ status: 200, body: { active_cluster: null, changed: true } });
      await first;
    });
    expect(send).toHaveBeenCalledOnce();
    expect(onDone).toHaveBeenCalledWith({ active_cluster: null, changed: true });
  });
});

describe("the API client", () => {
  const realFetch = globalThis.fetch;
  afterEach(() => {
    globalThis.fetch = realFetch;
  });

  it("sends the Idempotency-Key on every mutation, preferences included", async () => {
    const seen: { method: string; key: string | null }[] = [];
    globalThis.fetch = vi.fn(async (_url: RequestInfo | URL, init?: RequestInit) => {
      seen.push({ method: String(init?.method), key: new Headers(init?.headers).get("Idempotency-Key") });
      return new Response(JSON.stringify({ active_cluster: null, changed: false }), { status: 200 });
    }) as typeof fetch;
    await api.putPreferences({ active_cluster: null }, "k-prefs");
    await api.deleteCluster("llm", "us-west-2", "k-del");
    await api.patchInstanceGroup("llm", "us-west-2", "workers", { instance_count: 2 }, "k-patch");
    await api.importCluster({ region: "us-west-2", eks_cluster_name: "theirs" }, "k-import");
    expect(seen).toEqual([
      { method: "PUT", key: "k-prefs" },
      { method: "DELETE", key: "k-del" },
      { method: "PATCH", key: "k-patch" },
      { method: "POST", key: "k-import" },
    ]);
  });

  it("refuses to send a mutation without a key", async () => {
    globalThis.fetch = vi.fn() as typeof fetch;
    await expect(request("/v1/clusters", { method: "POST", body: {} })).rejects.toThrow(/Idempotency-Key/);
    expect(globalThis.fetch).not.toHaveBeenCalled();
  });
});

describe("ConfirmModal", () => {
  it("enables the confirm button only once the word is typed, then confirms once", () => {
    const onConfirm = vi.fn();
    render(
      <ConfirmModal header="Delete llm?" confirmLabel="Delete" typeToConfirm="llm" onConfirm={onConfirm} onCancel={() => {}}>
        Everything PodStart made goes.
      </ConfirmModal>,
    );
    const button = screen.getByRole("button", { name: "Delete" });
    expect(button.hasAttribute("disabled") || button.getAttribute("aria-disabled") === "true").toBe(true);
    const input = screen.getByLabelText("Type llm to confirm");
    fireEvent.change(input, { target: { value: "ll" } });
    fireEvent.click(button);
    expect(onConfirm).not.toHaveBeenCalled();
    fireEvent.change(input, { target: { value: "llm" } });
    fireEvent.click(screen.getByRole("button", { name: "Delete" }));
    expect(onConfirm).toHaveBeenCalledOnce();
  });

  it("confirms by Enter in the typed word, shows errors, and cancels", async () => {
    const onConfirm = vi.fn();
    const onCancel = vi.fn();
    render(
      <ConfirmModal header="Delete llm?" confirmLabel="Delete" typeToConfirm="llm" errors={["cluster llm is busy"]} onConfirm={onConfirm} onCancel={onCancel} />,
    );
    expect(screen.getByText("cluster llm is busy")).toBeTruthy();
    const input = screen.getByLabelText("Type llm to confirm");
    fireEvent.change(input, { target: { value: "llm" } });
    fireEvent.submit(input.closest("form")!);
    await waitFor(() => expect(onConfirm).toHaveBeenCalledOnce());
    fireEvent.click(screen.getByRole("button", { name: "Cancel" }));
    expect(onCancel).toHaveBeenCalled();
  });

  it("without a typed word, confirms at once and not while busy", () => {
    const onConfirm = vi.fn();
    const { rerender } = render(<ConfirmModal header="Cancel?" confirmLabel="Cancel operation" busy onConfirm={onConfirm} onCancel={() => {}} />);
    fireEvent.click(screen.getByRole("button", { name: /Cancel operation/ }));
    expect(onConfirm).not.toHaveBeenCalled();
    rerender(<ConfirmModal header="Cancel?" confirmLabel="Cancel operation" onConfirm={onConfirm} onCancel={() => {}} />);
    fireEvent.click(screen.getByRole("button", { name: "Cancel operation" }));
    expect(onConfirm).toHaveBeenCalledOnce();
  });
});

describe("a plan's gate", () => {
  it("learns a refusal in the same render the plan shows it: a form that leaves the review at once keeps its field errors", async () => {
    const { PlanView, usePlan, usePlanGate } = await import("../src/components/PlanPanel");
    const problem = { status: 422, title: "Invalid input", errors: [{ loc: ["body", "image"], msg: "the image tag `latest` is not pinned" }] };
    const load = () => Promise.reject(new ApiError(422, problem));
    const seen: [string, boolean][] = [];
    function Plan({ refused }: { refused: boolean }) {
      const s = usePlan(load, []);
      seen.push([s.state, refused]);
      return <PlanView state={s} />;
    }
    function Form() {
      const gate = usePlanGate();
      return (
        <gate.Provider>
          <Plan refused={gate.refused} />
          <span data-testid="field">{gate.fieldErrors(["image"]).image ?? ""}</span>
        </gate.Provider>
      );
    }
    render(<Form />);
    expect((await screen.findByTestId("plan-error")).textContent).toMatch(/HTTP 422/);
    expect(screen.getByTestId("field").textContent).toBe("the image tag `latest` is not pinned");
    // never a render where the plan says refused and the form's gate does not know it yet
    expect(seen.filter(([state, refused]) => state === "refused" && !refused)).toEqual([]);
  });
});
