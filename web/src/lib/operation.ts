import type { LiveEvent, Operation, Step } from "../api/types";

export const TERMINAL = new Set(["SUCCEEDED", "FAILED", "CANCELLED"]);

export function isTerminal(op: Pick<Operation, "status"> | null | undefined): boolean {
  return !!op && TERMINAL.has(op.status);
}

/** Steps an operation kind runs, in order (the public contract; used before the record lists them). */
export const KIND_STEPS: Record<string, string[]> = {
  "cluster.create": ["eks_control_plane", "activate", "dependencies", "hyperpod_cluster", "storage"],
};

/** Human label for a step name: "eks_control_plane" -> "EKS control plane". */
export function stepLabel(name: string): string {
  const words: Record<string, string> = {
    eks: "EKS", hyperpod: "HyperPod", vpc: "VPC", efa: "EFA", fsx: "FSx", iam: "IAM", s3: "S3", gpu: "GPU",
  };
  const parts = name.split(/[_\-.]/).map((w) => words[w] ?? w);
  const s = parts.join(" ");
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/**
 * Apply one live event to an operation record. Unknown or other operations' events return the
 * record unchanged (same object), so React skips the render.
 */
export function applyEvent(op: Operation, ev: LiveEvent): Operation {
  const d = ev.data ?? {};
  if (d.operation_id !== op.id) return op;
  const at = typeof ev.metadata?.created_at === "string" ? (ev.metadata.created_at as string) : undefined;
  if (ev.detail_type === "Operation Step Changed" && d.step?.name) {
    const incoming = d.step;
    const idx = op.steps.findIndex((s) => s.name === incoming.name);
    const prev: Step = idx >= 0 ? op.steps[idx] : { name: incoming.name, status: "PENDING", attempts: 0 };
    const next: Step = { ...prev };
    for (const [k, v] of Object.entries(incoming)) if (v !== undefined) (next as unknown as Record<string, unknown>)[k] = v;
    if (next.status === "RUNNING" && !next.started_at) next.started_at = at ?? new Date().toISOString();
    if (next.status === "RUNNING" && prev.status !== "RUNNING") {
      next.ended_at = null;
      if (incoming.error === undefined) next.error = null;
    }
    if ((next.status === "SUCCEEDED" || next.status === "FAILED") && !next.ended_at) next.ended_at = at ?? new Date().toISOString();
    const steps = idx >= 0 ? op.steps.map((s, i) => (i === idx ? next : s)) : [...op.steps, next];
    const status = next.status === "RUNNING" && op.status !== "RUNNING" ? "RUNNING" : op.status;
    return { ...op, steps, status, phase: next.status === "RUNNING" ? next.name : op.phase };
  }
  if (ev.detail_type === "Operation Status Changed" && typeof d.status === "string") {
    const status = d.status as Operation["status"];
    if (status === op.status) return op;
    return { ...op, status, updated_at: at ?? op.updated_at, error: (d.error as Operation["error"]) ?? op.error };
  }
  return op;
}

/** Steps to display: the record's steps, plus the kind's known steps not reported yet (as pending). */
export function displaySteps(op: Operation): Step[] {
  const known = KIND_STEPS[op.kind] ?? [];
  const have = new Set(op.steps.map((s) => s.name));
  return [...op.steps, ...known.filter((n) => !have.has(n)).map((name) => ({ name, status: "PENDING" as const, attempts: 0 }))];
}

export function elapsed(fromIso?: string | null, toIso?: string | null, now = Date.now()): string {
  if (!fromIso) return "";
  const from = Date.parse(fromIso);
  const to = toIso ? Date.parse(toIso) : now;
  if (Number.isNaN(from) || Number.isNaN(to)) return "";
  let s = Math.max(0, Math.round((to - from) / 1000));
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  return h ? `${h}h ${m}m ${s}s` : m ? `${m}m ${s}s` : `${s}s`;
}

/** What an operation kind does, as a flash or a page says it ("Scale {resource}"). */
const KIND_VERB: Record<string, string> = {
  "cluster.create": "Create cluster",
  "cluster.delete": "Delete cluster",
  "cluster.import": "Import cluster",
  "cluster.software_update": "Update the software of",
  "cluster.reconcile": "Reconcile the dependencies of",
  "instance_group.add": "Add instance group",
  "instance_group.scale": "Change the size of",
  "instance_group.delete": "Delete instance group",
  "nodes.reboot": "Reboot nodes of",
  "nodes.replace": "Replace nodes of",
  "nodes.delete": "Delete nodes of",
  "nodes.health_check": "Deep health check on",
  "job.submit": "Submit job",
  "job.delete": "Delete job",
  "features.update": "Update the features of",
  "storage.add": "Add storage",
  "storage.remove": "Remove storage",
  "endpoint.deploy": "Deploy endpoint",
  "endpoint.update": "Scale endpoint",
  "endpoint.delete": "Delete endpoint",
  "pool.create": "Create model pool",
  "pool.assign": "Assign workers of pool",
  "pool.release": "Release workers of pool",
  "model.download": "Download model",
  "namespace.create": "Create namespace",
  "namespace.delete": "Delete namespace",
  "training_plan.purchase": "Buy training plan",
  "spec.apply": "Apply specs to",
};

/** The resource's own name from an operation target's `resource` ("jobs/default/train" -> "train"). */
export function resourceName(resource: string | null | undefined): string | undefined {
  if (!resource) return undefined;
  const parts = resource.split("/");
  return parts[parts.length - 1] || undefined;
}

/** "Change the size of accel on br-forms", "Create cluster llm", "Reboot nodes of br-nodes". */
export function operationTitle(op: Pick<Operation, "kind" | "target">): string {
  const verb = KIND_VERB[op.kind] ?? op.kind;
  const cluster = op.target?.cluster ?? "";
  const res = resourceName(op.target?.resource);
  const named = !!res && !["nodes", "features", "software"].includes(res) && !op.kind.startsWith("cluster.");
  if (!named) return `${verb} ${cluster}`.trim();
  return cluster ? `${verb} ${res} on ${cluster}` : `${verb} ${res}`;
}
