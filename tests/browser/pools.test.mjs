// The Endpoints page's Model pools on a sandbox cluster with a GPU group of 3 single-GPU nodes: a pool of 3 warm vLLM workers is
// created from the form (plan reviewed, progress on the operation page) and shows every worker unassigned; an endpoint is
// deployed on it with the "Model pool workers" service shape; 2 workers are assigned to it from the UI (the
// Workers-by-model cell changes, exactly 2 pods carry the endpoint's label, its Service selects them, Try it
// answers), then released (all unassigned again); every mutation carried an Idempotency-Key.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { assertCleanText, createCluster, launch, mutations, newPage, openEndpointsPage, settledValue, shot, signIn, startSandbox, viewOperationFromFlash } from "./lib.mjs";

const REGION = "us-west-2";
const CLUSTER = "br-pools";
const GPU_TYPE = "ml.g5.8xlarge"; // 1 GPU a node: the group has 3 nodes, one per worker
const POOL = "warm";
const EP = "pooled-a";
const MODEL_LABEL = "podstart.dev/model";

let sb;
let browser;

before(async () => {
  sb = await startSandbox({ timeScale: Number(process.env.PODSTART_TIME_SCALE ?? 1000) });
  browser = await launch();
  await createCluster(sb, "browser-pools-setup", { name: CLUSTER, region: REGION,
            instance_groups: [{ name: "gpu", instance_type: GPU_TYPE, instance_count: 3, availability_zone: "us-west-2a" }] });
});

after(async () => {
  await browser?.close();
  await sb?.stop();
});

/** GET on the cluster's embedded Kubernetes API (as kubectl would). */
async function kube(path) {
  const info = (await sb.api("/v1/sandbox")).json;
  const url = Object.entries(info.kubernetes).find(([name]) => name.includes(CLUSTER))?.[1];
  assert.ok(url, `no Kubernetes API for ${CLUSTER}: ${JSON.stringify(info.kubernetes)}`);
  const r = await fetch(`${url}${path}`, { headers: { Authorization: "Bearer sandbox" } });
  assert.equal(r.status, 200, `${path}: ${r.status}`);
  return r.json();
}

const podsLabelled = async (model) =>
  (await kube(`/api/v1/namespaces/default/pods?labelSelector=${encodeURIComponent(`podstart.dev/pool=${POOL},${MODEL_LABEL}=${model}`)}`)).items;

/** The action was accepted on the Endpoints tab (a flash follows it): its operation's page, to the end. */
async function succeeded(page, what) {
  await viewOperationFromFlash(page);
  await page.locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });
  await assertCleanText(page, what);
}

/** A review's "What will change" list, opened: one change a line. */
async function changesOf(dialog) {
  const counted = await dialog.getByTestId("plan-changes").innerText();
  const n = Number(/^(\d+) changes?$/.exec(counted)?.[1]);
  await dialog.getByRole("button", { name: `What will change (${n})` }).click();
  const list = await dialog.getByTestId("plan-change-list").innerText();
  assert.equal(list.trim().split("\n").length, n, list);
  return list;
}

async function openEndpoints(page) {
  await page.evaluate((h) => (window.location.hash = h), `#/clusters/${REGION}/${CLUSTER}/endpoints`);
  await page.getByRole("table", { name: "Model pools" }).waitFor();
}

test("create a model pool, deploy an endpoint on it, assign workers, chat, release them", async () => {
  const { page, problems } = await newPage(browser);
  const since = mutations.length;
  await openEndpointsPage(page, sb, REGION, CLUSTER);
  const pools = page.getByRole("table", { name: "Model pools" });
  await pools.getByText("None").waitFor();

  // 1. Create the pool: 3 warm workers of 1 GPU on the cluster's GPU group.
  await page.getByRole("button", { name: "Create pool" }).click();
  const create = page.getByRole("dialog");
  await create.getByRole("textbox", { name: "Pool name" }).fill(POOL);
  assert.equal(await settledValue(create.getByRole("textbox", { name: "Image" }), "vllm/vllm-openai:v0.10.1"), "vllm/vllm-openai:v0.10.1"); // pinned default
  await create.getByRole("button", { name: /Instance type/ }).click();
  await create.getByRole("option", { name: new RegExp(`^${GPU_TYPE.replace(/\./g, "\\.")}`) }).click();
  await create.getByRole("textbox", { name: "GPUs per worker" }).fill("1");
  await create.getByRole("textbox", { name: "Workers" }).fill("3");
  // The review: the workers' Deployment, and the capacity it takes (the group's nodes, already paid).
  await create.getByRole("button", { name: "Review" }).click();
  assert.equal(await create.getByTestId("pool-summary").innerText(),
    `${POOL}: 3 warm vllm workers × 1 GPU on ${GPU_TYPE}, image vllm/vllm-openai:v0.10.1`);
  const planned = await changesOf(create);
  assert.match(planned, /create Kubernetes Deployment \S*pool-warm/, planned);
  assert.match(planned, /create PodStart pool record warm/, planned);
  const costs = await create.getByRole("table", { name: "Cost lines" }).innerText();
  assert.match(costs, /ml\.g5\.8xlarge[\s\S]*already paid/, costs);
  assert.equal(await create.locator('[data-testid="plan-warnings"]').count(), 0, "3 workers of 1 GPU fit the 3 free GPUs");
  await assertCleanText(page, "pool plan");
  await shot(page, "pools-create-plan");
  await create.getByRole("button", { name: "Create pool" }).click();
  await succeeded(page, "pool.create operation");

  await openEndpoints(page);
  const cell = page.getByTestId(`pool-${POOL}`);
  await cell.getByText("unassigned: 3", { exact: true }).waitFor();
  const row = await pools.getByRole("row").filter({ has: page.getByRole("rowheader", { name: POOL, exact: true }) }).innerText();
  assert.match(row, new RegExp(`vllm[\\s\\S]*${GPU_TYPE.replace(/\./g, "\\.")} \\(1 GPU per worker\\)[\\s\\S]*3`), row);
  assert.equal((await podsLabelled("unassigned")).length, 3);

  // 2. An endpoint served by the pool's workers.
  await page.getByRole("button", { name: "Deploy endpoint" }).click();
  const deploy = page.getByRole("dialog");
  await deploy.getByRole("textbox", { name: "Endpoint name" }).fill(EP);
  await deploy.getByRole("textbox", { name: "Model path" }).fill("/data/models/Qwen/Qwen3-0.6B/main/");
  await deploy.getByRole("button", { name: /^Service/ }).click();
  await deploy.getByRole("option", { name: "Model pool workers" }).click();
  await deploy.getByRole("button", { name: /^Pool/ }).click();
  await deploy.getByRole("option", { name: `${POOL} (vllm, 3 workers)` }).click();
  // the pool's workers decide instance type and GPUs: the form asks for neither
  await deploy.getByTestId("pool-capacity").getByText(`workers of the pool ${POOL}`, { exact: false }).waitFor();
  assert.equal(await deploy.getByRole("textbox", { name: "Replicas" }).count(), 0);
  assert.equal(await deploy.getByRole("button", { name: /^Instance type/ }).count(), 0);
  await deploy.getByRole("button", { name: "Review" }).click();
  assert.match(await deploy.getByTestId("deploy-summary").innerText(), new RegExp(`service model_pool ${POOL}`));
  const list = await changesOf(deploy);
  assert.match(list, new RegExp(`create Kubernetes Service \\S*${EP}`), list);
  assert.doesNotMatch(list, /Kubernetes Deployment/, list); // the pool's workers serve it: no Deployment of its own
  await assertCleanText(page, "pool deploy plan");
  await deploy.getByRole("button", { name: "Deploy" }).click();
  await succeeded(page, "endpoint.deploy operation");

  // 3. Assign 2 of the 3 workers to the endpoint. A second tab stays on the Endpoints page meanwhile: its
  // Workers-by-model cell follows the assignment live, with no reload.
  const { page: watcher, problems: watcherProblems } = await newPage(browser);
  await signIn(watcher, sb);
  await openEndpoints(watcher);
  const watched = watcher.getByTestId(`pool-${POOL}`);
  await watched.getByText("unassigned: 3", { exact: true }).waitFor();
  await openEndpoints(page);
  await cell.getByText("unassigned: 3", { exact: true }).waitFor();
  // deployed on the pool but served by no worker yet: the table says so (not READY), and Try it does not offer it
  await page.locator(`[data-testid="endpoint-${EP}"][data-status="NO_WORKERS"]`).waitFor();
  await page.getByRole("button", { name: `Assign ${POOL} workers` }).click();
  const assign = page.getByRole("dialog");
  await assign.getByText("Now: unassigned: 3").waitFor();
  // the endpoint is picked from this pool's endpoints (the only one is chosen); no worker serves it yet
  await assign.getByRole("button", { name: /^Endpoint/ }).getByText(`${EP} (NO_WORKERS, 0 workers)`).waitFor();
  await assign.getByRole("textbox", { name: "Model path" }).fill("/data/models/Qwen/Qwen3-0.6B/main/");
  // More than the pool has: the review warns before anything moves; back to the form, then 2.
  await assign.getByRole("textbox", { name: "Workers" }).fill("4");
  await assign.getByRole("button", { name: "Review" }).click();
  await assign.getByTestId("plan-warnings").getByText(`pool ${POOL} has 3 unassigned workers; 4 asked`, { exact: false }).waitFor();
  await assign.getByRole("button", { name: "Back" }).click();
  await assign.getByRole("textbox", { name: "Workers" }).fill("2");
  await assign.getByRole("button", { name: "Review" }).click();
  assert.equal(await assign.getByTestId("assign-summary").innerText(),
    `2 of ${POOL}'s unassigned workers to ${EP}, model /data/models/Qwen/Qwen3-0.6B/main/`);
  const moves = (await changesOf(assign)).trim().split("\n");
  assert.equal(moves.length, 2, moves.join("\n"));
  for (const m of moves) assert.match(m, /^update Kubernetes Pod pool-warm-\S+ \(step labels\)$/, m);
  await assertCleanText(page, "assign plan");
  await assign.getByRole("button", { name: "Assign" }).click();
  await succeeded(page, "pool.assign operation");
  await watched.getByText(`${EP}: 2, unassigned: 1`).waitFor({ timeout: 10_000 });
  await openEndpoints(page);
  await cell.getByText(`${EP}: 2, unassigned: 1`).waitFor();
  await shot(page, "pools-assigned");

  const bound = await podsLabelled(EP);
  assert.deepEqual(bound.map((p) => `update Kubernetes Pod ${p.metadata.name} (step labels)`).sort(), [...moves].sort()); // the planned ones
  assert.equal((await podsLabelled("unassigned")).length, 1);
  const svc = await kube(`/api/v1/namespaces/default/services/${EP}`);
  assert.deepEqual(svc.spec.selector, { "podstart.dev/pool": POOL, [MODEL_LABEL]: EP });

  // Try it: the endpoint answers through its bound workers.
  await page.locator(`[data-testid="endpoint-${EP}"][data-status="READY"]`).waitFor();
  await page.getByRole("textbox", { name: "Message" }).fill("which model?");
  await page.getByRole("button", { name: "Send" }).click();
  const answer = await page.getByTestId("answer").innerText();
  assert.match(answer, /Qwen\/Qwen3-0\.6B/, answer);
  assert.doesNotMatch(answer, /which model\?/, answer); // a model's answer, not the prompt echoed back
  await assertCleanText(page, "endpoints page, workers assigned");

  // 4. Release: the workers go back to the pool.
  await page.getByRole("button", { name: `Release ${POOL} workers` }).click();
  const release = page.getByRole("dialog");
  await release.getByRole("button", { name: /^Endpoint/ }).getByText(`${EP} (2 workers)`).waitFor();
  const back = (await changesOf(release)).trim().split("\n");
  assert.deepEqual([...back].sort(), [...moves].sort(), "the same 2 workers return to the pool");
  await release.getByRole("button", { name: "Release" }).click();
  await succeeded(page, "pool.release operation");
  await watched.getByText("unassigned: 3", { exact: true }).waitFor({ timeout: 10_000 });
  await openEndpoints(page);
  await cell.getByText("unassigned: 3", { exact: true }).waitFor();
  // deployed on the pool but served by no worker yet: the table says so (not READY), and Try it does not offer it
  await page.locator(`[data-testid="endpoint-${EP}"][data-status="NO_WORKERS"]`).waitFor();
  assert.equal((await podsLabelled(EP)).length, 0);
  await assertCleanText(page, "endpoints page, workers released");
  await shot(page, "pools-released");

  const mine = mutations.slice(since);
  assert.deepEqual(mine.map((m) => `${m.method} ${m.path}`), [
    `POST /v1/clusters/${CLUSTER}/pools`,
    `POST /v1/clusters/${CLUSTER}/endpoints`,
    `POST /v1/clusters/${CLUSTER}/pools/${POOL}/assign`,
    `POST /v1/clusters/${CLUSTER}/endpoints/${EP}/invoke`,
    `POST /v1/clusters/${CLUSTER}/pools/${POOL}/release`,
  ]);
  for (const m of mine) assert.ok(m.key && m.key.length >= 16, `${m.method} ${m.path} without an Idempotency-Key`);
  assert.deepEqual(problems, []);
  assert.deepEqual(watcherProblems, []);
});
