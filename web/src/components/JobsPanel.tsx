import { useEffect, useState } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import Link from "@cloudscape-design/components/link";
import Modal from "@cloudscape-design/components/modal";
import Multiselect from "@cloudscape-design/components/multiselect";
import Select from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { api } from "../api/client";
import type { ClusterInstanceGroup, JobSubmit, JobSummary, Recipe } from "../api/types";
import { text } from "../lib/format";
import { canMutate, useMe } from "../lib/me";
import { useMutation } from "../lib/mutation";
import { href } from "../lib/router";
import { Time } from "../lib/time";
import { cached, useAsync } from "../lib/useAsync";
import { validate } from "../lib/validate";
import { DEFAULT_NAMESPACE, NamespaceSelect } from "./NamespaceSelect";
import { PlanPanel, usePlanGate } from "./PlanPanel";
import { ResourceTable, type Column } from "./ResourceTable";
import { Status } from "./Status";

const REFRESH_MS = 3000;

interface ParamSchema {
  type?: string;
  enum?: unknown[];
  anyOf?: { type?: string }[];
  default?: unknown;
  description?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  items?: unknown;
}

function paramsOf(r: Recipe | undefined): [string, ParamSchema][] {
  const props = (r?.parameters as { properties?: Record<string, ParamSchema> } | undefined)?.properties ?? {};
  return Object.entries(props);
}

function typeOf(p: ParamSchema): string {
  return p.type ?? p.anyOf?.find((o) => o.type && o.type !== "null")?.type ?? "string";
}

/** "integer, 1 to 512, default 8" — what the user may type, from the recipe's schema. */
export function paramHint(p: ParamSchema): string {
  const lo = p.minimum ?? p.exclusiveMinimum;
  const hi = p.maximum ?? p.exclusiveMaximum;
  const parts = [p.enum ? `one of ${p.enum.join(", ")}` : typeOf(p) === "array" ? "space-separated list" : typeOf(p)];
  if (lo !== undefined || hi !== undefined) parts.push(`${lo ?? "…"} to ${hi ?? "…"}`);
  if (p.default !== undefined && p.default !== null) parts.push(`default ${Array.isArray(p.default) ? p.default.join(" ") || "none" : String(p.default)}`);
  return parts.join(", ");
}

/** Only the parameters the user typed are sent, typed as the schema says; the server checks the rest. */
export function paramValues(r: Recipe | undefined, raw: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, p] of paramsOf(r)) {
    const v = (raw[k] ?? "").trim();
    if (!v) continue;
    const t = typeOf(p);
    out[k] = t === "integer" || t === "number" ? (Number.isNaN(Number(v)) ? v : Number(v)) : t === "array" ? v.split(/\s+/) : v;
  }
  return out;
}

export function jobBody(d: Record<string, string>, recipe: Recipe | undefined, params: Record<string, string>): Partial<JobSubmit> {
  const body: Record<string, unknown> = { name: d.name, recipe: d.recipe, image: d.image, instance_type: d.instance_type };
  for (const k of ["nodes", "gpus_per_node", "max_retries"]) if (d[k]?.trim()) body[k] = Number(d[k]);
  if (d.namespace?.trim()) body.namespace = d.namespace.trim();
  if (d.secrets?.trim()) body.secrets = d.secrets.split(/[\s,]+/).filter(Boolean);
  if (d.mlflow_server) body.mlflow = { tracking_server_arn: d.mlflow_server, ...(d.mlflow_experiment?.trim() ? { experiment: d.mlflow_experiment.trim() } : {}) };
  body.parameters = paramValues(recipe, params);
  return body as Partial<JobSubmit>;
}

const FIELDS = ["name", "namespace", "recipe", "image", "instance_type", "nodes", "gpus_per_node", "max_retries", "secrets", "parameters", "mlflow.tracking_server_arn", "mlflow.experiment"];
const NO_MLFLOW = { value: "", label: "None (do not report to MLflow)" };

/** GPUs per instance of each of the cluster's instance types (from the catalog of each group's zone). */
export function useGpusPerType(region: string, groups: ClusterInstanceGroup[]): Map<string, number> | undefined {
  const zones = [...new Set(groups.map((g) => g.availability_zone).filter((z): z is string => !!z))].sort();
  const types = useAsync(
    async () => {
      const out = new Map<string, number>();
      for (const z of zones) {
        const page = await cached(`types:${region}:${z}`, () => api.instanceTypes(region, z));
        for (const t of page.items) out.set(t.name, t.accelerator && t.accelerator.kind === "gpu" ? t.accelerator.count : 0);
      }
      return out;
    },
    [region, zones.join(",")],
    zones.length > 0,
  );
  return types.data;
}

function SubmitJobModal({ cluster, region, groups, onClose }: { cluster: string; region: string; groups: ClusterInstanceGroup[]; onClose: () => void }) {
  const instanceTypes = [...new Set(groups.map((g) => g.instance_type).filter((t): t is string => !!t))];
  const recipes = useAsync(() => api.recipes(), []);
  const servers = useAsync(() => api.mlflowServers(region), [region]);
  const gpusOf = useGpusPerType(region, groups);
  const [d, setD] = useState<Record<string, string>>({ recipe: "", nodes: "1", gpus_per_node: "", max_retries: "3", namespace: "default", instance_type: instanceTypes[0] ?? "" });
  const [edited, setEdited] = useState<Set<string>>(new Set());
  // GPUs per node follow the instance type's GPU count until the user types a number; MLflow is on by default when
  // the region has a usable tracking server (the user may choose None).
  useEffect(() => {
    const n = gpusOf?.get(d.instance_type);
    if (n !== undefined && !edited.has("gpus_per_node") && d.gpus_per_node !== String(n)) setD((x) => ({ ...x, gpus_per_node: String(n) }));
  }, [gpusOf, d.instance_type, d.gpus_per_node, edited]);
  useEffect(() => {
    const usable = servers.data?.items.find((x) => x.usable);
    if (usable && !edited.has("mlflow_server") && !d.mlflow_server) setD((x) => ({ ...x, mlflow_server: usable.arn }));
  }, [servers.data, edited, d.mlflow_server]);
  const [params, setParams] = useState<Record<string, string>>({});
  const items = recipes.data?.items ?? [];
  const recipe = items.find((r) => r.name === d.recipe);
  const secrets = useAsync(() => api.secretNames(cluster, region, d.namespace || DEFAULT_NAMESPACE), [cluster, region, d.namespace]);
  const chosenSecrets = (d.secrets ?? "").split(/[\s,]+/).filter(Boolean);
  const submit = useMutation((body: Partial<JobSubmit>, key: string) => api.submitJob(cluster, region, body, key), {
    fields: [...FIELDS, ...paramsOf(recipe).map(([k]) => `parameters.${k}`)],
    afterAccepted: onClose,
  });
  const gate = usePlanGate();
  // Review: the plan (same checks as the submit, nothing changed) before the final button; a refusal goes back to
  // the form, where the fields show why.
  const [review, setReview] = useState(false);
  const body = jobBody(d, recipe, params);
  const bodyKey = JSON.stringify(body);
  // As the user types: the schema's limits (name, counts), then the plan's refusal (a parameter out of range, too
  // many GPUs) at the same fields.
  const local = validate("JobSubmit", body);
  // A refused plan says why at the fields; they keep saying it back on the form until the user changes them.
  const allFields = [...FIELDS, ...paramsOf(recipe).map(([k]) => `parameters.${k}`)];
  const [planErrors, setPlanErrors] = useState<Record<string, string>>({});
  const refusedKey = JSON.stringify(gate.fieldErrors(allFields));
  useEffect(() => {
    if (review && gate.refused) setPlanErrors(JSON.parse(refusedKey) as Record<string, string>);
  }, [refusedKey, review, gate.refused]);
  const e: Record<string, string | undefined> = { ...planErrors, ...Object.fromEntries(Object.entries(local).filter(([k]) => edited.has(k.split(".")[0]) || review)), ...submit.fieldErrors };
  const invalid = Object.keys(local).length > 0 || !body.name;
  const send = async () => {
    const out = await submit.run(body);
    if (out?.kind === "failed") setReview(false);
  };
  useEffect(() => {
    if (!d.recipe && items.length) setD((x) => ({ ...x, recipe: items[0].name, image: items[0].example_image }));
  }, [items, d.recipe]);
  const set = (k: string, v: string) => {
    setD((x) => ({ ...x, [k]: v }));
    setEdited((x) => (x.has(k) ? x : new Set([...x, k])));
    setPlanErrors((x) => Object.fromEntries(Object.entries(x).filter(([f]) => f !== k)));
    submit.clearField(k);
  };
  const input = (k: string, label: string, description?: string) => (
    <FormField label={label} description={description} errorText={e[k]}>
      <Input ariaLabel={label} value={d[k] ?? ""} onChange={({ detail }) => set(k, detail.value)} />
    </FormField>
  );
  return (
    <Modal
      visible
      size="large"
      onDismiss={onClose}
      header={`Submit a training job to ${cluster}`}
      footer={
        <Box float="right">
          {review ? (
            <SpaceBetween direction="horizontal" size="xs">
              <Button variant="link" onClick={() => setReview(false)}>Back</Button>
              <Button variant="primary" loading={submit.busy} onClick={() => void send()} disabled={!!gate.reason} disabledReason={gate.reason}>Submit job</Button>
            </SpaceBetween>
          ) : (
            <SpaceBetween direction="horizontal" size="xs">
              <Button variant="link" onClick={onClose}>Cancel</Button>
              <Button variant="primary" disabled={!recipe || invalid} onClick={() => setReview(true)}
                disabledReason={!recipe ? "Choose a recipe." : !body.name ? "Name the job." : invalid ? `Fix first: ${Object.keys(local).join(", ")}.` : undefined}>Review</Button>
            </SpaceBetween>
          )}
        </Box>
      }
    >
      {review ? (
        <SpaceBetween size="m">
          {submit.errors.length > 0 && <Alert type="error" header="The job was not submitted">{submit.errors.join("; ")}</Alert>}
          <Box>
            {`${body.name || "(no name)"}: ${recipe?.title ?? d.recipe}, ${body.nodes ?? 1} × ${body.instance_type}, `
              + `${body.gpus_per_node ?? 0} GPUs per node, namespace ${body.namespace ?? "default"}`
              + (body.mlflow ? `, reports to MLflow (experiment ${body.mlflow.experiment ?? body.name})` : "")}
          </Box>
          <gate.Provider>
            <PlanPanel load={async (signal) => (await api.planSubmitJob(cluster, region, body, signal)).body} deps={[cluster, region, bodyKey]} />
          </gate.Provider>
        </SpaceBetween>
      ) : (
        <SpaceBetween size="m">
          {submit.errors.length > 0 && <Alert type="error" header="The job was not submitted">{submit.errors.join("; ")}</Alert>}
          <FormField label="Recipe" description={recipe ? `${recipe.description} (${recipe.kind === "ray" ? "RayJob" : "HyperPodPyTorchJob"})` : undefined} errorText={e.recipe}>
            <Select
              ariaLabel="Recipe"
              statusType={recipes.loading ? "loading" : "finished"}
              selectedOption={recipe ? { value: recipe.name, label: recipe.title } : null}
              options={items.map((r) => ({ value: r.name, label: r.title }))}
              onChange={({ detail }) => {
                const r = items.find((x) => x.name === detail.selectedOption.value);
                setD((x) => ({ ...x, recipe: r?.name ?? "", image: r?.example_image ?? x.image }));
                setParams({});
                submit.reset();
              }}
            />
          </FormField>
          {input("name", "Job name", "Lowercase letters, digits and '-'")}
          {input("image", "Image", "Pinned by tag or digest (never :latest)")}
          <FormField label="Instance type" description="One of the cluster's instance groups" errorText={e.instance_type}>
            <Select
              ariaLabel="Instance type"
              selectedOption={d.instance_type ? { value: d.instance_type, label: d.instance_type } : null}
              options={instanceTypes.map((t) => ({ value: t, label: t, description: gpusOf?.has(t) ? `${gpusOf.get(t)} GPU${gpusOf.get(t) === 1 ? "" : "s"} per instance` : undefined }))}
              onChange={({ detail }) => set("instance_type", detail.selectedOption.value ?? "")}
            />
          </FormField>
          <SpaceBetween direction="horizontal" size="m">
            {input("nodes", "Nodes", "One pod per node")}
            {input("gpus_per_node", "GPUs per node", gpusOf?.has(d.instance_type) ? `${d.instance_type} has ${gpusOf.get(d.instance_type)}; 0: CPU only` : "0: CPU only")}
            {input("max_retries", "Recovery budget", "Restarts before the job fails")}
          </SpaceBetween>
          <NamespaceSelect cluster={cluster} region={region} value={d.namespace || DEFAULT_NAMESPACE} error={e.namespace}
            onChange={(v) => { setD((x) => ({ ...x, namespace: v, secrets: "" })); submit.clearField("namespace", "secrets"); }}
            description="Where the job runs: one of PodStart's namespaces (an admin creates more in Namespaces)" />
          <FormField label="Secrets" errorText={e.secrets ?? (secrets.error ? `The Secret names could not be read: ${secrets.error.message}` : undefined)}
            description={`Secrets PodStart wrote in ${d.namespace || DEFAULT_NAMESPACE} (POST .../secrets): each key becomes an environment variable`}>
            <Multiselect
              ariaLabel="Secrets"
              statusType={secrets.loading && !secrets.data ? "loading" : "finished"}
              loadingText="Loading Secret names"
              empty={`No Secrets in ${d.namespace || DEFAULT_NAMESPACE}`}
              placeholder="None"
              selectedOptions={chosenSecrets.map((n) => ({ value: n, label: n }))}
              options={(secrets.data?.names ?? []).map((n) => ({ value: n, label: n }))}
              onChange={({ detail }) => set("secrets", detail.selectedOptions.map((o) => o.value ?? "").filter(Boolean).join(","))}
            />
          </FormField>
          <FormField
            label="MLflow tracking server"
            description={`The job logs loss and throughput to a SageMaker managed MLflow server in ${region} (on by default when one is usable); its pods get a role for that server only`}
            errorText={e["mlflow.tracking_server_arn"] ?? (servers.error ? servers.error.message : undefined)}
          >
            <Select
              ariaLabel="MLflow tracking server"
              data-testid="mlflow-select"
              statusType={servers.loading ? "loading" : "finished"}
              selectedOption={(() => {
                const s = servers.data?.items.find((x) => x.arn === d.mlflow_server);
                return s ? { value: s.arn, label: s.name } : NO_MLFLOW;
              })()}
              options={[NO_MLFLOW, ...(servers.data?.items ?? []).map((s) => ({
                value: s.arn,
                label: s.name,
                description: `${s.status}${s.usable ? "" : " (not usable now)"} · MLflow ${s.mlflow_version ?? "?"} · ${s.size ?? ""}`,
                disabled: !s.usable,
              }))]}
              onChange={({ detail }) => set("mlflow_server", detail.selectedOption.value ?? "")}
            />
          </FormField>
          {d.mlflow_server && input("mlflow_experiment", "MLflow experiment", "Default: the job name")}
          <Header variant="h3" description="Datasets are read from /data/datasets; outputs go to /data/jobs/{job}/, checkpoints to /data/checkpoints/{job}/">
            Parameters
          </Header>
          {paramsOf(recipe).map(([k, p]) => (
            <FormField key={k} label={k} description={`${p.description ?? ""} (${paramHint(p)})`} errorText={e[`parameters.${k}`]}>
              <Input
                ariaLabel={`Parameter ${k}`}
                value={params[k] ?? ""}
                placeholder={p.default === undefined || p.default === null ? "" : Array.isArray(p.default) ? p.default.join(" ") : String(p.default)}
                onChange={({ detail }) => {
                  setParams((x) => ({ ...x, [k]: detail.value }));
                  setPlanErrors((x) => Object.fromEntries(Object.entries(x).filter(([f]) => f !== `parameters.${k}`)));
                  submit.clearField(`parameters.${k}`);
                }}
              />
            </FormField>
          ))}
        </SpaceBetween>
      )}
    </Modal>
  );
}

/** The job list's columns (the cluster's Jobs tab, and the Jobs page across clusters with its cluster column). */
export function jobColumns(where: (j: JobSummary) => { region: string; cluster: string }, withCluster = false): Column<JobSummary>[] {
  return [
    {
      id: "name", header: "Name", isRowHeader: true, minWidth: 160, sortValue: (j) => j.name,
      cell: (j) => { const w = where(j); return <Link href={href.job(w.region, w.cluster, j.name, j.namespace)}>{j.name}</Link>; },
    },
    ...(withCluster ? [{
      id: "cluster", header: "Cluster", sortValue: (j: JobSummary) => where(j).cluster,
      cell: (j: JobSummary) => { const w = where(j); return <Link href={href.cluster(w.region, w.cluster, "jobs")}>{w.cluster}</Link>; },
    }, { id: "region", header: "Region", sortValue: (j: JobSummary) => where(j).region, cell: (j: JobSummary) => where(j).region, hidden: true }] : []),
    { id: "namespace", header: "Namespace", sortValue: (j) => j.namespace, cell: (j) => j.namespace },
    { id: "status", header: "Status", minWidth: 130, sortValue: (j) => j.status, cell: (j) => <Status value={j.status} /> },
    { id: "budget", header: "Recovery budget used", sortValue: (j) => j.budget.used, cell: (j) => <span data-testid={`budget-${j.name}`}>{`${j.budget.used} of ${j.budget.max}`}</span> },
    { id: "recipe", header: "Recipe", sortValue: (j) => j.recipe, cell: (j) => text(j.recipe) },
    { id: "where", header: "Nodes", sortValue: (j) => j.nodes, filterText: (j) => j.instance_type, cell: (j) => `${text(j.nodes, "unknown")} × ${text(j.instance_type, "unknown")}` },
    { id: "gpus", header: "GPUs per node", sortValue: (j) => j.gpus_per_node, cell: (j) => text(j.gpus_per_node, "unknown"), hidden: true },
    { id: "created", header: "Created", sortValue: (j) => j.created_at, cell: (j) => <Time value={j.created_at} /> },
  ];
}

/** Training jobs on the cluster: status and recovery budget, refreshed every few seconds; submit from a recipe. */
export function JobsPanel({ cluster, region, groups }: { cluster: string; region: string; groups: ClusterInstanceGroup[] }) {
  const list = useAsync(() => api.jobs(cluster, region), [cluster, region]);
  const [submitting, setSubmitting] = useState(false);
  const { me } = useMe();
  const viewer = me && !canMutate(me) ? `Only operators and admins submit jobs (you are ${me.role}).` : undefined;
  useEffect(() => {
    const t = setInterval(() => list.reload(), REFRESH_MS);
    return () => clearInterval(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [cluster, region]);
  const items = list.data?.items ?? [];
  return (
    <>
      {list.error && <Alert type="error" header="Could not list the jobs">{list.error.message}</Alert>}
      <ResourceTable<JobSummary>
        id="cluster-jobs"
        title="Jobs"
        description="HyperPodPyTorchJobs and RayJobs PodStart submitted"
        actions={<Button variant="primary" onClick={() => setSubmitting(true)} disabled={!!viewer} disabledReason={viewer}>Submit job</Button>}
        loading={list.loading && !list.data}
        loadingText="Loading jobs"
        items={items}
        trackBy={(j) => `${j.namespace}/${j.name}`}
        defaultSort={{ column: "created", descending: true }}
        empty={<Box textAlign="center">No jobs</Box>}
        columns={jobColumns(() => ({ region, cluster }))}
      />
      {submitting && <SubmitJobModal cluster={cluster} region={region} groups={groups} onClose={() => { setSubmitting(false); list.reload(); }} />}
    </>
  );
}
