// The Nodes tab on a sandbox cluster: a simulated GPU fault shows as a health badge (and alone under the
// health filter), the node's detail places it on the ladder, a replace before a reboot is refused by its plan with
// the ladder's message (Replace stays disabled, nothing is sent), a reboot runs as an operation while the user stays
// on the Nodes tab (a flash follows it; the node comes back Schedulable on the tab, live), and its operation page
// shows the steps; axe-core and 800 px checks on the tab; every mutation carried an Idempotency-Key.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { assertCleanText, checkPage, createCluster, flashOf, flashStatus, launch, mutations, newPage, shot, signIn, startSandbox, viewOperationFromFlash } from "./lib.mjs";

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
  const detail = `#/clusters/${REGION}/${CLUSTER}/nodes`;
  await page.evaluate((h) => (window.location.hash = h), `#/clusters/${REGION}/${CLUSTER}`);
  await page.getByRole("tab", { name: "Nodes", exact: true }).click();
  await page.waitForURL(new RegExp(`${detail}$`));
  const table = page.getByRole("table", { name: "Nodes" });
  await page.locator(`[data-testid="health-${faulty}"]`, { hasText: "Pending reboot" }).waitFor();
  assert.equal(await table.locator("tbody tr").count(), 2);
  // the node id whole (never clipped), with a copy button
  await table.getByRole("button", { name: `Copy node id ${faulty}` }).waitFor();
  await checkPage(page, "cluster-nodes-tab");

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
  // Replace before a reboot: refused by its plan, naming the rung; Replace stays disabled and nothing starts.
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
  await replace.locator('[data-testid="plan-error"]', { hasText: /reboot first/ }).waitFor();
  assert.ok(await replace.getByRole("button", { name: "Replace", exact: true }).isDisabled(), "Replace waits for a plan the ladder allows");
  problems.length = 0; // the refused plan's 409 is expected
  await replace.getByRole("button", { name: "Cancel" }).click();

  mark('// Reboot: progress');
  // Reboot: the user stays on the Nodes tab; a flash follows the operation, and the node comes back live.
  await page.getByRole("button", { name: "Reboot", exact: true }).click();
  const reboot = page.getByRole("dialog");
  await reboot.locator('[data-testid="plan-changes"]', { hasText: "1 change" }).waitFor();
  assert.equal(await reboot.locator('[data-testid="plan-hourly"]').innerText(), "$0.00 / hour");
  await reboot.getByRole("textbox", { name: "Reason" }).fill("GPU XID 79");
  await reboot.getByRole("button", { name: "Reboot", exact: true }).click();
  const op = await flashOf(page, "nodes.reboot");
  assert.match(page.url(), new RegExp(`${detail}$`), "the reboot kept the user on the Nodes tab");
  await reboot.waitFor({ state: "detached" });
  await flashStatus(page, op, "SUCCEEDED", 60_000);
  // live, on the tab: the node leaves the "Pending reboot" filter, and is Schedulable under "All"
  await table.getByText("No nodes match the group and health chosen.").waitFor({ timeout: 30_000 });
  await page.getByRole("button", { name: /Health filter/ }).click();
  await page.getByRole("option", { name: "All" }).click();
  await page.locator(`[data-testid="health-${faulty}"]`, { hasText: "Schedulable" }).waitFor({ timeout: 30_000 });
  const row = await table.getByRole("row").filter({ hasText: faulty }).innerText();
  assert.match(row, /reboot/, row);
  assert.match(page.url(), new RegExp(`${detail}$`));
  await assertCleanText(page, "nodes tab");
  await shot(page, "nodes-tab");

  mark('// its operation page');
  // The flash leads to the operation's page: its steps ran; it links back to the nodes.
  await viewOperationFromFlash(page, "nodes.reboot");
  await page.locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });
  for (const step of ["reboot", "ready"]) await page.locator(`li.ps-step[data-step="${step}"][data-status="SUCCEEDED"]`).waitFor();
  await assertCleanText(page, "nodes.reboot operation");
  await page.getByTestId("operation-back").click();
  await page.waitForURL(new RegExp(`${detail}$`));

  mark('const mine =');
  const mine = mutations.slice(since);
  assert.equal(mine.length, 1, JSON.stringify(mine)); // the reboot: the refused replace was never sent
  for (const m of mine) assert.ok(m.key && m.key.length >= 16, `${m.method} ${m.path} without an Idempotency-Key`);
  assert.deepEqual(problems, []);
});
