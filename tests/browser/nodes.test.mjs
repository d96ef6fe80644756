// The Nodes tab on a sandbox cluster: a simulated GPU fault shows as a health badge (and alone under the
// health filter), the node's detail places it on the ladder, a replace before a reboot is refused with
// the ladder's message, a reboot runs as an operation with progress and brings the node back Schedulable;
// every mutation carried an Idempotency-Key.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { assertCleanText, clickRefused, createCluster, launch, mutations, newPage, shot, signIn, startSandbox } from "./lib.mjs";

const REGION = "us-west-2";
const CLUSTER = "br-nodes";

let sb;
let browser;
let faulty;

before(async () => {
  sb = await startSandbox({ timeScale: Number(process.env.PODSTART_TIME_SCALE ?? 300) });
  browser = await launch();
  await createCluster(sb, "browser-nodes-setup", { name: CLUSTER, region: REGION, node_recovery: "none",
            instance_groups: [{ name: "workers", instance_type: "ml.c5.large", instance_count: 2, availability_zone: "us-west-2a" }] });
  const nodes = (await sb.api(`/v1/clusters/${CLUSTER}/nodes?region=${REGION}`)).json.items;
  faulty = nodes[0].node_id;
  const fault = await sb.api(`/v1/sandbox/nodes/${faulty}/fault`, { method: "POST", body: { kind: "gpu_xid" } });
  assert.equal(fault.status, 201, JSON.stringify(fault.json));
});

after(async () => {
  await browser?.close();
  await sb?.stop();
});

test("see a faulty node, get the ladder's 409 on replace, reboot it back to Schedulable", async () => {
  const { page, problems } = await newPage(browser);
  const t0 = Date.now();
  const mark = (what) => process.env.NODES_TIMING && console.log(`${what}: ${Date.now() - t0} ms`);
  const since = mutations.length;
  await signIn(page, sb);
  const detail = `#/clusters/${REGION}/${CLUSTER}`;
  await page.evaluate((h) => (window.location.hash = h), detail);
  const table = page.getByRole("table", { name: "Nodes" });
  await page.locator(`[data-testid="health-${faulty}"]`, { hasText: "Pending reboot" }).waitFor();
  assert.equal(await table.locator("tbody tr").count(), 2);

  mark('// The health filter');
  // The health filter leaves the faulty node alone.
  await page.getByRole("button", { name: /Health filter/ }).click();
  await page.getByRole("option", { name: "Pending reboot" }).click();
  await page.waitForFunction(() => document.querySelectorAll('table[aria-label="Nodes"] tbody tr').length === 1);

  mark('// Its detail');
  // Its detail: the agent's condition and the ladder's next rung.
  await page.getByRole("button", { name: `Details of ${faulty}` }).click();
  const dialog = page.getByRole("dialog");
  await dialog.locator('[data-testid="node-ladder"]', { hasText: "2 Reboot" }).waitFor();
  await dialog.getByRole("table", { name: "Conditions" }).getByText("AcceleratedHardwareReady").waitFor();
  await assertCleanText(page, "node detail");
  await shot(page, "node-detail");
  await dialog.getByRole("button", { name: "Close details" }).click();

  mark('// Replace before');
  // Replace before a reboot: refused, naming the rung; nothing starts.
  await page.getByRole("checkbox", { name: `Select ${faulty}` }).click();
  await page.getByRole("button", { name: "Replace", exact: true }).click();
  const replace = page.getByRole("dialog");
  // the plan, computed by the same checks, already says the ladder refuses it; with Force it lists the swap
  await replace.locator('[data-testid="plan-error"]', { hasText: "HTTP 409" }).waitFor();
  await replace.getByRole("checkbox", { name: /Force/ }).click();
  await replace.locator('[data-testid="plan-changes"]', { hasText: "2 changes" }).waitFor();
  assert.match(await replace.locator('[data-testid="plan-warnings"]').innerText(), /instance storage is wiped/);
  await replace.getByRole("checkbox", { name: /Force/ }).click();
  await replace.getByRole("textbox", { name: "Reason" }).fill("XID 79");
  await replace.locator("form input").last().fill("replace");
  await clickRefused(page, replace.getByRole("button", { name: "Replace", exact: true }));
  await replace.getByText(/reboot first/).first().waitFor();
  problems.length = 0; // the refused request's 409 is expected
  await replace.getByRole("button", { name: "Cancel" }).click();

  mark('// Reboot: progress');
  // Reboot: progress on the operation page until the node is back.
  await page.getByRole("button", { name: "Reboot", exact: true }).click();
  const reboot = page.getByRole("dialog");
  await reboot.locator('[data-testid="plan-changes"]', { hasText: "1 change" }).waitFor();
  assert.equal(await reboot.locator('[data-testid="plan-hourly"]').innerText(), "$0.00 / hour");
  await reboot.getByRole("textbox", { name: "Reason" }).fill("GPU XID 79");
  await reboot.getByRole("button", { name: "Reboot", exact: true }).click();
  await page.waitForURL(/#\/operations\/op-/);
  await page.locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });
  await assertCleanText(page, "nodes.reboot operation");

  mark('await page.evaluate(');
  await page.evaluate((h) => (window.location.hash = h), detail);
  await page.locator(`[data-testid="health-${faulty}"]`, { hasText: "Schedulable" }).waitFor();
  const row = await table.getByRole("row").filter({ hasText: faulty }).innerText();
  assert.match(row, /reboot/, row);
  await assertCleanText(page, "nodes tab");
  await shot(page, "nodes-tab");

  mark('const mine =');
  const mine = mutations.slice(since);
  assert.equal(mine.length, 2, JSON.stringify(mine));
  for (const m of mine) assert.ok(m.key && m.key.length >= 16, `${m.method} ${m.path} without an Idempotency-Key`);
  assert.deepEqual(problems, []);
});
