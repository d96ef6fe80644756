// The Endpoints page on a sandbox cluster with a GPU group: an unpinned image is refused on its field,
// a self-managed vLLM endpoint is deployed from the form (progress on the operation page), shows READY
// live, answers a chat in "Try it", is scaled from its own page (status, objects), and is deleted; every
// mutation carried an Idempotency-Key.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { assertCleanText, clickRefused, createCluster, launch, mutations, newPage, openEndpointsPage, shot, startSandbox } from "./lib.mjs";

const REGION = "us-west-2";
const CLUSTER = "br-infer";
const EP = "chat-a";

let sb;
let browser;

before(async () => {
  sb = await startSandbox({ timeScale: Number(process.env.PODSTART_TIME_SCALE ?? 1000) });
  browser = await launch();
  await createCluster(sb, "browser-inference-setup", { name: CLUSTER, region: REGION,
            instance_groups: [{ name: "gpu", instance_type: "ml.g5.8xlarge", instance_count: 1, availability_zone: "us-west-2a" }] });
});

after(async () => {
  await browser?.close();
  await sb?.stop();
});

test("deploy a vLLM endpoint from the Endpoints page, see it ready, chat with it, delete it", async () => {
  const { page, problems } = await newPage(browser);
  const since = mutations.length;
  await openEndpointsPage(page, sb, REGION, CLUSTER);
  const endpoints = page.getByRole("table", { name: "Inference endpoints" });
  await endpoints.getByText("No endpoints yet").waitFor();

  await page.getByRole("button", { name: "Deploy endpoint" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByText(/ml\.g5\.8xlarge \(group gpu: /).waitFor(); // the cluster's GPU group, inspected first
  await dialog.getByRole("textbox", { name: "Endpoint name" }).fill(EP);
  await dialog.getByRole("textbox", { name: "Model path" }).fill("/data/models/Qwen/Qwen3-0.6B/main/");
  // Unpinned: the plan is refused, and Deploy shows why on the Image field; nothing starts.
  await dialog.getByRole("textbox", { name: "Image" }).fill("vllm/vllm-openai:latest");
  await dialog.getByRole("button", { name: "Review" }).click();
  await dialog.locator('[data-testid="plan-error"]').waitFor();
  await clickRefused(page, dialog.getByRole("button", { name: "Deploy" }));
  await dialog.getByText(/tag `latest` is not pinned/).first().waitFor();
  problems.length = 0; // the refused plan's and request's 422s are expected
  await dialog.getByRole("textbox", { name: "Image" }).fill("vllm/vllm-openai:v0.10.1");
  // The review: the Kubernetes objects the deploy creates, and the capacity line (the group's nodes, already paid).
  await dialog.getByRole("button", { name: "Review" }).click();
  const counted = await dialog.locator('[data-testid="plan-changes"]').innerText();
  const n = Number(/^(\d+) changes?$/.exec(counted)?.[1]);
  assert.ok(n >= 3, `a Deployment, a Service and the endpoint record at least: ${counted}`);
  await dialog.getByRole("button", { name: `What will change (${n})` }).click();
  const list = await dialog.locator('[data-testid="plan-change-list"]').innerText();
  assert.equal(list.trim().split("\n").length, n, list);
  assert.match(list, /create Kubernetes Deployment \S*chat-a/, list);
  assert.match(list, /create Kubernetes Service \S*chat-a/, list);
  const costs = await dialog.getByRole("table", { name: "Cost lines" }).innerText();
  assert.match(costs, /ml\.g5\.8xlarge[\s\S]*already paid/, costs);
  await assertCleanText(page, "deploy plan");
  await shot(page, "inference-plan");
  await dialog.getByRole("button", { name: "Deploy" }).click();
  await page.waitForURL(/#\/operations\/op-/);
  await page.locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });
  await assertCleanText(page, "endpoint.deploy operation");

  await page.evaluate((h) => (window.location.hash = h), `#/clusters/${REGION}/${CLUSTER}/endpoints`);
  await page.locator(`[data-testid="endpoint-${EP}"][data-status="READY"]`).waitFor();
  const row = await endpoints.getByRole("row").filter({ has: page.getByRole("rowheader", { name: EP, exact: true }) }).innerText();
  assert.match(row, /1 of 1 ready/, row);
  await assertCleanText(page, "endpoints page");

  await page.getByRole("textbox", { name: "Message" }).fill("what are you?");
  await page.getByRole("button", { name: "Send" }).click();
  const answer = await page.getByTestId("answer").innerText();
  assert.match(answer, /Hello from Qwen\/Qwen3-0\.6B\/main/, answer);
  assert.doesNotMatch(answer, /what are you\?/, answer); // a model's answer, not the prompt echoed back
  await shot(page, "inference-answered");

  // The endpoint's own page: live status, what PodStart made for it, and scaling from there.
  await endpoints.getByRole("link", { name: EP, exact: true }).click();
  await page.getByRole("heading", { name: EP, level: 1 }).waitFor();
  await page.locator('[data-testid="endpoint-status"][data-status="READY"]').waitFor();
  assert.equal((await page.getByTestId("endpoint-replicas").innerText()).trim(), "1 of 1 ready");
  const objects = await page.getByRole("table", { name: "Objects" }).innerText();
  assert.match(objects, /Deployment\s+chat-a/, objects);
  assert.match(objects, /Service\s+chat-a/, objects);
  await assertCleanText(page, "endpoint page");
  await shot(page, "endpoint-detail");
  await page.getByRole("button", { name: "Scale", exact: true }).click();
  const scale = page.getByRole("dialog");
  await scale.getByRole("spinbutton", { name: "Replicas" }).fill("2");
  await scale.getByRole("button", { name: "Save" }).click();
  await page.waitForURL(/#\/operations\/op-/);
  await page.locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });
  await page.goBack();
  await page.getByRole("heading", { name: EP, level: 1 }).waitFor();
  await page.getByTestId("endpoint-replicas").getByText("2 of 2 ready").waitFor({ timeout: 30_000 });
  await page.getByRole("link", { name: "Endpoints" }).click();
  await page.getByRole("heading", { name: "Endpoints", level: 1 }).waitFor();

  await page.getByRole("button", { name: `Delete ${EP}` }).click();
  const confirm = page.getByRole("dialog");
  await confirm.getByRole("textbox").fill(EP);
  await confirm.getByRole("button", { name: "Delete" }).click();
  await page.waitForURL(/#\/operations\/op-/);
  await page.locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });
  assert.equal((await sb.api(`/v1/clusters/${CLUSTER}/endpoints/${EP}?region=${REGION}`)).status, 404);

  const mine = mutations.slice(since);
  assert.equal(mine.length, 5, JSON.stringify(mine)); // refused deploy, deploy, invoke, scale, delete
  for (const m of mine) assert.ok(m.key && m.key.length >= 16, `${m.method} ${m.path} without an Idempotency-Key`);
  assert.deepEqual(problems, []);
});
