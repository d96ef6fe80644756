// MLflow on a sandbox CPU cluster (the training operator add-on enabled): the Submit form lists the region's
// tracking servers; choosing one (and an experiment) puts the job's access objects in the review's plan (its role
// scoped to that server, the Pod Identity association, the ServiceAccount); the job page then shows "Open in
// MLflow", and following the link opens the experiment with the loss and throughput the job logged.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { addonsActive, assertCleanText, createCluster, launch, mutations, newPage, shot, signIn, startSandbox, viewOperationFromFlash } from "./lib.mjs";

const REGION = "us-west-2";
const CLUSTER = "br-mlflow";
const JOB = "br-mlf";

let sb;
let browser;

before(async () => {
  sb = await startSandbox({ timeScale: Number(process.env.PODSTART_TIME_SCALE ?? 300) });
  browser = await launch();
  await createCluster(sb, "browser-mlflow-setup", { name: CLUSTER, region: REGION,
            instance_groups: [{ name: "cpu", instance_type: "ml.c5.large", instance_count: 1, availability_zone: "us-west-2a" }] });
  // the Pod Identity agent is on from create
  await addonsActive(sb, REGION, CLUSTER, ["amazon-sagemaker-hyperpod-training-operator"]);
});

after(async () => {
  await browser?.close();
  await sb?.stop();
});

test("submit a job reporting to MLflow, then open its experiment from the job page", async () => {
  const { page, problems } = await newPage(browser);
  const since = mutations.length;
  await signIn(page, sb);
  const detail = `#/clusters/${REGION}/${CLUSTER}/jobs`;
  await page.evaluate((h) => (window.location.hash = h), detail);
  await page.getByRole("table", { name: "Jobs" }).getByText("No jobs").waitFor();

  await page.getByRole("button", { name: "Submit job" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByRole("textbox", { name: "Parameter epochs" }).waitFor();
  await dialog.getByRole("textbox", { name: "Job name" }).fill(JOB);
  // The tracking servers of the cluster's region, from the catalog: the seeded one is usable.
  await page.locator('[data-testid="mlflow-select"] button').first().click();
  await page.getByRole("option", { name: /^podstart-demo/ }).click();
  await dialog.getByRole("textbox", { name: "MLflow experiment" }).fill("br-exp");

  await dialog.getByRole("button", { name: "Review" }).click();
  const changes = dialog.getByTestId("plan-change-list");
  await dialog.getByTestId("plan-hourly").waitFor();
  const planned = await changes.innerText();
  assert.match(planned, /create AWS::IAM::Role podstart-mlflow-br-mlf-[0-9a-f]{8} \(step mlflow_access\)/);
  assert.match(planned, /create AWS::EKS::PodIdentityAssociation default\/br-mlf-mlflow \(step mlflow_access\)/);
  assert.match(planned, /create Kubernetes ServiceAccount br-mlf-mlflow \(step submit\)/);
  assert.match(await dialog.innerText(), /reports to MLflow \(experiment br-exp\)/);
  await dialog.getByRole("button", { name: "Submit job" }).click();
  await viewOperationFromFlash(page);
  await page.locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });
  await assertCleanText(page, "job.submit operation");

  await page.evaluate((h) => (window.location.hash = h), detail);
  await page.getByRole("table", { name: "Jobs" }).getByRole("link", { name: JOB, exact: true }).click();
  await page.getByRole("heading", { name: JOB, level: 1 }).waitFor();
  const link = page.getByTestId("open-in-mlflow");
  await link.waitFor();
  assert.match(await page.getByText(/podstart-demo · experiment br-exp/).innerText(), /br-exp/);
  await page.locator('[data-testid="job-logs"]').filter({ hasText: /step \d+ loss/ }).waitFor();
  await assertCleanText(page, "job page");
  await shot(page, "job-mlflow");

  // Opening it (a new tab, the presigned link made on this click) shows the experiment and what the job logged.
  const [tab] = await Promise.all([page.context().waitForEvent("page"), link.click()]);
  await tab.getByRole("heading", { name: "Experiment: br-exp" }).waitFor();
  assert.match(tab.url(), /\/sandbox\/mlflow\/us-west-2\/podstart-demo\/\?authToken=/);
  await tab.getByRole("heading", { name: `Run: ${JOB}` }).waitFor();
  for (const metric of ["loss", "train_samples_per_second"]) await tab.getByRole("cell", { name: metric, exact: true }).waitFor();
  await tab.close();

  const mine = mutations.slice(since);
  assert.equal(mine.length, 1, JSON.stringify(mine));
  assert.ok(mine[0].key && mine[0].key.length >= 16, "the submit carried an Idempotency-Key");
  assert.deepEqual(problems, []);
});
