import { useEffect, useMemo, useState } from "react";
import Alert from "@cloudscape-design/components/alert";
import Checkbox from "@cloudscape-design/components/checkbox";
import ColumnLayout from "@cloudscape-design/components/column-layout";
import Container from "@cloudscape-design/components/container";
import ExpandableSection from "@cloudscape-design/components/expandable-section";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import KeyValuePairs from "@cloudscape-design/components/key-value-pairs";
import RadioGroup from "@cloudscape-design/components/radio-group";
import Select from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Wizard from "@cloudscape-design/components/wizard";
import { api } from "../api/client";
import type { AdviceOption, ClusterCreate, InstanceGroupSpec, InstanceType } from "../api/types";
import { CapacityAdvisor } from "../components/CapacityAdvisor";
import {
  CapacityFields,
  GroupNameField,
  InstanceTypePicker,
  ZonePicker,
  accelLabel,
  efaLabel,
  emptyGroup,
  toSpec,
  type GroupDraft,
} from "../components/InstanceGroupFields";
import { PlanPanel } from "../components/PlanPanel";
import { useMutation } from "../lib/mutation";
import { href, navigate } from "../lib/router";
import { cached, useAsync } from "../lib/useAsync";

const K8S_VERSIONS = ["1.33", "1.32", "1.31", "1.30"];
const G = "instance_groups.0";

interface Draft {
  region: string;
  name: string;
  group: GroupDraft;
  kubernetes_version: string;
  vpc_cidr: string;
  node_recovery: "automatic" | "none";
  s3: boolean;
  fsx: boolean;
  fsx_capacity: string;
}

/** Which wizard step shows each field (for jumping to the first error). */
const STEP_OF: [string, number][] = [
  ["region", 0],
  [`${G}.availability_zone`, 0],
  [`${G}.instance_type`, 1],
  [`${G}.name`, 1],
  [`${G}.capacity_type`, 2],
  [`${G}.training_plan_arn`, 2],
  [`${G}.instance_count`, 2],
  [`${G}.efa_only`, 2],
  [`${G}.volume_size_gb`, 2],
  [`${G}.deep_health_checks`, 2],
  [G, 2],
  ["instance_groups", 2],
  ["name", 3],
  ["kubernetes_version", 3],
  ["vpc_cidr", 3],
  ["node_recovery", 3],
  ["storage.fsx_lustre", 3],
  ["storage", 3],
];
const KNOWN = STEP_OF.map(([f]) => f);

export function buildBody(d: Draft): ClusterCreate {
  const body: ClusterCreate = {
    name: d.name.trim(),
    region: d.region,
    node_recovery: d.node_recovery,
    instance_groups: [toSpec(d.group)],
    storage: {
      s3: d.s3,
      fsx_lustre: d.fsx ? { storage_capacity_gib: Number(d.fsx_capacity) || (d.fsx_capacity as unknown as number) } : null,
    },
  };
  if (d.kubernetes_version) body.kubernetes_version = d.kubernetes_version;
  if (d.vpc_cidr.trim()) body.vpc_cidr = d.vpc_cidr.trim();
  return body;
}

export default function CreateCluster() {
  const prefs = useAsync(() => api.preferences(), []);
  const regions = useAsync(() => cached("regions", () => api.regions()), []);
  const [step, setStep] = useState(0);
  const [draft, setDraft] = useState<Draft>({
    region: "",
    name: "",
    group: emptyGroup("workers"),
    kubernetes_version: "",
    vpc_cidr: "",
    node_recovery: "automatic",
    s3: true,
    fsx: false,
    fsx_capacity: "1200",
  });
  // Client-side checks (a step left incomplete) and the API's refusal, per field.
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [type, setType] = useState<InstanceType | undefined>(undefined);
  const create = useMutation((body: ClusterCreate, key: string) => api.createCluster(body, key), { fields: KNOWN });
  const unclaimed = create.errors;
  const submitting = create.busy;
  useEffect(() => {
    // A refusal: show each error at its field and go to the first step that has one.
    const fields = create.fieldErrors;
    if (!Object.keys(fields).length) return;
    setErrors(fields);
    const first = STEP_OF.filter(([f]) => f in fields).map(([, s]) => s);
    if (first.length) setStep(Math.min(...first));
  }, [create.fieldErrors]);

  const region = draft.region || prefs.data?.default_region || "";
  const set = (patch: Partial<Draft>) => setDraft((d) => ({ ...d, ...patch }));
  const setGroup = (patch: Partial<GroupDraft>) => setDraft((d) => ({ ...d, group: { ...d.group, ...patch } }));
  const clear = (...fields: string[]) =>
    setErrors((e) => {
      const n = { ...e };
      for (const f of fields) delete n[f];
      return n;
    });

  const regionOptions = useMemo(() => (regions.data?.items ?? []).map((r) => ({ value: r.name, label: r.name })), [regions.data]);

  const missing = (i: number): Record<string, string> => {
    const m: Record<string, string> = {};
    if (i === 0) {
      if (!region) m.region = "Choose a region.";
      if (!draft.group.availability_zone) m[`${G}.availability_zone`] = "Choose an availability zone.";
    }
    if (i === 1 && !draft.group.instance_type) m[`${G}.instance_type`] = "Choose an instance type.";
    if (i === 2 && draft.group.capacity_type === "training-plan" && !draft.group.training_plan_arn)
      m[`${G}.training_plan_arn`] = "Choose a training plan.";
    return m;
  };

  const submit = () => void create.run(buildBody({ ...draft, region }));

  // An advisor option fills the form from its create request, then the user names the cluster and reviews it.
  const applyOption = (o: AdviceOption) => {
    const body = o.create_cluster?.body as unknown as ClusterCreate | undefined;
    const g = body?.instance_groups?.[0] as InstanceGroupSpec | undefined;
    if (!body || !g) return;
    setDraft((d) => ({
      ...d,
      region: body.region,
      name: d.name || body.name,
      group: {
        ...emptyGroup(g.name),
        availability_zone: g.availability_zone,
        instance_type: g.instance_type,
        capacity_type: g.capacity_type ?? "on-demand",
        training_plan_arn: g.training_plan_arn ?? "",
        instance_count: String(g.instance_count),
      },
    }));
    setErrors({});
    setType(undefined);
    void cached(`types:${body.region}:${g.availability_zone}`, () => api.instanceTypes(body.region, g.availability_zone))
      .then((page) => setType(page.items.find((t) => t.name === g.instance_type)))
      .catch(() => undefined);
    setStep(3);
  };

  const g = draft.group;
  const err = (f: string) => errors[f];
  // Shown by the Wizard in its own error alert: plain content here.
  const errorBanner =
    unclaimed.length > 0 ? (
      <SpaceBetween size="xxs">
        <b>The cluster was not created.</b>
        <ul className="ps-plain-list">
          {unclaimed.map((u) => (
            <li key={u}>{u}</li>
          ))}
        </ul>
      </SpaceBetween>
    ) : Object.keys(errors).length > 0 ? (
      <span>
        <b>The cluster was not created.</b> Fix the fields marked{Object.keys(errors).length > 1 ? " (some may be on other steps)" : ""} and create again.
      </span>
    ) : null;

  return (
    <Wizard
      i18nStrings={{
        stepNumberLabel: (n) => `Step ${n}`,
        collapsedStepsLabel: (n, total) => `Step ${n} of ${total}`,
        skipToButtonLabel: (s) => `Skip to ${s.title}`,
        navigationAriaLabel: "Steps",
        cancelButton: "Cancel",
        previousButton: "Previous",
        nextButton: "Next",
        submitButton: "Create cluster",
        optional: "optional",
      }}
      activeStepIndex={step}
      isLoadingNextStep={submitting}
      onCancel={() => navigate(href.clusters())}
      onSubmit={submit}
      onNavigate={({ detail }) => {
        if (detail.requestedStepIndex > step) {
          for (let i = step; i < detail.requestedStepIndex; i++) {
            const m = missing(i);
            if (Object.keys(m).length) {
              setErrors((e) => ({ ...e, ...m }));
              setStep(i);
              return;
            }
          }
        }
        setStep(detail.requestedStepIndex);
      }}
      allowSkipTo
      steps={[
        {
          title: "Region and zone",
          description: "Where the cluster runs. PodStart lists only what HyperPod offers there.",
          errorText: step === 0 ? errorBanner : undefined,
          content: (
            <SpaceBetween size="l">
            <Container header={<Header variant="h2">Placement</Header>}>
              <SpaceBetween size="l">
                <FormField label="Region" errorText={err("region") ?? (regions.error ? `Could not list regions: ${regions.error.message}` : undefined)}>
                  <Select
                    selectedOption={region ? { value: region, label: region } : null}
                    onChange={({ detail }) => {
                      set({ region: detail.selectedOption.value ?? "" });
                      setGroup({ availability_zone: "", instance_type: "", training_plan_arn: "" });
                      setType(undefined);
                      clear("region", `${G}.availability_zone`);
                    }}
                    options={regionOptions}
                    statusType={regions.loading ? "loading" : "finished"}
                    loadingText="Loading regions"
                    placeholder="Choose a region"
                    filteringType="auto"
                    ariaLabel="Region"
                    data-testid="region-select"
                  />
                </FormField>
                <ZonePicker
                  region={region}
                  value={g.availability_zone}
                  error={err(`${G}.availability_zone`)}
                  onChange={(z) => {
                    setGroup({ availability_zone: z, instance_type: "", training_plan_arn: "" });
                    setType(undefined);
                    clear(`${G}.availability_zone`);
                  }}
                />
              </SpaceBetween>
            </Container>
            <ExpandableSection variant="container" headerText="Capacity advisor"
              headerDescription="Not sure where? Say how many GPUs: ranked options that fit now (zone, type, capacity, quota, price, start); one fills this form."
              data-testid="capacity-advisor">
              <CapacityAdvisor region={region} onUse={applyOption} />
            </ExpandableSection>
            </SpaceBetween>
          ),
        },
        {
          title: "Instance type",
          description: "The accelerators, memory and network of the first instance group.",
          errorText: step === 1 ? errorBanner : undefined,
          content: (
            <Container header={<Header variant="h2">Instance group</Header>}>
              <SpaceBetween size="l">
                <InstanceTypePicker
                  region={region}
                  zone={g.availability_zone}
                  value={g.instance_type}
                  error={err(`${G}.instance_type`)}
                  onChange={(t) => {
                    setType(t ?? undefined);
                    setGroup({ instance_type: t?.name ?? "", efa_only: t?.efa_only_supported ? g.efa_only : false, training_plan_arn: "" });
                    clear(`${G}.instance_type`);
                  }}
                />
                <GroupNameField value={g.name} error={err(`${G}.name`)} onChange={(v) => { setGroup({ name: v }); clear(`${G}.name`); }} />
              </SpaceBetween>
            </Container>
          ),
        },
        {
          title: "Capacity",
          description: "How the instances are paid for, and how many (within the quota shown).",
          errorText: step === 2 ? errorBanner : undefined,
          content: (
            <Container header={<Header variant="h2">Capacity</Header>}>
              {err(G) && <Alert type="error">{err(G)}</Alert>}
              {err("instance_groups") && <Alert type="error">{err("instance_groups")}</Alert>}
              <CapacityFields
                region={region}
                draft={g}
                instanceType={type}
                errors={Object.fromEntries(Object.entries(errors).filter(([k]) => k.startsWith(`${G}.`)).map(([k, v]) => [k.slice(G.length + 1), v]))}
                onChange={(p) => {
                  setGroup(p);
                  clear(...Object.keys(p).map((k) => `${G}.${k}`));
                }}
              />
            </Container>
          ),
        },
        {
          title: "Cluster",
          description: "Name the cluster; the defaults below suit most clusters.",
          errorText: step === 3 ? errorBanner : undefined,
          content: (
            <Container header={<Header variant="h2">Cluster details</Header>}>
              <SpaceBetween size="l">
                <FormField label="Cluster name" constraintText="Lowercase letters, digits and '-', starting with a letter; at most 32 characters." errorText={err("name")}>
                  <Input value={draft.name} onChange={({ detail }) => { set({ name: detail.value }); clear("name"); }} placeholder="e.g. llm-training" />
                </FormField>
                <ExpandableSection headerText="Advanced" variant="footer" defaultExpanded={["vpc_cidr", "kubernetes_version", "node_recovery", "storage", "storage.fsx_lustre"].some((f) => f in errors)}>
                  <SpaceBetween size="l">
                    <FormField label="VPC CIDR" description="A private /16 to /20 block. Leave empty for a free /16 that overlaps no VPC in the region." errorText={err("vpc_cidr")}>
                      <Input value={draft.vpc_cidr} onChange={({ detail }) => { set({ vpc_cidr: detail.value }); clear("vpc_cidr"); }} placeholder="10.90.0.0/16" />
                    </FormField>
                    <FormField label="Kubernetes version" errorText={err("kubernetes_version")}>
                      <Select
                        selectedOption={{ value: draft.kubernetes_version, label: draft.kubernetes_version || "Default (newest HyperPod supports)" }}
                        onChange={({ detail }) => set({ kubernetes_version: detail.selectedOption.value ?? "" })}
                        options={[{ value: "", label: "Default (newest HyperPod supports)" }, ...K8S_VERSIONS.map((v) => ({ value: v, label: v }))]}
                        ariaLabel="Kubernetes version"
                      />
                    </FormField>
                    <FormField label="Node recovery" errorText={err("node_recovery")}>
                      <RadioGroup
                        value={draft.node_recovery}
                        onChange={({ detail }) => set({ node_recovery: detail.value as Draft["node_recovery"] })}
                        ariaLabel="Node recovery"
                        items={[
                          { value: "automatic", label: "Automatic", description: "HyperPod reboots or replaces faulty nodes (recommended)." },
                          { value: "none", label: "None", description: "Faulty nodes are only reported." },
                        ]}
                      />
                    </FormField>
                    <FormField label="Storage" errorText={err("storage")}>
                      <SpaceBetween size="xs">
                        <Checkbox checked={draft.s3} onChange={({ detail }) => set({ s3: detail.checked })}>
                          Mount the shared S3 data bucket in pods
                        </Checkbox>
                        <Checkbox checked={draft.fsx} onChange={({ detail }) => set({ fsx: detail.checked })}>
                          Create an FSx for Lustre file system
                        </Checkbox>
                      </SpaceBetween>
                    </FormField>
                    {draft.fsx && (
                      <FormField label="FSx for Lustre capacity (GiB)" constraintText="A multiple of 1200 GiB." errorText={err("storage.fsx_lustre")}>
                        <Input type="number" value={draft.fsx_capacity} onChange={({ detail }) => { set({ fsx_capacity: detail.value }); clear("storage.fsx_lustre"); }} />
                      </FormField>
                    )}
                  </SpaceBetween>
                </ExpandableSection>
              </SpaceBetween>
            </Container>
          ),
        },
        {
          title: "Review and create",
          errorText: step === 4 ? errorBanner : undefined,
          content: (
            <SpaceBetween size="l">
              <Container header={<Header variant="h2">Cluster</Header>}>
                <KeyValuePairs
                  columns={3}
                  items={[
                    { label: "Name", value: draft.name || "—" },
                    { label: "Region", value: region || "—" },
                    { label: "Kubernetes version", value: draft.kubernetes_version || "Default" },
                    { label: "VPC CIDR", value: draft.vpc_cidr || "Automatic (a free /16)" },
                    { label: "Node recovery", value: draft.node_recovery },
                    { label: "Storage", value: [draft.s3 && "S3 data bucket", draft.fsx && `FSx for Lustre ${draft.fsx_capacity} GiB`].filter(Boolean).join(", ") || "None" },
                  ]}
                />
              </Container>
              <Container header={<Header variant="h2">Instance group {g.name}</Header>}>
                <ColumnLayout columns={1}>
                  <KeyValuePairs
                    columns={3}
                    items={[
                      { label: "Availability zone", value: g.availability_zone || "—" },
                      { label: "Instance type", value: g.instance_type || "—" },
                      { label: "Accelerators", value: type ? accelLabel(type) : "—" },
                      { label: "EFA", value: type ? efaLabel(type) : "—" },
                      { label: "Capacity", value: g.capacity_type + (g.training_plan_arn ? ` (${g.training_plan_arn.split("/").pop()})` : "") },
                      { label: "Instances", value: g.instance_count },
                      { label: "EFA-only", value: g.efa_only ? "Yes" : "No" },
                      { label: "Volume per instance", value: `${g.volume_size_gb} GiB` },
                    ]}
                  />
                </ColumnLayout>
              </Container>
              {step === 4 && (
                <PlanPanel
                  load={async (signal) => (await api.planCreateCluster(buildBody({ ...draft, region }), signal)).body}
                  deps={[JSON.stringify(buildBody({ ...draft, region }))]}
                />
              )}
            </SpaceBetween>
          ),
        },
      ]}
    />
  );
}
