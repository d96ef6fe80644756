// Jobs on a sandbox CPU cluster (the training operator add-on enabled): submit from the recipe form on the cluster's
// Jobs tab after its review shows the plan (the job it creates, the operator already on, the nodes already paid; a
// parameter out of range is refused by the plan, Submit stays disabled, the field says why), a flash follows the
// submit while the tab stays, its operation page runs to the end; the job is found from the side navigation's Jobs
// (filtered by cluster), its page shows pods, budget, the metrics chart and live logs (a new line arrives while
// following), then delete lands back on the Jobs tab; every page passes axe-core and fits 800 px; every mutation
// carried an Idempotency-Key.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { addonsActive, assertCleanText, checkPage, createCluster, flashOf, flashStatus, launch, mutations, newPage, settledValue, shot, sideNav, signIn, startSandbox, viewOperationFromFlash } from "./lib.mjs";

const REGION = "us-west-2";
const CLUSTER = "br-jobs";

let sb;
let browser;

before(async () => {
  sb = await startSandbox({ timeScale: Number(process.env.PODSTART_TIME_SCALE ?? 300) });
  browser = await launch();
  await createCluster(sb, "browser-jobs-setup", { name: CLUSTER, region: REGION,
    instance_groups: [{ name: "cpu", instance_type: "ml.c5.large", instance_count: 1, availability_zone: "us-west-2a" }] });
  await addonsActive(sb, REGION, CLUSTER, ["amazon-sagemaker-hyperpod-training-operator"]);
});

after(async () => {
  await browser?.close();
  await sb?.stop();
});

test("submit a job from a recipe, follow its logs live, delete it", async () => {
  const { page, problems } = await newPage(browser);
  const since = mutations.length;
  const plans = []; // dry runs (lib.mjs does not count them as mutations)
  page.on("request", (r) => { if (new URL(r.url()).searchParams.get("dry_run") === "true") plans.push(r.url()); });
  await signIn(page, sb);
  const detail = `#/clusters/${REGION}/${CLUSTER}/jobs`;
  await page.evaluate((h) => (window.location.hash = h), detail);
  await page.getByRole("table", { name: "Jobs" }).getByText("No jobs").waitFor();
  await checkPage(page, "cluster-jobs-tab");

  await page.getByRole("button", { name: "Submit job" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByRole("textbox", { name: "Parameter epochs" }).waitFor();
  await dialog.getByRole("textbox", { name: "Job name" }).fill("br-train");
  await dialog.getByRole("textbox", { name: "Parameter epochs" }).fill("0");
  // GPUs per node follow the instance type (a CPU type: 0), MLflow is on by default (the region has a usable server)
  assert.equal(await settledValue(dialog.getByRole("textbox", { name: "GPUs per node" }), "0"), "0");
  await dialog.locator('[data-testid="mlflow-select"]').getByText(/^podstart-demo/).waitFor();
  await dialog.getByRole("button", { name: "Review" }).click();
  await dialog.getByTestId("plan-error").waitFor(); // the plan is refused as the submit would be...
  assert.ok(await dialog.getByRole("button", { name: "Submit job" }).isDisabled(), "Submit waits for a plan that is not refused");
  await dialog.getByRole("button", { name: "Back" }).click();
  await dialog.getByRole("textbox", { name: "Parameter epochs" }).waitFor(); // back on the form...
  await dialog.getByText(/greater than or equal to 1/).first().waitFor(); // ...on the field
  problems.length = 0; // the refused plan's 422 is expected

  await dialog.getByRole("textbox", { name: "Parameter epochs" }).fill("2");
  await dialog.getByRole("button", { name: "Review" }).click();
  // The review shows the plan before the final button: the job to create, the operator already on, no added cost.
  const changes = dialog.getByTestId("plan-change-list");
  await dialog.getByTestId("plan-hourly").waitFor();
  assert.match(await changes.innerText(), /create Kubernetes HyperPodPyTorchJob br-train \(step submit\)/);
  assert.doesNotMatch(await changes.innerText(), /eks-addon/); // on already: a none line, not listed as a change
  assert.equal(await dialog.getByTestId("plan-hourly").innerText(), "$0.00 / hour");
  assert.match(await dialog.getByRole("table", { name: "Cost lines" }).innerText(), /already paid/);
  const planned = await sb.api(`/v1/clusters/${CLUSTER}/jobs?region=${REGION}`);
  assert.deepEqual(planned.json.items, []); // the plan submitted nothing
  await dialog.getByRole("button", { name: "Submit job" }).click();
  // The tab stays: a flash follows the submit, and the table lists the job without a reload.
  const submitted = await flashOf(page, "job.submit");
  await dialog.waitFor({ state: "detached" });
  await page.locator('[data-testid="budget-br-train"]').waitFor({ timeout: 30_000 });
  await flashStatus(page, submitted, "SUCCEEDED", 60_000);
  await viewOperationFromFlash(page, "job.submit");
  await page.locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });
  await page.getByTestId("operation-back").filter({ hasText: "View job br-train" }).waitFor(); // the operation page links back
  await assertCleanText(page, "job.submit operation");
  await checkPage(page, "operation-job-submit");

  // Find the job from the side navigation: Jobs across clusters, filtered by this cluster.
  await sideNav(page, "Jobs");
  await page.getByRole("heading", { name: /^Jobs/, level: 1 }).waitFor();
  await page.locator('[data-testid="cluster-filter"] button').first().click();
  await page.getByRole("option", { name: new RegExp(`^${CLUSTER}`) }).click();
  await page.waitForURL(new RegExp(`#/jobs\\?cluster=${CLUSTER}&region=${REGION}`));
  const everywhere = page.getByRole("table", { name: "Jobs" });
  await everywhere.locator('[data-testid="budget-br-train"]', { hasText: "0 of 3" }).waitFor();
  assert.match(await everywhere.getByRole("row").filter({ hasText: "br-train" }).innerText(), new RegExp(CLUSTER));
  await assertCleanText(page, "jobs across clusters");
  await checkPage(page, "jobs-everywhere");
  await everywhere.getByRole("link", { name: "br-train" }).click();
  await page.getByRole("heading", { name: "br-train", level: 1 }).waitFor();
  await page.getByRole("table", { name: "Pods" }).getByText("br-train-pod-0").waitFor();
  const logs = page.locator('[data-testid="job-logs"]');
  await logs.filter({ hasText: /step \d+ loss/ }).waitFor();
  await page.getByTestId("log-mode").filter({ hasText: "Live" }).waitFor(); // over the socket, not polling
  const polls = [];
  page.on("request", (r) => { if (/\/jobs\/br-train\/logs/.test(r.url())) polls.push(r.url()); });
  const first = await logs.innerText();
  const lastStep = (t) => Number([...t.matchAll(/step (\d+)/g)].pop()?.[1] ?? 0);
  // Live: a newer step shows up while following, with no reload.
  await page.waitForFunction((n) => {
    const m = [...(document.querySelector('[data-testid="job-logs"]')?.textContent ?? "").matchAll(/step (\d+)/g)].pop();
    return m && Number(m[1]) > n;
  }, lastStep(first), { timeout: 10_000 });
  assert.deepEqual(polls, [], "live lines came over the socket, not by fetching the tail again");
  // Pause holds the lines; Follow starts the stream again
  await page.getByRole("button", { name: "Pause" }).click();
  await page.getByTestId("log-mode").filter({ hasText: "Paused" }).waitFor();
  const held = await logs.innerText();
  await page.waitForTimeout(1500);
  assert.equal(await logs.innerText(), held, "a paused log does not move");
  await page.getByRole("button", { name: "Follow" }).click();
  await page.getByTestId("log-mode").filter({ hasText: "Live" }).waitFor();
  await page.waitForFunction((n) => {
    const m = [...(document.querySelector('[data-testid="job-logs"]')?.textContent ?? "").matchAll(/step (\d+)/g)].pop();
    return m && Number(m[1]) > n;
  }, lastStep(held), { timeout: 10_000 });
  // The metrics chart: loss by step, from the job's MLflow run (on by default), more points as it runs.
  await page.locator('[data-testid="metrics-source"][data-source="mlflow"]').waitFor({ timeout: 30_000 });
  await page.getByTestId("metric-loss").locator("svg").first().waitFor();
  const points = async () => Number(await page.getByTestId("metric-loss").getAttribute("data-points"));
  const before = await points();
  assert.ok(before >= 1, `loss points: ${before}`);
  await page.getByRole("button", { name: "Refresh metrics" }).click();
  await page.waitForFunction((n) => Number(document.querySelector('[data-testid="metric-loss"]')?.getAttribute("data-points")) > n, before, { timeout: 20_000 });
  await assertCleanText(page, "job page");
  await shot(page, "job-running");
  await checkPage(page, "job-page");

  assert.deepEqual(problems, [], "before delete");
  await page.getByRole("button", { name: "Delete job" }).click();
  const confirm = page.getByRole("dialog");
  await confirm.getByRole("textbox").fill("br-train");
  await confirm.getByRole("button", { name: "Delete" }).click();
  // Deleted: back on the cluster's Jobs tab, the flash follows the delete to its end
  await page.waitForURL(new RegExp(`#/clusters/${REGION}/${CLUSTER}/jobs$`));
  const deleted = await flashOf(page, "job.delete");
  await flashStatus(page, deleted, "SUCCEEDED", 60_000);
  await page.getByRole("table", { name: "Jobs" }).getByText("No jobs").waitFor({ timeout: 30_000 });
  const left = (await sb.api(`/v1/clusters/${CLUSTER}/jobs?region=${REGION}`)).json.items;
  assert.deepEqual(left, []);

  assert.equal(plans.length, 2, JSON.stringify(plans)); // one plan per review
  const mine = mutations.slice(since);
  assert.equal(mine.length, 2, JSON.stringify(mine)); // submit, delete: the refused plan sent no submit
  for (const m of mine) assert.ok(m.key && m.key.length >= 16, `${m.method} ${m.path} without an Idempotency-Key`);
  assert.deepEqual(problems, []);
});
