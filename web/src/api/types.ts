// Shapes of the PodStart REST API (/v1). The OpenAPI document at /v1/openapi.json is the source of truth.

export type OperationStatus = "PENDING" | "RUNNING" | "SUCCEEDED" | "FAILED" | "CANCELLED";
export type StepStatus = "PENDING" | "RUNNING" | "SUCCEEDED" | "FAILED" | "SKIPPED";

export interface StepError {
  code: string;
  message: string;
  retryable: boolean;
}

export interface Step {
  name: string;
  status: StepStatus;
  started_at?: string | null;
  ended_at?: string | null;
  message?: string | null;
  error?: StepError | null;
  attempts?: number;
  outputs?: Record<string, unknown> | null;
}

export interface Operation {
  id: string;
  kind: string;
  target: { cluster?: string | null; region?: string | null; resource?: string | null };
  status: OperationStatus;
  phase?: string | null;
  steps: Step[];
  request?: unknown;
  result?: unknown;
  error?: StepError | { code?: string; message?: string } | null;
  principal?: { sub?: string; name?: string } | null;
  idempotency_key?: string | null;
  created_at: string;
  updated_at: string;
  attempt?: number;
  version: number;
  links?: { self?: string; retry?: string; cancel?: string };
  status_tool?: string;
}

export interface Page<T> {
  items: T[];
  next_token?: string | null;
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

export interface Preferences {
  active_cluster: { name: string; region: string } | null;
  default_region: string | null;
  changed?: boolean;
}

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

export interface ClusterCreate {
  name: string;
  region: string;
  kubernetes_version?: string;
  vpc_cidr?: string;
  node_recovery: "automatic" | "none";
  instance_groups: InstanceGroupSpec[];
  storage: { s3: boolean; fsx_lustre: null | { storage_capacity_gib: number } };
}

export interface ClusterSummary {
  name: string;
  region: string;
  status: string;
  kubernetes_version?: string | null;
  instance_groups: { name: string; instance_type: string; current_count: number; target_count: number }[];
  active: boolean;
  operation_id?: string | null;
}

export interface ClusterInstanceGroup {
  name: string;
  instance_type: string;
  availability_zone?: string;
  capacity_type?: CapacityType;
  efa_only?: boolean;
  current_count: number;
  target_count: number;
  status?: string;
}

export interface ClusterDetail {
  name: string;
  region: string;
  status: string;
  kubernetes_version?: string | null;
  eks?: Record<string, unknown> | null;
  hyperpod?: Record<string, unknown> | null;
  instance_groups: ClusterInstanceGroup[];
  node_recovery?: string;
  dependencies?: { name: string; kind: string; status: string }[];
  storage?: { name: string; kind: string; status: string }[];
  operations?: Operation[];
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
