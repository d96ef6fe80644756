import type { Problem } from "../lib/problems";
import type {
  Advice,
  AdviceRequest,
  ClusterGpus,
  TrainingPlanPurchase,
  AuditPage,
  AvailabilityZone,
  ClusterCreate,
  Endpoint,
  EndpointCreate,
  EndpointList,
  EndpointPatch,
  InvokeRequest,
  InvokeResult,
  JobDetail,
  JobList,
  JobLogs,
  JobSubmit,
  ModelDownload,
  ModelList,
  SecretNames,
  BucketList,
  NamespaceCreate,
  NamespaceList,
  PoolAssign,
  PoolCreate,
  PoolList,
  PoolRelease,
  ClusterImport,
  ClusterDetail,
  ClusterEndpointList,
  ClusterJobList,
  JobMetrics,
  ClusterPage,
  FeaturesDocument,
  FeaturesUnchanged,
  InstanceGroupSpec,
  InstanceType,
  Me,
  Operation,
  Page,
  Plan,
  Preferences,
  Quota,
  RecipeList,
  Region,
  SoftwareUpdate,
  StorageAdd,
  TrainingPlan,
  TrackingServerPage,
  VolumeList,
  NodeList,
  NodeDetail,
  NodesReboot,
  NodesReplace,
  HealthCheckStart,
  EventList,
} from "./types";
import { getToken } from "../auth";

export class ApiError extends Error {
  status: number;
  problem: Problem;
  constructor(status: number, problem: Problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

let base = "";
let onUnauthorized: () => void = () => {};

/** The API's origin as a caller outside the UI would use it (copy-as-curl): the configured URL, else this page's. */
export function apiBase(): string {
  return base || window.location.origin;
}

export function configureApi(opts: { apiUrl: string; onUnauthorized?: () => void }): void {
  base = opts.apiUrl;
  if (opts.onUnauthorized) onUnauthorized = opts.onUnauthorized;
}

function qs(params: Record<string, string | number | boolean | null | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}

export interface RequestOptions {
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Required for every method but GET: the same key for a retry of the same user action. */
  idempotencyKey?: string;
}

export interface Answer<T> {
  status: number;
  body: T;
}

const READS = new Set(["GET", "HEAD", "OPTIONS"]);

export async function request<T>(path: string, opts: RequestOptions = {}): Promise<Answer<T>> {
  const method = (opts.method ?? "GET").toUpperCase();
  // X-PodStart-Face: the audit trail records which face (ui, rest, mcp) a mutation came through.
  const headers: Record<string, string> = { Accept: "application/json, application/problem+json", "X-PodStart-Face": "ui", ...opts.headers };
  if (!READS.has(method)) {
    // Every mutation the UI sends carries a key, so a retried request never repeats the change.
    if (!opts.idempotencyKey) throw new Error(`${method} ${path} without an Idempotency-Key`);
    headers["Idempotency-Key"] = opts.idempotencyKey;
  }
  const token = getToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  if (opts.body !== undefined) headers["Content-Type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(`${base}${path}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: opts.signal,
      credentials: "omit",
    });
  } catch (e) {
    if ((e as Error).name === "AbortError") throw e;
    throw new ApiError(0, { title: "Network error", detail: `Could not reach the PodStart API: ${(e as Error).message}` });
  }
  const text = await res.text();
  let body: unknown = null;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = { detail: text.slice(0, 300) };
    }
  }
  if (!res.ok) {
    if (res.status === 401) onUnauthorized();
    const p = (body ?? {}) as Problem;
    throw new ApiError(res.status, { status: res.status, title: p.title ?? res.statusText, ...p });
  }
  return { status: res.status, body: body as T };
}

const clusterPath = (cluster: string) => `/v1/clusters/${encodeURIComponent(cluster)}`;

async function get<T>(path: string, signal?: AbortSignal): Promise<T> {
  return (await request<T>(path, { signal })).body;
}

export const api = {
  regions: () => get<Page<Region>>("/v1/catalog/regions"),
  zones: (region: string) => get<Page<AvailabilityZone>>(`/v1/catalog/availability-zones${qs({ region })}`),
  instanceTypes: (region: string, availability_zone: string) =>
    get<Page<InstanceType>>(`/v1/catalog/instance-types${qs({ region, availability_zone })}`),
  mlflowServers: (region: string) =>
    get<TrackingServerPage>(`/v1/catalog/mlflow-tracking-servers${qs({ region, limit: "100" })}`),
  trainingPlans: (region: string) => get<Page<TrainingPlan>>(`/v1/catalog/training-plans${qs({ region })}`),
  quotas: (region: string) => get<Page<Quota>>(`/v1/catalog/quotas${qs({ region })}`),
  /** The capacity advice: a POST that only reads (the key is ignored: nothing is changed). */
  advise: async (body: AdviceRequest, signal?: AbortSignal) =>
    (await request<Advice>("/v1/capacity/advice", { method: "POST", body, idempotencyKey: newIdempotencyKey(), signal })).body,
  clusterGpus: (cluster: string, region: string, signal?: AbortSignal) =>
    get<ClusterGpus>(`${clusterPath(cluster)}/gpus${qs({ region })}`, signal),
  purchaseTrainingPlan: (body: TrainingPlanPurchase, key: string) =>
    request<Operation>("/v1/capacity/training-plans", { method: "POST", body, idempotencyKey: key }),
  planPurchaseTrainingPlan: async (body: TrainingPlanPurchase, signal?: AbortSignal) =>
    (await request<Plan>("/v1/capacity/training-plans?dry_run=true", { method: "POST", body, idempotencyKey: newIdempotencyKey(), signal })).body,

  me: () => get<Me>("/v1/me"),
  preferences: () => get<Preferences>("/v1/preferences"),
  putPreferences: (changed: Partial<Preferences>, key: string) =>
    request<Preferences>("/v1/preferences", { method: "PUT", body: changed, idempotencyKey: key }),

  clusters: (p: { limit?: number; next_token?: string | null } = {}) =>
    get<ClusterPage>(`/v1/clusters${qs(p)}`),
  cluster: (name: string, region: string) =>
    get<ClusterDetail>(`/v1/clusters/${encodeURIComponent(name)}${qs({ region })}`),
  createCluster: (body: ClusterCreate, key: string) =>
    request<Operation>("/v1/clusters", { method: "POST", body, idempotencyKey: key }),
  /** The plan of a create (`?dry_run=true`): changes, quota, hourly cost; nothing is changed. */
  planCreateCluster: (body: ClusterCreate, signal?: AbortSignal) =>
    request<Plan>("/v1/clusters?dry_run=true", { method: "POST", body, idempotencyKey: newIdempotencyKey(), signal }),
  audit: (p: { actor?: string; cluster?: string; action?: string; face?: string; limit?: number; next_token?: string | null } = {}) =>
    get<AuditPage>(`/v1/audit${qs(p)}`),
  importCluster: (body: ClusterImport, key: string) =>
    request<Operation>("/v1/clusters/import", { method: "POST", body, idempotencyKey: key }),
  deleteCluster: (name: string, region: string, key: string) =>
    request<Operation>(`/v1/clusters/${encodeURIComponent(name)}${qs({ region, confirm: name })}`, {
      method: "DELETE",
      idempotencyKey: key,
    }),
  addInstanceGroup: (cluster: string, region: string, body: InstanceGroupSpec, key: string) =>
    request<Operation>(`/v1/clusters/${encodeURIComponent(cluster)}/instance-groups${qs({ region })}`, {
      method: "POST",
      body,
      idempotencyKey: key,
    }),
  patchInstanceGroup: (cluster: string, region: string, group: string, changed: Record<string, unknown>, key: string) =>
    request<Operation | { changed: false }>(
      `/v1/clusters/${encodeURIComponent(cluster)}/instance-groups/${encodeURIComponent(group)}${qs({ region })}`,
      { method: "PATCH", body: changed, idempotencyKey: key },
    ),
  /** The plan of an add (`?dry_run=true`): the new group, its quota line and hourly cost; nothing is changed. */
  /** Update the HyperPod platform software of groups, rolling batch by batch (`cluster.software_update`). */
  updateClusterSoftware: (cluster: string, region: string, body: SoftwareUpdate, key: string) =>
    request<Operation>(`/v1/clusters/${encodeURIComponent(cluster)}/software-update${qs({ region })}`, {
      method: "POST",
      body,
      idempotencyKey: key,
    }),
  /** The plan of a software update: the call, each group's batches and from/to image, the restart warnings. */
  planClusterSoftwareUpdate: async (cluster: string, region: string, body: SoftwareUpdate, signal?: AbortSignal) =>
    (
      await request<Plan>(`/v1/clusters/${encodeURIComponent(cluster)}/software-update${qs({ region, dry_run: "true" })}`, {
        method: "POST",
        body,
        idempotencyKey: newIdempotencyKey(),
        signal,
      })
    ).body,
  /** Drain, then delete one instance group (`instance_group.delete`, admin); confirm repeats the group name. */
  deleteInstanceGroup: (cluster: string, region: string, group: string, key: string, drainTimeoutS?: string) =>
    request<Operation>(
      `/v1/clusters/${encodeURIComponent(cluster)}/instance-groups/${encodeURIComponent(group)}${qs({ region, confirm: group, drain_timeout_s: drainTimeoutS })}`,
      { method: "DELETE", idempotencyKey: key },
    ),
  /** The plan of a group delete: nodes cordoned, pods evicted, the cluster update, capacity removed. */
  planDeleteInstanceGroup: async (cluster: string, region: string, group: string, signal?: AbortSignal, drainTimeoutS?: string) =>
    (
      await request<Plan>(
        `/v1/clusters/${encodeURIComponent(cluster)}/instance-groups/${encodeURIComponent(group)}${qs({ region, confirm: group, dry_run: "true", drain_timeout_s: drainTimeoutS })}`,
        { method: "DELETE", idempotencyKey: newIdempotencyKey(), signal },
      )
    ).body,
  planAddInstanceGroup: (cluster: string, region: string, body: InstanceGroupSpec, signal?: AbortSignal) =>
    request<Plan>(`/v1/clusters/${encodeURIComponent(cluster)}/instance-groups${qs({ region, dry_run: "true" })}`, {
      method: "POST",
      body,
      idempotencyKey: newIdempotencyKey(),
      signal,
    }),
  /** The plan of a scale (`?dry_run=true`): the count change, its hourly cost delta, quota, and a scale-in warning.
   * A count the group already targets plans no change (the server answers `{"changed": false}`). */
  planScaleInstanceGroup: async (cluster: string, region: string, group: string, changed: Record<string, unknown>, signal?: AbortSignal) => {
    const r = await request<Plan | { changed: false }>(
      `/v1/clusters/${encodeURIComponent(cluster)}/instance-groups/${encodeURIComponent(group)}${qs({ region, dry_run: "true" })}`,
      { method: "PATCH", body: changed, idempotencyKey: newIdempotencyKey(), signal },
    );
    if ("changed" in r.body) {
      const none: Plan = { dry_run: true, valid: true, kind: "instance_group.scale", changes: [], warnings: [`Nothing to change: ${group} already targets that many instances.`] };
      return none;
    }
    return r.body;
  },

  operations: (p: { cluster?: string; status?: string; limit?: number; next_token?: string | null } = {}) =>
    get<Page<Operation>>(`/v1/operations${qs(p)}`),
  operation: (id: string, wait?: { seconds: number; version: number }, signal?: AbortSignal) =>
    get<Operation>(
      `/v1/operations/${encodeURIComponent(id)}${wait ? qs({ wait: wait.seconds, version: wait.version }) : ""}`,
      signal,
    ),
  nodes: (cluster: string, region: string, p: { group?: string; health?: string; limit?: number; next_token?: string | null } = {}) =>
    get<NodeList>(`/v1/clusters/${encodeURIComponent(cluster)}/nodes${qs({ region, ...p })}`),
  node: (cluster: string, region: string, nodeId: string) =>
    get<NodeDetail>(`/v1/clusters/${encodeURIComponent(cluster)}/nodes/${encodeURIComponent(nodeId)}${qs({ region })}`),
  clusterEvents: (cluster: string, region: string, p: { node_id?: string; group?: string; limit?: number } = {}) =>
    get<EventList>(`/v1/clusters/${encodeURIComponent(cluster)}/events${qs({ region, ...p })}`),
  rebootNodes: (cluster: string, region: string, body: NodesReboot, key: string) =>
    request<Operation>(`/v1/clusters/${encodeURIComponent(cluster)}/nodes/reboot${qs({ region })}`, {
      method: "POST",
      body,
      idempotencyKey: key,
    }),
  /** The plan of a node action (`?dry_run=true`): one change per node, warnings, cost delta; nothing is changed. */
  planNodes: (cluster: string, region: string, action: "reboot" | "replace" | "delete", body: NodesReboot | NodesReplace, signal?: AbortSignal) =>
    request<Plan>(`/v1/clusters/${encodeURIComponent(cluster)}/nodes/${action}${qs({ region, dry_run: "true" })}`, {
      method: "POST",
      body,
      idempotencyKey: newIdempotencyKey(),
      signal,
    }),
  /** Deep health checks on a group's nodes (operation nodes.health_check): results per node and check. */
  startHealthCheck: (cluster: string, region: string, body: HealthCheckStart, key: string) =>
    request<Operation>(`/v1/clusters/${encodeURIComponent(cluster)}/health-checks${qs({ region })}`, {
      method: "POST",
      body,
      idempotencyKey: key,
    }),
  /** The plan of a deep health check (`?dry_run=true`): each node checked, how long, unschedulable meanwhile. */
  planHealthCheck: (cluster: string, region: string, body: HealthCheckStart, signal?: AbortSignal) =>
    request<Plan>(`/v1/clusters/${encodeURIComponent(cluster)}/health-checks${qs({ region, dry_run: "true" })}`, {
      method: "POST",
      body,
      idempotencyKey: newIdempotencyKey(),
      signal,
    }),
  replaceNodes: (cluster: string, region: string, body: NodesReplace, key: string) =>
    request<Operation>(`/v1/clusters/${encodeURIComponent(cluster)}/nodes/replace${qs({ region })}`, {
      method: "POST",
      body,
      idempotencyKey: key,
    }),
  volumes: (cluster: string, region: string) =>
    get<VolumeList>(`/v1/clusters/${encodeURIComponent(cluster)}/storage${qs({ region })}`),
  addStorage: (cluster: string, region: string, body: Partial<StorageAdd>, key: string) =>
    request<Operation>(`/v1/clusters/${encodeURIComponent(cluster)}/storage${qs({ region })}`, {
      method: "POST",
      body,
      idempotencyKey: key,
    }),
  removeStorage: (cluster: string, region: string, name: string, confirm: string | undefined, key: string) =>
    request<Operation>(
      `/v1/clusters/${encodeURIComponent(cluster)}/storage/${encodeURIComponent(name)}${qs({ region, confirm })}`,
      { method: "DELETE", idempotencyKey: key },
    ),
  /** The features document; `refresh` reads every part live now (after a change made outside PodStart). */
  features: (cluster: string, region: string, refresh = false) =>
    get<FeaturesDocument>(`/v1/clusters/${encodeURIComponent(cluster)}/features${qs({ region, refresh: refresh || undefined })}`),
  patchFeatures: (cluster: string, region: string, changed: Record<string, Record<string, unknown>>, key: string) =>
    request<Operation | FeaturesUnchanged>(`/v1/clusters/${encodeURIComponent(cluster)}/features${qs({ region })}`, {
      method: "PATCH",
      body: changed,
      idempotencyKey: key,
    }),
  /** The plan of a features PATCH (`?dry_run=true`); a PATCH equal to the live state plans no change. */
  planFeatures: async (cluster: string, region: string, changed: Record<string, Record<string, unknown>>, signal?: AbortSignal) => {
    const r = await request<Plan | FeaturesUnchanged>(
      `/v1/clusters/${encodeURIComponent(cluster)}/features${qs({ region, dry_run: true })}`,
      { method: "PATCH", body: changed, idempotencyKey: newIdempotencyKey(), signal },
    );
    if ("changed" in r.body) {
      const none: Plan = { dry_run: true, valid: true, kind: "features.update", changes: [], warnings: ["Nothing to change: every feature is already as requested."] };
      return none;
    }
    return r.body;
  },
  reconcile: (cluster: string, region: string, key: string) =>
    request<Operation>(`/v1/clusters/${encodeURIComponent(cluster)}/reconcile${qs({ region })}`, {
      method: "POST",
      idempotencyKey: key,
    }),
  /** Jobs on every cluster (or one), newest first; clusters not read come back in `unreachable`. */
  allJobs: (p: { cluster?: string; region?: string; limit?: number; next_token?: string | null } = {}) =>
    get<ClusterJobList>(`/v1/jobs${qs(p)}`),
  /** Endpoints on every cluster (or one), status live. */
  allEndpoints: (p: { cluster?: string; region?: string; limit?: number; next_token?: string | null } = {}) =>
    get<ClusterEndpointList>(`/v1/endpoints${qs(p)}`),
  endpoints: (cluster: string, region: string) =>
    get<EndpointList>(`${clusterPath(cluster)}/endpoints${qs({ region, limit: 100 })}`),
  endpoint: (cluster: string, region: string, name: string) =>
    get<Endpoint>(`${clusterPath(cluster)}/endpoints/${encodeURIComponent(name)}${qs({ region })}`),
  deployEndpoint: (cluster: string, region: string, body: Partial<EndpointCreate>, key: string) =>
    request<Operation>(`${clusterPath(cluster)}/endpoints${qs({ region })}`, { method: "POST", body, idempotencyKey: key }),
  /** The plan of a deploy (`?dry_run=true`): the Kubernetes objects it creates and the capacity it uses; nothing is changed. */
  planDeployEndpoint: (cluster: string, region: string, body: Partial<EndpointCreate>, signal?: AbortSignal) =>
    request<Plan>(`${clusterPath(cluster)}/endpoints${qs({ region, dry_run: "true" })}`, {
      method: "POST",
      body,
      idempotencyKey: newIdempotencyKey(),
      signal,
    }),
  patchEndpoint: (cluster: string, region: string, name: string, changed: EndpointPatch, key: string) =>
    request<Operation | { changed: false }>(`${clusterPath(cluster)}/endpoints/${encodeURIComponent(name)}${qs({ region })}`, {
      method: "PATCH",
      body: changed,
      idempotencyKey: key,
    }),
  deleteEndpoint: (cluster: string, region: string, name: string, key: string) =>
    request<Operation>(`${clusterPath(cluster)}/endpoints/${encodeURIComponent(name)}${qs({ region })}`, {
      method: "DELETE",
      idempotencyKey: key,
    }),
  invokeEndpoint: (cluster: string, region: string, name: string, body: InvokeRequest, key: string) =>
    request<InvokeResult>(`${clusterPath(cluster)}/endpoints/${encodeURIComponent(name)}/invoke${qs({ region })}`, {
      method: "POST",
      body,
      idempotencyKey: key,
    }),
  /** The models in the shared bucket (keys under models/, pods see /data/models/), read from the bucket: one page of 100. */
  models: (cluster: string, region: string) => get<ModelList>(`${clusterPath(cluster)}/models${qs({ region, limit: 100 })}`),
  /** Names of the Secrets PodStart wrote in a namespace (default unless told; values are never read). */
  secretNames: (cluster: string, region: string, namespace?: string) =>
    get<SecretNames>(`${clusterPath(cluster)}/secrets${qs({ region, namespace })}`),
  /** PodStart's namespaces on a cluster: default and the ones an admin created (nothing else may be named). */
  namespaces: (cluster: string, region: string) => get<NamespaceList>(`${clusterPath(cluster)}/namespaces${qs({ region })}`),
  /** Create a PodStart namespace (`namespace.create`, admin): the Namespace, its Secrets Role, its data volume. */
  createNamespace: (cluster: string, region: string, body: NamespaceCreate, key: string) =>
    request<Operation>(`${clusterPath(cluster)}/namespaces${qs({ region })}`, { method: "POST", body, idempotencyKey: key }),
  planCreateNamespace: async (cluster: string, region: string, body: NamespaceCreate, signal?: AbortSignal) =>
    (await request<Plan>(`${clusterPath(cluster)}/namespaces${qs({ region, dry_run: "true" })}`, {
      method: "POST", body, idempotencyKey: newIdempotencyKey(), signal,
    })).body,
  /** Delete a namespace and everything in it (`namespace.delete`, admin); confirm repeats its name. */
  deleteNamespace: (cluster: string, region: string, namespace: string, key: string) =>
    request<Operation>(`${clusterPath(cluster)}/namespaces/${encodeURIComponent(namespace)}${qs({ region, confirm: namespace })}`, {
      method: "DELETE", idempotencyKey: key,
    }),
  /** The plan of a namespace delete: the jobs, Secrets and claims that go with it (the bucket stays). */
  planDeleteNamespace: async (cluster: string, region: string, namespace: string, signal?: AbortSignal) =>
    (await request<Plan>(`${clusterPath(cluster)}/namespaces/${encodeURIComponent(namespace)}${qs({ region, confirm: namespace, dry_run: "true" })}`, {
      method: "DELETE", idempotencyKey: newIdempotencyKey(), signal,
    })).body,
  /** Buckets PodStart may mount: its data bucket (operators) and the registered ones (admins). */
  buckets: () => get<BucketList>("/v1/buckets"),
  downloadModel: (cluster: string, region: string, body: Partial<ModelDownload>, key: string) =>
    request<Operation>(`${clusterPath(cluster)}/models${qs({ region })}`, { method: "POST", body, idempotencyKey: key }),
  /** The plan of a download (`?dry_run=true`): the Job (or none when the files are all there) and the S3 prefix. */
  planDownloadModel: (cluster: string, region: string, body: Partial<ModelDownload>, signal?: AbortSignal) =>
    request<Plan>(`${clusterPath(cluster)}/models${qs({ region, dry_run: "true" })}`, {
      method: "POST",
      body,
      idempotencyKey: newIdempotencyKey(),
      signal,
    }),
  pools: (cluster: string, region: string) => get<PoolList>(`${clusterPath(cluster)}/pools${qs({ region })}`),
  createPool: (cluster: string, region: string, body: Partial<PoolCreate>, key: string) =>
    request<Operation>(`${clusterPath(cluster)}/pools${qs({ region })}`, { method: "POST", body, idempotencyKey: key }),
  assignPool: (cluster: string, region: string, pool: string, body: Partial<PoolAssign>, key: string) =>
    request<Operation>(`${clusterPath(cluster)}/pools/${encodeURIComponent(pool)}/assign${qs({ region })}`, {
      method: "POST",
      body,
      idempotencyKey: key,
    }),
  releasePool: (cluster: string, region: string, pool: string, body: PoolRelease, key: string) =>
    request<Operation>(`${clusterPath(cluster)}/pools/${encodeURIComponent(pool)}/release${qs({ region })}`, {
      method: "POST",
      body,
      idempotencyKey: key,
    }),
  /** The plans (`?dry_run=true`) of a pool's create (its workers, the GPUs they need), assign and release (the
   * workers whose label changes). */
  planCreatePool: (cluster: string, region: string, body: Partial<PoolCreate>, signal?: AbortSignal) =>
    request<Plan>(`${clusterPath(cluster)}/pools${qs({ region, dry_run: "true" })}`, {
      method: "POST", body, idempotencyKey: newIdempotencyKey(), signal,
    }),
  planAssignPool: (cluster: string, region: string, pool: string, body: Partial<PoolAssign>, signal?: AbortSignal) =>
    request<Plan>(`${clusterPath(cluster)}/pools/${encodeURIComponent(pool)}/assign${qs({ region, dry_run: "true" })}`, {
      method: "POST", body, idempotencyKey: newIdempotencyKey(), signal,
    }),
  planReleasePool: (cluster: string, region: string, pool: string, body: PoolRelease, signal?: AbortSignal) =>
    request<Plan>(`${clusterPath(cluster)}/pools/${encodeURIComponent(pool)}/release${qs({ region, dry_run: "true" })}`, {
      method: "POST", body, idempotencyKey: newIdempotencyKey(), signal,
    }),
  recipes: () => get<RecipeList>("/v1/recipes"),
  jobs: (cluster: string, region: string) =>
    get<JobList>(`/v1/clusters/${encodeURIComponent(cluster)}/jobs${qs({ region })}`),
  /** A job; `mlflowLink` asks for a presigned MLflow UI link (operators; made only when asked). */
  job: (cluster: string, region: string, job: string, namespace: string, mlflowLink = false) =>
    get<JobDetail>(`/v1/clusters/${encodeURIComponent(cluster)}/jobs/${encodeURIComponent(job)}${qs({ region, namespace, mlflow_link: mlflowLink ? "true" : undefined })}`),
  /** A job's metrics by step: its MLflow run, else parsed from its first pod's log. */
  jobMetrics: (cluster: string, region: string, job: string, namespace = "default", signal?: AbortSignal) =>
    get<JobMetrics>(`${clusterPath(cluster)}/jobs/${encodeURIComponent(job)}/metrics${qs({ region, namespace })}`, signal),
  jobLogs: (cluster: string, region: string, job: string, p: { namespace: string; pod?: string; tail?: number }) =>
    get<JobLogs>(`/v1/clusters/${encodeURIComponent(cluster)}/jobs/${encodeURIComponent(job)}/logs${qs({ region, ...p })}`),
  submitJob: (cluster: string, region: string, body: Partial<JobSubmit>, key: string) =>
    request<Operation>(`/v1/clusters/${encodeURIComponent(cluster)}/jobs${qs({ region })}`, {
      method: "POST",
      body,
      idempotencyKey: key,
    }),
  /** The plan of a submit (`?dry_run=true`): the operator add-on and the objects it applies; nothing is changed. */
  planSubmitJob: (cluster: string, region: string, body: Partial<JobSubmit>, signal?: AbortSignal) =>
    request<Plan>(`/v1/clusters/${encodeURIComponent(cluster)}/jobs${qs({ region, dry_run: "true" })}`, {
      method: "POST",
      body,
      idempotencyKey: newIdempotencyKey(),
      signal,
    }),
  deleteJob: (cluster: string, region: string, job: string, namespace: string, key: string) =>
    request<Operation>(`/v1/clusters/${encodeURIComponent(cluster)}/jobs/${encodeURIComponent(job)}${qs({ region, namespace })}`, {
      method: "DELETE",
      idempotencyKey: key,
    }),
  retry: (id: string, key: string) =>
    request<Operation>(`/v1/operations/${encodeURIComponent(id)}/retry`, { method: "POST", idempotencyKey: key }),
  cancel: (id: string, key: string) =>
    request<Operation>(`/v1/operations/${encodeURIComponent(id)}/cancel`, { method: "POST", idempotencyKey: key }),
};

/** A fresh idempotency key (UUID v4). */
export function newIdempotencyKey(): string {
  if (typeof crypto !== "undefined" && "randomUUID" in crypto) return crypto.randomUUID();
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}
