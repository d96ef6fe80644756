// Issue 10's panels on one sandbox cluster (one sandbox and one create for both tests, to keep the browser
// suite short). Storage: the bucket is chosen among the ones PodStart may read, a prefix that climbs out is refused
// on its field, a registered bucket's prefix is mounted (progress on the operation page, then its claim Bound on the
// cluster page), then removed (the bucket and its objects stay).
// Advanced features: turning observability on says which prerequisites come with it, sends only that one
// field, and its progress shows on the operation page (one step per feature); back on the cluster page it is
// ACTIVE, and turning off a prerequisite it needs is explained, then refused (409), changing nothing.
// Every mutation carried an Idempotency-Key.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { assertCleanText, checkPage, clickRefused, flashOf, flashStatus, launch, mutations, newPage, shot, signIn, startSandbox, viewOperationFromFlash } from "./lib.mjs";

const REGION = "us-west-2";
const CLUSTER = "br-storage";
const BUCKET = "team-datasets-123456789012"; // seeded and registered by the sandbox (an admin mounts it)

let sb;
let browser;

before(async () => {
  sb = await startSandbox({ timeScale: Number(process.env.PODSTART_TIME_SCALE ?? 300) });
  browser = await launch();
  const r = await sb.api("/v1/clusters", {
    method: "POST",
    headers: { "Idempotency-Key": "browser-storage-setup" },
    body: { name: CLUSTER, region: REGION,
            instance_groups: [{ name: "workers", instance_type: "ml.c5.large", instance_count: 1, availability_zone: "us-west-2a" }] },
  });
  assert.equal(r.status, 202, JSON.stringify(r.json));
  const op = await sb.waitOperation(r.json.id);
  assert.equal(op.status, "SUCCEEDED", JSON.stringify(op.error));
});

after(async () => {
  await browser?.close();
  await sb?.stop();
});

test("add an S3 bucket from the Storage panel, watch it bind, remove it", async () => {
  const { page, problems } = await newPage(browser);
  const since = mutations.length;
  await signIn(page, sb);
  const detail = `#/clusters/${REGION}/${CLUSTER}/storage`;
  await page.evaluate((h) => (window.location.hash = h), detail);
  const storage = page.getByRole("table", { name: "Storage" });
  await storage.getByText("podstart-data", { exact: true }).waitFor();

  // Buckets are chosen, not typed: PodStart's data bucket and the registered ones (an admin may mount those).
  await page.getByRole("button", { name: "Add storage" }).click();
  const dialog = page.getByRole("dialog");
  assert.equal(await dialog.getByRole("textbox", { name: "Bucket" }).count(), 0);
  await dialog.getByRole("button", { name: /^Bucket/ }).click();
  await dialog.getByRole("option", { name: new RegExp(`^${BUCKET}`) }).click();
  // A prefix that climbs out: the field says so, nothing starts.
  await dialog.getByRole("textbox", { name: "Prefix" }).fill("../train/");
  await clickRefused(page, dialog.getByRole("button", { name: "Add storage" }));
  await dialog.getByText(/'\.\.' path segments/).first().waitFor();
  problems.length = 0; // the refused request's 422 is expected

  await dialog.getByRole("textbox", { name: "Prefix" }).fill("datasets/");
  await dialog.getByRole("textbox", { name: "Volume name" }).fill("train");
  assert.equal(await dialog.getByRole("textbox", { name: "Namespace" }).count(), 0, "the namespace is chosen, not typed");
  await dialog.getByRole("button", { name: "Add storage" }).click();
  // The Storage tab stays: a flash follows the add, and the claim binds on the tab, live.
  const added = await flashOf(page, "storage.add");
  await flashStatus(page, added, "SUCCEEDED", 60_000);
  await page.locator('[data-testid="pvc-train"]', { hasText: "Bound (train in default)" }).waitFor({ timeout: 30_000 });
  await shot(page, "storage-added");
  const row = await storage.getByRole("row").filter({ has: page.getByRole("rowheader", { name: "train", exact: true }) }).innerText();
  assert.match(row, new RegExp(`${BUCKET}/datasets/`), row);
  await assertCleanText(page, "cluster storage panel");
  await checkPage(page, "cluster-storage-added");

  await page.getByRole("button", { name: "Remove train" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Remove" }).click();
  await viewOperationFromFlash(page, "storage.remove");
  await page.locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });
  await assertCleanText(page, "storage.remove operation");
  const left = (await sb.api(`/v1/clusters/${CLUSTER}/storage?region=${REGION}`)).json.items.map((i) => i.name);
  assert.ok(!left.includes("train"), left.join(", "));
  const objects = await sb.aws(`
import boto3
print(len(boto3.client("s3", region_name="${REGION}").list_objects_v2(Bucket="${BUCKET}")["Contents"]))
`);
  assert.equal(String(objects).trim(), "3"); // the team's seeded objects, all still there

  const mine = mutations.slice(since);
  assert.equal(mine.length, 3, JSON.stringify(mine));
  for (const m of mine) assert.ok(m.key && m.key.length >= 16, `${m.method} ${m.path} without an Idempotency-Key`);
  assert.deepEqual(problems, []);
});

test("turn observability on from the Advanced features panel, watch it finish, see a needed prerequisite refused", async () => {
  const { page, problems } = await newPage(browser);
  const since = mutations.length;
  const bodies = [];
  page.on("request", (r) => { if (r.method() === "PATCH" && !r.url().includes("dry_run")) bodies.push(r.postDataJSON()); });
  await signIn(page, sb);
  const detail = `#/clusters/${REGION}/${CLUSTER}/features`;
  await page.evaluate((h) => (window.location.hash = h), detail);
  const panel = page.getByRole("table", { name: "Advanced features" });
  await panel.locator('[data-testid="feature-observability"][data-status="DISABLED"]').waitFor();
  await panel.locator('[data-testid="feature-pod_identity_agent"][data-status="ACTIVE"]').waitFor();
  const apply = page.getByRole("button", { name: "Apply changes" });
  assert.equal(await apply.isDisabled(), true, "nothing changed yet");

  // Turn observability on: the panel says what comes with it, and what Apply will do.
  await page.getByLabel("Enable HyperPod observability").click();
  await panel.getByTestId("deps-observability").getByText("Needs cert-manager, metrics-server: will be installed first.").waitFor();
  await page.getByText("Apply will turn on HyperPod observability.").waitFor();
  // Before Apply, the plan (a dry run: the same checks, nothing changed): prerequisites first, no hourly cost.
  await page.getByTestId("plan-warnings").getByText(/cert_manager is enabled first, automatically: needed by observability/).waitFor();
  assert.equal(await page.getByTestId("plan-hourly").innerText(), "$0.00 / hour");
  assert.match(await page.getByTestId("plan-changes").innerText(), /^[1-9]\d* changes?$/);
  await assertCleanText(page, "features panel with a pending change");
  await checkPage(page, "cluster-features-tab");
  await apply.click();

  // The tab stays (a flash follows the update); its operation page: prerequisites first, each watched to ACTIVE, then
  // the feature.
  const opId = await viewOperationFromFlash(page, "features.update");
  await page.locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });
  const op = (await sb.api(`/v1/operations/${opId}`)).json;
  assert.equal(op.kind, "features.update");
  assert.deepEqual(op.steps.map((s) => s.name), ["cert_manager", "metrics_server", "observability"]);
  assert.deepEqual(bodies, [{ observability: { enabled: true } }], "only the changed field is sent");
  await assertCleanText(page, "features.update operation");
  const addons = await sb.aws(`
import boto3
print(" ".join(sorted(boto3.client("eks", region_name="${REGION}").list_addons(clusterName="${CLUSTER}")["addons"])))
`);
  for (const a of ["amazon-sagemaker-hyperpod-observability", "cert-manager", "metrics-server"]) assert.match(addons, new RegExp(a), addons);

  // Back on the cluster page: ACTIVE with its version; cert-manager is needed by it.
  await page.evaluate((h) => (window.location.hash = h), detail);
  await panel.locator('[data-testid="feature-observability"][data-status="ACTIVE"]').waitFor();
  await panel.getByTestId("deps-cert_manager").getByText("Needed by HyperPod observability").waitFor();

  // Turning cert-manager off while observability needs it: explained before, refused (409) by the plan, Apply stays
  // disabled, nothing changes.
  await page.getByLabel("Enable cert-manager").click();
  await panel.getByTestId("deps-cert_manager").getByText(/Needed by HyperPod observability: turn that off too/).waitFor();
  await page.getByTestId("plan-error").getByText(/cert_manager is needed by observability/).waitFor();
  assert.ok(await apply.isDisabled(), "Apply waits for a plan that is not refused");
  assert.equal(problems.filter((p) => !p.startsWith("http 409") && !p.includes("409")).length, 0, problems.join("\n"));
  problems.length = 0; // the refused plan's 409 is expected
  await shot(page, "features-refused");
  const live = (await sb.api(`/v1/clusters/${CLUSTER}/features?region=${REGION}`)).json;
  assert.equal(live.cert_manager.status, "ACTIVE");

  // A change made outside PodStart (EKS reports an add-on's health): Refresh reads every feature live now, and the
  // panel says when it read them in full.
  const degraded = await sb.api("/v1/sandbox/states", { method: "POST", body: { service: "eks", region: REGION,
    cluster: CLUSTER, addon: "metrics-server", status: "DEGRADED", reason: "InsufficientNumberOfReplicas" } });
  assert.equal(degraded.status, 200, JSON.stringify(degraded.json));
  await page.getByRole("button", { name: "Refresh: read every feature live now" }).click();
  await panel.locator('[data-testid="feature-metrics_server"][data-status="DEGRADED"]').waitFor();
  await panel.getByText(/InsufficientNumberOfReplicas/).waitFor();
  const readAt = await page.getByTestId("features-read-at").locator("time").getAttribute("datetime");
  assert.ok(Date.now() - Date.parse(readAt) < 60_000, `read in full at ${readAt}, not by the Refresh`);

  const mine = mutations.slice(since).filter((m) => !m.dry_run); // plans change nothing and need no key
  assert.equal(mine.length, 1, JSON.stringify(mine)); // the refused change was never sent
  for (const m of mine) assert.ok(m.key && m.key.length >= 16, `${m.method} ${m.path} without an Idempotency-Key`);
  assert.equal(bodies.length, 1, JSON.stringify(bodies));
  assert.deepEqual(problems, []);
});
