// The capacity advisor in the UI: the create wizard opened from an advisor option creates that cluster; the cluster's
// Instance groups show GPUs used/free per group, and their advisor adds a group from an option; a training plan an
// option needs is bought from the advisor (its plan shows the upfront fee, the buy needs the fee confirmed).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { assertCleanText, launch, mutations, newPage, shot, signIn, startSandbox } from "./lib.mjs";

const REGION = "us-west-2";
let sb;
let browser;

before(async () => {
  sb = await startSandbox({ timeScale: Number(process.env.PODSTART_TIME_SCALE ?? 300) });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await sb?.stop();
});

async function ask(page, { gpus, model, hours }) {
  await page.getByLabel("GPUs", { exact: true }).fill(String(gpus));
  await page.locator('[data-testid="gpu-model-select"] button').first().click();
  await page.getByRole("option", { name: model, exact: true }).click();
  if (hours) await page.getByLabel("Hours", { exact: true }).fill(String(hours));
  await page.getByTestId("advise").click();
  await page.getByTestId("advice-summary").waitFor();
}

async function waitForOperation(page, status, timeout = 120_000) {
  await page.waitForURL(/#\/operations\/op-/);
  await page.locator(`[data-testid="operation-status"][data-status="${status}"]`).waitFor({ timeout });
}

describe("capacity advisor", () => {
  test("the wizard opened from an advisor option creates that cluster, whose groups show their GPUs", async () => {
    const since = mutations.length;
    const { context, page, problems } = await newPage(browser);
    await signIn(page, sb);
    await page.evaluate(() => (window.location.hash = "#/clusters/new"));
    await page.getByRole("heading", { name: "Region and zone" }).first().waitFor();

    // Ask the advisor for 4 A10G GPUs in the default region (us-west-2)
    await page.getByText("Capacity advisor", { exact: true }).click();
    await ask(page, { gpus: 4, model: "a10g", hours: 24 });
    const options = page.getByRole("table", { name: "Capacity options" });
    const first = options.getByRole("row").nth(1);
    assert.match(await first.innerText(), /4 × ml\.g5\.8xlarge/);
    assert.match(await first.innerText(), /on-demand/);
    assert.match(await first.innerText(), /\$13\.86\/h/);
    await page.getByTestId("near-misses").getByRole("button").first().click();
    await page.getByText(/ml\.g5\.12xlarge on-demand\/spot/).first().waitFor();
    await assertCleanText(page, "advice");
    await shot(page, "capacity-wizard-advice");

    // When the first option fills the form: the wizard moves to the cluster's name with the option's values
    await page.getByRole("button", { name: "Use this option 1" }).click();
    const name = page.getByLabel("Cluster name");
    await name.waitFor();
    assert.equal(await name.inputValue(), "a10g-4x");
    await page.getByRole("button", { name: "Next" }).click();
    await page.getByRole("heading", { name: "Review and create" }).first().waitFor();
    await page.getByText(/NVIDIA A10G/).first().waitFor();  // the option's type, described from the catalog
    assert.match(await page.locator("body").innerText(), /ml\.g5\.8xlarge/);
    await page.getByText("Plan and cost").waitFor();
    await shot(page, "capacity-wizard-review");
    await page.getByRole("button", { name: "Create cluster" }).click();

    // Then that cluster is created
    await waitForOperation(page, "SUCCEEDED");
    const made = (await sb.api(`/v1/clusters/a10g-4x?region=${REGION}`)).json;
    const group = made.instance_groups[0];
    assert.deepEqual([group.instance_type, group.instance_count, group.capacity_type], ["ml.g5.8xlarge", 4, "on-demand"]);

    // And its Instance groups show the GPUs per group; their advisor adds a group from an option
    await page.evaluate((h) => (window.location.hash = h), `#/clusters/${REGION}/a10g-4x`);
    await page.getByTestId("gpus-a10g").filter({ hasText: "0 used / 4 free of 4" }).waitFor({ timeout: 30_000 });
    await page.getByText("Capacity advisor", { exact: true }).click();
    await ask(page, { gpus: 2, model: "a10g" });
    await page.getByRole("button", { name: "Add this group 1" }).click();
    await page.getByTestId("add-group-summary").waitFor();
    assert.match(await page.getByTestId("add-group-summary").innerText(), /a10g-2: 2 × ml\.g5\.8xlarge in us-west-2a/);
    await page.getByText("Plan and cost").waitFor();
    await shot(page, "capacity-add-group");
    await page.getByRole("dialog").getByRole("button", { name: "Add instance group" }).click();
    await waitForOperation(page, "SUCCEEDED");
    assert.deepEqual(problems, []);
    for (const m of mutations.slice(since)) assert.ok(m.key, `${m.method} ${m.path} sent no Idempotency-Key`);
    await context.close();
  });

  test("a training plan an option needs is bought from the advisor, its fee shown and confirmed", async () => {
    const { context, page, problems } = await newPage(browser);
    await signIn(page, sb);
    await page.evaluate(() => (window.location.hash = "#/clusters/new"));
    await page.getByText("Capacity advisor", { exact: true }).click();
    await ask(page, { gpus: 16, model: "b200", hours: 72 });
    const row = page.getByRole("table", { name: "Capacity options" }).getByRole("row").nth(1);
    assert.match(await row.innerText(), /training-plan/);
    assert.ok(await page.getByRole("button", { name: "Use this option 1" }).isDisabled(), "buy the plan first");

    await page.getByRole("button", { name: "Buy the training plan of option 1" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByText("Plan and cost").waitFor();
    await dialog.getByText(/buying charges 14,832\.00 USD upfront/).waitFor();
    const buy = dialog.getByRole("button", { name: /^Buy for 14832\.00 USD/ });
    assert.ok(await buy.isDisabled(), "the fee must be confirmed first");
    await dialog.getByText(/I confirm the upfront fee/).click();
    await shot(page, "capacity-buy-plan");
    await buy.click();
    await waitForOperation(page, "SUCCEEDED");
    const plans = (await sb.api(`/v1/catalog/training-plans?region=${REGION}`)).json.items;
    assert.ok(plans.some((p) => p.instance_type === "ml.p6-b200.48xlarge" && p.status === "Scheduled"), JSON.stringify(plans));
    assert.deepEqual(problems, []);
    await context.close();
  });
});
