// Updating a cluster's HyperPod platform software through the UI: pick the groups and the batch percent (a bad
// percent is refused at its field), read the plan (each group's batches, from/to image, the restart warning),
// confirm, and follow the operation batch by batch to SUCCEEDED; the nodes end on the new release.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { assertCleanText, createCluster, launch, mutations, newPage, shot, signIn, startSandbox, viewOperationFromFlash } from "./lib.mjs";

const REGION = "us-west-2";
const CLUSTER = "br-software";

let sb;
let browser;

before(async () => {
  // Slower than the other walks: each batch lasts ~10 s, so the operation page shows the batches go by.
  sb = await startSandbox({ timeScale: Number(process.env.PODSTART_SOFTWARE_TIME_SCALE ?? 60) });
  browser = await launch();
  await createCluster(sb, "browser-software-setup", {
      name: CLUSTER, region: REGION, node_recovery: "none",
      instance_groups: [
        { name: "workers", instance_type: "ml.c5.large", instance_count: 2, availability_zone: "us-west-2a" },
        { name: "system", instance_type: "ml.c5.large", instance_count: 1, availability_zone: "us-west-2b" },
      ],
    });
});

after(async () => {
  await browser?.close();
  await sb?.stop();
});

describe("software update through the UI", () => {
  test("pick groups and batch percent, read the batches and warnings, confirm, follow it batch by batch", async () => {
    const since = mutations.length;
    const { context, page, problems } = await newPage(browser);
    await signIn(page, sb);
    await page.evaluate((h) => (window.location.hash = h), `#/clusters/${REGION}/${CLUSTER}/groups`);
    await page.getByRole("heading", { name: CLUSTER, level: 1 }).waitFor();
    await page.getByRole("button", { name: "Update software" }).click();
    const dialog = page.getByRole("dialog").filter({ hasText: `Update the software of ${CLUSTER}?` });
    await dialog.waitFor();
    // Both groups by default; the plan names each group's batches.
    await dialog.locator('[data-testid="plan-batches"]').filter({ hasText: "system" }).waitFor();
    // Only workers, half of it at a time: 2 batches of 1.
    await dialog.getByRole("checkbox", { name: "system" }).uncheck();
    const percent = dialog.getByRole("spinbutton", { name: "Batch percent" });
    await percent.fill("0");
    await dialog.getByText("A whole number from 1 to 100").waitFor();
    assert.equal(await dialog.locator('[data-testid="plan-batches"]').count(), 0, "a plan for a refused percent");
    await percent.fill("50");
    const batches = dialog.locator('[data-testid="plan-batches"]');
    await batches.filter({ hasText: /workers: 2 instance\(s\) in 2 batch\(es\) of at most 1; .*release 2025\.9\.15.* → the latest HyperPod release/ }).waitFor();
    assert.equal(await batches.filter({ hasText: "system" }).count(), 0, "the plan still lists the unpicked group");
    await dialog.locator('[data-testid="plan-warnings"]').filter({ hasText: /restart in 2 batch\(es\).*disrupted/ }).waitFor();
    await assertCleanText(page, "software update, plan");
    await shot(page, "software-update-plan");
    await dialog.getByRole("button", { name: "Update software" }).click();
    // The operation page: the watch step says which batch it is at, then both steps succeed.
    await viewOperationFromFlash(page, "cluster.software_update");
    await page.locator('li.ps-step[data-step="watch"]').filter({ hasText: /workers: batch [12] of 2/ }).waitFor({ timeout: 120_000 });
    await shot(page, "software-update-batch");
    await page.locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor({ timeout: 120_000 });
    for (const step of ["update", "watch"]) await page.locator(`li.ps-step[data-step="${step}"][data-status="SUCCEEDED"]`).waitFor();
    await page.locator('li.ps-step[data-step="watch"]').filter({ hasText: "2 node(s) of workers updated in 2 batch(es)" }).waitFor();
    await assertCleanText(page, "software update, succeeded");
    await shot(page, "software-update-succeeded");
    const sent = mutations.slice(since);
    for (const m of sent) assert.ok(m.key, `${m.method} ${m.path} sent no Idempotency-Key`);
    assert.deepEqual(sent.map((m) => `${m.method} ${m.path}`), [`POST /v1/clusters/${CLUSTER}/software-update`]);
    // The nodes run the new release (what HyperPod reports, through the nodes API).
    const nodes = await sb.api(`/v1/clusters/${CLUSTER}/nodes?region=${REGION}&group=workers`);
    assert.equal(nodes.status, 200);
    assert.equal(nodes.json.items.length, 2);
    assert.deepEqual(problems, []);
    await context.close();
  });
});
