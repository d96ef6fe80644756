// A cluster's inference: endpoints (managed or self-managed vLLM/SGLang) with live status, deploy,
// scale, delete, a "Try it" chat box, the model pools (warm GPU workers retargeted by label), and the models in
// the shared bucket with a "Download model" form (plan, then progress on the operation page).
import { useEffect, useRef, useState } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import BreadcrumbGroup from "@cloudscape-design/components/breadcrumb-group";
import Button from "@cloudscape-design/components/button";
import Checkbox from "@cloudscape-design/components/checkbox";
import Container from "@cloudscape-design/components/container";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Link from "@cloudscape-design/components/link";
import Input from "@cloudscape-design/components/input";
import Modal from "@cloudscape-design/components/modal";
import SegmentedControl from "@cloudscape-design/components/segmented-control";
import Select from "@cloudscape-design/components/select";
import StatusIndicator from "@cloudscape-design/components/status-indicator";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Table from "@cloudscape-design/components/table";
import Textarea from "@cloudscape-design/components/textarea";
import { api } from "../api/client";
import type { ClusterInstanceGroup, Endpoint, EndpointCreate, EndpointPatch, InvokeResult, ModelDownload, ModelItem, Pool, PoolAssign, PoolCreate } from "../api/types";
import { ConfirmModal } from "../components/ConfirmModal";
import { PlanPanel } from "../components/PlanPanel";
import { Status } from "../components/Status";
import { changedFields, isEmpty } from "../lib/diff";
import { useLiveEvents } from "../lib/events";
import { countsLong, fmtTime, text } from "../lib/format";
import { parseRanges, sourceRangesProblem } from "../lib/exposure";
import { canMutate, isAdmin, useMe } from "../lib/me";
import { useMutation } from "../lib/mutation";
import { href } from "../lib/router";
import { useAsync } from "../lib/useAsync";

type Draft = Record<string, string | boolean>;
type Opt = { value: string; label: string; description?: string };

export const SETTLED = new Set(["READY", "FAILED"]);
const ENDPOINT_FIELDS = [
  "name", "mode", "instance_type", "replicas", "gpus", "model", "model.uri", "model.model_id", "model.token_secret",
  "engine", "image", "engine_args", "service", "pool", "source_ranges", "internet_facing", "public", "api_key_secret", "router", "autoscaling",
  "tiered_kv_cache", "routing_strategy",
];
const MODEL_SOURCES: Record<string, Opt[]> = {
  "self-managed": [
    { value: "s3", label: "Shared bucket (/data/models/...)" },
    { value: "huggingface", label: "Hugging Face" },
  ],
  managed: [
    { value: "s3", label: "Shared bucket (/data/models/...)" },
    { value: "fsx", label: "FSx for Lustre" },
    { value: "huggingface", label: "Hugging Face" },
    { value: "jumpstart", label: "JumpStart catalog" },
  ],
};
const IMAGES: Record<string, string> = { vllm: "vllm/vllm-openai:v0.10.1", sglang: "lmsysorg/sglang:v0.4.9.post2-cu126" };

const opt = (value: string, label = value): Opt => ({ value, label });
const lines = (s: unknown) => String(s ?? "").split(/[\n,]/).map((x) => x.trim()).filter(Boolean);
const int = (s: unknown) => (String(s ?? "").trim() === "" ? undefined : Number(s));

/** The request for a deploy draft: only what the chosen mode takes; blanks left to the server's defaults. */
export function endpointBody(d: Draft): Partial<EndpointCreate> {
  const managed = d.mode === "managed";
  const source = String(d.source || "s3");
  const model: Record<string, unknown> = { source };
  if (source === "s3" || source === "fsx") model.uri = d.uri;
  else model.model_id = d.model_id;
  if (source === "huggingface" && d.token_secret) model.token_secret = d.token_secret;
  if (d.revision && (source === "huggingface" || source === "jumpstart")) model.revision = d.revision;
  if (source === "jumpstart" && d.accept_eula) model.accept_eula = true;
  const body: Record<string, unknown> = {
    name: d.name, mode: managed ? "managed" : "self-managed", instance_type: d.instance_type, model,
    replicas: int(d.replicas),
  };
  if (int(d.gpus) !== undefined) body.gpus = int(d.gpus);
  if (managed) {
    if (d.routing_strategy) body.routing_strategy = d.routing_strategy;
    if (d.kv_l1 || d.kv_l2) body.tiered_kv_cache = { l1: Boolean(d.kv_l1), ...(d.kv_l2 ? { l2_backend: d.kv_l2 } : {}) };
    if (int(d.as_max) !== undefined) body.autoscaling = { max: int(d.as_max), ...(int(d.as_min) !== undefined ? { min: int(d.as_min) } : {}) };
  } else {
    body.engine = d.engine;
    body.image = d.image;
    if (lines(d.engine_args).length) body.engine_args = String(d.engine_args).split("\n").map((x) => x.trim()).filter(Boolean);
    body.service = d.service || "internal";
    if (d.service === "model_pool") body.pool = d.pool;
    if (d.service === "external") {
      if (d.internet_facing) body.internet_facing = true;
      if (d.internet_facing && d.public) body.public = true;
      if (lines(d.source_ranges).length) body.source_ranges = lines(d.source_ranges);
    }
    if (d.api_key_secret && d.service !== "model_pool") body.api_key_secret = d.api_key_secret;
    if (d.engine === "sglang" && d.router) {
      body.router = { enabled: true, policy: d.router_policy || "cache_aware" };
      if (int(d.keda_max) !== undefined)
        body.autoscaling = { keda: { max: int(d.keda_max), min: int(d.keda_min) ?? 1, metric: d.keda_metric || "queue_depth" } };
    }
  }
  return body as Partial<EndpointCreate>;
}

/** The review's one line: "chat-a: self-managed vllm, 1 × ml.g5.8xlarge (1 GPU each), model /data/models/..., service internal". */
export function deploySummary(b: Partial<EndpointCreate>): string {
  const m = (b.model ?? {}) as Record<string, unknown>;
  const how = b.mode === "managed" ? "managed (inference operator)" : `self-managed ${b.engine ?? ""}`.trim();
  const gpus = b.gpus !== undefined ? ` (${b.gpus} GPU each)` : "";
  const reach = b.public ? ", public (anyone on the internet)" : b.internet_facing ? `, internet-facing from ${(b.source_ranges ?? []).join(", ")}` : "";
  const key = b.api_key_secret ? ", API key required" : "";
  const where = b.mode === "managed" ? "" : `, service ${b.service ?? "internal"}${b.pool ? ` ${b.pool}` : ""}${reach}${key}`;
  return `${b.name || "(no name)"}: ${how}, ${text(b.replicas, "1")} × ${b.instance_type || "(no instance type)"}${gpus}, `
    + `model ${text(m.uri ?? m.model_id, "(none)")}${where}`;
}

/** "unassigned: 2, llm-a: 1" */
export function byModel(p: Pool): string {
  const parts = Object.entries(p.by_model ?? {}).map(([m, n]) => `${m}: ${n}`);
  return parts.length ? parts.join(", ") : "No workers seen";
}

function groupOptions(groups: ClusterInstanceGroup[]): Opt[] {
  const seen = new Map<string, Opt>();
  for (const g of groups) {
    if (!g.instance_type || seen.has(g.instance_type)) continue;
    seen.set(g.instance_type, { value: g.instance_type, label: g.instance_type, description: `group ${g.name}: ${countsLong(g)}` });
  }
  return [...seen.values()];
}

function Pick({ label, value, options, onChange, error, description }: { label: string; value: string; options: Opt[]; onChange: (v: string) => void; error?: string; description?: string }) {
  const selected = options.find((o) => o.value === value) ?? null;
  return (
    <FormField label={label} errorText={error} description={description}>
      <Select ariaLabel={label} selectedOption={selected} options={options} onChange={({ detail }) => onChange(detail.selectedOption.value ?? "")} placeholder="Choose" />
    </FormField>
  );
}

function DeployModal({ cluster, region, groups, pools, models, onClose }: { cluster: string; region: string; groups: ClusterInstanceGroup[]; pools: Pool[]; models: ModelItem[]; onClose: () => void }) {
  const types = groupOptions(groups);
  const [d, setD] = useState<Draft>({
    mode: "self-managed", engine: "vllm", image: IMAGES.vllm, source: "s3", uri: "/data/models/", replicas: "1", gpus: "1",
    service: "internal", instance_type: types[0]?.value ?? "", kv_l1: true, router_policy: "cache_aware", keda_metric: "queue_depth",
  });
  const deploy = useMutation((body: Partial<EndpointCreate>, key: string) => api.deployEndpoint(cluster, region, body, key), { fields: ENDPOINT_FIELDS });
  const e = deploy.fieldErrors;
  const { me } = useMe();
  const admin = isAdmin(me);
  // An API key is a Secret PodStart wrote in default (where endpoints run): chosen by name, never typed as a value.
  const secrets = useAsync(() => api.secretNames(cluster, region), [cluster, region], canMutate(me));
  const external = d.mode !== "managed" && d.service === "external";
  const rangeProblem = external ? sourceRangesProblem(Boolean(d.internet_facing), Boolean(d.public), parseRanges(String(d.source_ranges ?? ""))) : undefined;
  // Review: the plan (the Kubernetes objects, the capacity it uses; same checks as the deploy, nothing changed)
  // before the final button; a refused deploy goes back to the form, where the fields show why.
  const [review, setReview] = useState(false);
  const body = endpointBody(d);
  const bodyKey = JSON.stringify(body);
  const send = async () => {
    const out = await deploy.run(body);
    if (out?.kind === "failed") setReview(false);
  };
  const set = (p: Draft) => {
    setD((x) => ({ ...x, ...p }));
    deploy.clearField(...Object.keys(p), "model");
  };
  const input = (k: string, label: string, description?: string, err = e[k]) => (
    <FormField label={label} description={description} errorText={err}>
      <Input ariaLabel={label} value={String(d[k] ?? "")} onChange={({ detail }) => set({ [k]: detail.value })} />
    </FormField>
  );
  const managed = d.mode === "managed";
  const onPool = !managed && d.service === "model_pool";
  const source = String(d.source);
  return (
    <Modal
      visible
      size="large"
      onDismiss={onClose}
      header={`Deploy an endpoint on ${cluster}`}
      footer={
        <Box float="right">
          {review ? (
            <SpaceBetween direction="horizontal" size="xs">
              <Button variant="link" onClick={() => setReview(false)}>Back</Button>
              <Button variant="primary" loading={deploy.busy} onClick={() => void send()}>Deploy</Button>
            </SpaceBetween>
          ) : (
            <SpaceBetween direction="horizontal" size="xs">
              <Button variant="link" onClick={onClose}>Cancel</Button>
              <Button variant="primary" onClick={() => setReview(true)} disabled={!!rangeProblem}
                disabledReason={rangeProblem ? `Allowed source ranges: ${rangeProblem}` : undefined}>Review</Button>
            </SpaceBetween>
          )}
        </Box>
      }
    >
      {review ? (
        <SpaceBetween size="m">
          <Box data-testid="deploy-summary">{deploySummary(body)}</Box>
          <PlanPanel load={async (signal) => (await api.planDeployEndpoint(cluster, region, body, signal)).body} deps={[cluster, region, bodyKey]} />
        </SpaceBetween>
      ) : (
        <SpaceBetween size="m">
          {deploy.errors.length > 0 && <Alert type="error" header="The endpoint was not deployed">{deploy.errors.join("; ")}</Alert>}
          <SegmentedControl
            label="Mode"
            selectedId={String(d.mode)}
            onChange={({ detail }) => set({ mode: detail.selectedId, source: detail.selectedId === "managed" ? "huggingface" : "s3" })}
            options={[{ id: "self-managed", text: "Self-managed (vLLM / SGLang)" }, { id: "managed", text: "Managed (inference operator)" }]}
          />
          {input("name", "Endpoint name", "A DNS label, at most 32 characters")}
          {types.length === 0 && <Alert type="warning">This cluster has no instance groups: add a GPU group first.</Alert>}
          {onPool ? (
            <Box data-testid="pool-capacity">{`Served by workers of the pool${d.pool ? ` ${d.pool}` : ""}: their instance type and GPUs are the pool's; assign workers to the endpoint once it is deployed.`}</Box>
          ) : (
            <>
              <Pick label="Instance type" value={String(d.instance_type)} options={types} error={e.instance_type} onChange={(v) => set({ instance_type: v })}
                description={types.length ? `This cluster's groups: ${types.map((t) => `${t.label} (${t.description})`).join("; ")}` : undefined} />
              <SpaceBetween direction="horizontal" size="m">
                {input("replicas", "Replicas")}
                {input("gpus", "GPUs per replica", managed ? "Optional" : "Checked against the engine's parallelism flags")}
              </SpaceBetween>
            </>
          )}
          <Pick label="Model source" value={source} options={MODEL_SOURCES[String(d.mode)]} error={e.model} onChange={(v) => set({ source: v })} />
          {source === "s3" && models.length > 0 && (
            <Pick label="Model in the bucket" value={String(d.uri)} onChange={(v) => set({ uri: v })} description="Downloaded models (Models, below); or type a path"
              options={models.map((m) => ({ value: m.path, label: `${m.model_id} @ ${m.revision}`, description: `${m.files} files, ${fmtBytes(m.bytes)}` }))} />
          )}
          {source === "s3" || source === "fsx"
            ? input("uri", "Model path", "e.g. /data/models/Qwen/Qwen3-0.6B/main/", e["model.uri"])
            : input("model_id", source === "jumpstart" ? "JumpStart model id" : "Hugging Face model id", source === "jumpstart" ? undefined : "org/name", e["model.model_id"])}
          {source === "huggingface" && input("token_secret", "Token Secret", "Name of a Secret with key `token` (gated models); the token itself never goes here", e["model.token_secret"])}
          {source === "jumpstart" && <Checkbox checked={Boolean(d.accept_eula)} onChange={({ detail }) => set({ accept_eula: detail.checked })}>Accept the model's end-user license</Checkbox>}
          {managed ? (
            <>
              <Pick label="Routing strategy" value={String(d.routing_strategy ?? "")} error={e.routing_strategy} onChange={(v) => set({ routing_strategy: v })}
                options={[opt("", "Operator default"), opt("prefixaware", "Prefix-aware"), opt("kvaware", "KV-aware"), opt("session", "Session"), opt("roundrobin", "Round robin")]} />
              <FormField label="Tiered KV cache" errorText={e.tiered_kv_cache}>
                <SpaceBetween direction="horizontal" size="m">
                  <Checkbox checked={Boolean(d.kv_l1)} onChange={({ detail }) => set({ kv_l1: detail.checked })}>L1 (CPU memory)</Checkbox>
                  <Select ariaLabel="L2 backend" selectedOption={opt(String(d.kv_l2 ?? ""), d.kv_l2 ? String(d.kv_l2) : "No L2")}
                    options={[opt("", "No L2"), opt("tieredstorage"), opt("redis")]} onChange={({ detail }) => set({ kv_l2: detail.selectedOption.value ?? "" })} />
                </SpaceBetween>
              </FormField>
              <SpaceBetween direction="horizontal" size="m">
                {input("as_min", "Autoscaling min", undefined, e.autoscaling)}
                {input("as_max", "Autoscaling max", "Empty: no autoscaling")}
              </SpaceBetween>
            </>
          ) : (
            <>
              <Pick label="Engine" value={String(d.engine)} error={e.engine} onChange={(v) => set({ engine: v, image: IMAGES[v] ?? "" })} options={[opt("vllm", "vLLM"), opt("sglang", "SGLang")]} />
              {input("image", "Image", "Pinned: a version tag or @sha256 digest (latest is refused)")}
              <FormField label="Engine arguments" description="One argument per line, e.g. --max-model-len then 8192" errorText={e.engine_args}>
                <Textarea ariaLabel="Engine arguments" rows={3} value={String(d.engine_args ?? "")} onChange={({ detail }) => set({ engine_args: detail.value })} />
              </FormField>
              <Pick label="Service" value={String(d.service)} error={e.service} onChange={(v) => set({ service: v })}
                options={[opt("internal", "Internal (ClusterIP)"), opt("external", "External (Network Load Balancer)"), opt("model_pool", "Model pool workers")]} />
              {d.service === "model_pool" && (
                <Pick label="Pool" value={String(d.pool ?? "")} error={e.pool} options={pools.map((p) => opt(p.name, `${p.name} (${p.engine}, ${p.workers} workers)`))}
                  onChange={(v) => { const p = pools.find((x) => x.name === v); set({ pool: v, ...(p ? { instance_type: p.instance_type, gpus: String(p.gpus_per_worker), replicas: "1" } : {}) }); }} />
              )}
              {d.service === "external" && (
                <>
                  <FormField label="Exposure" errorText={e.internet_facing ?? e.public}
                    description="Internal: reachable inside the VPC. Internet-facing: reachable from the source ranges you name.">
                    <SpaceBetween size="xs">
                      <Checkbox checked={Boolean(d.internet_facing)} onChange={({ detail }) => set({ internet_facing: detail.checked, ...(detail.checked ? {} : { public: false }) })}
                        description="An internet-facing Network Load Balancer">Internet-facing</Checkbox>
                      {admin && d.internet_facing && (
                        <Checkbox checked={Boolean(d.public)} onChange={({ detail }) => { set({ public: detail.checked }); deploy.clearField("source_ranges"); }}
                          description="No source range limit (admins only): set an API key Secret too">Public (anyone on the internet)</Checkbox>
                      )}
                    </SpaceBetween>
                  </FormField>
                  <FormField label="Allowed source ranges" errorText={e.source_ranges ?? rangeProblem}
                    description={d.internet_facing && !d.public
                      ? "Required: the CIDR blocks allowed to reach it, comma-separated (0.0.0.0/0 and ::/0 are everyone: refused)"
                      : d.public ? "Optional: public means anyone on the internet can reach it" : "CIDR blocks inside the VPC, comma-separated (empty: the whole VPC)"}>
                    <Input ariaLabel="Allowed source ranges" value={String(d.source_ranges ?? "")} placeholder={d.internet_facing ? "203.0.113.0/24" : ""}
                      onChange={({ detail }) => set({ source_ranges: detail.value })} />
                  </FormField>
                </>
              )}
              {d.service !== "model_pool" && (
                <Pick label="API key Secret" value={String(d.api_key_secret ?? "")} error={e.api_key_secret ?? (secrets.error ? `Secret names could not be read: ${secrets.error.message}` : undefined)}
                  options={[opt("", "None: anyone who reaches it can use the model"), ...(secrets.data?.names ?? []).map((n) => opt(n))]}
                  onChange={(v) => set({ api_key_secret: v })}
                  description="A Secret PodStart wrote in default with key api_key (POST .../secrets). Callers then send `Authorization: Bearer <key>` or `X-Api-Key: <key>`; Try it and invoke send it for you." />
              )}
              {d.engine === "sglang" && (
                <FormField label="SGLang router" errorText={e.router ?? e.autoscaling} description="In front of 2 or more replicas; KEDA scales it on the router's metrics">
                  <SpaceBetween size="s">
                    <Checkbox checked={Boolean(d.router)} onChange={({ detail }) => set({ router: detail.checked })}>Deploy the router (cache-aware)</Checkbox>
                    {d.router && (
                      <SpaceBetween direction="horizontal" size="m">
                        {input("keda_min", "KEDA min")}
                        {input("keda_max", "KEDA max", "Empty: no KEDA")}
                      </SpaceBetween>
                    )}
                  </SpaceBetween>
                </FormField>
              )}
            </>
          )}
        </SpaceBetween>
      )}
    </Modal>
  );
}

export function ScaleModal({ cluster, region, ep, onClose }: { cluster: string; region: string; ep: Endpoint; onClose: () => void }) {
  const auto = (ep.autoscaling ?? {}) as Record<string, unknown>;
  const now = { replicas: ep.replicas, autoscaling_min: auto.min as number | undefined, autoscaling_max: auto.max as number | undefined };
  const [d, setD] = useState<Draft>({ replicas: String(ep.replicas), autoscaling_min: text(now.autoscaling_min, ""), autoscaling_max: text(now.autoscaling_max, "") });
  const [info, setInfo] = useState<string | undefined>();
  const scale = useMutation((changed: EndpointPatch, key: string) => api.patchEndpoint(cluster, region, ep.name, changed, key), {
    fields: ["replicas", "autoscaling_min", "autoscaling_max"],
    unchangedMessage: `Nothing to change: ${ep.name} is already like that.`,
  });
  const save = () => {
    const edited = { replicas: int(d.replicas), autoscaling_min: int(d.autoscaling_min), autoscaling_max: int(d.autoscaling_max) };
    const changed = changedFields(now, edited);
    if (isEmpty(changed)) {
      setInfo(`Nothing to change: ${ep.name} already has ${ep.replicas} replicas.`);
      return;
    }
    void scale.run(changed as EndpointPatch);
  };
  const field = (k: string, label: string) => (
    <FormField label={label} errorText={scale.fieldErrors[k]}>
      <Input ariaLabel={label} type="number" value={String(d[k] ?? "")} onChange={({ detail }) => { setD((x) => ({ ...x, [k]: detail.value })); setInfo(undefined); scale.clearField(k); }} />
    </FormField>
  );
  return (
    <Modal
      visible
      onDismiss={onClose}
      header={`Scale ${ep.name}`}
      footer={
        <Box float="right">
          <SpaceBetween direction="horizontal" size="xs">
            <Button variant="link" onClick={onClose}>Cancel</Button>
            <Button variant="primary" onClick={save} loading={scale.busy}>Save</Button>
          </SpaceBetween>
        </Box>
      }
    >
      <SpaceBetween size="m">
        {scale.errors.length > 0 && <Alert type="error">{scale.errors.join("; ")}</Alert>}
        {field("replicas", "Replicas")}
        {ep.autoscaling && field("autoscaling_min", "Autoscaling min")}
        {ep.autoscaling && field("autoscaling_max", "Autoscaling max")}
        {(info ?? scale.notice) && <Alert type="info">{info ?? scale.notice}</Alert>}
      </SpaceBetween>
    </Modal>
  );
}

export function DeleteEndpointModal({ cluster, region, ep, onClose }: { cluster: string; region: string; ep: Endpoint; onClose: () => void }) {
  const del = useMutation((_: null, key: string) => api.deleteEndpoint(cluster, region, ep.name, key));
  return (
    <ConfirmModal
      header={`Delete ${ep.name}?`}
      confirmLabel="Delete"
      typeToConfirm={ep.name}
      warning={`This deletes the endpoint and every object PodStart made for it (${(ep.objects ?? []).length} objects). Models in the bucket stay.`}
      busy={del.busy}
      errors={del.errors}
      onConfirm={() => void del.run(null)}
      onCancel={onClose}
    />
  );
}

/** Try it: one chat message to a READY endpoint, through PodStart (the target is the endpoint's own Service). */
export function TryIt({ cluster, region, endpoints }: { cluster: string; region: string; endpoints: Endpoint[] }) {
  const ready = endpoints.filter((x) => x.status === "READY");
  const [ep, setEp] = useState("");
  const [message, setMessage] = useState("");
  const [answer, setAnswer] = useState<InvokeResult | undefined>();
  const chosen = ready.find((x) => x.name === ep)?.name ?? ready[0]?.name ?? "";
  const invoke = useMutation(
    (m: string, key: string) => api.invokeEndpoint(cluster, region, chosen, { messages: [{ role: "user", content: m }], max_tokens: 256, temperature: 0.7, stream: false }, key),
    { fields: ["messages"], onDone: (r) => setAnswer(r) },
  );
  return (
    <Container header={<Header variant="h2" description="Send a chat message to a ready endpoint (operators)">Try it</Header>}>
      <SpaceBetween size="m">
        <Pick label="Endpoint" value={chosen} options={ready.map((x) => opt(x.name, `${x.name} (${x.model})`))} onChange={setEp} />
        <FormField label="Message" errorText={invoke.fieldErrors.messages}>
          <Textarea ariaLabel="Message" rows={2} value={message} onChange={({ detail }) => { setMessage(detail.value); invoke.clearField("messages"); }} />
        </FormField>
        <Button onClick={() => { setAnswer(undefined); void invoke.run(message); }} loading={invoke.busy} disabled={!chosen || !message.trim()}>Send</Button>
        {invoke.errors.length > 0 && <Alert type="error" header="No answer">{invoke.errors.join("; ")}</Alert>}
        {answer && (
          <Box data-testid="answer">
            <Box variant="awsui-key-label">{`${answer.endpoint} answered${answer.model ? ` (${answer.model})` : ""}${answer.truncated ? ", truncated" : ""}`}</Box>
            <Box variant="p">{text(answer.content, "The engine sent no message content.")}</Box>
          </Box>
        )}
      </SpaceBetween>
    </Container>
  );
}

/** The request of the create-pool form (numbers as numbers; blanks left for the server to name). */
export function poolBody(d: Draft): Partial<PoolCreate> {
  return {
    name: String(d.name ?? "").trim(), engine: d.engine as PoolCreate["engine"], image: String(d.image ?? "").trim(),
    instance_type: String(d.instance_type ?? ""), gpus_per_worker: int(d.gpus_per_worker), workers: int(d.workers),
  };
}

/** Review and final buttons of a form with a plan step (Back/Confirm on the review, Cancel/Review on the form). */
function ReviewFooter({ review, busy, confirmLabel, onBack, onCancel, onReview, onConfirm }: {
  review: boolean; busy: boolean; confirmLabel: string; onBack: () => void; onCancel: () => void; onReview: () => void; onConfirm: () => void;
}) {
  return (
    <Box float="right">
      {review ? (
        <SpaceBetween direction="horizontal" size="xs">
          <Button variant="link" onClick={onBack}>Back</Button>
          <Button variant="primary" loading={busy} onClick={onConfirm}>{confirmLabel}</Button>
        </SpaceBetween>
      ) : (
        <SpaceBetween direction="horizontal" size="xs">
          <Button variant="link" onClick={onCancel}>Cancel</Button>
          <Button variant="primary" onClick={onReview}>Review</Button>
        </SpaceBetween>
      )}
    </Box>
  );
}

function CreatePoolModal({ cluster, region, types, onClose }: { cluster: string; region: string; types: Opt[]; onClose: () => void }) {
  const [d, setD] = useState<Draft>({ engine: "vllm", image: IMAGES.vllm, instance_type: types[0]?.value ?? "", gpus_per_worker: "1", workers: "2" });
  const [review, setReview] = useState(false);
  const create = useMutation((body: Partial<PoolCreate>, key: string) => api.createPool(cluster, region, body, key), {
    fields: ["name", "engine", "image", "instance_type", "gpus_per_worker", "workers"],
  });
  const set = (p: Draft) => { setD((x) => ({ ...x, ...p })); create.clearField(...Object.keys(p)); };
  const input = (k: string, label: string, description?: string) => (
    <FormField label={label} description={description} errorText={create.fieldErrors[k]}>
      <Input ariaLabel={label} value={String(d[k] ?? "")} onChange={({ detail }) => set({ [k]: detail.value })} />
    </FormField>
  );
  // Review: the plan (the workers' Deployment, whether the GPUs are free) before the final button; a refused
  // create goes back to the form, where the fields show why.
  const body = poolBody(d);
  const bodyKey = JSON.stringify(body);
  const submit = async () => {
    const out = await create.run(body);
    if (out?.kind === "failed") setReview(false);
  };
  return (
    <Modal visible size="large" onDismiss={onClose} header={`Create a model pool on ${cluster}`}
      footer={<ReviewFooter review={review} busy={create.busy} confirmLabel="Create pool" onBack={() => setReview(false)} onCancel={onClose}
        onReview={() => setReview(true)} onConfirm={() => void submit()} />}>
      {review ? (
        <SpaceBetween size="m">
          <Box data-testid="pool-summary">{`${body.name || "(no name)"}: ${text(body.workers, "?")} warm ${body.engine} workers × ${text(body.gpus_per_worker, "?")} GPU on ${body.instance_type || "(no instance type)"}, image ${body.image || "(none)"}`}</Box>
          <PlanPanel load={async (signal) => (await api.planCreatePool(cluster, region, body, signal)).body} deps={[cluster, region, bodyKey]} />
        </SpaceBetween>
      ) : (
        <SpaceBetween size="m">
          {create.errors.length > 0 && <Alert type="error" header="The pool was not created">{create.errors.join("; ")}</Alert>}
          {input("name", "Pool name", "A DNS label, at most 24 characters")}
          <Pick label="Engine" value={String(d.engine)} error={create.fieldErrors.engine} onChange={(v) => set({ engine: v, image: IMAGES[v] ?? "" })} options={[opt("vllm", "vLLM"), opt("sglang", "SGLang")]} />
          {input("image", "Image", "Pinned: a version tag or @sha256 digest")}
          <Pick label="Instance type" value={String(d.instance_type)} options={types} error={create.fieldErrors.instance_type} onChange={(v) => set({ instance_type: v })} />
          {input("gpus_per_worker", "GPUs per worker")}
          {input("workers", "Workers", "Warm workers, labelled unassigned until assigned to an endpoint")}
        </SpaceBetween>
      )}
    </Modal>
  );
}

function AssignModal({ cluster, region, pool, endpoints, onClose }: { cluster: string; region: string; pool: Pool; endpoints: Endpoint[]; onClose: () => void }) {
  // the endpoints this pool's workers can serve: model_pool endpoints on this pool
  const mine = endpoints.filter((x) => x.service === "model_pool" && x.pool === pool.name);
  const [d, setD] = useState<Draft>({ source: "s3", uri: "/data/models/", workers: "1", endpoint: mine.length === 1 ? mine[0].name : "" });
  const [review, setReview] = useState(false);
  const assign = useMutation((body: Partial<PoolAssign>, key: string) => api.assignPool(cluster, region, pool.name, body, key), {
    fields: ["endpoint", "model", "model.uri", "model.model_id", "workers"],
  });
  const set = (p: Draft) => { setD((x) => ({ ...x, ...p })); assign.clearField(...Object.keys(p), "model"); };
  const input = (k: string, label: string, description?: string, err = assign.fieldErrors[k]) => (
    <FormField label={label} description={description} errorText={err}>
      <Input ariaLabel={label} value={String(d[k] ?? "")} onChange={({ detail }) => set({ [k]: detail.value })} />
    </FormField>
  );
  const model = (d.source === "s3" ? { source: "s3", uri: String(d.uri) } : { source: "huggingface", model_id: String(d.model_id ?? "") }) as PoolAssign["model"];
  const body: Partial<PoolAssign> = { endpoint: String(d.endpoint ?? "").trim(), model, workers: int(d.workers) };
  const bodyKey = JSON.stringify(body);
  // Review: the plan names the workers whose label changes (and warns when the pool has too few unassigned).
  const submit = async () => {
    const out = await assign.run(body);
    if (out?.kind === "failed") setReview(false);
  };
  return (
    <Modal visible size="large" onDismiss={onClose} header={`Assign ${pool.name} workers`}
      footer={<ReviewFooter review={review} busy={assign.busy} confirmLabel="Assign" onBack={() => setReview(false)} onCancel={onClose}
        onReview={() => setReview(true)} onConfirm={() => void submit()} />}>
      {review ? (
        <SpaceBetween size="m">
          <Box data-testid="assign-summary">{`${text(body.workers, "?")} of ${pool.name}'s unassigned workers to ${body.endpoint || "(no endpoint)"}, model ${text(model.uri ?? model.model_id, "(none)")}`}</Box>
          <PlanPanel load={async (signal) => (await api.planAssignPool(cluster, region, pool.name, body, signal)).body} deps={[cluster, region, pool.name, bodyKey]} />
        </SpaceBetween>
      ) : (
        <SpaceBetween size="m">
          {assign.errors.length > 0 && <Alert type="error" header="No workers were assigned">{assign.errors.join("; ")}</Alert>}
          <Box>{`Now: ${byModel(pool)}`}</Box>
          <Pick label="Endpoint" value={String(d.endpoint ?? "")} error={assign.fieldErrors.endpoint} onChange={(v) => set({ endpoint: v })}
            options={mine.map((x) => opt(x.name, `${x.name} (${x.status}, ${x.ready_replicas ?? 0} workers)`))}
            description={mine.length ? "A model_pool endpoint on this pool; its Service selects the workers by label" : `No endpoint is served by ${pool.name} yet: deploy one with service "Model pool workers" on it first`} />
          <Pick label="Model source" value={String(d.source)} options={MODEL_SOURCES["self-managed"]} error={assign.fieldErrors.model} onChange={(v) => set({ source: v })} />
          {d.source === "s3" ? input("uri", "Model path", undefined, assign.fieldErrors["model.uri"]) : input("model_id", "Hugging Face model id", "org/name", assign.fieldErrors["model.model_id"])}
          {input("workers", "Workers")}
        </SpaceBetween>
      )}
    </Modal>
  );
}

function ReleaseModal({ cluster, region, pool, onClose }: { cluster: string; region: string; pool: Pool; onClose: () => void }) {
  const bound = Object.keys(pool.by_model ?? {}).filter((m) => m !== "unassigned");
  const [endpoint, setEndpoint] = useState(bound[0] ?? "");
  const release = useMutation((_: null, key: string) => api.releasePool(cluster, region, pool.name, { endpoint }, key));
  return (
    <ConfirmModal
      header={`Release ${pool.name} workers`}
      confirmLabel="Release"
      busy={release.busy}
      errors={release.errors}
      onConfirm={() => void release.run(null)}
      onCancel={onClose}
    >
      <SpaceBetween size="s">
        <Box>Every worker serving the endpoint goes back to the pool, unassigned; the endpoint has no workers until some are assigned again.</Box>
        <Pick label="Endpoint" value={endpoint} options={bound.map((m) => opt(m, `${m} (${pool.by_model?.[m]} workers)`))} onChange={setEndpoint} />
        {endpoint && <PlanPanel load={async (signal) => (await api.planReleasePool(cluster, region, pool.name, { endpoint }, signal)).body} deps={[cluster, region, pool.name, endpoint]} />}
      </SpaceBetween>
    </ConfirmModal>
  );
}

function PoolsPanel({ cluster, region, types, pools, endpoints, loading, error }: { cluster: string; region: string; types: Opt[]; pools: Pool[]; endpoints: Endpoint[]; loading: boolean; error?: Error }) {
  const [modal, setModal] = useState<null | "create" | { assign: Pool } | { release: Pool }>(null);
  return (
    <>
      <Table<Pool>
        header={
          <Header variant="h2" counter={`(${pools.length})`} description="Warm GPU workers; assigning relabels workers so an endpoint's Service selects them (seconds, no new deployment)"
            actions={<Button onClick={() => setModal("create")}>Create pool</Button>}>
            Model pools
          </Header>
        }
        loading={loading && pools.length === 0}
        items={pools}
        trackBy="name"
        ariaLabels={{ tableLabel: "Model pools" }}
        empty={<Box textAlign="center">{error ? error.message : "None"}</Box>}
        columnDefinitions={[
          { id: "name", header: "Name", cell: (p) => p.name, isRowHeader: true },
          { id: "engine", header: "Engine", cell: (p) => p.engine },
          { id: "type", header: "Instance type", cell: (p) => `${p.instance_type} (${p.gpus_per_worker} GPU per worker)` },
          { id: "workers", header: "Workers", cell: (p) => p.workers },
          { id: "by", header: "Workers by model", cell: (p) => <span data-testid={`pool-${p.name}`}>{byModel(p)}</span> },
          {
            id: "act", header: "Actions", cell: (p) => (
              <SpaceBetween direction="horizontal" size="xs">
                <Button variant="inline-link" ariaLabel={`Assign ${p.name} workers`} onClick={() => setModal({ assign: p })}>Assign</Button>
                {Object.keys(p.by_model ?? {}).some((m) => m !== "unassigned") && (
                  <Button variant="inline-link" ariaLabel={`Release ${p.name} workers`} onClick={() => setModal({ release: p })}>Release</Button>
                )}
              </SpaceBetween>
            ),
          },
        ]}
      />
      {modal === "create" && <CreatePoolModal cluster={cluster} region={region} types={types} onClose={() => setModal(null)} />}
      {modal && typeof modal === "object" && "assign" in modal && <AssignModal cluster={cluster} region={region} pool={modal.assign} endpoints={endpoints} onClose={() => setModal(null)} />}
      {modal && typeof modal === "object" && "release" in modal && <ReleaseModal cluster={cluster} region={region} pool={modal.release} onClose={() => setModal(null)} />}
    </>
  );
}

/** "1.2 MB" (powers of 1000, as S3 consoles show sizes). */
export function fmtBytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return "-";
  const units = ["B", "kB", "MB", "GB", "TB"];
  let v = n;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) { v /= 1000; i += 1; }
  return i === 0 ? `${v} B` : `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** The request of the download form: blanks left to the server's defaults (revision main, no token). */
export function downloadBody(d: Draft): Partial<ModelDownload> {
  const body: Record<string, unknown> = { source: "huggingface", model_id: String(d.model_id ?? "").trim() };
  if (String(d.revision ?? "").trim()) body.revision = String(d.revision).trim();
  if (String(d.token_secret ?? "").trim()) body.token_secret = String(d.token_secret).trim();
  return body as Partial<ModelDownload>;
}

function DownloadModal({ cluster, region, onClose }: { cluster: string; region: string; onClose: () => void }) {
  const [d, setD] = useState<Draft>({ revision: "main", token_secret: "" });
  const [review, setReview] = useState(false);
  const secrets = useAsync(() => api.secretNames(cluster, region), [cluster, region]);
  const secretOptions: Opt[] = [opt("", "None (a public model)"), ...(secrets.data?.names ?? []).map((n) => opt(n))];
  const download = useMutation((body: Partial<ModelDownload>, key: string) => api.downloadModel(cluster, region, body, key), {
    fields: ["model_id", "revision", "token_secret", "source"],
  });
  const body = downloadBody(d);
  const bodyKey = JSON.stringify(body);
  const set = (p: Draft) => { setD((x) => ({ ...x, ...p })); download.clearField(...Object.keys(p)); };
  const input = (k: string, label: string, description?: string) => (
    <FormField label={label} description={description} errorText={download.fieldErrors[k]}>
      <Input ariaLabel={label} value={String(d[k] ?? "")} onChange={({ detail }) => set({ [k]: detail.value })} />
    </FormField>
  );
  const send = async () => {
    const out = await download.run(body);
    if (out?.kind === "failed") setReview(false);
  };
  return (
    <Modal visible size="large" onDismiss={onClose} header={`Download a model to ${cluster}'s shared bucket`}
      footer={
        <Box float="right">
          {review ? (
            <SpaceBetween direction="horizontal" size="xs">
              <Button variant="link" onClick={() => setReview(false)}>Back</Button>
              <Button variant="primary" loading={download.busy} onClick={() => void send()}>Download</Button>
            </SpaceBetween>
          ) : (
            <SpaceBetween direction="horizontal" size="xs">
              <Button variant="link" onClick={onClose}>Cancel</Button>
              <Button variant="primary" onClick={() => setReview(true)}>Review</Button>
            </SpaceBetween>
          )}
        </Box>
      }>
      {review ? (
        <SpaceBetween size="m">
          <Box data-testid="download-summary">{`${body.model_id || "(no model)"} @ ${body.revision ?? "main"} to /data/models/${body.model_id}/${body.revision ?? "main"}/${body.token_secret ? `, token from Secret ${body.token_secret}` : ""}`}</Box>
          <PlanPanel load={async (signal) => (await api.planDownloadModel(cluster, region, body, signal)).body} deps={[cluster, region, bodyKey]} />
        </SpaceBetween>
      ) : (
        <SpaceBetween size="m">
          {download.errors.length > 0 && <Alert type="error" header="The download did not start">{download.errors.join("; ")}</Alert>}
          {input("model_id", "Hugging Face model id", "org/name, e.g. Qwen/Qwen3-0.6B")}
          {input("revision", "Revision", "Branch, tag or commit")}
          <Pick label="Token Secret" value={String(d.token_secret ?? "")} options={secretOptions} error={download.fieldErrors.token_secret}
            onChange={(v) => set({ token_secret: v })}
            description={secrets.error ? `Secret names could not be read: ${secrets.error.message}` : "For gated models: a Secret with key `token` in namespace default (create one with POST .../secrets)"} />
        </SpaceBetween>
      )}
    </Modal>
  );
}

function ModelsPanel({ cluster, region, models, bucket, loading, error }: { cluster: string; region: string; models: ModelItem[]; bucket?: string; loading: boolean; error?: Error }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <Table<ModelItem>
        header={
          <Header variant="h2" counter={`(${models.length})`} description={`Read from the shared bucket${bucket ? ` (${bucket})` : ""} under models/ (pods see /data/models/); deploy one with source "Shared bucket"`}
            actions={<Button onClick={() => setOpen(true)}>Download model</Button>}>
            Models
          </Header>
        }
        loading={loading && models.length === 0}
        items={models}
        trackBy="path"
        ariaLabels={{ tableLabel: "Models" }}
        empty={<Box textAlign="center">{error ? error.message : "No models in the bucket yet"}</Box>}
        columnDefinitions={[
          { id: "id", header: "Model", cell: (m) => m.model_id, isRowHeader: true },
          { id: "rev", header: "Revision", cell: (m) => m.revision },
          { id: "files", header: "Files", cell: (m) => m.files },
          { id: "state", header: "Download", cell: (m) => (m.complete
            ? <StatusIndicator type="success">Complete</StatusIndicator>
            : <StatusIndicator type="in-progress">{`${m.files} of ${m.files_total ?? "?"} files`}</StatusIndicator>) },
          { id: "bytes", header: "Size", cell: (m) => fmtBytes(m.bytes) },
          { id: "time", header: "Last modified", cell: (m) => fmtTime(m.last_modified) },
          { id: "path", header: "Path", cell: (m) => <Box variant="code">{m.path}</Box> },
        ]}
      />
      {open && <DownloadModal cluster={cluster} region={region} onClose={() => setOpen(false)} />}
    </>
  );
}

function replicasText(ep: Endpoint): string {
  return ep.ready_replicas === null || ep.ready_replicas === undefined ? `${ep.replicas} asked` : `${ep.ready_replicas} of ${ep.replicas} ready`;
}

export default function EndpointsPage({ region, name }: { region: string; name: string }) {
  const cluster = useAsync(() => api.cluster(name, region), [name, region]);
  const list = useAsync(() => api.endpoints(name, region), [name, region]);
  const pools = useAsync(() => api.pools(name, region), [name, region]);
  const models = useAsync(() => api.models(name, region), [name, region]);
  const [modal, setModal] = useState<null | "deploy" | { scale: Endpoint } | { del: Endpoint }>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const reload = () => { list.reload(); pools.reload(); models.reload(); };
  useLiveEvents((ev) => {
    const t = ev.data?.target;
    if ((t && t.cluster === name) || ev.data?.cluster === name) {
      clearTimeout(timer.current);
      timer.current = setTimeout(reload, 300);
    }
  });
  const items = list.data?.items ?? [];
  // Status is read live from the cluster: poll while something is still moving.
  const moving = items.some((x) => !SETTLED.has(x.status));
  const reloadList = useRef(list.reload);
  reloadList.current = list.reload;
  useEffect(() => {
    if (!moving) return;
    const t = setInterval(() => reloadList.current(), 3000);
    return () => clearInterval(t);
  }, [moving]);
  const groups = cluster.data?.instance_groups ?? [];
  const types = groupOptions(groups);
  const poolItems = pools.data?.items ?? [];
  return (
    <SpaceBetween size="l">
      <BreadcrumbGroup ariaLabel="Breadcrumbs" items={[{ text: "Clusters", href: href.clusters() }, { text: name, href: href.cluster(region, name) }, { text: "Endpoints", href: href.endpoints(region, name) }]} />
      <Header variant="h1" description={`Inference on ${name} (${region}): managed endpoints, self-managed vLLM/SGLang, model pools, models`}
        actions={<Button onClick={reload} iconName="refresh" ariaLabel="Refresh" />}>
        Endpoints
      </Header>
      <Table<Endpoint>
        header={
          <Header variant="h2" counter={`(${items.length})`} description="Status read from the cluster"
            actions={<Button variant="primary" onClick={() => setModal("deploy")} disabled={!cluster.data}>Deploy endpoint</Button>}>
            Inference endpoints
          </Header>
        }
        loading={list.loading && !list.data}
        items={items}
        trackBy="name"
        ariaLabels={{ tableLabel: "Inference endpoints" }}
        empty={<Box textAlign="center">{list.error ? list.error.message : "No endpoints yet"}</Box>}
        columnDefinitions={[
          { id: "name", header: "Name", cell: (x) => <Link href={href.endpoint(region, name, x.name)}>{x.name}</Link>, isRowHeader: true },
          { id: "mode", header: "Mode", cell: (x) => (x.mode === "managed" ? "Managed" : `Self-managed ${text(x.engine)}`) },
          { id: "model", header: "Model", cell: (x) => x.model },
          { id: "type", header: "Instance type", cell: (x) => `${x.instance_type}${x.gpus ? ` (${x.gpus} GPU)` : ""}` },
          { id: "replicas", header: "Replicas", cell: (x) => replicasText(x) },
          { id: "service", header: "Service", cell: (x) => `${x.service}${x.pool ? ` ${x.pool}` : ""} (${x.service_name})` },
          {
            id: "status", header: "Status", cell: (x) => (
              <span data-testid={`endpoint-${x.name}`} data-status={x.status}>
                <Status value={x.status} />
                {x.message && <Box variant="small" display="block">{x.message}</Box>}
              </span>
            ),
          },
          {
            id: "act", header: "Actions", cell: (x) => (
              <SpaceBetween direction="horizontal" size="xs">
                {x.operation_id && <Button variant="inline-link" href={href.operation(x.operation_id)}>Operation</Button>}
                <Button variant="inline-link" ariaLabel={`Scale ${x.name}`} onClick={() => setModal({ scale: x })}>Scale</Button>
                <Button variant="inline-link" ariaLabel={`Delete ${x.name}`} onClick={() => setModal({ del: x })}>Delete</Button>
              </SpaceBetween>
            ),
          },
        ]}
      />
      <TryIt cluster={name} region={region} endpoints={items} />
      <PoolsPanel cluster={name} region={region} types={types} pools={poolItems} endpoints={items} loading={pools.loading} error={pools.error} />
      <ModelsPanel cluster={name} region={region} models={models.data?.items ?? []} bucket={models.data?.bucket} loading={models.loading} error={models.error} />
      {modal === "deploy" && <DeployModal cluster={name} region={region} groups={groups} pools={poolItems} models={models.data?.items ?? []} onClose={() => setModal(null)} />}
      {modal && typeof modal === "object" && "scale" in modal && <ScaleModal cluster={name} region={region} ep={modal.scale} onClose={() => { setModal(null); reload(); }} />}
      {modal && typeof modal === "object" && "del" in modal && <DeleteEndpointModal cluster={name} region={region} ep={modal.del} onClose={() => setModal(null)} />}
    </SpaceBetween>
  );
}
