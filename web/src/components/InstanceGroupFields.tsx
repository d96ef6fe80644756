import { useMemo } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Checkbox from "@cloudscape-design/components/checkbox";
import FormField from "@cloudscape-design/components/form-field";
import Input from "@cloudscape-design/components/input";
import RadioGroup from "@cloudscape-design/components/radio-group";
import Select, { type SelectProps } from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Table from "@cloudscape-design/components/table";
import TextFilter from "@cloudscape-design/components/text-filter";
import { useState } from "react";
import { api } from "../api/client";
import type { CapacityType, InstanceGroupSpec, InstanceType, Quota, TrainingPlan } from "../api/types";
import { cached, useAsync } from "../lib/useAsync";

export interface GroupDraft {
  name: string;
  availability_zone: string;
  instance_type: string;
  capacity_type: CapacityType;
  training_plan_arn: string;
  instance_count: string;
  efa_only: boolean;
  volume_size_gb: string;
}

export const emptyGroup = (name = "workers"): GroupDraft => ({
  name,
  availability_zone: "",
  instance_type: "",
  capacity_type: "on-demand",
  training_plan_arn: "",
  instance_count: "1",
  efa_only: false,
  volume_size_gb: "500",
});

/** The API body for a drafted group. Numbers that do not parse are sent as-is so the API names the field. */
export function toSpec(d: GroupDraft): InstanceGroupSpec {
  const num = (s: string) => (s.trim() !== "" && Number.isFinite(Number(s)) ? Number(s) : (s as unknown as number));
  const spec: InstanceGroupSpec = {
    name: d.name.trim(),
    instance_type: d.instance_type,
    instance_count: num(d.instance_count),
    availability_zone: d.availability_zone,
    capacity_type: d.capacity_type,
    efa_only: d.efa_only,
    volume_size_gb: num(d.volume_size_gb),
  };
  if (d.capacity_type === "training-plan" && d.training_plan_arn) spec.training_plan_arn = d.training_plan_arn;
  return spec;
}

export type Errors = Record<string, string | undefined>;

export function useZones(region: string) {
  return useAsync(() => cached(`zones:${region}`, () => api.zones(region)), [region], !!region);
}
export function useInstanceTypes(region: string, zone: string) {
  return useAsync(() => cached(`types:${region}:${zone}`, () => api.instanceTypes(region, zone)), [region, zone], !!region && !!zone);
}
export function useQuotas(region: string) {
  // Quotas change as clusters come and go: fetch fresh each time the region changes.
  return useAsync(() => api.quotas(region), [region], !!region);
}
export function usePlans(region: string) {
  return useAsync(() => cached(`plans:${region}`, () => api.trainingPlans(region)), [region], !!region);
}

export function ZonePicker({
  region,
  value,
  onChange,
  error,
}: {
  region: string;
  value: string;
  onChange: (zone: string) => void;
  error?: string;
}) {
  const zones = useZones(region);
  const options: SelectProps.Option[] = (zones.data?.items ?? []).map((z) => ({
    value: z.name,
    label: z.name,
    description: `zone id ${z.id}`,
    tags: [z.state],
    disabled: z.state !== "available",
  }));
  const selected = options.find((o) => o.value === value) ?? null;
  return (
    <FormField
      label="Availability zone"
      description="HyperPod places the group's instances in one zone. Instance types and training plans differ by zone."
      errorText={error ?? (zones.error ? `Could not list zones: ${zones.error.message}` : undefined)}
    >
      <Select
        selectedOption={selected}
        onChange={({ detail }) => onChange(detail.selectedOption.value ?? "")}
        options={options}
        placeholder={region ? "Choose a zone" : "Choose a region first"}
        statusType={zones.loading ? "loading" : "finished"}
        loadingText="Loading zones"
        disabled={!region}
        ariaLabel="Availability zone"
        data-testid="zone-select"
      />
    </FormField>
  );
}

export function accelLabel(t: InstanceType): string {
  const a = t.accelerator;
  return a ? `${a.count} × ${a.manufacturer} ${a.model} (${a.memory_gib} GiB)` : "none";
}

export function efaLabel(t: InstanceType): string {
  return t.efa_supported ? `Yes, ${t.efa_max_interfaces} interface${t.efa_max_interfaces === 1 ? "" : "s"}` : "No";
}

/** Why a type cannot be chosen for this capacity, or undefined: no cluster-usage quota left in the region (a
 * training plan brings its own capacity). */
export function typeBlocked(t: Pick<InstanceType, "name">, quota: Quota | undefined, quotasKnown: boolean, capacityType: CapacityType | undefined, region: string): string | undefined {
  if (capacityType === "training-plan" || !quotasKnown) return undefined;
  if (!quota) return `No cluster-usage quota for ${t.name} in ${region}: request one in Service Quotas, or use a training plan.`;
  if (quota.available < 1) return `No quota left: ${quota.in_use} of ${quota.limit} ${t.name} in use in ${region}.`;
  return undefined;
}

export function quotaText(q: Quota | undefined, quotasKnown: boolean): string {
  if (!quotasKnown) return "unknown";
  if (!q) return "No quota";
  return q.available < 1 ? `None left (${q.in_use} of ${q.limit} in use)` : `${q.available} of ${q.limit}`;
}

export function InstanceTypePicker({
  region,
  zone,
  value,
  onChange,
  error,
  capacityType,
}: {
  region: string;
  zone: string;
  value: string;
  onChange: (t: InstanceType | null) => void;
  error?: string;
  /** The group's capacity: types with no quota left are disabled (with why) unless a training plan provides it. */
  capacityType?: CapacityType;
}) {
  const types = useInstanceTypes(region, zone);
  const quotas = useQuotas(region);
  const [filter, setFilter] = useState("");
  const [gpuOnly, setGpuOnly] = useState(true);
  const quotaOf = useMemo(() => new Map((quotas.data?.items ?? []).map((q) => [q.instance_type, q])), [quotas.data]);
  const known = !!quotas.data;
  const items = (types.data?.items ?? [])
    .filter(
    (t) =>
      (!gpuOnly || t.accelerated) &&
      (!filter || `${t.name} ${t.accelerator?.model ?? ""}`.toLowerCase().includes(filter.toLowerCase())),
    )
    .sort((a, b) => Number(b.accelerated) - Number(a.accelerated) || a.name.localeCompare(b.name, "en", { numeric: true }));
  const selected = (types.data?.items ?? []).filter((t) => t.name === value);
  const blocked = (t: InstanceType) => typeBlocked(t, quotaOf.get(t.name), known, capacityType, region);
  return (
    <FormField
      label="Instance type"
      description={zone ? `Types HyperPod offers in ${zone}, with the cluster-usage quota left in ${region}. Types with no quota left cannot be chosen (a training plan brings its own capacity).` : undefined}
      errorText={error ?? (types.error ? `Could not list instance types: ${types.error.message}` : undefined)}
      stretch
    >
      <Table<InstanceType>
        variant="embedded"
        selectionType="single"
        trackBy="name"
        selectedItems={selected}
        onSelectionChange={({ detail }) => onChange(detail.selectedItems[0] ?? null)}
        isItemDisabled={(t) => !!blocked(t)}
        ariaLabels={{
          selectionGroupLabel: "Instance types",
          itemSelectionLabel: (_, t) => `Select ${t.name}`,
          tableLabel: "Instance types",
        }}
        items={items}
        loading={types.loading}
        loadingText="Loading instance types"
        empty={<Box textAlign="center">{zone ? "No instance types match." : "Choose an availability zone first."}</Box>}
        filter={
          <div className="ps-table-filters">
            <TextFilter filteringText={filter} onChange={({ detail }) => setFilter(detail.filteringText)} filteringPlaceholder="Find an instance type or GPU" filteringAriaLabel="Filter instance types" />
            <Checkbox checked={gpuOnly} onChange={({ detail }) => setGpuOnly(detail.checked)}>
              Accelerated only
            </Checkbox>
          </div>
        }
        columnDefinitions={[
          { id: "name", header: "Type", cell: (t) => t.name, isRowHeader: true },
          { id: "accel", header: "Accelerators", cell: accelLabel },
          { id: "cpu", header: "vCPU / memory", cell: (t) => `${t.vcpus} vCPU · ${t.memory_gib} GiB` },
          { id: "efa", header: "EFA", cell: efaLabel },
          {
            id: "quota",
            header: "Quota available",
            cell: (t) => {
              const why = blocked(t);
              const words = quotas.loading && !quotas.data ? "…" : quotaText(quotaOf.get(t.name), known);
              return why ? <span title={why} data-testid={`blocked-${t.name}`}>{words}<span className="ps-sr-only">: {why}</span></span> : words;
            },
          },
        ]}
      />
    </FormField>
  );
}

/** "4 × NVIDIA A10G (24 GiB)" for a type in a zone, from the (cached) catalog. */
export function TypeSummary({ region, zone, type }: { region: string; zone: string; type: string }) {
  const types = useInstanceTypes(region, zone);
  const t = types.data?.items.find((x) => x.name === type);
  return <>{t ? accelLabel(t) : type ? (types.loading ? "…" : "unknown") : "—"}</>;
}

export function capacityLimit(
  d: Pick<GroupDraft, "capacity_type" | "training_plan_arn" | "instance_type">,
  quota: Quota | undefined,
  plan: TrainingPlan | undefined,
): { max: number; text: string } {
  if (d.capacity_type === "training-plan") {
    if (!plan) return { max: 0, text: "Choose a training plan." };
    return { max: plan.available_instance_count, text: `${plan.available_instance_count} of ${plan.total_instance_count} instances available in the plan ${plan.name}.` };
  }
  if (!d.instance_type) return { max: -1, text: "Choose an instance type first." };
  if (!quota) return { max: 0, text: `No cluster-usage quota for ${d.instance_type} in this region.` };
  return { max: quota.available, text: `Quota: ${quota.available} available (limit ${quota.limit}, ${quota.in_use} in use).` };
}

export function CapacityFields({
  region,
  draft,
  onChange,
  errors,
  instanceType,
}: {
  region: string;
  draft: GroupDraft;
  onChange: (patch: Partial<GroupDraft>) => void;
  errors: Errors;
  instanceType?: InstanceType;
}) {
  const plans = usePlans(region);
  const quotas = useQuotas(region);
  const types = useInstanceTypes(region, draft.availability_zone);
  instanceType = instanceType ?? types.data?.items.find((t) => t.name === draft.instance_type);
  const quota = quotas.data?.items.find((q) => q.instance_type === draft.instance_type);
  const allPlans = plans.data?.items ?? [];
  const plan = allPlans.find((p) => p.arn === draft.training_plan_arn);
  const limit = capacityLimit(draft, quota, plan);
  const fits = (p: TrainingPlan) =>
    p.instance_type === draft.instance_type && (!p.availability_zone || p.availability_zone === draft.availability_zone) && p.status === "Active";
  return (
    <SpaceBetween size="l">
      <FormField label="Capacity type" errorText={errors.capacity_type} description="Fixed for the group's life.">
        <RadioGroup
          value={draft.capacity_type}
          onChange={({ detail }) => onChange({ capacity_type: detail.value as CapacityType, training_plan_arn: detail.value === "training-plan" ? draft.training_plan_arn : "" })}
          ariaLabel="Capacity type"
          items={[
            { value: "on-demand", label: "On-Demand", description: "Pay by the hour; counted against the cluster-usage quota." },
            { value: "spot", label: "Spot", description: "Spare capacity at a discount; instances can be reclaimed." },
            { value: "training-plan", label: "Training plan", description: "Reserved capacity from a SageMaker training plan." },
          ]}
        />
      </FormField>
      {draft.capacity_type === "training-plan" && (
        <FormField label="Training plan" errorText={errors.training_plan_arn ?? (plans.error ? `Could not list training plans: ${plans.error.message}` : undefined)} description={`Plans in ${region}; only a plan for ${draft.instance_type || "the chosen type"} in ${draft.availability_zone || "the chosen zone"} fits.`}>
          {allPlans.length === 0 && !plans.loading ? (
            <Alert type="info">No training plans in {region}.</Alert>
          ) : (
            <RadioGroup
              value={draft.training_plan_arn || null}
              onChange={({ detail }) => onChange({ training_plan_arn: detail.value })}
              ariaLabel="Training plan"
              items={allPlans.map((p) => ({
                value: p.arn,
                label: `${p.name} — ${p.total_instance_count} × ${p.instance_type}`,
                description: `${p.availability_zone} · ${p.available_instance_count} available · ${p.status} · ${(p.start_time ?? "").slice(0, 10) || "—"} to ${(p.end_time ?? "").slice(0, 10) || "—"}${fits(p) ? "" : " · does not match the chosen type and zone"}`,
                disabled: !fits(p),
              }))}
            />
          )}
        </FormField>
      )}
      <FormField label="Instance count" description={limit.text} errorText={errors.instance_count ?? (draft.instance_count && limit.max >= 0 && (quotas.data || draft.capacity_type === "training-plan") && Number(draft.instance_count) > limit.max ? `At most ${limit.max} fit (${limit.text})` : undefined)}>
        <Input type="number" inputMode="numeric" value={draft.instance_count} onChange={({ detail }) => onChange({ instance_count: detail.value })} ariaLabel="Instance count" />
      </FormField>
      <FormField label="EFA-only network interfaces" description={instanceType ? (instanceType.efa_only_supported ? `${instanceType.name} supports EFA-only interfaces (more bandwidth for collective traffic).` : `${instanceType.name} does not support EFA-only interfaces.`) : "Choose an instance type first."} errorText={errors.efa_only}>
        <Checkbox checked={draft.efa_only} disabled={!instanceType?.efa_only_supported} onChange={({ detail }) => onChange({ efa_only: detail.checked })}>
          Use EFA-only interfaces
        </Checkbox>
      </FormField>
      <FormField label="Extra volume per instance (GiB)" errorText={errors.volume_size_gb} constraintText="50 to 16384 GiB">
        <Input type="number" inputMode="numeric" value={draft.volume_size_gb} onChange={({ detail }) => onChange({ volume_size_gb: detail.value })} ariaLabel="Extra volume per instance (GiB)" />
      </FormField>
    </SpaceBetween>
  );
}

export function GroupNameField({ value, onChange, error }: { value: string; onChange: (v: string) => void; error?: string }) {
  return (
    <FormField label="Instance group name" constraintText="Lowercase letters, digits and '-', at most 32 characters; unique in the cluster." errorText={error}>
      <Input value={value} onChange={({ detail }) => onChange(detail.value)} ariaLabel="Instance group name" />
    </FormField>
  );
}

/** The field paths of one instance group, for mapping problem+json errors. */
export const GROUP_FIELDS = ["name", "instance_type", "instance_count", "availability_zone", "capacity_type", "training_plan_arn", "efa_only", "volume_size_gb", "deep_health_checks"];
