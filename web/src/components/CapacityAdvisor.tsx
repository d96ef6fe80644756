// The capacity advisor panel: "where can N GPUs run?" answered with ranked options (POST /v1/capacity/advice),
// each one usable in the form around it (the create wizard, or the cluster's Add instance group), the near misses
// with why, and the facts AWS would not give. A training plan still to buy opens the purchase (admin): its plan
// shows the upfront fee, and the buy button needs the fee confirmed.
import { useMemo, useState } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Checkbox from "@cloudscape-design/components/checkbox";
import ColumnLayout from "@cloudscape-design/components/column-layout";
import ExpandableSection from "@cloudscape-design/components/expandable-section";
import FormField from "@cloudscape-design/components/form-field";
import Input from "@cloudscape-design/components/input";
import Modal from "@cloudscape-design/components/modal";
import Multiselect from "@cloudscape-design/components/multiselect";
import Select from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Table from "@cloudscape-design/components/table";
import { ApiError, api } from "../api/client";
import type { Advice, AdviceOption, AdviceRequest, TrainingPlanPurchase } from "../api/types";
import { useMutation } from "../lib/mutation";
import { mapProblem } from "../lib/problems";
import { cached, useAsync } from "../lib/useAsync";
import { PlanPanel, usd } from "./PlanPanel";

const MODELS = ["any", "h100", "h200", "b200", "a100", "l40s", "l4", "a10g", "trainium", "trainium2", "inferentia2"];
const CAPACITY = [
  { value: "on-demand", label: "On-demand" },
  { value: "spot", label: "Spot" },
  { value: "training-plan", label: "Training plan" },
];
const FIELDS = ["gpus", "gpu_model", "hours", "regions", "capacity_types", "max_hourly_usd", "same_zone", "cluster"];

function when(o: AdviceOption): string {
  if (o.starts_now) return "Now";
  const d = new Date(o.earliest_start);
  return `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

function cost(o: AdviceOption): string {
  const p = o.price;
  if (p.already_paid) return "Already paid";
  if (p.hourly_usd === null || p.hourly_usd === undefined) return "Price unknown";
  const total = p.total_usd !== null && p.total_usd !== undefined ? `, ${usd(p.total_usd)} in all` : "";
  return `${usd(p.hourly_usd)}/h${total}${p.upfront_usd ? " (upfront)" : ""}`;
}

export function optionLabel(o: AdviceOption): string {
  const zones = o.groups.map((g) => `${g.availability_zone} × ${g.instance_count}`).join(", ");
  return `${o.instance_count} × ${o.instance_type} ${o.capacity_type} in ${zones}`;
}

/** The purchase of an option's training plan: the dry run's plan (with the upfront fee), then the confirmed buy. */
function PurchaseModal({ option, onClose }: { option: AdviceOption; onClose: () => void }) {
  const need = (option.requires ?? [])[0];
  const [confirmed, setConfirmed] = useState(false);
  const body = need.body as unknown as TrainingPlanPurchase;
  const buy = useMutation((b: TrainingPlanPurchase, key: string) => api.purchaseTrainingPlan(b, key), {
    fields: ["confirm_upfront_fee", "name", "offering"],
  });
  const fee = `${need.upfront_fee} ${need.currency}`;
  return (
    <Modal
      visible
      size="large"
      onDismiss={onClose}
      header={`Buy training plan ${body.name}`}
      footer={
        <Box float="right">
          <SpaceBetween direction="horizontal" size="xs">
            <Button variant="link" onClick={onClose}>Cancel</Button>
            <Button variant="primary" disabled={!confirmed} loading={buy.busy}
              onClick={() => void buy.run({ ...body, confirm_upfront_fee: need.upfront_fee })}>
              Buy for {fee}
            </Button>
          </SpaceBetween>
        </Box>
      }
    >
      <SpaceBetween size="l">
        <Box>{need.detail}</Box>
        <PlanPanel load={(signal) => api.planPurchaseTrainingPlan(body, signal)} deps={[JSON.stringify(body)]} />
        {(buy.errors.length > 0 || Object.keys(buy.fieldErrors).length > 0) && (
          <Alert type="error" header="The training plan was not bought">
            {[...buy.errors, ...Object.values(buy.fieldErrors)].join("; ")}
          </Alert>
        )}
        <Checkbox checked={confirmed} onChange={({ detail }) => setConfirmed(detail.checked)}>
          I confirm the upfront fee of {fee}: paid now, not refundable (admins only).
        </Checkbox>
      </SpaceBetween>
    </Modal>
  );
}

/**
 * `onUse(option)` fills the surrounding form from the option's request. With `cluster`, the advice is for adding
 * groups to that cluster (its region); else for a new cluster in the chosen regions (default `region`).
 */
export function CapacityAdvisor({ region, cluster, onUse, useLabel = "Use this option" }: {
  region: string;
  cluster?: string;
  onUse: (option: AdviceOption) => void;
  useLabel?: string;
}) {
  const regions = useAsync(() => cached("regions", () => api.regions()), [], !cluster);
  const [gpus, setGpus] = useState("8");
  const [model, setModel] = useState("any");
  const [hours, setHours] = useState("");
  const [maxUsd, setMaxUsd] = useState("");
  const [capacity, setCapacity] = useState<string[]>(CAPACITY.map((c) => c.value));
  const [sameZone, setSameZone] = useState(true);
  const [picked, setPicked] = useState<string[]>([]);
  const [advice, setAdvice] = useState<Advice | null>(null);
  const [busy, setBusy] = useState(false);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<string[]>([]);
  const [buying, setBuying] = useState<AdviceOption | null>(null);
  const chosen = picked.length ? picked : region ? [region] : [];
  const regionOptions = useMemo(() => (regions.data?.items ?? []).map((r) => ({ value: r.name, label: r.name })), [regions.data]);

  const ask = async () => {
    const num = (s: string) => (s.trim() !== "" && Number.isFinite(Number(s)) ? Number(s) : (s as unknown as number));
    const body: AdviceRequest = { gpus: num(gpus), same_zone: sameZone, capacity_types: capacity as AdviceRequest["capacity_types"], max_options: 8 };
    if (model !== "any") body.gpu_model = model as AdviceRequest["gpu_model"];
    if (hours.trim()) body.hours = num(hours);
    if (maxUsd.trim()) body.max_hourly_usd = num(maxUsd);
    if (cluster) body.cluster = cluster;
    else if (chosen.length) body.regions = chosen;
    setBusy(true);
    setErrors({});
    setFailure([]);
    try {
      setAdvice(await api.advise(body));
    } catch (e) {
      setAdvice(null);
      if (e instanceof ApiError) {
        const mapped = mapProblem(e.problem, FIELDS);
        setErrors(mapped.fields);
        setFailure(mapped.unclaimed);
      } else setFailure([(e as Error).message]);
    } finally {
      setBusy(false);
    }
  };

  const options = advice?.options ?? [];
  const misses = advice?.near_misses ?? [];
  return (
    <SpaceBetween size="l">
      <ColumnLayout columns={cluster ? 3 : 4}>
        <FormField label="GPUs" description="Accelerators in total" errorText={errors.gpus}>
          <Input type="number" value={gpus} onChange={({ detail }) => setGpus(detail.value)} ariaLabel="GPUs" />
        </FormField>
        <FormField label="GPU model" errorText={errors.gpu_model}>
          <Select selectedOption={{ value: model, label: model }} onChange={({ detail }) => setModel(detail.selectedOption.value ?? "any")}
            options={MODELS.map((m) => ({ value: m, label: m }))} ariaLabel="GPU model" data-testid="gpu-model-select" />
        </FormField>
        <FormField label="Hours" description="Optional: prices the whole run, sizes training plans" errorText={errors.hours}>
          <Input type="number" value={hours} onChange={({ detail }) => setHours(detail.value)} ariaLabel="Hours" placeholder="e.g. 72" />
        </FormField>
        {!cluster && (
          <FormField label="Regions" description={`Default: ${region || "the deployment's"}`} errorText={errors.regions}>
            <Multiselect selectedOptions={chosen.map((r) => ({ value: r, label: r }))} options={regionOptions}
              onChange={({ detail }) => setPicked(detail.selectedOptions.map((o) => o.value ?? "").filter(Boolean))}
              placeholder="Regions" ariaLabel="Regions" statusType={regions.loading ? "loading" : "finished"} />
          </FormField>
        )}
        <FormField label="Capacity types" errorText={errors.capacity_types}>
          <Multiselect selectedOptions={CAPACITY.filter((c) => capacity.includes(c.value))} options={CAPACITY}
            onChange={({ detail }) => setCapacity(detail.selectedOptions.map((o) => o.value ?? "").filter(Boolean))} ariaLabel="Capacity types" />
        </FormField>
        <FormField label="Max cost per hour (USD)" description="Optional, all instances" errorText={errors.max_hourly_usd}>
          <Input type="number" value={maxUsd} onChange={({ detail }) => setMaxUsd(detail.value)} ariaLabel="Max cost per hour" />
        </FormField>
        <FormField label="Placement" errorText={errors.same_zone}>
          <Checkbox checked={sameZone} onChange={({ detail }) => setSameZone(detail.checked)}>One zone (distributed training)</Checkbox>
        </FormField>
      </ColumnLayout>
      <Button onClick={() => void ask()} loading={busy} data-testid="advise">Get advice</Button>
      {failure.length > 0 && <Alert type="error" header="No advice">{failure.join("; ")}</Alert>}
      {advice && (
        <SpaceBetween size="m">
          <Box data-testid="advice-summary">{advice.summary}</Box>
          {(advice.unavailable ?? []).length > 0 && (
            <Alert type="warning" header="Some facts were not available">{(advice.unavailable ?? []).join("; ")}</Alert>
          )}
          <Table<AdviceOption>
            items={options}
            trackBy="rank"
            variant="embedded"
            wrapLines
            ariaLabels={{ tableLabel: "Capacity options" }}
            empty={<Box textAlign="center">Nothing fits: see why below.</Box>}
            columnDefinitions={[
              { id: "rank", header: "#", cell: (o) => o.rank },
              { id: "where", header: "Where", cell: (o) => `${o.groups.map((g) => `${g.availability_zone} (${g.availability_zone_id})`).join(", ")}` },
              { id: "what", header: "Instances", cell: (o) => <span>{o.instance_count} × {o.instance_type}<Box variant="small" display="block">{o.accelerators ?? ""}{o.efa ? ", EFA" : ""}{o.nvlink ? ", NVLink" : ""}</Box></span> },
              {
                id: "cap",
                header: "Capacity",
                cell: (o) => (
                  <span>
                    {o.capacity_type}{o.spot_score ? ` (spot score ${o.spot_score}/10)` : ""}
                    <Box variant="small" display="block">{o.quota ? `quota left after: ${o.quota.headroom_after} of ${o.quota.limit}` : "no quota used"}</Box>
                  </span>
                ),
              },
              { id: "start", header: "Starts", cell: when },
              { id: "cost", header: "Cost", cell: cost },
              {
                id: "act",
                header: "Action",
                cell: (o) => {
                  const adds = o.add_instance_groups ?? [];
                  const needs = o.requires ?? [];
                  const many = (o.create_cluster?.body?.instance_groups as unknown[] | undefined)?.length ?? adds.length;
                  const oneGroup = cluster ? adds.length === 1 : many === 1;
                  return (
                    <SpaceBetween direction="horizontal" size="xs">
                      {needs.length > 0 && (
                        <Button variant="inline-link" ariaLabel={`Buy the training plan of option ${o.rank}`} onClick={() => setBuying(o)}>Buy training plan</Button>
                      )}
                      {oneGroup ? (
                        <Button variant="inline-link" ariaLabel={`${useLabel} ${o.rank}`} disabled={needs.length > 0} onClick={() => onUse(o)}>{useLabel}</Button>
                      ) : (
                        <Box variant="small">{`${o.groups.length} groups in ${o.groups.length} zones: create with the API or an agent (the request is in the answer)`}</Box>
                      )}
                    </SpaceBetween>
                  );
                },
              },
            ]}
          />
          {misses.length > 0 && (
            <ExpandableSection headerText={`Why not the others (${misses.length + (advice.near_misses_more ?? 0)})`} data-testid="near-misses">
              <ul className="ps-plain-list">
                {misses.map((m, i) => (
                  <li key={i}>
                    <b>{m.region} {m.instance_type ?? ""} {(m.capacity_types ?? []).join("/") || "any capacity"}</b>: {m.detail}
                    {m.would_fit_with ? ` (fits with: ${m.would_fit_with})` : ""}
                  </li>
                ))}
              </ul>
            </ExpandableSection>
          )}
          <Box variant="small" color="text-body-secondary">Ranking: {advice.ranking}</Box>
        </SpaceBetween>
      )}
      {buying && <PurchaseModal option={buying} onClose={() => setBuying(null)} />}
    </SpaceBetween>
  );
}
