// Shapes of the PodStart REST API (/v1). The OpenAPI document at /v1/openapi.json is the source of truth.
import type { components } from "./openapi";

// Response and request shapes come from the generated OpenAPI types (src/api/openapi.ts, `make
// openapi`) wherever the backend has a typed pydantic model. Where it does not yet, `SchemaOr` falls
// back to the hand-written shape below; once the backend adds the model (e.g. ClusterSummary) and the
// file is regenerated, the generated type takes over with no change here, and `npm run typecheck`
// shows any place the UI disagrees with it.
type Schemas = components["schemas"];
type SchemaOr<Name extends string, Fallback> = Name extends keyof Schemas ? Schemas[Name] : Fallback;

export type OperationStatus = Schemas["OperationStatus"];
export type StepStatus = Schemas["StepStatus"];
export type StepError = Schemas["ErrorInfo"];
export type Step = Schemas["StepOut"];
export type Operation = Schemas["OperationOut"];
export type ClusterImport = Schemas["ClusterImport"];
export type StorageAdd = Schemas["StorageAdd"];
export type Volume = Schemas["StorageItem"];
export type VolumeList = Schemas["StorageList"];
export type Plan = Schemas["Plan"];
export type AuditRecord = Schemas["AuditRecord"];
export type AuditPage = Schemas["AuditPage"];
export type Face = Schemas["Face"];
export type NodeRow = Schemas["NodeRow"];
export type NodeList = Schemas["NodeList"];
export type NodeDetail = Schemas["NodeDetail"];
export type NodesReboot = Schemas["NodesReboot"];
export type NodesReplace = Schemas["NodesReplace"];
export type HealthCheckStart = Schemas["HealthCheckStart"];
export type SoftwareUpdate = Schemas["SoftwareUpdate"];
/** One node's deep health check result, as the nodes.health_check operation reports it (result.results). */
export interface NodeHealthResult {
  node_id: string;
  passed: boolean;
  health?: string | null;
  checks: { check: string; passed: boolean; reason?: string | null }[];
}
export type ClusterEvent = Schemas["ClusterEventView"];
export type EventList = Schemas["EventList"];
export type Recipe = Schemas["RecipeOut"];
export type RecipeList = Schemas["RecipeList"];
export type JobSubmit = Schemas["JobSubmit"];
export type JobSummary = Schemas["JobSummary"];
export type JobList = Schemas["JobList"];
export type ClusterJob = Schemas["ClusterJob"];
export type ClusterJobList = Schemas["ClusterJobList"];
export type ClusterEndpointList = Schemas["ClusterEndpointList"];
export type Unreachable = Schemas["Unreachable"];
export type RunningCost = Schemas["RunningCost"];
export type JobMetrics = Schemas["JobMetrics"];
export type JobDetail = Schemas["JobDetail"];
export type TrackingServer = Schemas["TrackingServer"];
export type TrackingServerPage = Schemas["TrackingServerPage"];
export type JobLogs = Schemas["JobLogs"];
export type FeatureView = Schemas["FeatureView"];
export type FeaturesDocument = Schemas["FeaturesDocument"];
export type FeaturesUnchanged = Schemas["FeaturesUnchanged"];
export type EndpointCreate = Schemas["EndpointCreate"];
export type EndpointPatch = Schemas["EndpointPatch"];
export type Endpoint = Schemas["EndpointView"];
export type EndpointList = Schemas["EndpointList"];
export type InvokeRequest = Schemas["InvokeRequest"];
export type InvokeResult = Schemas["InvokeResult"];
export type Pool = Schemas["PoolView"];
export type PoolList = Schemas["PoolList"];
export type PoolCreate = Schemas["PoolCreate"];
export type PoolAssign = Schemas["PoolAssign"];
export type PoolRelease = Schemas["PoolRelease"];
export type ModelDownload = Schemas["ModelDownload"];
export type ModelItem = Schemas["ModelObject"];
export type ModelList = Schemas["ModelList"];
export type SecretNames = Schemas["SecretNames"];
export type AdviceRequest = Schemas["AdviceRequest"];
export type Advice = Schemas["Advice"];
export type AdviceOption = Schemas["Option"];
export type NearMiss = Schemas["NearMiss"];
export type ClusterGpus = Schemas["ClusterGpus"];
export type GroupGpus = Schemas["GroupGpus"];
export type TrainingPlanPurchase = Schemas["TrainingPlanPurchase"];
export type NamespaceView = Schemas["NamespaceView"];
export type NamespaceList = Schemas["NamespaceList"];
export type NamespaceCreate = Schemas["NamespaceCreate"];
/** A bucket PodStart may read: its own data bucket (owned) or one an admin registered (optionally one prefix). */
export type BucketRegistration = Schemas["Registration"];
export type BucketList = Schemas["BucketList"];

export interface Page<T> {
  items: T[];
  next_token?: string | null;
}

/** The clusters list: untracked clusters of regions without PodStart's come from a scan every 10 minutes. */
export interface ClusterPage extends Page<ClusterSummary> {
  discovered_at?: string | null;
  undiscovered_regions?: string[];
}

export interface Region {
  name: string;
}
export interface AvailabilityZone {
  name: string;
  id: string;
  state: string;
}
export interface Accelerator {
  kind: string;
  manufacturer: string;
  model: string;
  count: number;
  memory_gib: number;
}
export interface InstanceType {
  name: string;
  vcpus: number;
  memory_gib: number;
  accelerator: Accelerator | null;
  efa_supported: boolean;
  efa_max_interfaces: number;
  network_cards: number;
  efa_only_supported: boolean;
  accelerated: boolean;
}
export interface TrainingPlan {
  arn: string;
  name: string;
  status: string;
  instance_type: string;
  availability_zone: string;
  total_instance_count: number;
  available_instance_count: number;
  start_time: string;
  end_time: string;
}
export interface Quota {
  instance_type: string;
  quota_code: string;
  quota_name: string;
  limit: number;
  in_use: number;
  available: number;
}

export type Preferences = Schemas["Preferences"] & { changed?: boolean };

export type CapacityType = "on-demand" | "spot" | "training-plan";

export interface InstanceGroupSpec {
  name: string;
  instance_type: string;
  instance_count: number;
  availability_zone: string;
  capacity_type: CapacityType;
  training_plan_arn?: string;
  efa_only: boolean;
  volume_size_gb: number;
  deep_health_checks?: string[];
}

/** POST /v1/clusters (the groups as the UI sends them). */
export type ClusterCreate = Omit<Schemas["ClusterCreate"], "instance_groups"> & { instance_groups: InstanceGroupSpec[] };

/** An instance group's counts: the target, the count last observed (null until observed) and when. */
export interface GroupCounts {
  target_count?: number | null;
  current_count?: number | null;
  counts_as_of?: string | null;
  instance_count?: number | null;
}

export interface ClusterInstanceGroupV0 extends GroupCounts {
  name: string;
  instance_type: string;
  availability_zone?: string | null;
  capacity_type?: CapacityType | null;
  efa_only?: boolean | null;
  status?: string | null;
}

/** Where a listed cluster comes from: created by PodStart, imported into it, or found in the account. */
export type ClusterOrigin = "created" | "imported" | "external";

export interface ClusterSummaryV0 {
  name: string;
  region: string;
  status?: string | null;
  hyperpod_status?: string | null;
  kubernetes_version?: string | null;
  managed?: boolean | null;
  origin?: ClusterOrigin | null;
  importable?: boolean | null;
  eks_cluster_name?: string | null;
  instance_groups?: ClusterInstanceGroupV0[] | null;
  active?: boolean | null;
  operation_id?: string | null;
}

export interface PvcStatus {
  name: string;
  namespace: string;
  phase?: string | null;
}

export interface StorageItemV0 {
  name: string;
  kind: "s3-mountpoint" | "fsx-lustre" | string;
  /** FSx: the file system's lifecycle (CREATING, AVAILABLE, FAILED, ...); S3: the PVC phase. */
  status?: string | null;
  bucket?: string | null;
  file_system_id?: string | null;
  lifecycle?: string | null;
  pvc?: PvcStatus | null;
}

export interface ClusterDetailV0 {
  name: string;
  region: string;
  status?: string | null;
  managed?: boolean | null;
  origin?: ClusterOrigin | null;
  kubernetes_version?: string | null;
  eks?: { name?: string | null; status?: string | null; arn?: string | null; version?: string | null } | null;
  hyperpod?: { name?: string | null; status?: string | null; arn?: string | null } | null;
  instance_groups?: ClusterInstanceGroupV0[] | null;
  node_recovery?: string | null;
  dependencies?: { name: string; kind?: string | null; status?: string | null; version?: string | null }[] | null;
  storage?: StorageItemV0[] | null;
  operations?: Operation[] | null;
}

export type ClusterSummary = SchemaOr<"ClusterSummary", ClusterSummaryV0>;
export type ClusterDetail = SchemaOr<"ClusterDetail", ClusterDetailV0>;
export type ClusterInstanceGroup = NonNullable<ClusterDetail["instance_groups"]>[number];
export type StorageItem = NonNullable<ClusterDetail["storage"]>[number];

/** GET /v1/me. */
export interface Me {
  sub: string;
  name?: string | null;
  role: "viewer" | "operator" | "admin" | string;
  can_mutate?: boolean;
  can_delete_clusters?: boolean;
  /** Admin actions: namespaces, registered buckets, public endpoints, removing data. */
  can_administer?: boolean;
  /** Fair-share limits (long polls, sockets, log follows). */
  limits?: Record<string, number>;
}

/** A live event from /ws (the `podstart` bus). */
export interface LiveEvent {
  type: "event";
  detail_type: string;
  metadata?: Record<string, unknown>;
  data: {
    operation_id?: string;
    kind?: string;
    target?: Operation["target"];
    status?: string;
    step?: Partial<Step> & { name: string };
    [k: string]: unknown;
  };
}
