// The Nodes tab's "Health check" launcher on a sandbox cluster: select two nodes (one with a latent EFA fault
// only a deep health check finds), choose the checks, read the plan (each node, unschedulable meanwhile, $0),
// start it, watch the progress in the dialog, and read the per-node results: one passed, one failed
// InstanceConnectivity with HyperPod's reason. Then, with no node selected, a whole group: pick it, one check, its
// plan names every node of that group only (the group holding the failed node is refused, naming it), and both pass. Each mutation carried an Idempotency-Key.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { assertCleanText, createCluster, launch, mutations, newPage, shot, signIn, startSandbox } from "./lib.mjs";

const REGION = "us-west-2";
const CLUSTER = "br-health";

let sb;
let browser;
let faulty;
let healthy;

before(async () => {
  sb = await startSandbox({ timeScale: Number(process.env.PODSTART_TIME_SCALE ?? 300) });
  browser = await launch();
  await createCluster(sb, "browser-health-setup", { name: CLUSTER, region: REGION, node_recovery: "none",
            instance_groups: [{ name: "workers", instance_type: "ml.c5.large", instance_count: 2, availability_zone: "us-west-2a" },
                              { name: "spare", instance_type: "ml.c5.large", instance_count: 2, availability_zone: "us-west-2a" }] });
  const nodes = (await sb.api(`/v1/clusters/${CLUSTER}/nodes?region=${REGION}&group=workers`)).json.items;
  [faulty, healthy] = nodes.map((n) => n.node_id);
  const fault = await sb.api(`/v1/sandbox/nodes/${faulty}/fault`, { method: "POST", body: { kind: "efa_down", latent: true } });
  assert.equal(fault.status, 201, JSON.stringify(fault.json));
});

after(async () => {
  await browser?.close();
  await sb?.stop();
});

test("health check two nodes from the Nodes tab: plan, progress, per-node results", async () => {
  const { page, problems } = await newPage(browser);
  const since = mutations.length;
  await signIn(page, sb);
  await page.evaluate((h) => (window.location.hash = h), `#/clusters/${REGION}/${CLUSTER}/nodes`);
  // the latent fault is invisible until checked: both nodes are Schedulable
  await page.locator(`[data-testid="health-${faulty}"]`, { hasText: "Schedulable" }).waitFor();
  await page.getByRole("checkbox", { name: `Select ${faulty}` }).click();
  await page.getByRole("checkbox", { name: `Select ${healthy}` }).click();
  await page.getByRole("button", { name: "Health check", exact: true }).click();
  const dialog = page.getByRole("dialog");

  // the checks as checkboxes; the plan follows them
  await dialog.getByRole("checkbox", { name: /InstanceStress/ }).waitFor();
  assert.ok(await dialog.getByRole("checkbox", { name: /InstanceConnectivity/ }).isChecked());
  await dialog.locator('[data-testid="plan-changes"]', { hasText: "2 changes" }).waitFor();
  assert.match(await dialog.locator('[data-testid="plan-warnings"]').innerText(), /Unschedulable for about \d+ minutes/);
  assert.equal(await dialog.locator('[data-testid="plan-hourly"]').innerText(), "$0.00 / hour");
  await assertCleanText(page, "health check plan");
  await shot(page, "health-check-plan");

  // confirm: progress in the dialog, then the results table
  await dialog.getByRole("button", { name: "Start health check" }).click();
  const results = page.locator('[data-testid="health-results"]');
  await results.waitFor({ timeout: 90_000 });
  await page.locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor();
  const table = results.getByRole("table", { name: "Health check results" });
  const bad = await table.getByRole("row").filter({ hasText: faulty }).innerText();
  assert.match(bad, /Failed/, bad);
  assert.match(bad, /EFA device/, bad);
  assert.match(bad, /Pending replacement/, bad);
  const good = await table.getByRole("row").filter({ hasText: healthy }).innerText();
  assert.doesNotMatch(good, /Failed/, good);
  assert.match(await results.innerText(), /1 passed, 1 failed/);
  await assertCleanText(page, "health check results");
  await shot(page, "health-check-results");

  const mine = mutations.slice(since);
  assert.equal(mine.length, 1, JSON.stringify(mine));
  assert.match(mine[0].path, /\/health-checks/);
  assert.ok(mine[0].key && mine[0].key.length >= 16, "the health check without an Idempotency-Key");
  assert.deepEqual(problems, []);
});

test("health check a whole group with no node selected: pick the group, one check, every node of it checked", async () => {
  const { page, problems } = await newPage(browser);
  const since = mutations.length;
  const spare = (await sb.api(`/v1/clusters/${CLUSTER}/nodes?region=${REGION}&group=spare`)).json.items.map((n) => n.node_id);
  assert.equal(spare.length, 2);
  await signIn(page, sb);
  await page.evaluate((h) => (window.location.hash = h), `#/clusters/${REGION}/${CLUSTER}/nodes`);
  await page.locator(`[data-testid="health-${spare[0]}"]`, { hasText: "Schedulable" }).waitFor();
  await page.getByRole("button", { name: "Health check", exact: true }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByText(/Health check group workers\?/).waitFor();
  // workers (the first group) holds the node the first test failed: its plan is refused, naming that node
  await dialog.locator('[data-testid="plan-error"]', { hasText: faulty }).waitFor();
  await dialog.locator('[data-testid="plan-error"]', { hasText: /not Schedulable/ }).waitFor();
  problems.length = 0; // that refused plan's 409 is expected

  // the group select: spare; only the connectivity check
  await dialog.getByRole("button", { name: /Health check group/ }).click();
  await dialog.getByRole("option", { name: "spare" }).click();
  await dialog.getByText(/Health check group spare\?/).waitFor();
  await dialog.getByText(/every node of spare/).waitFor();
  await dialog.getByRole("checkbox", { name: /InstanceStress/ }).uncheck();
  // the plan: the two nodes of spare, none of workers
  await dialog.locator('[data-testid="plan-changes"]', { hasText: "2 changes" }).waitFor();
  await dialog.getByText("What will change (2)").click();
  const planned = await dialog.locator('[data-testid="plan-change-list"]').innerText();
  for (const id of spare) assert.match(planned, new RegExp(id), planned);
  for (const id of [faulty, healthy]) assert.doesNotMatch(planned, new RegExp(id), planned);
  await assertCleanText(page, "group health check plan");
  await shot(page, "health-check-group-plan");

  await dialog.getByRole("button", { name: "Start health check" }).click();
  const results = page.locator('[data-testid="health-results"]');
  await results.waitFor({ timeout: 90_000 });
  await page.locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor();
  assert.match(await results.innerText(), /2 passed, 0 failed/);
  const table = results.getByRole("table", { name: "Health check results" });
  for (const id of spare) assert.match(await table.getByRole("row").filter({ hasText: id }).innerText(), /Passed/);
  assert.match(await table.innerText(), /InstanceConnectivity/);
  assert.doesNotMatch(await table.innerText(), /InstanceStress/);
  await shot(page, "health-check-group-results");

  const mine = mutations.slice(since);
  assert.equal(mine.length, 1, JSON.stringify(mine));
  assert.ok(mine[0].key && mine[0].key.length >= 16, "the health check without an Idempotency-Key");
  assert.deepEqual(problems, []);
});
