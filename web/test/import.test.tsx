import { fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { ClusterSummary, Me } from "../src/api/types";
import { createOperation } from "./fixtures";

const apiMock = vi.hoisted(() => ({
  clusters: vi.fn(),
  preferences: vi.fn(),
  me: vi.fn(),
  regions: vi.fn(),
  importCluster: vi.fn(),
}));
vi.mock("../src/api/client", async (orig) => ({ ...(await orig<typeof import("../src/api/client")>()), api: apiMock }));

import { ApiError } from "../src/api/client";
import { MeProvider } from "../src/lib/me";
import Clusters from "../src/pages/Clusters";
import ImportCluster from "../src/pages/ImportCluster";

const ADMIN: Me = { sub: "sandbox-admin", name: "sandbox-admin", role: "admin", can_mutate: true, can_delete_clusters: true };
const VIEWER: Me = { sub: "sandbox-viewer", name: "sandbox-viewer", role: "viewer", can_mutate: false, can_delete_clusters: false };

const managed: ClusterSummary = {
  name: "llm", region: "us-west-2", status: "ACTIVE", kubernetes_version: "1.33", managed: true, origin: "created", importable: false,
  instance_groups: [{ name: "accel", instance_type: "ml.p5.48xlarge", availability_zone: "us-west-2a", capacity_type: "on-demand",
                      efa_only: false, instance_count: 2, target_count: 2, current_count: null, counts_as_of: null }],
  active: true, operation_id: "op-000001",
};
const external: ClusterSummary = {
  name: "theirs-hp", region: "us-west-2", status: "InService", managed: false, origin: "external", importable: true,
  eks_cluster_name: "Theirs_EKS", instance_groups: [{ name: "workers", instance_type: "ml.g5.8xlarge", availability_zone: "us-west-2a",
    capacity_type: "on-demand", efa_only: false, instance_count: 1, target_count: 1, current_count: 1, counts_as_of: "2026-01-01T10:32:00" }],
  active: false, operation_id: null,
};

function renderWithMe(ui: React.ReactNode) {
  return render(<MeProvider>{ui}</MeProvider>);
}

beforeEach(() => {
  for (const f of Object.values(apiMock)) f.mockReset();
  apiMock.clusters.mockResolvedValue({ items: [managed, external], next_token: null });
  apiMock.preferences.mockResolvedValue({ active_cluster: { name: "llm", region: "us-west-2" }, default_region: null });
  apiMock.regions.mockResolvedValue({ items: [{ name: "us-west-2" }, { name: "us-east-1" }] });
  window.history.replaceState(null, "", "/#/clusters");
});

describe("Clusters list with clusters PodStart does not manage", () => {
  it("shows what is known for each, and offers Import for the external one, prefilled", async () => {
    apiMock.me.mockResolvedValue(ADMIN);
    renderWithMe(<Clusters />);
    const row = (await screen.findByText("theirs-hp")).closest("tr")!;
    expect(row.textContent).toContain("Not managed");
    expect(row.textContent).toContain("workers: 1 × ml.g5.8xlarge");
    expect(row.querySelector("time")?.getAttribute("title")).toMatch(/10:32:00|:32:00/);
    const llm = screen.getByRole("link", { name: "llm" }).closest("tr")!;
    expect(llm.textContent).toContain("accel: 2 × ml.p5.48xlarge");
    expect(document.body.textContent).not.toMatch(/\bnull\b|\bundefined\b|\bNaN\b/);
    const importButton = within(row).getByRole("button", { name: "Import theirs-hp" });
    await waitFor(() => expect(importButton.getAttribute("aria-disabled")).not.toBe("true"));
    fireEvent.click(importButton);
    expect(window.location.hash).toBe("#/import?region=us-west-2&eks_cluster_name=Theirs_EKS");
  });

  it("tells a non-admin why Import is not offered", async () => {
    apiMock.me.mockResolvedValue(VIEWER);
    renderWithMe(<Clusters />);
    const row = (await screen.findByText("theirs-hp")).closest("tr")!;
    const importButton = within(row).getByRole("button", { name: "Import theirs-hp" });
    await waitFor(() => expect(importButton.getAttribute("aria-disabled")).toBe("true"));
    fireEvent.click(importButton);
    expect(window.location.hash).toBe("#/clusters");
    expect(screen.getAllByText(/only an admin can import \(you are viewer\)/).length).toBeGreaterThan(0);
  });
});

describe("Import page", () => {
  it("is prefilled, shows the API's name suggestion at the name field, then goes to the cluster's page (its import runs there)", async () => {
    apiMock.me.mockResolvedValue(ADMIN);
    const msg = "'Theirs_EKS' is not a valid cluster name; try 'theirs-eks'";
    apiMock.importCluster.mockRejectedValueOnce(
      new ApiError(422, { status: 422, title: "Invalid request", errors: [{ loc: ["body", "name"], msg }] }),
    );
    renderWithMe(<ImportCluster region="us-west-2" eksClusterName="Theirs_EKS" />);
    const eks = screen.getByLabelText("EKS cluster name") as HTMLInputElement;
    expect(eks.value).toBe("Theirs_EKS");
    await waitFor(() => expect(screen.getByRole("button", { name: "Import" }).getAttribute("aria-disabled")).not.toBe("true"));
    fireEvent.click(screen.getByRole("button", { name: "Import" }));
    const shown = await screen.findByText(msg);
    const name = screen.getByLabelText("PodStart name");
    const id = shown.closest("[id]")!.id;
    expect((name.getAttribute("aria-describedby") ?? "").split(" ")).toContain(id);
    expect(apiMock.importCluster).toHaveBeenCalledWith({ region: "us-west-2", eks_cluster_name: "Theirs_EKS" }, expect.any(String));

    apiMock.importCluster.mockResolvedValueOnce({ status: 202, body: createOperation({ id: "op-import1", kind: "cluster.import", target: { cluster: "theirs-eks", region: "us-west-2", resource: null } }) });
    fireEvent.change(name, { target: { value: "theirs-eks" } });
    expect(screen.queryByText(msg)).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Import" }));
    await waitFor(() => expect(window.location.hash).toBe("#/clusters/us-west-2/theirs-eks"));
    const [body, key] = apiMock.importCluster.mock.calls[1];
    expect(body).toEqual({ region: "us-west-2", eks_cluster_name: "Theirs_EKS", name: "theirs-eks" });
    expect(key).not.toBe(apiMock.importCluster.mock.calls[0][1]);
  });

  it("is disabled for a non-admin, with the reason", async () => {
    apiMock.me.mockResolvedValue(VIEWER);
    renderWithMe(<ImportCluster />);
    await screen.findByText("Only an admin can import a cluster");
    expect(screen.getByText(/You are signed in as sandbox-viewer \(viewer\)/)).toBeTruthy();
    fireEvent.click(screen.getByRole("button", { name: "Import" }));
    expect(apiMock.importCluster).not.toHaveBeenCalled();
  });
});
