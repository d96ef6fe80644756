import type { Operation } from "../src/api/types";

/** An Operation as GET /v1/operations/{id} returns it (cluster.create, running its 3rd step). */
export function createOperation(overrides: Partial<Operation> = {}): Operation {
  return {
    id: "op-0001",
    kind: "cluster.create",
    target: { cluster: "llm", region: "us-west-2", resource: null },
    status: "RUNNING",
    phase: "dependencies",
    steps: [
      { name: "eks_control_plane", status: "SUCCEEDED", started_at: "2026-01-01T00:00:00Z", ended_at: "2026-01-01T00:09:30Z", message: "EKS ACTIVE", error: null, attempts: 1, outputs: {} },
      { name: "activate", status: "SUCCEEDED", started_at: "2026-01-01T00:09:30Z", ended_at: "2026-01-01T00:09:40Z", message: null, error: null, attempts: 1, outputs: {} },
      { name: "dependencies", status: "RUNNING", started_at: "2026-01-01T00:09:40Z", ended_at: null, message: "installing add-ons", error: null, attempts: 1, outputs: {} },
      { name: "hyperpod_cluster", status: "PENDING", started_at: null, ended_at: null, message: null, error: null, attempts: 0, outputs: {} },
      { name: "storage", status: "PENDING", started_at: null, ended_at: null, message: null, error: null, attempts: 0, outputs: {} },
    ],
    request: { name: "llm" },
    result: null,
    error: null,
    principal: { sub: "admin", name: "admin" },
    idempotency_key: "k-1",
    created_at: "2026-01-01T00:00:00Z",
    updated_at: "2026-01-01T00:09:40Z",
    attempt: 1,
    version: 7,
    links: { self: "/v1/operations/op-0001" },
    status_tool: "get_operation",
    ...overrides,
  };
}
