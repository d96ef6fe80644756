// A VERL RayJob from the browser on a sandbox GPU cluster with no KubeRay: the KubeRay operator switch in the Advanced
// features panel shows its plan (the CRDs, RBAC and Deployment it server-side applies) and runs to ACTIVE; then the
// VERL recipe is submitted from the Submit form after its review (the RayJob it creates), the operation page follows it
// to SUCCEEDED, and the job page shows the head and worker pods and the driver's log with a new line arriving live.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { assertCleanText, createCluster, launch, mutations, newPage, shot, signIn, startSandbox, viewOperationFromFlash } from "./lib.mjs";

const REGION = "us-west-2";
const CLUSTER = "br-ray";

let sb;
let browser;

before(async () => {
  sb = await startSandbox({ timeScale: Number(process.env.PODSTART_TIME_SCALE ?? 300) });
  browser = await launch();
  await createCluster(sb, "browser-rayjob-setup", { name: CLUSTER, region: REGION,
            instance_groups: [{ name: "gpu", instance_type: "ml.g5.8xlarge", instance_count: 1, availability_zone: "us-west-2a" }] });
});

after(async () => {
  await browser?.close();
  await sb?.stop();
});

test("turn the KubeRay operator on, submit the VERL recipe, see a new driver log line arrive live", async () => {
  const { page, problems } = await newPage(browser);
  const since = mutations.length;
  await signIn(page, sb);
  const detail = `#/clusters/${REGION}/${CLUSTER}/jobs`;
  const features = `#/clusters/${REGION}/${CLUSTER}/features`;
  await page.evaluate((h) => (window.location.hash = h), features);

  // The switch, its plan (every object it applies), Apply, progress to SUCCEEDED, ACTIVE with its version.
  const panel = page.getByRole("table", { name: "Advanced features" });
  await panel.locator('[data-testid="feature-kuberay_operator"][data-status="DISABLED"]').waitFor();
  await page.getByLabel("Enable KubeRay operator").click();
  await page.getByText("Apply will turn on KubeRay operator.").waitFor();
  await page.getByTestId("plan-hourly").waitFor();
  const planned = await page.getByTestId("plan-change-list").textContent();
  assert.match(planned, /create Kubernetes CustomResourceDefinition rayjobs\.ray\.io/);
  assert.match(planned, /create Kubernetes Deployment kuberay-system\/kuberay-operator/);
  assert.equal(await page.getByTestId("plan-hourly").innerText(), "$0.00 / hour");
  await page.getByRole("button", { name: "Apply changes" }).click();
  await viewOperationFromFlash(page);
  await page.locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });
  await assertCleanText(page, "features.update operation");
  await page.evaluate((h) => (window.location.hash = h), features);
  await panel.locator('[data-testid="feature-kuberay_operator"][data-status="ACTIVE"]').waitFor();
  await page.evaluate((h) => (window.location.hash = h), detail);

  // Submit the VERL recipe: the review shows the RayJob it creates, the operator already on.
  await page.getByRole("button", { name: "Submit job" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByRole("button", { name: "Recipe" }).click();
  await dialog.getByRole("option", { name: /VERL/ }).click();
  await dialog.getByText(/\(RayJob\)/).waitFor();
  await dialog.getByRole("textbox", { name: "Job name" }).fill("br-grpo");
  await dialog.getByRole("textbox", { name: "Nodes" }).fill("1");
  await dialog.getByRole("textbox", { name: "GPUs per node" }).fill("1");
  await dialog.getByRole("button", { name: "Review" }).click();
  const changes = dialog.getByTestId("plan-change-list");
  await dialog.getByTestId("plan-hourly").waitFor();
  assert.match(await changes.innerText(), /create Kubernetes RayJob br-grpo \(step submit\)/);
  assert.doesNotMatch(await changes.innerText(), /CustomResourceDefinition/); // on already: none lines only
  await dialog.getByRole("button", { name: "Submit job" }).click();
  await viewOperationFromFlash(page);
  await page.locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });
  await assertCleanText(page, "job.submit operation");

  // The job page: a head and a worker pod, the driver's log, a newer step while following.
  await page.evaluate((h) => (window.location.hash = h), detail);
  await page.getByRole("table", { name: "Jobs" }).getByRole("link", { name: "br-grpo" }).click();
  await page.getByRole("heading", { name: "br-grpo", level: 1 }).waitFor();
  const pods = page.getByRole("table", { name: "Pods" });
  await pods.getByText(/-head-/).waitFor();
  await pods.getByText(/-workers-worker-/).waitFor();
  const logs = page.locator('[data-testid="job-logs"]');
  await logs.filter({ hasText: /step:\d+/ }).waitFor({ timeout: 20_000 });
  const lastStep = (t) => Number([...t.matchAll(/step:(\d+)/g)].pop()?.[1] ?? 0);
  const first = lastStep(await logs.innerText());
  await page.waitForFunction((n) => {
    const m = [...(document.querySelector('[data-testid="job-logs"]')?.textContent ?? "").matchAll(/step:(\d+)/g)].pop();
    return m && Number(m[1]) > n;
  }, first, { timeout: 10_000 });
  assert.match(await logs.innerText(), /samples\/s/);
  await assertCleanText(page, "RayJob page");
  await shot(page, "rayjob-running");

  const mine = mutations.slice(since);
  assert.equal(mine.length, 2, JSON.stringify(mine)); // the features PATCH and the submit
  for (const m of mine) assert.ok(m.key && m.key.length >= 16, `${m.method} ${m.path} without an Idempotency-Key`);
  assert.deepEqual(problems, []);
});
