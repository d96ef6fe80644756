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
import Table from "@cloudscape-design/components/table";
import { api } from "../api/client";
import type { JobSubmit, JobSummary, Recipe } from "../api/types";
import { fmtTime, text } from "../lib/format";
import { useMutation } from "../lib/mutation";
import { href } from "../lib/router";
import { useAsync } from "../lib/useAsync";
import { DEFAULT_NAMESPACE, NamespaceSelect } from "./NamespaceSelect";
import { PlanPanel } from "./PlanPanel";
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

function SubmitJobModal({ cluster, region, instanceTypes, onClose }: { cluster: string; region: string; instanceTypes: string[]; onClose: () => void }) {
  const recipes = useAsync(() => api.recipes(), []);
  const servers = useAsync(() => api.mlflowServers(region), [region]);
  const [d, setD] = useState<Record<string, string>>({ recipe: "", nodes: "1", gpus_per_node: "0", max_retries: "3", namespace: "default", instance_type: instanceTypes[0] ?? "" });
  const [params, setParams] = useState<Record<string, string>>({});
  const items = recipes.data?.items ?? [];
  const recipe = items.find((r) => r.name === d.recipe);
  const secrets = useAsync(() => api.secretNames(cluster, region, d.namespace || DEFAULT_NAMESPACE), [cluster, region, d.namespace]);
  const chosenSecrets = (d.secrets ?? "").split(/[\s,]+/).filter(Boolean);
  const submit = useMutation((body: Partial<JobSubmit>, key: string) => api.submitJob(cluster, region, body, key), { fields: [...FIELDS, ...paramsOf(recipe).map(([k]) => `parameters.${k}`)] });
  const e = submit.fieldErrors;
  // Review: the plan (same checks as the submit, nothing changed) before the final button; a refusal goes back to
  // the form, where the fields show why.
  const [review, setReview] = useState(false);
  const body = jobBody(d, recipe, params);
  const bodyKey = JSON.stringify(body);
  const send = async () => {
    const out = await submit.run(body);
    if (out?.kind === "failed") setReview(false);
  };
  useEffect(() => {
    if (!d.recipe && items.length) setD((x) => ({ ...x, recipe: items[0].name, image: items[0].example_image }));
  }, [items, d.recipe]);
  const set = (k: string, v: string) => {
    setD((x) => ({ ...x, [k]: v }));
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
              <Button variant="primary" loading={submit.busy} onClick={() => void send()}>Submit job</Button>
            </SpaceBetween>
          ) : (
            <SpaceBetween direction="horizontal" size="xs">
              <Button variant="link" onClick={onClose}>Cancel</Button>
              <Button variant="primary" disabled={!recipe} onClick={() => setReview(true)}>Review</Button>
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
          <PlanPanel load={async (signal) => (await api.planSubmitJob(cluster, region, body, signal)).body} deps={[cluster, region, bodyKey]} />
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
              options={instanceTypes.map((t) => ({ value: t, label: t }))}
              onChange={({ detail }) => set("instance_type", detail.selectedOption.value ?? "")}
            />
          </FormField>
          <SpaceBetween direction="horizontal" size="m">
            {input("nodes", "Nodes", "One pod per node")}
            {input("gpus_per_node", "GPUs per node", "0: CPU only")}
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
            description={`Optional: the job logs loss and throughput to a SageMaker managed MLflow server in ${region}; its pods get a role for that server only`}
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

/** Training jobs on the cluster: status and recovery budget, refreshed every few seconds; submit from a recipe. */
export function JobsPanel({ cluster, region, instanceTypes }: { cluster: string; region: string; instanceTypes: string[] }) {
  const list = useAsync(() => api.jobs(cluster, region), [cluster, region]);
  const [submitting, setSubmitting] = useState(false);
  useEffect(() => {
    const t = setInterval(() => list.reload(), REFRESH_MS);
    return () => clearInterval(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [cluster, region]);
  const items = list.data?.items ?? [];
  return (
    <>
      <Table<JobSummary>
        header={
          <Header variant="h2" counter={`(${items.length})`} description="HyperPodPyTorchJobs and RayJobs PodStart submitted" actions={<Button onClick={() => setSubmitting(true)}>Submit job</Button>}>
            Jobs
          </Header>
        }
        loading={list.loading && !list.data}
        items={items}
        trackBy={(j) => `${j.namespace}/${j.name}`}
        ariaLabels={{ tableLabel: "Jobs" }}
        empty={<Box textAlign="center">{list.error ? list.error.message : "No jobs"}</Box>}
        columnDefinitions={[
          { id: "name", header: "Name", isRowHeader: true, cell: (j) => <Link href={href.job(region, cluster, j.name, j.namespace)}>{j.name}</Link> },
          { id: "status", header: "Status", cell: (j) => <Status value={j.status} /> },
          { id: "budget", header: "Recovery budget used", cell: (j) => <span data-testid={`budget-${j.name}`}>{`${j.budget.used} of ${j.budget.max}`}</span> },
          { id: "recipe", header: "Recipe", cell: (j) => text(j.recipe) },
          { id: "where", header: "Nodes", cell: (j) => `${text(j.nodes)} × ${text(j.instance_type)}` },
          { id: "created", header: "Created", cell: (j) => fmtTime(j.created_at) },
        ]}
      />
      {submitting && <SubmitJobModal cluster={cluster} region={region} instanceTypes={instanceTypes} onClose={() => setSubmitting(false)} />}
    </>
  );
}
