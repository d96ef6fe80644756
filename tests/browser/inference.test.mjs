// The cluster's Endpoints tab on a sandbox cluster with a GPU group: an unpinned image is refused by the deploy's plan
// (Deploy stays disabled; back on the form, the Image field says why), a self-managed vLLM endpoint is deployed from
// the form (the tab stays, a flash follows the deploy), shows READY live, answers a chat in the test console; on its
// own page the console sends a completion (latency, tokens in/out, response JSON) and copies the curl command with
// the endpoint's real URL; it is scaled there and deleted from the tab; axe-core and 800 px checks on each page; every
// mutation carried an Idempotency-Key.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { assertCleanText, checkPage, createCluster, flashOf, flashStatus, launch, mutations, newPage, openEndpointsPage, shot, startSandbox } from "./lib.mjs";

const REGION = "us-west-2";
const CLUSTER = "br-infer";
const EP = "chat-a";

let sb;
let browser;

before(async () => {
  sb = await startSandbox({ timeScale: Number(process.env.PODSTART_TIME_SCALE ?? 1000) });
  browser = await launch();
  await createCluster(sb, "browser-inference-setup", { name: CLUSTER, region: REGION,
            instance_groups: [{ name: "gpu", instance_type: "ml.g5.8xlarge", instance_count: 2, availability_zone: "us-west-2a" }] });
});

after(async () => {
  await browser?.close();
  await sb?.stop();
});

test("deploy a vLLM endpoint from the Endpoints page, see it ready, chat with it, delete it", async () => {
  const { context, page, problems } = await newPage(browser);
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: sb.base });
  const since = mutations.length;
  await openEndpointsPage(page, sb, REGION, CLUSTER);
  const endpoints = page.getByRole("table", { name: "Inference endpoints" });
  await endpoints.getByText("No endpoints yet").waitFor();

  await page.getByRole("button", { name: "Deploy endpoint" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByText(/ml\.g5\.8xlarge \(group gpu: /).waitFor(); // the cluster's GPU group, inspected first
  await dialog.getByRole("textbox", { name: "Endpoint name" }).fill(EP);
  await dialog.getByRole("textbox", { name: "Model path" }).fill("/data/models/Qwen/Qwen3-0.6B/main/");
  // Unpinned: the plan is refused, Deploy stays disabled, and back on the form the Image field says why; nothing starts.
  await dialog.getByRole("textbox", { name: "Image" }).fill("vllm/vllm-openai:latest");
  await dialog.getByRole("button", { name: "Review" }).click();
  await dialog.locator('[data-testid="plan-error"]').waitFor();
  assert.ok(await dialog.getByRole("button", { name: "Deploy" }).isDisabled(), "Deploy waits for a plan that is not refused");
  await dialog.getByRole("button", { name: "Back" }).click();
  await dialog.getByText(/tag `latest` is not pinned/).first().waitFor();
  problems.length = 0; // the refused plan's 422 is expected
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
  const deployed = await flashOf(page, "endpoint.deploy");
  await flashStatus(page, deployed, "SUCCEEDED", 60_000);
  assert.match(page.url(), new RegExp(`#/clusters/${REGION}/${CLUSTER}/endpoints$`), "the deploy kept the user on the tab");
  await page.locator(`[data-testid="endpoint-${EP}"][data-status="READY"]`).waitFor({ timeout: 30_000 });
  const row = await endpoints.getByRole("row").filter({ has: page.getByRole("rowheader", { name: EP, exact: true }) }).innerText();
  assert.match(row, /1 of 1 ready/, row);
  await assertCleanText(page, "endpoints page");
  await checkPage(page, "cluster-endpoints-tab");

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
  // its URL, as the API says it (the Service's in-cluster name for an internal endpoint)
  const view = (await sb.api(`/v1/clusters/${CLUSTER}/endpoints/${EP}?region=${REGION}`)).json;
  assert.ok(view.url, JSON.stringify(view));
  await page.getByTestId("endpoint-url").getByText(view.url).waitFor();

  // The test console: a completion this time (the engine's /v1/completions), with latency, tokens and the JSON.
  const console_ = page.getByTestId("test-console");
  await console_.getByRole("button", { name: /^Completion/ }).click();
  await console_.getByRole("textbox", { name: "Prompt" }).fill("Once upon a time");
  await console_.getByRole("spinbutton", { name: "Max tokens" }).fill("64");
  const body = JSON.parse(await console_.getByRole("textbox", { name: "Request body (JSON)" }).inputValue());
  assert.deepEqual(body, { prompt: "Once upon a time", max_tokens: 64, temperature: 0.7, stream: false });
  await console_.getByRole("button", { name: "Send" }).click();
  await console_.getByTestId("answer").waitFor();
  assert.match(await console_.getByTestId("answer-latency").innerText(), /^\d+ ms \(engine \d+ ms\)$/);
  assert.match(await console_.getByTestId("answer-tokens").innerText(), /^[1-9]\d* \/ [1-9]\d*$/);
  const json = JSON.parse(await console_.getByTestId("answer-json").innerText());
  assert.equal(json.object, "text_completion");
  assert.match(await console_.getByTestId("answer").innerText(), /Hello from Qwen/);
  // Copy as curl: the endpoint's real URL and the engine's path, the same body with its model
  await console_.getByRole("button", { name: "Copy as curl" }).click();
  const curl = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(curl, await console_.getByTestId("curl").innerText());
  assert.match(curl, new RegExp(`^curl -sS -X POST '${view.url.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/v1/completions'`), curl);
  assert.match(curl, /"model":"Qwen\/Qwen3-0\.6B\/main\/?"/, curl);
  assert.match(curl, /"prompt":"Once upon a time"/, curl);
  await assertCleanText(page, "endpoint page");
  await shot(page, "endpoint-detail");
  await checkPage(page, "endpoint-page");

  // Scale from its page: the page stays and follows it (a flash, then the replicas).
  await page.getByRole("button", { name: "Scale", exact: true }).click();
  const scale = page.getByRole("dialog");
  await scale.getByRole("spinbutton", { name: "Replicas" }).fill("2");
  await scale.getByRole("button", { name: "Save" }).click();
  const scaled = await flashOf(page, "endpoint.update");
  await flashStatus(page, scaled, "SUCCEEDED", 60_000);
  await page.getByRole("heading", { name: EP, level: 1 }).waitFor();
  await page.getByTestId("endpoint-replicas").getByText("2 of 2 ready").waitFor({ timeout: 30_000 });
  await page.getByRole("navigation", { name: "Breadcrumbs" }).getByRole("link", { name: "Endpoints" }).click();
  await page.getByRole("table", { name: "Inference endpoints" }).waitFor();

  await page.getByRole("button", { name: `Delete ${EP}` }).click();
  const confirm = page.getByRole("dialog");
  await confirm.getByRole("textbox").fill(EP);
  await confirm.getByRole("button", { name: "Delete" }).click();
  const gone = await flashOf(page, "endpoint.delete");
  await flashStatus(page, gone, "SUCCEEDED", 60_000);
  await endpoints.getByText("No endpoints yet").waitFor({ timeout: 30_000 });
  assert.equal((await sb.api(`/v1/clusters/${CLUSTER}/endpoints/${EP}?region=${REGION}`)).status, 404);

  const mine = mutations.slice(since);
  assert.equal(mine.length, 5, JSON.stringify(mine)); // deploy, invoke (chat), invoke (completion), scale, delete
  for (const m of mine) assert.ok(m.key && m.key.length >= 16, `${m.method} ${m.path} without an Idempotency-Key`);
  assert.deepEqual(problems, []);
});
