// The Models section of the Endpoints page on a sandbox cluster: the bucket has no models, a Hugging Face model
// is downloaded from the form (the plan names the Job and the S3 prefix, at no cost), the operation page shows
// the files and bytes to the end, the model then shows in the list, and the deploy form offers its path.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { assertCleanText, createCluster, launch, mutations, newPage, openEndpointsPage, settledValue, shot, startSandbox, viewOperationFromFlash } from "./lib.mjs";

const REGION = "us-west-2";
const CLUSTER = "br-models";
const MODEL = "acme/tiny-chat";
const TOKEN = "hf_browserTOKEN_5b7d";

let sb;
let browser;

before(async () => {
  sb = await startSandbox({ timeScale: Number(process.env.PODSTART_TIME_SCALE ?? 1000) });
  browser = await launch();
  await createCluster(sb, "browser-models-setup", { name: CLUSTER, region: REGION,
            instance_groups: [{ name: "gpu", instance_type: "ml.g5.8xlarge", instance_count: 1, availability_zone: "us-west-2a" }] });
  const s = await sb.api(`/v1/clusters/${CLUSTER}/secrets?region=${REGION}`, {
    method: "POST", body: { name: "hf-token", data: { token: TOKEN } } });
  assert.equal(s.status, 201, JSON.stringify(s.json));
});

after(async () => {
  await browser?.close();
  await sb?.stop();
});

test("download a model from the Endpoints page: plan, progress to the end, then it is listed and deployable", async () => {
  const { page, problems } = await newPage(browser);
  const since = mutations.length;
  await openEndpointsPage(page, sb, REGION, CLUSTER);
  const models = page.getByRole("table", { name: "Models" });
  // the sandbox ships the demo model the recipes default to; the one downloaded here is not there yet
  await models.getByRole("rowheader", { name: "Qwen/Qwen3-0.6B", exact: true }).waitFor();
  assert.equal(await models.getByRole("rowheader", { name: MODEL, exact: true }).count(), 0);

  await page.getByRole("button", { name: "Download model" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByRole("textbox", { name: "Hugging Face model id" }).fill(MODEL);
  await dialog.getByRole("button", { name: /Token Secret/ }).click(); // chosen from the cluster's Secret names
  await dialog.getByRole("option", { name: "hf-token" }).click();
  await dialog.getByRole("button", { name: "Review" }).click();
  const counted = await dialog.locator('[data-testid="plan-changes"]').innerText();
  assert.equal(counted, "6 changes", counted); // the downloader's identity (first download here), the Job, the prefix
  await dialog.getByRole("button", { name: "What will change (6)" }).click();
  const list = await dialog.locator('[data-testid="plan-change-list"]').innerText();
  assert.match(list, /create AWS::IAM::Role podstart-\S+-models-[0-9a-f]{6}/, list);
  assert.match(list, /create AWS::EKS::PodIdentityAssociation default\/podstart-model-downloader/, list);
  assert.match(list, /create Kubernetes ConfigMap podstart-model-downloader/, list);
  assert.match(list, /create Kubernetes Job dl-acme-tiny-chat-[0-9a-f]{8}/, list);
  assert.match(list, /S3 prefix s3:\/\/\S+\/models\/acme\/tiny-chat\/main\//, list);
  assert.equal(await dialog.locator('[data-testid="plan-hourly"]').innerText(), "$0.00 / hour");
  await assertCleanText(page, "download plan", [TOKEN]);
  await shot(page, "models-plan");
  await dialog.getByRole("button", { name: "Download", exact: true }).click();

  await viewOperationFromFlash(page);
  await page.locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });
  const step = await page.locator('[data-step="download"]').innerText();
  assert.match(step, /complete: 7\/7 files, (\d+)\/\1 bytes/, step);
  await assertCleanText(page, "model.download operation", [TOKEN]);
  await shot(page, "models-downloaded");

  await page.evaluate((h) => (window.location.hash = h), `#/clusters/${REGION}/${CLUSTER}/endpoints`);
  const row = models.getByRole("row").filter({ has: page.getByRole("rowheader", { name: MODEL, exact: true }) });
  await row.waitFor();
  const text = await row.innerText();
  assert.match(text, /main[\s\S]*7[\s\S]*Complete[\s\S]*kB[\s\S]*\/data\/models\/acme\/tiny-chat\/main\//, text);
  await assertCleanText(page, "endpoints page with a model", [TOKEN]);

  await page.getByRole("button", { name: "Deploy endpoint" }).click();
  const deploy = page.getByRole("dialog");
  await deploy.getByRole("button", { name: /Model in the bucket/ }).click();
  await deploy.getByRole("option", { name: /acme\/tiny-chat @ main/ }).click();
  assert.equal(await settledValue(deploy.getByRole("textbox", { name: "Model path" }), "/data/models/acme/tiny-chat/main/"), "/data/models/acme/tiny-chat/main/");

  const mine = mutations.slice(since);
  assert.equal(mine.length, 1, JSON.stringify(mine)); // the download; plans are not mutations
  assert.ok(mine[0].key && mine[0].key.length >= 16, "the download without an Idempotency-Key");
  assert.deepEqual(problems, []);
});
