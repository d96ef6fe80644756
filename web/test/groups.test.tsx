// The cluster page's group forms show the plan (the `?dry_run=true` answer) before the final button:
// scale plans the typed count once it settles; add group has a review step with the plan.
import { fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { ClusterInstanceGroup, Plan } from "../src/api/types";

const apiMock = vi.hoisted(() => ({
  zones: vi.fn(),
  instanceTypes: vi.fn(),
  quotas: vi.fn(),
  trainingPlans: vi.fn(),
  addInstanceGroup: vi.fn(),
  planAddInstanceGroup: vi.fn(),
  patchInstanceGroup: vi.fn(),
  planScaleInstanceGroup: vi.fn(),
}));
vi.mock("../src/api/client", async (orig) => ({ ...(await orig<typeof import("../src/api/client")>()), api: apiMock }));

import { ApiError } from "../src/api/client";
import { AddGroupModal, ScaleModal } from "../src/pages/ClusterDetail";

const group: ClusterInstanceGroup = {
  name: "workers", instance_type: "ml.c5.large", availability_zone: "us-west-2a", capacity_type: "on-demand", efa_only: false,
  instance_count: 1, target_count: 1, current_count: 1, counts_as_of: null,
} as ClusterInstanceGroup;

function scalePlan(from: number, to: number): Plan {
  const n = to - from;
  return {
    dry_run: true, valid: true, kind: "instance_group.scale", target: {},
    changes: [{ action: "update", kind: "AWS::SageMaker::Cluster", name: "llm", step: "instance_group", details: { instance_count: { from, to } } }],
    quota: [{ instance_type: "ml.c5.large", requested: n, in_use: from, limit: 10, ok: true }],
    cost: { currency: "USD", hourly: n * 0.119, monthly_estimate: n * 0.119 * 730,
      lines: [{ item: "ml.c5.large", count: n, unit_hourly: 0.119, hourly: n * 0.119, source: "sandbox price list", paid: false }] },
    warnings: n < 0 ? [`scaling workers in removes ${-n} instances: work running on them stops`] : [],
  } as Plan;
}

const refused = (field: string, msg: string) =>
  new ApiError(422, { status: 422, title: "Invalid input", errors: [{ loc: ["body", field], msg }] });

beforeEach(() => {
  for (const f of Object.values(apiMock)) f.mockReset();
});

describe("scale an instance group", () => {
  it("plans the count once typing stops (one request), with the cost delta and quota, before Save", async () => {
    apiMock.planScaleInstanceGroup.mockImplementation(async (_c, _r, _g, changed: { instance_count: number }) => scalePlan(1, changed.instance_count));
    render(<ScaleModal cluster="llm" region="us-west-2" group={group} onClose={() => {}} />);
    const dialog = screen.getByRole("dialog");
    // The count the group already targets plans nothing.
    await new Promise((r) => setTimeout(r, 500));
    expect(apiMock.planScaleInstanceGroup).not.toHaveBeenCalled();
    const count = within(dialog).getByLabelText("Instance count");
    for (const v of ["", "3", "30", "3"]) fireEvent.change(count, { target: { value: v } });
    // Save waits while the plan of the typed count is being computed
    expect(within(dialog).getByRole("button", { name: "Save" }).getAttribute("aria-disabled")).toBe("true");
    expect((await within(dialog).findByTestId("plan-hourly")).textContent).toBe("$0.24 / hour");
    await waitFor(() => expect(within(dialog).getByRole("button", { name: "Save" }).getAttribute("aria-disabled")).not.toBe("true"));
    expect(apiMock.planScaleInstanceGroup).toHaveBeenCalledTimes(1);
    expect(apiMock.planScaleInstanceGroup.mock.calls[0].slice(0, 4)).toEqual(["llm", "us-west-2", "workers", { instance_count: 3 }]);
    expect(within(dialog).getByTestId("plan-changes").textContent).toBe("1 change");
    expect(dialog.textContent).toContain("Quota ml.c5.large: 2 requested, 1 in use of 10 (fits)");
    expect(within(dialog).queryByTestId("plan-warnings")).toBeNull();
    expect(dialog.textContent).not.toMatch(/\bnull\b|\bundefined\b|\bNaN\b/);
  });

  it("warns that work stops on a scale-in", async () => {
    const big = { ...group, instance_count: 3, target_count: 3, current_count: 3 } as ClusterInstanceGroup;
    apiMock.planScaleInstanceGroup.mockResolvedValue(scalePlan(3, 1));
    render(<ScaleModal cluster="llm" region="us-west-2" group={big} onClose={() => {}} />);
    const dialog = screen.getByRole("dialog");
    fireEvent.change(within(dialog).getByLabelText("Instance count"), { target: { value: "1" } });
    expect((await within(dialog).findByTestId("plan-warnings")).textContent).toMatch(/work running on them stops/);
    expect(within(dialog).getByTestId("plan-hourly").textContent).toBe("-$0.24 / hour");
  });

  it("a refused plan says why at the field, and Save stays disabled: nothing is sent", async () => {
    apiMock.planScaleInstanceGroup.mockRejectedValue(refused("instance_count", "999 exceeds the quota"));
    render(<ScaleModal cluster="llm" region="us-west-2" group={group} onClose={() => {}} />);
    const dialog = screen.getByRole("dialog");
    fireEvent.change(within(dialog).getByLabelText("Instance count"), { target: { value: "999" } });
    expect((await within(dialog).findByTestId("plan-error")).textContent).toMatch(/HTTP 422/);
    await within(dialog).findByText("999 exceeds the quota"); // at the field (described-by the input)
    const save = within(dialog).getByRole("button", { name: "Save" });
    expect(save.getAttribute("aria-disabled")).toBe("true");
    fireEvent.click(save);
    expect(apiMock.patchInstanceGroup).not.toHaveBeenCalled();
  });

  it("checks the count as it is typed with the API's rule (no plan for a count the schema refuses)", async () => {
    render(<ScaleModal cluster="llm" region="us-west-2" group={group} onClose={() => {}} />);
    const dialog = screen.getByRole("dialog");
    fireEvent.change(within(dialog).getByLabelText("Instance count"), { target: { value: "2001" } });
    await within(dialog).findByText("Input should be less than or equal to 2000");
    await new Promise((r) => setTimeout(r, 500));
    expect(apiMock.planScaleInstanceGroup).not.toHaveBeenCalled();
    expect(within(dialog).getByRole("button", { name: "Save" }).getAttribute("aria-disabled")).toBe("true");
  });
});

describe("add an instance group", () => {
  it("reviews the plan before the final button, then adds what was planned; a refusal goes back to the fields", async () => {
    apiMock.zones.mockResolvedValue({ items: [{ name: "us-west-2b", id: "usw2-az2", state: "available" }] });
    apiMock.instanceTypes.mockResolvedValue({ items: [{ name: "ml.g5.8xlarge", vcpus: 32, memory_gib: 128, efa_supported: true, efa_max_interfaces: 1,
      network_cards: 1, efa_only_supported: false, accelerated: true, accelerator: { count: 1, manufacturer: "NVIDIA", model: "A10G", memory_gib: 24 } }] });
    apiMock.quotas.mockResolvedValue({ items: [{ instance_type: "ml.g5.8xlarge", limit: 8, in_use: 1, available: 7 }] });
    apiMock.trainingPlans.mockResolvedValue({ items: [] });
    const plan: Plan = {
      dry_run: true, valid: true, kind: "instance_group.add", target: {},
      changes: [
        { action: "create", kind: "AWS::EC2::Subnet", name: "llm-more", step: "subnet", details: {} },
        { action: "update", kind: "AWS::SageMaker::Cluster", name: "llm", step: "instance_group", details: {} },
      ],
      quota: [{ instance_type: "ml.g5.8xlarge", requested: 2, in_use: 1, limit: 8, ok: true }],
      cost: { currency: "USD", hourly: 4.904, monthly_estimate: 3579.92,
        lines: [{ item: "ml.g5.8xlarge", count: 2, unit_hourly: 2.452, hourly: 4.904, source: "sandbox price list", paid: false }] },
      warnings: [],
    } as Plan;
    apiMock.planAddInstanceGroup.mockResolvedValue({ status: 200, body: plan });
    apiMock.addInstanceGroup.mockRejectedValue(refused("name", "more is already a group of llm"));
    render(<AddGroupModal cluster="llm" region="us-west-2" onClose={() => {}} />);
    const dialog = screen.getByRole("dialog");
    fireEvent.change(within(dialog).getByLabelText("Instance group name"), { target: { value: "more" } });
    await waitFor(() => expect(apiMock.zones).toHaveBeenCalled());
    const trigger = within(dialog).getByRole("button", { name: /Availability zone/ });
    fireEvent.mouseDown(trigger);
    fireEvent.click(trigger);
    const option = await within(dialog).findByRole("option", { name: /us-west-2b/ });
    fireEvent.mouseUp(option);
    await waitFor(() => expect(apiMock.instanceTypes).toHaveBeenCalledWith("us-west-2", "us-west-2b"));
    const row = (await within(dialog).findByText("ml.g5.8xlarge", { selector: "th *, td *, th, td" })).closest("tr")!;
    fireEvent.click(row.querySelector("input")!);
    fireEvent.change(await within(dialog).findByLabelText("Instance count"), { target: { value: "2" } });
    // Nothing is planned while the form is being filled.
    expect(apiMock.planAddInstanceGroup).not.toHaveBeenCalled();
    fireEvent.click(within(dialog).getByRole("button", { name: "Review" }));
    expect((await within(dialog).findByTestId("plan-hourly")).textContent).toBe("$4.90 / hour");
    expect(within(dialog).getByTestId("plan-changes").textContent).toBe("2 changes");
    expect(dialog.textContent).toContain("Quota ml.g5.8xlarge: 2 requested, 1 in use of 8 (fits)");
    expect(within(dialog).getByTestId("add-group-summary").textContent).toBe("more: 2 × ml.g5.8xlarge in us-west-2b, on-demand, 500 GiB per instance");
    const planned = apiMock.planAddInstanceGroup.mock.calls[0][2];
    expect(planned).toMatchObject({ name: "more", instance_type: "ml.g5.8xlarge", instance_count: 2, availability_zone: "us-west-2b" });
    expect(dialog.textContent).not.toMatch(/\bnull\b|\bundefined\b|\bNaN\b/);
    fireEvent.click(within(dialog).getByRole("button", { name: "Add instance group" }));
    await within(dialog).findByText("more is already a group of llm");
    expect(apiMock.addInstanceGroup.mock.calls[0][2]).toEqual(planned);
    expect(within(dialog).getByLabelText("Instance group name")).toBeTruthy();
  });
});
