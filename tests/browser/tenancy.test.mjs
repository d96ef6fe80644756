// Tenancy and security in the browser (issue 24), on one sandbox GPU cluster with the training operator on. The tests
// run in order and share the namespace the first one creates:
// 1. An admin creates a namespace from the cluster page (a system name is refused at the field; the plan before the
//    final button; the progress on the cluster page itself), sees it listed, and submits a job into it, chosen from
//    the namespace select (which never offers kube-system).
// 2. An operator sees Create and Delete namespace disabled with the reason, and cannot choose a registered bucket in
//    Add storage (PodStart's own bucket, yes: mounted into the new namespace).
// 3. The deploy form refuses an internet-facing endpoint without source ranges at the field, as the user types; with
//    ranges and an API key Secret, the plan says who can reach it (the EXPOSURE warning), and the endpoint's page then
//    says a key is required (Try it still answers: PodStart sends the key). Only an admin is offered "Public".
// 4. An admin deletes the namespace: its plan first says the volume mounted there must go first (removed from the
//    Storage panel), then what goes with it; the name is typed to confirm, the progress shows on the cluster page, and
//    the namespace is gone.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { addonsActive, assertCleanText, checkPage, createCluster, flashOf, flashStatus, launch, mutations, newPage, shot, signIn, startSandbox, viewOperationFromFlash } from "./lib.mjs";

const REGION = "us-west-2";
const CLUSTER = "br-tenancy";
const NS = "team-a";
const JOB = "ns-train";
const EP = "guarded";
const KEY_SECRET = "chat-key";
const KEY_VALUE = "k-7f3a-browser"; // never on any screen

let sb;
let browser;

before(async () => {
  sb = await startSandbox({ timeScale: Number(process.env.PODSTART_TIME_SCALE ?? 1000) });
  browser = await launch();
  assert.ok(sb.tokens.operator, "the sandbox writes an operator token");
  await createCluster(sb, "browser-tenancy-setup", { name: CLUSTER, region: REGION,
    instance_groups: [{ name: "gpu", instance_type: "ml.g5.8xlarge", instance_count: 2, availability_zone: "us-west-2a" }] });
  await addonsActive(sb, REGION, CLUSTER, ["amazon-sagemaker-hyperpod-training-operator"]);
  // Setup, not the path under test: the API key Secret an operator wrote in default (values are write-only).
  const r = await sb.api(`/v1/clusters/${CLUSTER}/secrets?region=${REGION}`, { method: "POST", as: sb.tokens.operator,
    body: { name: KEY_SECRET, data: { api_key: KEY_VALUE } } });
  assert.equal(r.status, 201, JSON.stringify(r.json));
});

after(async () => {
  await browser?.close();
  await sb?.stop();
});

const cluster = `#/clusters/${REGION}/${CLUSTER}`;
const detail = `${cluster}/namespaces`;
const go = (page, hash) => page.evaluate((h) => (window.location.hash = h), hash);
const namespaces = async () => (await sb.api(`/v1/clusters/${CLUSTER}/namespaces?region=${REGION}`)).json.items.map((n) => n.name);

/** The error text under a field is the one that describes its control (aria-describedby), not just somewhere. */
async function errorDescribes(page, control, message) {
  const shown = page.getByText(message, { exact: false }).first();
  await shown.waitFor();
  const id = await shown.evaluate((el) => el.closest("[id]")?.id);
  const describedBy = (await control.getAttribute("aria-describedby")) ?? "";
  assert.ok(id && describedBy.split(" ").includes(id), `the error (${id}) describes the field (${describedBy})`);
}

/** The text of what describes a control (aria-describedby): where a disabled button says why. */
async function describedBy(page, control) {
  const ids = ((await control.getAttribute("aria-describedby")) ?? "").split(" ").filter(Boolean);
  const texts = [];
  for (const id of ids) texts.push((await page.locator(`[id="${id}"]`).textContent())?.trim());
  return texts.filter(Boolean).join(" ");
}

/** The options a Cloudscape select offers once opened: [{ name, disabled }]. */
async function optionsOf(dialog, trigger, loaded) {
  await trigger.click();
  const options = dialog.getByRole("option");
  await (loaded ? dialog.getByRole("option", { name: loaded }) : options).first().waitFor(); // the list has answered
  const out = [];
  for (const o of await options.all()) out.push({ name: (await o.innerText()).replace(/\s+/g, " ").trim(), disabled: (await o.getAttribute("aria-disabled")) === "true" });
  return out;
}

test("an admin creates a namespace from the cluster page, sees it listed, and submits a job into it", async () => {
  const { page, problems } = await newPage(browser);
  const since = mutations.length;
  await signIn(page, sb);
  await go(page, detail);
  const table = page.getByRole("table", { name: "Namespaces" });
  await table.locator('[data-testid="namespace-default"][data-status="Active"]').waitFor();
  const defaultRow = table.getByRole("row").filter({ has: page.getByRole("rowheader", { name: /^default/ }) });
  assert.match(await defaultRow.innerText(), /default[\s\S]*podstart-data \(\/data\)[\s\S]*PodStart may write job Secrets/);
  assert.ok(await defaultRow.getByRole("button", { name: "Delete namespace default" }).isDisabled(), "default is never deleted");

  await checkPage(page, "cluster-namespaces-tab");
  // A system namespace's name: the plan says why, Create stays disabled, and back on the form the reason is on the
  // Name field.
  await page.getByRole("button", { name: "Create namespace" }).click();
  const dialog = page.getByRole("dialog");
  const nameBox = dialog.getByRole("textbox", { name: "Name" });
  await nameBox.fill("kube-system");
  await dialog.getByRole("button", { name: "Review" }).click();
  await dialog.getByTestId("plan-error").filter({ hasText: /kube-system is a system namespace/ }).waitFor();
  assert.ok(await dialog.getByRole("button", { name: "Create namespace" }).isDisabled(), "Create waits for a plan that is not refused");
  await dialog.getByRole("button", { name: "Back" }).click();
  await errorDescribes(page, nameBox, "kube-system is a system namespace");
  await shot(page, "tenancy-namespace-refused");
  problems.length = 0; // the refused plan's 422 is expected
  assert.deepEqual(await namespaces(), ["default"], "a refusal changes nothing");

  // A good name: the plan (the Namespace, its Secrets Role, its data volume), then the progress, here.
  await nameBox.fill(NS);
  await dialog.getByRole("button", { name: "Review" }).click();
  await dialog.getByTestId("plan-changes").waitFor();
  await dialog.getByRole("button", { name: /^What will change/ }).click();
  const planned = await dialog.getByTestId("plan-change-list").innerText();
  assert.match(planned, new RegExp(`create Kubernetes Namespace ${NS}`), planned);
  assert.match(planned, new RegExp(`create Kubernetes Role ${NS}/podstart-api-secrets`), planned);
  assert.match(planned, new RegExp(`create Kubernetes PersistentVolumeClaim ${NS}/podstart-data`), planned);
  assert.deepEqual(await namespaces(), ["default"], "the plan created nothing");
  await dialog.getByRole("button", { name: "Create namespace" }).click();
  await dialog.locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });
  assert.ok(page.url().endsWith(detail), `still on the cluster page: ${page.url()}`);
  // the flash, with the operation's link, says it succeeded
  await flashStatus(page, await flashOf(page, "namespace.create"), "SUCCEEDED");
  await assertCleanText(page, "namespace created");
  await dialog.getByRole("button", { name: "Close" }).first().click();
  await table.locator(`[data-testid="namespace-${NS}"][data-status="Active"]`).waitFor();
  assert.match(await table.getByRole("row").filter({ has: page.getByRole("rowheader", { name: NS }) }).innerText(), /podstart-data \(\/data\)/);
  assert.deepEqual(await namespaces(), ["default", NS]);
  await shot(page, "tenancy-namespace-listed");

  // Submit a job into it: the namespace is chosen from PodStart's, never typed (kube-system is not offered).
  await page.getByRole("tab", { name: "Jobs", exact: true }).click();
  await page.getByRole("button", { name: "Submit job" }).click();
  const submit = page.getByRole("dialog");
  await submit.getByRole("textbox", { name: "Parameter epochs" }).waitFor();
  await submit.getByRole("textbox", { name: "Job name" }).fill(JOB);
  assert.equal(await submit.getByRole("textbox", { name: "Namespace" }).count(), 0, "no free text box for the namespace");
  const offered = await optionsOf(submit, submit.getByRole("button", { name: /^Namespace/ }), NS);
  assert.deepEqual(offered.map((o) => o.name.split(" ")[0]), ["default", NS], JSON.stringify(offered));
  await submit.getByRole("option", { name: NS }).click();
  await submit.getByRole("button", { name: "Review" }).click();
  assert.match(await submit.getByText(/namespace team-a/).first().innerText(), new RegExp(`${JOB}: .*namespace ${NS}`));
  await submit.getByTestId("plan-changes").waitFor();
  await submit.getByRole("button", { name: "Submit job" }).click();
  await viewOperationFromFlash(page, "job.submit");
  await page.locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });
  const job = await sb.api(`/v1/clusters/${CLUSTER}/jobs/${JOB}?region=${REGION}&namespace=${NS}`);
  assert.equal(job.status, 200, JSON.stringify(job.json));
  assert.equal(job.json.namespace, NS);

  const mine = mutations.slice(since);
  // the refused kube-system was never sent (its plan said no): the namespace, then the job
  assert.deepEqual(mine.map((m) => `${m.method} ${m.path}`), [
    `POST /v1/clusters/${CLUSTER}/namespaces`, `POST /v1/clusters/${CLUSTER}/jobs`]);
  for (const m of mine) assert.ok(m.key && m.key.length >= 16, `${m.method} ${m.path} without an Idempotency-Key`);
  assert.deepEqual(problems, []);
});

test("an operator cannot create or delete a namespace, nor choose a registered bucket; PodStart's bucket, yes", async () => {
  const { page, problems } = await newPage(browser);
  const since = mutations.length;
  await signIn(page, sb, sb.tokens.operator);
  await page.getByTestId("identity").filter({ hasText: "operator" }).waitFor();
  await go(page, detail);
  const table = page.getByRole("table", { name: "Namespaces" });
  await table.locator(`[data-testid="namespace-${NS}"]`).waitFor();
  const create = page.getByRole("button", { name: "Create namespace" });
  assert.ok(await create.isDisabled(), "Create namespace is an admin's");
  // the reason: its accessible description, and the tooltip a pointer on it shows
  assert.equal(await describedBy(page, create), "Only an admin can create namespaces (you are operator).");
  await create.hover();
  await page.getByText("Only an admin can create namespaces (you are operator).").filter({ visible: true }).waitFor();
  const del = table.getByRole("button", { name: `Delete namespace ${NS}` });
  assert.ok(await del.isDisabled(), "Delete namespace is an admin's");
  assert.equal(await describedBy(page, del), "Only an admin can delete namespaces (you are operator).");
  await shot(page, "tenancy-operator-namespaces");

  await go(page, `${cluster}/storage`);
  await page.getByRole("button", { name: "Add storage" }).click();
  const dialog = page.getByRole("dialog");
  assert.equal(await dialog.getByRole("textbox", { name: "Bucket" }).count(), 0, "no free text box for the bucket");
  const buckets = await optionsOf(dialog, dialog.getByRole("button", { name: /^Bucket/ }), /^team-datasets-/);
  const own = buckets.find((b) => b.name.startsWith("podstart-data-"));
  const team = buckets.find((b) => b.name.startsWith("team-datasets-"));
  assert.ok(own && !own.disabled && /PodStart's/.test(own.name), JSON.stringify(buckets));
  assert.ok(team && team.disabled && /registered — admin/.test(team.name), JSON.stringify(buckets));
  assert.ok(!buckets.some((b) => b.name.startsWith("other-team-private-")), "a bucket nobody registered is not offered");
  await dialog.getByRole("option", { name: /^team-datasets-/ }).click({ force: true }); // disabled: nothing happens
  assert.match(await dialog.getByRole("button", { name: /^Bucket/ }).innerText(), /podstart-data-/);
  await shot(page, "tenancy-operator-buckets");
  await page.keyboard.press("Escape");

  // PodStart's own bucket, mounted (a prefix of it) into the new namespace, chosen from the select.
  await dialog.getByRole("textbox", { name: "Prefix" }).fill("datasets/");
  await dialog.getByRole("textbox", { name: "Volume name" }).fill("datasets");
  const spaces = await optionsOf(dialog, dialog.getByRole("button", { name: /^Namespace/ }), NS);
  assert.deepEqual(spaces.map((o) => o.name.split(" ")[0]), ["default", NS], JSON.stringify(spaces));
  await dialog.getByRole("option", { name: NS }).click();
  await dialog.getByRole("button", { name: "Add storage" }).click();
  await flashStatus(page, await flashOf(page, "storage.add"), "SUCCEEDED", 60_000);
  await page.locator('[data-testid="pvc-datasets"]', { hasText: `Bound (datasets in ${NS})` }).waitFor({ timeout: 30_000 });

  const mine = mutations.slice(since);
  assert.deepEqual(mine.map((m) => `${m.method} ${m.path}`), [`POST /v1/clusters/${CLUSTER}/storage`]);
  assert.deepEqual(problems, []);
});

test("the deploy form refuses an internet-facing endpoint without source ranges, and its plan shows the exposure", async () => {
  const { page, problems } = await newPage(browser);
  const since = mutations.length;
  await signIn(page, sb, sb.tokens.operator);
  await go(page, `${cluster}/endpoints`);
  await page.getByRole("table", { name: "Inference endpoints" }).waitFor();
  await page.getByRole("button", { name: "Deploy endpoint" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByText(/ml\.g5\.8xlarge \(group gpu: /).waitFor();
  await dialog.getByRole("textbox", { name: "Endpoint name" }).fill(EP);
  await dialog.getByRole("textbox", { name: "Model path" }).fill("/data/models/Qwen/Qwen3-0.6B/main/");
  await dialog.getByRole("button", { name: /^Service/ }).click();
  await dialog.getByRole("option", { name: "External (Network Load Balancer)" }).click();
  await dialog.getByText("Internet-facing", { exact: true }).click();
  assert.equal(await dialog.getByText("Public (anyone on the internet)").count(), 0, "only an admin may open it to everyone");

  // As the user types: none, then everyone, are refused at the field, and Review waits.
  const ranges = dialog.getByRole("textbox", { name: "Allowed source ranges" });
  const review = dialog.getByRole("button", { name: "Review" });
  await errorDescribes(page, ranges, "An internet-facing endpoint names the CIDRs allowed to reach it");
  assert.ok(await review.isDisabled(), "no review of an endpoint open to the internet by accident");
  await ranges.fill("0.0.0.0/0");
  await errorDescribes(page, ranges, "0.0.0.0/0 is everyone on the internet");
  assert.ok(await review.isDisabled());
  await ranges.fill("203.0.113.7/24");
  await errorDescribes(page, ranges, "203.0.113.7/24 is not a CIDR block");
  await shot(page, "tenancy-exposure-refused");
  await ranges.fill("203.0.113.0/24");
  await dialog.getByText("An internet-facing endpoint names the CIDRs").waitFor({ state: "detached" });
  assert.ok(!(await review.isDisabled()));

  // The API key: a Secret PodStart wrote, chosen by name; the help says how callers send it.
  await dialog.getByText("Authorization: Bearer <key>", { exact: false }).first().waitFor();
  await dialog.getByRole("button", { name: /^API key Secret/ }).click();
  await dialog.getByRole("option", { name: KEY_SECRET }).click();
  await review.click();
  const exposure = dialog.getByTestId("plan-exposure");
  await exposure.waitFor();
  assert.equal(await exposure.innerText(),
    `EXPOSURE: internet-facing, reachable from 203.0.113.0/24; callers must send the API key in Secret ${KEY_SECRET}`);
  // shown as a warning of its own, above the cost
  assert.ok(await dialog.locator('[data-testid="plan-exposure"]').evaluate((el) => !!el.closest('[class*="awsui_type-warning"], [class*="type-warning"]')),
    "the exposure is a warning alert");
  assert.match(await dialog.getByTestId("deploy-summary").innerText(), /internet-facing from 203\.0\.113\.0\/24, API key required/);
  await assertCleanText(page, "deploy plan with exposure", [KEY_VALUE]);
  await shot(page, "tenancy-exposure-plan");
  await dialog.getByRole("button", { name: "Deploy" }).click();
  await viewOperationFromFlash(page, "endpoint.deploy");
  await page.locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });

  // Its page says who can reach it and that a key is required (never the key).
  await go(page, `${cluster}/endpoints/${EP}`);
  await page.getByTestId("endpoint-reach").filter({ hasText: "Internet-facing, from 203.0.113.0/24" }).waitFor();
  assert.match(await page.getByTestId("endpoint-api-key").innerText(), /^Required: callers send Authorization: Bearer <key> or X-Api-Key/);
  // Try it goes through PodStart, which sends the key to the endpoint's gate: the user never handles it.
  await page.locator('[data-testid="endpoint-status"][data-status="READY"]').waitFor({ timeout: 60_000 });
  await page.getByRole("textbox", { name: "Message" }).fill("who may ask?");
  await page.getByRole("button", { name: "Send" }).click();
  assert.match(await page.getByTestId("answer").innerText(), new RegExp(`^${EP} answered[\\s\\S]*Hello from \\S+`));
  await assertCleanText(page, "endpoint page", [KEY_VALUE]);
  await shot(page, "tenancy-endpoint-keyed");
  const mine = mutations.slice(since);
  assert.deepEqual(mine.map((m) => `${m.method} ${m.path}`), [`POST /v1/clusters/${CLUSTER}/endpoints`, `POST /v1/clusters/${CLUSTER}/endpoints/${EP}/invoke`]);
  assert.deepEqual(problems, []);

  // An admin is offered "Public": then the source ranges are optional, and the plan says anyone can reach it.
  const admin = await newPage(browser);
  await signIn(admin.page, sb);
  await go(admin.page, `${cluster}/endpoints`);
  await admin.page.getByRole("button", { name: "Deploy endpoint" }).click();
  const d2 = admin.page.getByRole("dialog");
  await d2.getByRole("textbox", { name: "Endpoint name" }).fill("open-ep");
  await d2.getByRole("textbox", { name: "Model path" }).fill("/data/models/Qwen/Qwen3-0.6B/main/");
  await d2.getByRole("button", { name: /^Service/ }).click();
  await d2.getByRole("option", { name: "External (Network Load Balancer)" }).click();
  await d2.getByText("Internet-facing", { exact: true }).click();
  await d2.getByText("Public (anyone on the internet)", { exact: true }).click();
  await d2.getByRole("button", { name: "Review" }).click();
  assert.match(await d2.getByTestId("plan-exposure").innerText(), /^EXPOSURE: public: anyone on the internet can reach this endpoint's Network Load Balancer; no API key/);
  await admin.context.close();
});

test("an admin deletes the namespace after reading what goes with it and typing its name", async () => {
  const { page, problems } = await newPage(browser);
  const since = mutations.length;
  await signIn(page, sb);
  await go(page, detail);
  const table = page.getByRole("table", { name: "Namespaces" });
  // The volume the operator mounted there comes first: the plan says so (409), before anything is typed.
  await table.getByRole("button", { name: `Delete namespace ${NS}` }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByTestId("plan-error").filter({ hasText: `namespace ${NS} holds volumes PodStart added (datasets): remove them first` }).waitFor();
  problems.length = 0; // the refused plan's 409 is expected
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await go(page, `${cluster}/storage`);
  await page.getByRole("button", { name: "Remove datasets" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Remove" }).click();
  await flashStatus(page, await flashOf(page, "storage.remove"), "SUCCEEDED", 60_000);
  await go(page, detail);

  await table.getByRole("button", { name: `Delete namespace ${NS}` }).click();
  await dialog.getByTestId("plan-changes").waitFor();
  await dialog.getByRole("button", { name: /^What will change/ }).click();
  const planned = await dialog.getByTestId("plan-change-list").innerText();
  assert.match(planned, new RegExp(`delete Kubernetes Namespace ${NS}`), planned);
  assert.match(planned, new RegExp(`delete Kubernetes HyperPodPyTorchJob ${NS}/${JOB}`), planned);
  assert.match(await dialog.getByTestId("plan-warnings").innerText(), new RegExp(`deleting namespace ${NS} deletes everything in it: 1 job stop`));
  const confirm = dialog.getByRole("button", { name: "Delete namespace" });
  assert.ok(await confirm.isDisabled(), "not before the name is typed");
  await dialog.getByRole("textbox", { name: `Type ${NS} to confirm` }).fill("team-");
  assert.ok(await confirm.isDisabled());
  await dialog.getByRole("textbox", { name: `Type ${NS} to confirm` }).fill(NS);
  await shot(page, "tenancy-namespace-delete");
  await confirm.click();
  await page.getByRole("dialog").locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });
  assert.ok(page.url().endsWith(detail), `still on the cluster page: ${page.url()}`);
  await page.getByRole("dialog").getByRole("button", { name: "Close" }).first().click();
  await table.locator(`[data-testid="namespace-${NS}"]`).waitFor({ state: "detached" });
  assert.deepEqual(await namespaces(), ["default"]);
  const job = await sb.api(`/v1/clusters/${CLUSTER}/jobs/${JOB}?region=${REGION}&namespace=${NS}`);
  assert.notEqual(job.status, 200, "the job went with its namespace");
  await assertCleanText(page, "namespace deleted");

  const mine = mutations.slice(since);
  assert.deepEqual(mine.map((m) => `${m.method} ${m.path}`), [
    `DELETE /v1/clusters/${CLUSTER}/storage/datasets`, `DELETE /v1/clusters/${CLUSTER}/namespaces/${NS}`]);
  for (const m of mine) assert.ok(m.key && m.key.length >= 16);
  assert.deepEqual(problems, []);
});
