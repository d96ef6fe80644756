// The create wizard (Cloudscape Wizard): the cluster's name first, then any number of instance groups, storage and
// node recovery as steps of their own, and a review with an Edit link per section. Every field is checked as the
// user types with the API's own rules (src/api/rules.ts), and a dry run of the whole request (debounced) answers
// what only the server knows (quota, zone offerings, FSx sizes, CIDR fit) at the same fields. The primary button
// is disabled while anything is invalid or the check is still running. The draft survives Back/Next and a reload.
import { useEffect, useMemo, useRef, useState } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Checkbox from "@cloudscape-design/components/checkbox";
import Container from "@cloudscape-design/components/container";
import ExpandableSection from "@cloudscape-design/components/expandable-section";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import KeyValuePairs from "@cloudscape-design/components/key-value-pairs";
import RadioGroup from "@cloudscape-design/components/radio-group";
import Select from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Spinner from "@cloudscape-design/components/spinner";
import Wizard from "@cloudscape-design/components/wizard";
import { ApiError, api } from "../api/client";
import type { AdviceOption, ClusterCreate, InstanceGroupSpec, Plan } from "../api/types";
import { CapacityAdvisor } from "../components/CapacityAdvisor";
import {
  CapacityFields,
  GROUP_FIELDS,
  GroupNameField,
  InstanceTypePicker,
  TypeSummary,
  ZonePicker,
  emptyGroup,
  toSpec,
  type GroupDraft,
} from "../components/InstanceGroupFields";
import { PlanView } from "../components/PlanPanel";
import { useFlash } from "../lib/flash";
import { useMutation } from "../lib/mutation";
import { mapProblem } from "../lib/problems";
import { href, navigate } from "../lib/router";
import { cached, useAsync } from "../lib/useAsync";
import { validate } from "../lib/validate";

const K8S_VERSIONS = ["1.33", "1.32", "1.31", "1.30"];
const FSX_THROUGHPUTS = ["125", "250", "500", "1000"];
const STORE = "podstart.create-cluster";
const CHECK_MS = 500;

export interface Draft {
  name: string;
  region: string;
  kubernetes_version: string;
  vpc_cidr: string;
  groups: GroupDraft[];
  s3: boolean;
  fsx: boolean;
  fsx_capacity: string;
  fsx_throughput: string;
  node_recovery: "automatic" | "none";
}

export const emptyDraft = (): Draft => ({
  name: "",
  region: "",
  kubernetes_version: "",
  vpc_cidr: "",
  groups: [emptyGroup("workers")],
  s3: true,
  fsx: false,
  fsx_capacity: "1200",
  fsx_throughput: "250",
  node_recovery: "automatic",
});

const num = (s: string) => (s.trim() !== "" && Number.isFinite(Number(s)) ? Number(s) : (s as unknown as number));

/** The request body of a draft (numbers that do not parse are sent as typed, so the API names the field). */
export function buildBody(d: Draft): ClusterCreate {
  const body: ClusterCreate = {
    name: d.name.trim(),
    region: d.region,
    node_recovery: d.node_recovery,
    instance_groups: d.groups.map(toSpec),
    storage: {
      s3: d.s3,
      fsx_lustre: d.fsx ? { storage_capacity_gib: num(d.fsx_capacity), throughput_mb_per_tib: num(d.fsx_throughput) as 125 | 250 | 500 | 1000 } : null,
    },
  };
  if (d.kubernetes_version) body.kubernetes_version = d.kubernetes_version;
  if (d.vpc_cidr.trim()) body.vpc_cidr = d.vpc_cidr.trim();
  return body;
}

const STEPS = ["Cluster details", "Instance groups", "Storage", "Node recovery", "Review and create"] as const;

/** The wizard step that shows a field (an API error path): where to send the user to fix it. */
export function stepOf(path: string): number {
  if (path.startsWith("instance_groups")) return 1;
  if (path.startsWith("storage")) return 2;
  if (path === "node_recovery") return 3;
  return 0;
}

/** The form paths the wizard renders (for mapping problem+json errors onto fields). */
export function knownFields(groups: number): string[] {
  const out = ["name", "region", "kubernetes_version", "vpc_cidr", "node_recovery", "instance_groups", "storage", "storage.s3", "storage.fsx_lustre",
    "storage.fsx_lustre.storage_capacity_gib", "storage.fsx_lustre.throughput_mb_per_tib"];
  for (let i = 0; i < groups; i++) out.push(`instance_groups.${i}`, ...GROUP_FIELDS.map((f) => `instance_groups.${i}.${f}`));
  return out;
}

/** What the UI knows is missing or wrong before any request: the schema's rules, plus what a form can tell. */
export function clientErrors(d: Draft): Record<string, string> {
  const out = validate("ClusterCreate", buildBody(d));
  if (!d.name.trim()) out.name = "Name the cluster.";
  if (!d.region) out.region = "Choose a region.";
  d.groups.forEach((g, i) => {
    const at = `instance_groups.${i}`;
    if (!g.name.trim()) out[`${at}.name`] = "Name the group.";
    if (!g.availability_zone) out[`${at}.availability_zone`] = "Choose an availability zone.";
    if (!g.instance_type) out[`${at}.instance_type`] = "Choose an instance type.";
    if (g.capacity_type === "training-plan" && !g.training_plan_arn) out[`${at}.training_plan_arn`] = "Choose a training plan.";
    if (g.instance_count.trim() === "") out[`${at}.instance_count`] = "How many instances?";
    if (g.name.trim() && d.groups.findIndex((x) => x.name.trim() === g.name.trim()) !== i) out[`${at}.name`] = `Group names must be unique: ${g.name.trim()} is used twice.`;
  });
  if (d.fsx && d.fsx_capacity.trim() === "") out["storage.fsx_lustre.storage_capacity_gib"] = "How much capacity?";
  return out;
}

interface Check {
  /** The body this answer is for (JSON). */
  body: string;
  plan?: Plan;
  errors: Record<string, string>;
  unclaimed: string[];
}

/** The dry run of the whole request, once it has stopped changing: the API's answer, field by field. */
function useServerCheck(body: ClusterCreate, enabled: boolean, groups: number) {
  const key = JSON.stringify(body);
  const [check, setCheck] = useState<Check | null>(null);
  useEffect(() => {
    if (!enabled) return;
    const ctl = new AbortController();
    const t = setTimeout(() => {
      api.planCreateCluster(body, ctl.signal).then(
        (r) => !ctl.signal.aborted && setCheck({ body: key, plan: r.body, errors: {}, unclaimed: [] }),
        (e: Error) => {
          if (ctl.signal.aborted || e.name === "AbortError") return;
          if (e instanceof ApiError && e.status >= 400 && e.status < 500) {
            const m = mapProblem(e.problem, knownFields(groups));
            setCheck({ body: key, errors: m.fields, unclaimed: m.unclaimed });
          } else setCheck({ body: key, errors: {}, unclaimed: [`The request could not be checked: ${e.message}`] });
        },
      );
    }, CHECK_MS);
    return () => {
      clearTimeout(t);
      ctl.abort();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, enabled]);
  const current = check && check.body === key ? check : null;
  return { checking: enabled && !current, result: current };
}

interface Saved {
  draft: Draft;
  step: number;
  visited: number;
  touched: string[];
}

function load(): Saved | null {
  try {
    const s = JSON.parse(sessionStorage.getItem(STORE) ?? "null") as Saved | null;
    return s && s.draft && Array.isArray(s.draft.groups) ? { ...s, draft: { ...emptyDraft(), ...s.draft } } : null;
  } catch {
    return null;
  }
}

export default function CreateCluster() {
  const prefs = useAsync(() => api.preferences(), []);
  const regions = useAsync(() => cached("regions", () => api.regions()), []);
  const saved = useMemo(load, []);
  const [draft, setDraft] = useState<Draft>(saved?.draft ?? emptyDraft());
  const [step, setStep] = useState(saved?.step ?? 0);
  const [visited, setVisited] = useState(saved?.visited ?? 0);
  const [touched, setTouched] = useState<Set<string>>(new Set(saved?.touched ?? []));
  const [tried, setTried] = useState<Set<number>>(new Set());
  const [open, setOpen] = useState<number>(0); // the group whose fields are open
  const flash = useFlash();
  const done = useRef(false);
  const create = useMutation((body: ClusterCreate, key: string) => api.createCluster(body, key), {
    fields: knownFields(draft.groups.length),
    onAccepted: (op) => {
      done.current = true;
      sessionStorage.removeItem(STORE);
      flash.track(op);
      navigate(href.cluster(draft.region, draft.name.trim()));
    },
  });

  // The default region (preferences) once known, unless the user chose one.
  useEffect(() => {
    if (!draft.region && prefs.data?.default_region) setDraft((d) => (d.region ? d : { ...d, region: prefs.data!.default_region! }));
  }, [prefs.data, draft.region]);
  // Keep the draft across Back/Next and a reload of the page.
  useEffect(() => {
    if (done.current) return;
    const s: Saved = { draft, step, visited, touched: [...touched] };
    sessionStorage.setItem(STORE, JSON.stringify(s));
  }, [draft, step, visited, touched]);

  const body = buildBody(draft);
  const local = clientErrors(draft);
  const server = useServerCheck(body, !!draft.region && draft.groups.length > 0, draft.groups.length);
  const refused = create.fieldErrors;
  // What the API said (a dry run of this very body, or a refused create) fills in what the UI cannot know.
  const all: Record<string, string> = { ...(server.result?.errors ?? {}), ...refused, ...local };
  const visible = (path: string) => touched.has(path) || stepOf(path) < visited || tried.has(stepOf(path)) || path in refused;
  const err = (path: string) => (visible(path) ? all[path] : undefined);
  const stepErrors = (i: number) => Object.keys(all).filter((p) => stepOf(p) === i);
  const unclaimed = [...(server.result?.unclaimed ?? []), ...create.errors];

  const touch = (...paths: string[]) => setTouched((t) => (paths.every((p) => t.has(p)) ? t : new Set([...t, ...paths])));
  const set = (patch: Partial<Draft>) => {
    setDraft((d) => ({ ...d, ...patch }));
    touch(...Object.keys(patch).map((k) => ({ fsx_capacity: "storage.fsx_lustre.storage_capacity_gib", fsx_throughput: "storage.fsx_lustre.throughput_mb_per_tib" })[k] ?? k));
    create.clearField(...Object.keys(patch));
  };
  const setGroup = (i: number, patch: Partial<GroupDraft>) => {
    setDraft((d) => ({ ...d, groups: d.groups.map((g, j) => (j === i ? { ...g, ...patch } : g)) }));
    const paths = Object.keys(patch).map((k) => `instance_groups.${i}.${k}`);
    touch(...paths);
    create.clearField(...paths, `instance_groups.${i}`, "instance_groups");
  };
  const addGroup = (g?: GroupDraft) => {
    const names = new Set(draft.groups.map((x) => x.name));
    let n = draft.groups.length + 1;
    while (names.has(`group-${n}`)) n++;
    const next = g ?? { ...emptyGroup(`group-${n}`), availability_zone: draft.groups[draft.groups.length - 1]?.availability_zone ?? "" };
    setDraft((d) => ({ ...d, groups: [...d.groups, next] }));
    setOpen(draft.groups.length);
  };
  const duplicate = (i: number) => {
    const src = draft.groups[i];
    const names = new Set(draft.groups.map((x) => x.name));
    let name = `${src.name}-copy`.slice(0, 32);
    for (let n = 2; names.has(name); n++) name = `${src.name}-${n}`.slice(0, 32);
    addGroup({ ...src, name });
  };
  const removeGroup = (i: number) => {
    setDraft((d) => ({ ...d, groups: d.groups.filter((_, j) => j !== i) }));
    // errors and touches of later groups move up with them
    setTouched((t) => new Set([...t].flatMap((p) => {
      const m = /^instance_groups\.(\d+)(\..*)?$/.exec(p);
      if (!m) return [p];
      const j = Number(m[1]);
      return j === i ? [] : [j > i ? `instance_groups.${j - 1}${m[2] ?? ""}` : p];
    })));
    setOpen((o) => Math.max(0, o > i ? o - 1 : Math.min(o, draft.groups.length - 2)));
    create.reset();
  };

  // Why the primary button waits: a field of this step is wrong, or the API is still checking.
  const blocking = (i: number): string | undefined => {
    const bad = (i === STEPS.length - 1 ? Object.keys(all) : stepErrors(i));
    if (bad.length) return `Fix ${bad.length === 1 ? "the field marked" : `the ${bad.length} fields marked`}${i === STEPS.length - 1 ? " (Edit goes to it)" : ""}.`;
    if (i === STEPS.length - 1 && unclaimed.length) return "The API refuses this request: see above.";
    if (server.checking) return "Checking the request with the API…";
    return undefined;
  };
  const go = (target: number) => {
    if (target > step) {
      for (let i = step; i < target; i++) {
        if (blocking(i)) {
          setTried((t) => new Set([...t, i]));
          setStep(i);
          return;
        }
      }
    }
    setStep(target);
    setVisited((v) => Math.max(v, target));
    window.scrollTo({ top: 0 });
  };
  const submit = () => {
    if (blocking(STEPS.length - 1)) {
      setTried(new Set(STEPS.map((_, i) => i)));
      return;
    }
    void create.run(body);
  };
  // A refused create: go to the first step with an error (its field says why).
  useEffect(() => {
    const paths = Object.keys(create.fieldErrors);
    if (paths.length) setStep(Math.min(...paths.map(stepOf)));
  }, [create.fieldErrors]);

  // An advisor option fills the groups (and the region, and a name if none), then the review shows it.
  const applyOption = (o: AdviceOption) => {
    const b = o.create_cluster?.body as unknown as ClusterCreate | undefined;
    const specs = (b?.instance_groups ?? []) as InstanceGroupSpec[];
    if (!b || !specs.length) return;
    setDraft((d) => ({
      ...d,
      region: b.region,
      name: d.name || b.name,
      groups: specs.map((g) => ({
        ...emptyGroup(g.name),
        availability_zone: g.availability_zone,
        instance_type: g.instance_type,
        capacity_type: g.capacity_type ?? "on-demand",
        training_plan_arn: g.training_plan_arn ?? "",
        instance_count: String(g.instance_count),
      })),
    }));
    touch("name", "region");
    setVisited(STEPS.length - 1);
    setStep(STEPS.length - 1);
  };

  const regionOptions = (regions.data?.items ?? []).map((r) => ({ value: r.name, label: r.name }));
  const last = step === STEPS.length - 1;
  const why = blocking(step);
  const errorBanner = (i: number) => {
    const mine = unclaimed.length && (i === step) ? unclaimed : [];
    if (!mine.length && !(tried.has(i) && stepErrors(i).length)) return undefined;
    return (
      <SpaceBetween size="xxs">
        {create.errors.length > 0 && <b>The cluster was not created.</b>}
        {mine.length > 0 && <ul className="ps-plain-list">{mine.map((u) => <li key={u}>{u}</li>)}</ul>}
        {tried.has(i) && stepErrors(i).length > 0 && <span>Fix the fields marked below.</span>}
      </SpaceBetween>
    );
  };
  // The capacity advisor: on the first step (where, before anything is chosen) and with the groups.
  const advisor = (
    <ExpandableSection variant="container" headerText="Capacity advisor"
      headerDescription="Not sure where or what? Say how many GPUs: ranked options that fit now (zone, type, capacity, quota, price, start); one fills the groups (and the name, if empty), then the review shows it."
      data-testid="capacity-advisor">
      <CapacityAdvisor region={draft.region} onUse={applyOption} />
    </ExpandableSection>
  );
  const editLink = (to: number, what: string) => (
    <Button onClick={() => go(to)} ariaLabel={`Edit ${what}`}>Edit</Button>
  );

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
        optional: "optional",
      }}
      submitButtonText="Create cluster"
      activeStepIndex={step}
      onNavigate={({ detail }) => go(detail.requestedStepIndex)}
      onCancel={() => { sessionStorage.removeItem(STORE); navigate(href.clusters()); }}
      onSubmit={submit}
      customPrimaryActions={
        <SpaceBetween direction="horizontal" size="xs">
          <Button variant="link" onClick={() => { sessionStorage.removeItem(STORE); navigate(href.clusters()); }}>Cancel</Button>
          {step > 0 && <Button onClick={() => go(step - 1)}>Previous</Button>}
          <Button
            variant="primary"
            data-testid="wizard-primary"
            disabled={!!why || create.busy}
            disabledReason={why}
            loading={create.busy}
            onClick={() => (last ? submit() : go(step + 1))}
          >
            {last ? "Create cluster" : "Next"}
          </Button>
        </SpaceBetween>
      }
      secondaryActions={server.checking ? <Box color="text-body-secondary" data-testid="wizard-checking"><Spinner /> Checking with the API</Box> : undefined}
      steps={[
        {
          title: STEPS[0],
          description: "Name the cluster and choose where it runs. The defaults below suit most clusters.",
          errorText: errorBanner(0),
          content: (
            <SpaceBetween size="l">
            <Container header={<Header variant="h2">Cluster details</Header>}>
              <SpaceBetween size="l">
                <FormField label="Cluster name" constraintText="Lowercase letters, digits and '-', starting with a letter; at most 32 characters." errorText={err("name")}>
                  <Input value={draft.name} onChange={({ detail }) => set({ name: detail.value })} onBlur={() => touch("name")} placeholder="e.g. llm-training" ariaLabel="Cluster name" autoFocus />
                </FormField>
                <FormField label="Region" description="Instance types, zones, quotas and prices differ by region." errorText={err("region") ?? (regions.error ? `Could not list regions: ${regions.error.message}` : undefined)}>
                  <Select
                    selectedOption={draft.region ? { value: draft.region, label: draft.region } : null}
                    onChange={({ detail }) => {
                      const region = detail.selectedOption.value ?? "";
                      if (region === draft.region) return;
                      set({ region, groups: draft.groups.map((g) => ({ ...g, availability_zone: "", instance_type: "", training_plan_arn: "" })) });
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
                <FormField label="Kubernetes version" errorText={err("kubernetes_version")}>
                  <Select
                    selectedOption={{ value: draft.kubernetes_version, label: draft.kubernetes_version || "Default (newest HyperPod supports)" }}
                    onChange={({ detail }) => set({ kubernetes_version: detail.selectedOption.value ?? "" })}
                    options={[{ value: "", label: "Default (newest HyperPod supports)" }, ...K8S_VERSIONS.map((v) => ({ value: v, label: v }))]}
                    ariaLabel="Kubernetes version"
                  />
                </FormField>
                <FormField label={<span>VPC CIDR <i>- optional</i></span>} description="A private /16 to /20 block. Leave empty for a free /16 that overlaps no VPC in the region." errorText={err("vpc_cidr")}>
                  <Input value={draft.vpc_cidr} onChange={({ detail }) => set({ vpc_cidr: detail.value })} placeholder="10.90.0.0/16" ariaLabel="VPC CIDR" />
                </FormField>
              </SpaceBetween>
            </Container>
            {step === 0 && advisor}
            </SpaceBetween>
          ),
        },
        {
          title: STEPS[1],
          description: "Each group is one instance type in one zone. Add as many as the cluster needs (GPU workers, CPU helpers).",
          errorText: errorBanner(1),
          content: (
            <SpaceBetween size="l">
              {err("instance_groups") && <Alert type="error">{err("instance_groups")}</Alert>}
              {draft.groups.map((g, i) => {
                const at = `instance_groups.${i}`;
                const gErrors = Object.fromEntries(GROUP_FIELDS.map((f) => [f, err(`${at}.${f}`)]));
                const bad = GROUP_FIELDS.some((f) => err(`${at}.${f}`)) || !!err(at);
                return (
                  <Container
                    key={i}
                    data-testid={`group-${i}`}
                    header={
                      <Header
                        variant="h2"
                        description={[g.instance_type, g.availability_zone, g.instance_count && `${g.instance_count} instance(s)`].filter(Boolean).join(" · ") || "Not set up yet"}
                        actions={
                          <SpaceBetween direction="horizontal" size="xs">
                            <Button onClick={() => setOpen(open === i ? -1 : i)} ariaLabel={`${open === i ? "Collapse" : "Edit"} group ${i + 1}`} ariaExpanded={open === i}>
                              {open === i ? "Collapse" : "Edit"}
                            </Button>
                            <Button onClick={() => duplicate(i)} ariaLabel={`Duplicate group ${i + 1}`} disabled={draft.groups.length >= 20}>Duplicate</Button>
                            <Button onClick={() => removeGroup(i)} ariaLabel={`Remove group ${i + 1}`} disabled={draft.groups.length === 1}
                              disabledReason={draft.groups.length === 1 ? "A cluster needs at least one instance group." : undefined}>Remove</Button>
                          </SpaceBetween>
                        }
                      >
                        {`Group ${i + 1}: ${g.name || "(no name)"}`}
                        {bad && open !== i ? " (fix its fields)" : ""}
                      </Header>
                    }
                  >
                    {open === i ? (
                      <SpaceBetween size="l">
                        {err(at) && <Alert type="error">{err(at)}</Alert>}
                        <GroupNameField value={g.name} error={gErrors.name} onChange={(v) => setGroup(i, { name: v })} />
                        <ZonePicker region={draft.region} value={g.availability_zone} error={gErrors.availability_zone}
                          onChange={(z) => setGroup(i, { availability_zone: z, instance_type: "", training_plan_arn: "" })} />
                        <InstanceTypePicker region={draft.region} zone={g.availability_zone} value={g.instance_type} error={gErrors.instance_type}
                          capacityType={g.capacity_type}
                          onChange={(t) => setGroup(i, { instance_type: t?.name ?? "", efa_only: t?.efa_only_supported ? g.efa_only : false, training_plan_arn: "" })} />
                        <CapacityFields region={draft.region} draft={g} errors={gErrors} onChange={(p) => setGroup(i, p)} />
                      </SpaceBetween>
                    ) : (
                      <Box color={bad ? "text-status-error" : "text-body-secondary"}>
                        {bad ? "Some fields need a fix: Edit opens them." : "Edit opens its fields."}
                      </Box>
                    )}
                  </Container>
                );
              })}
              <Button iconName="add-plus" onClick={() => addGroup()} disabled={draft.groups.length >= 20}>Add instance group</Button>
              {step === 1 && advisor}
            </SpaceBetween>
          ),
        },
        {
          title: STEPS[2],
          description: "Where jobs read data and write checkpoints: every pod mounts them under /data.",
          errorText: errorBanner(2),
          content: (
            <Container header={<Header variant="h2">Storage</Header>}>
              <SpaceBetween size="l">
                <FormField label="Shared data bucket" description="An S3 bucket PodStart creates, mounted in pods through Mountpoint (datasets, models, checkpoints)." errorText={err("storage.s3")}>
                  <Checkbox checked={draft.s3} onChange={({ detail }) => set({ s3: detail.checked })}>Mount the shared data bucket</Checkbox>
                </FormField>
                <FormField label="FSx for Lustre" description="A high-throughput file system next to the instances (billed per GiB-month)." errorText={err("storage.fsx_lustre")}>
                  <Checkbox checked={draft.fsx} onChange={({ detail }) => set({ fsx: detail.checked })}>Create an FSx for Lustre file system</Checkbox>
                </FormField>
                {draft.fsx && (
                  <>
                    <FormField label="FSx capacity (GiB)" constraintText="1200, 2400, or a multiple of 2400 up to 100800" errorText={err("storage.fsx_lustre.storage_capacity_gib")}>
                      <Input type="number" inputMode="numeric" value={draft.fsx_capacity} onChange={({ detail }) => set({ fsx_capacity: detail.value })} ariaLabel="FSx capacity (GiB)" />
                    </FormField>
                    <FormField label="FSx throughput (MB/s per TiB)" errorText={err("storage.fsx_lustre.throughput_mb_per_tib")}>
                      <Select
                        selectedOption={{ value: draft.fsx_throughput, label: draft.fsx_throughput }}
                        options={FSX_THROUGHPUTS.map((t) => ({ value: t, label: t }))}
                        onChange={({ detail }) => set({ fsx_throughput: detail.selectedOption.value ?? "250" })}
                        ariaLabel="FSx throughput (MB/s per TiB)"
                      />
                    </FormField>
                  </>
                )}
              </SpaceBetween>
            </Container>
          ),
        },
        {
          title: STEPS[3],
          description: "What HyperPod does when a node fails its health checks.",
          errorText: errorBanner(3),
          content: (
            <Container header={<Header variant="h2">Node recovery</Header>}>
              <SpaceBetween size="l">
                <FormField label="Node recovery" errorText={err("node_recovery")}>
                  <RadioGroup
                    value={draft.node_recovery}
                    onChange={({ detail }) => set({ node_recovery: detail.value as Draft["node_recovery"] })}
                    ariaLabel="Node recovery"
                    items={[
                      { value: "automatic", label: "Automatic (recommended)", description: "HyperPod reboots or replaces faulty nodes and reports what it did." },
                      { value: "none", label: "None", description: "Faulty nodes are only labelled; you reboot or replace them (Nodes tab)." },
                    ]}
                  />
                </FormField>
                <Box color="text-body-secondary">
                  Deep health checks (instance stress and connectivity) run on accelerated instances before they take work.
                  Clusters are created with continuous node provisioning, so HyperPod reports node events.
                </Box>
              </SpaceBetween>
            </Container>
          ),
        },
        {
          title: STEPS[4],
          description: "Check each section, then create. Edit goes back to a section; nothing is created until Create cluster.",
          errorText: errorBanner(4),
          content: (
            <SpaceBetween size="l">
              <Container header={<Header variant="h2" actions={editLink(0, "cluster details")}>Cluster details</Header>}>
                <KeyValuePairs
                  columns={4}
                  items={[
                    { label: "Cluster name", value: <span data-testid="review-name">{draft.name || "—"}</span> },
                    { label: "Region", value: draft.region || "—" },
                    { label: "Kubernetes version", value: draft.kubernetes_version || "Default (newest)" },
                    { label: "VPC CIDR", value: draft.vpc_cidr || "A free /16" },
                  ]}
                />
              </Container>
              <Container header={<Header variant="h2" counter={`(${draft.groups.length})`} actions={editLink(1, "instance groups")}>Instance groups</Header>}>
                <SpaceBetween size="m">
                  {draft.groups.map((g, i) => (
                    <KeyValuePairs
                      key={i}
                      columns={4}
                      items={[
                        { label: "Group", value: g.name || "—" },
                        { label: "Instance type", value: g.instance_type || "—" },
                        { label: "Accelerators", value: <TypeSummary region={draft.region} zone={g.availability_zone} type={g.instance_type} /> },
                        { label: "Zone", value: g.availability_zone || "—" },
                        { label: "Capacity", value: g.capacity_type + (g.training_plan_arn ? ` (${g.training_plan_arn.split("/").pop()})` : "") },
                        { label: "Instances", value: g.instance_count },
                        { label: "EFA-only", value: g.efa_only ? "Yes" : "No" },
                        { label: "Volume per instance", value: `${g.volume_size_gb} GiB` },
                      ]}
                    />
                  ))}
                </SpaceBetween>
              </Container>
              <Container header={<Header variant="h2" actions={editLink(2, "storage")}>Storage</Header>}>
                <KeyValuePairs
                  columns={2}
                  items={[
                    { label: "Shared data bucket", value: draft.s3 ? "Mounted at /data" : "No" },
                    { label: "FSx for Lustre", value: <span data-testid="review-fsx">{draft.fsx ? `${draft.fsx_capacity} GiB, ${draft.fsx_throughput} MB/s per TiB` : "No"}</span> },
                  ]}
                />
              </Container>
              <Container header={<Header variant="h2" actions={editLink(3, "node recovery")}>Node recovery</Header>}>
                <KeyValuePairs columns={1} items={[{ label: "Node recovery", value: draft.node_recovery === "automatic" ? "Automatic" : "None" }]} />
              </Container>
              {last && (
                <PlanView
                  state={server.result?.plan ? { state: "ready", plan: server.result.plan } : server.checking ? { state: "loading" }
                    : { state: "refused", status: 422, message: `The request would be refused: ${[...Object.entries(all).map(([k, v]) => `${k}: ${v}`), ...unclaimed].join("; ")}` }}
                />
              )}
            </SpaceBetween>
          ),
        },
      ]}
    />
  );
}
