// A cluster's life driven through the UI on a sandbox cluster made through the REST API: every page
// free of null/undefined/NaN, add instance group, scale (ok, refused, failed + retried), import,
// delete; and every mutation the UI sent carried an Idempotency-Key.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { assertCleanText, checkPage, launch, mutations, newPage, settledValue, shot, startSandbox, viewOperationFromFlash } from "./lib.mjs";

const REGION = "us-west-2";
const TYPE = "ml.g5.8xlarge";
const CLUSTER = "br-forms";
const THEIR_EKS = "Theirs_EKS"; // not a valid PodStart name: importing it needs one
const THEIR_HP = "theirs-hp";

let sb;
let browser;
let createOp;

before(async () => {
  sb = await startSandbox({ timeScale: Number(process.env.PODSTART_TIME_SCALE ?? 300) });
  browser = await launch();
  // The cluster the forms work on, made through the REST API (faster than the wizard).
  const r = await sb.api("/v1/clusters", {
    method: "POST",
    headers: { "Idempotency-Key": "browser-setup" },
    body: {
      name: CLUSTER, region: REGION, storage: { s3: true, fsx_lustre: { storage_capacity_gib: 1200 } },
      instance_groups: [{ name: "accel", instance_type: TYPE, instance_count: 1, availability_zone: "us-west-2a" }],
    },
  });
  assert.equal(r.status, 202, JSON.stringify(r.json));
  // A HyperPod-on-EKS cluster PodStart did not make (someone else's, in the same account).
  await sb.aws(`
import time, boto3
ec2, eks, sm = boto3.client("ec2"), boto3.client("eks"), boto3.client("sagemaker")
vpc = ec2.create_vpc(CidrBlock="172.21.0.0/16")["Vpc"]["VpcId"]
subs = [ec2.create_subnet(VpcId=vpc, CidrBlock=f"172.21.{i}.0/24", AvailabilityZone=z)["Subnet"]["SubnetId"]
        for i, z in enumerate(("us-west-2a", "us-west-2b"))]
sg = ec2.create_security_group(GroupName="theirs", Description="theirs", VpcId=vpc)["GroupId"]
c = eks.create_cluster(name="${THEIR_EKS}", roleArn="arn:aws:iam::123456789012:role/theirs",
                       resourcesVpcConfig={"subnetIds": subs}, accessConfig={"authenticationMode": "API_AND_CONFIG_MAP"})["cluster"]
for _ in range(240):
    if eks.describe_cluster(name="${THEIR_EKS}")["cluster"]["status"] == "ACTIVE":
        break
    time.sleep(0.25)
sm.create_cluster(ClusterName="${THEIR_HP}", Orchestrator={"Eks": {"ClusterArn": c["arn"]}}, NodeRecovery="Automatic",
    InstanceGroups=[{"InstanceGroupName": "workers", "InstanceType": "${TYPE}", "InstanceCount": 1, "ThreadsPerCore": 1,
                     "LifeCycleConfig": {"SourceS3Uri": "s3://theirs/lc", "OnCreate": "on_create.sh"},
                     "ExecutionRole": "arn:aws:iam::123456789012:role/theirs-exec"}],
    VpcConfig={"SecurityGroupIds": [sg], "Subnets": subs[:1]})
`);
  createOp = await sb.waitOperation(r.json.id);
  assert.equal(createOp.status, "SUCCEEDED", JSON.stringify(createOp.error));
});

after(async () => {
  await browser?.close();
  await sb?.stop();
});

async function signedIn(token = sb.token) {
  const { context, page, problems } = await newPage(browser);
  await page.goto(`${sb.base}/#token=${encodeURIComponent(token)}`);
  await page.getByRole("heading", { name: "Clusters", level: 1 }).waitFor();
  return { context, page, problems };
}

async function go(page, hash, heading) {
  await page.evaluate((h) => (window.location.hash = h), hash);
  if (heading) await page.getByRole("heading", { name: heading, level: 1 }).waitFor();
}

async function pick(page, testid, option) {
  await page.locator(`[data-testid="${testid}"] button`).first().click();
  await page.getByRole("option", { name: new RegExp(`^${option.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`) }).first().click();
}

/** The action was accepted and the page stayed (a flash follows it): follow the flash to the operation's page and
 * wait for its status there. */
async function waitForOperation(page, status, timeout = 120_000) {
  await viewOperationFromFlash(page);
  await page.locator(`[data-testid="operation-status"][data-status="${status}"]`).waitFor({ timeout });
}

const detail = `#/clusters/${REGION}/${CLUSTER}/groups`;
const storageTab = `#/clusters/${REGION}/${CLUSTER}/storage`;
const groupRow = (page, name) => page.getByRole("table", { name: "Instance groups" }).getByRole("row").filter({ has: page.getByRole("rowheader", { name, exact: true }) });

/** This test's mutations all carry a key (the last test checks the whole run covers every method). */
function keysSent(since) {
  const sent = mutations.slice(since);
  for (const m of sent) assert.ok(m.key, `${m.method} ${m.path} sent no Idempotency-Key`);
  return sent;
}

describe("clusters through the UI", () => {
  test("no page shows null, undefined, NaN or [object Object]", async () => {
    const since = mutations.length;
    const { context, page, problems } = await signedIn();
    // Clusters: the group counts show what is known (the list has no current counts yet: target only).
    const row = page.getByRole("row").filter({ has: page.getByRole("link", { name: CLUSTER, exact: true }) });
    await row.waitFor();
    assert.match(await row.innerText(), /accel: (1\/)?1 × ml\.g5\.8xlarge/);
    await assertCleanText(page, "clusters");
    await shot(page, "walk-clusters");
    // Set the active cluster both ways (PUT /v1/preferences).
    await pick(page, "active-select", "None");
    await page.getByText("No active cluster.").waitFor();
    await pick(page, "active-select", CLUSTER);
    await page.getByText(`Active cluster: ${CLUSTER} (${REGION}).`).waitFor();

    await go(page, storageTab, CLUSTER);
    await page.getByRole("table", { name: "Storage" }).getByText("podstart-fsx", { exact: true }).waitFor();
    const storage = await page.getByRole("table", { name: "Storage" }).innerText();
    assert.ok(!/Unknown/.test(storage), `storage shows Unknown:\n${storage}`);
    // What the API knows is what the page shows: each storage item's state and its claim's binding,
    // each group's counts.
    const known = (await sb.api(`/v1/clusters/${CLUSTER}?region=${REGION}`)).json;
    for (const item of known.storage) {
      const row = await page.getByRole("table", { name: "Storage" }).getByRole("row").filter({ has: page.getByRole("rowheader", { name: item.name, exact: true }) }).innerText();
      const state = item.lifecycle || item.status;
      if (state) assert.match(row, new RegExp(state, "i"), `${item.name}: ${row}`);
      if (item.pvc?.phase) assert.match(row, new RegExp(`${item.pvc.phase} \\(${item.pvc.name}`), `${item.name}: ${row}`);
    }
    await checkPage(page, "cluster-storage-tab");
    await go(page, detail, CLUSTER);
    await groupRow(page, "accel").waitFor();
    for (const g of known.instance_groups) {
      const row = await groupRow(page, g.name).innerText();
      if (typeof g.current_count === "number") assert.match(row, new RegExp(`${g.current_count} of ${g.target_count} running`), row);
      else assert.match(row, new RegExp(`target ${g.target_count}`), row);
    }
    await assertCleanText(page, "cluster detail");
    await shot(page, "walk-cluster-detail");
    for (const [button, name] of [["Add instance group", "Add an instance group"], ["Change size of accel", "Change the size"], ["Delete", "Delete"]]) {
      await page.getByRole("button", { name: button, exact: true }).click();
      const dialog = page.getByRole("dialog").filter({ hasText: name });
      await dialog.waitFor();
      await assertCleanText(page, `detail, dialog ${button}`);
      await dialog.getByRole("button", { name: "Cancel" }).click();
      await dialog.waitFor({ state: "hidden" });
    }

    await go(page, "#/operations", "Operations");
    await page.getByRole("link", { name: createOp.id }).waitFor();
    await assertCleanText(page, "operations");
    await go(page, `#/operations/${createOp.id}`);
    await page.locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor();
    await page.getByRole("button", { name: "Request (normalized)" }).click();
    if (await page.getByRole("button", { name: "Result" }).count()) await page.getByRole("button", { name: "Result" }).click();
    await assertCleanText(page, "operation detail, expanded");
    await shot(page, "walk-operation");

    await go(page, "#/clusters/new");
    await page.getByRole("heading", { name: "Cluster details" }).first().waitFor();
    await assertCleanText(page, "create wizard");

    await go(page, "#/import", "Import cluster");
    await assertCleanText(page, "import");
    await go(page, `#/import?region=${REGION}&eks_cluster_name=${THEIR_EKS}`, "Import cluster");
    await assertCleanText(page, "import, prefilled");
    await go(page, "#/no-such-page");
    await page.getByText(/Not found/).waitFor();
    await assertCleanText(page, "not found");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Access token").waitFor();
    await assertCleanText(page, "sign-in");
    const puts = keysSent(since).filter((m) => m.method === "PUT" && m.path === "/v1/preferences");
    assert.equal(puts.length, 2, "each choice of active cluster is one PUT");
    assert.notEqual(puts[0].key, puts[1].key, "each user action has its own key");
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("add an instance group: the form, its plan, then its progress to SUCCEEDED", async () => {
    const since = mutations.length;
    const { context, page, problems } = await signedIn();
    await go(page, detail, CLUSTER);
    await page.getByRole("button", { name: "Add instance group", exact: true }).click();
    const dialog = page.getByRole("dialog").filter({ hasText: "Add an instance group" });
    await dialog.getByLabel("Instance group name").fill("more");
    await pick(page, "zone-select", "us-west-2b");
    await dialog.getByRole("radio", { name: `Select ${TYPE}` }).check();
    await dialog.getByLabel("Instance count").fill("1");
    await shot(page, "add-group-form");
    // The review: what the group costs by the hour and its quota line, before the final button.
    await dialog.getByRole("button", { name: "Review" }).click();
    const hourly = await dialog.locator('[data-testid="plan-hourly"]').innerText();
    assert.match(hourly, /^\$\d/, hourly);
    assert.notEqual(hourly, "$0.00 / hour", "one more on-demand instance costs something");
    await dialog.getByText(new RegExp(`Quota ${TYPE.replace(/\./g, "\\.")}: 1 requested`)).waitFor();
    assert.match(await dialog.locator('[data-testid="plan-changes"]').innerText(), /^[1-9]\d* changes?$/);
    await assertCleanText(page, "add group, plan");
    await shot(page, "add-group-plan");
    await dialog.getByRole("button", { name: "Add instance group" }).click();
    await waitForOperation(page, "SUCCEEDED");
    await shot(page, "add-group-succeeded");
    await go(page, detail, CLUSTER);
    await groupRow(page, "more").waitFor();
    assert.match(await groupRow(page, "more").innerText(), /us-west-2b/);
    const sent = keysSent(since);
    assert.deepEqual(sent.map((m) => `${m.method} ${m.path}`), [`POST /v1/clusters/${CLUSTER}/instance-groups`]);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("delete group: type its name, read the plan (drain, update, capacity removed), confirm, follow it to the end", async () => {
    const since = mutations.length;
    const { context, page, problems } = await signedIn();
    await go(page, detail, CLUSTER);
    await groupRow(page, "more").waitFor();
    await page.getByRole("button", { name: "Delete more", exact: true }).click();
    const dialog = page.getByRole("dialog").filter({ hasText: "Delete instance group more?" });
    await dialog.waitFor();
    // The plan before the final button: the cluster update, capacity removed (a negative hourly cost), the warning.
    await dialog.locator('[data-testid="plan-changes"]').filter({ hasText: /^[1-9]\d* changes?$/ }).waitFor();
    await dialog.locator('[data-testid="plan-hourly"]').filter({ hasText: /^-\$\d/ }).waitFor();
    await dialog.locator('[data-testid="plan-warnings"]').filter({ hasText: /instance storage/ }).waitFor();
    assert.ok(await dialog.getByRole("button", { name: "Delete group" }).isDisabled(), "enabled before the name is typed");
    await dialog.getByRole("textbox", { name: /type/i }).fill("more");
    // A drain timeout past the allowed 3000 s: the plan says it cannot be planned, the delete is refused at the field.
    await dialog.getByLabel("Drain timeout (seconds)").fill("5000");
    await dialog.locator('[data-testid="plan-error"]').filter({ hasText: /drain_timeout_s: .*less than or equal to 3000/ }).waitFor();
    await dialog.getByText(/less than or equal to 3000/).nth(1).waitFor(); // in the plan, and at the field
    assert.ok(await dialog.getByRole("button", { name: "Delete group" }).isDisabled(), "Delete waits for a plan that is not refused");
    problems.length = 0; // the refused plan's 422 is expected
    // 300 s: the plan's warning says how long a PodDisruptionBudget may hold the drain.
    await dialog.getByLabel("Drain timeout (seconds)").fill("300");
    await dialog.locator('[data-testid="plan-warnings"]').filter({ hasText: /more than 300 s/ }).waitFor();
    await assertCleanText(page, "delete group, plan");
    await shot(page, "delete-group-plan");
    await dialog.getByRole("button", { name: "Delete group" }).click();
    await waitForOperation(page, "SUCCEEDED");
    for (const step of ["drain", "instance_group", "gone"]) await page.locator(`li.ps-step[data-step="${step}"][data-status="SUCCEEDED"]`).waitFor();
    await shot(page, "delete-group-succeeded");
    await go(page, detail, CLUSTER);
    await groupRow(page, "accel").waitFor();
    assert.equal(await groupRow(page, "more").count(), 0, "the deleted group is still listed");
    const sent = keysSent(since);
    // the one that ran (the refused 5000 s was never sent: its plan said no)
    assert.deepEqual(sent.map((m) => `${m.method} ${m.path}`), [`DELETE /v1/clusters/${CLUSTER}/instance-groups/more`]);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("scale: a refused count shows at the field; a good one shows its cost, then runs to SUCCEEDED", async () => {
    const since = mutations.length;
    const { context, page, problems } = await signedIn();
    await go(page, detail, CLUSTER);
    await page.getByRole("button", { name: "Change size of accel" }).click();
    const dialog = page.getByRole("dialog").filter({ hasText: "Change the size of accel" });
    await dialog.getByLabel("Instance count").fill("999");
    // The plan of 999 is refused like the request would be: the plan says so...
    await dialog.locator('[data-testid="plan-error"]').waitFor();
    const probe = await sb.api(`/v1/clusters/${CLUSTER}/instance-groups/accel`, { method: "PATCH", body: { instance_count: 999 }, headers: { "Idempotency-Key": "probe-999" } });
    assert.equal(probe.status, 422);
    // ...the field shows why (the plan says it too), and Save stays disabled: nothing is sent.
    await dialog.getByText(probe.json.errors[0].msg).nth(1).waitFor();
    assert.ok(await dialog.getByRole("button", { name: "Save" }).isDisabled(), "Save waits for a plan that is not refused");
    await shot(page, "scale-refused");
    problems.length = 0; // the refused plan's 422 is expected
    await dialog.getByLabel("Instance count").fill("2");
    // 1 -> 2: one more instance at the unit price, by the hour.
    const plan = (await sb.api(`/v1/clusters/${CLUSTER}/instance-groups/accel?region=${REGION}&dry_run=true`, { method: "PATCH", body: { instance_count: 2 }, headers: { "Idempotency-Key": "probe-plan-2" } })).json;
    assert.ok(plan.cost.hourly > 0, JSON.stringify(plan.cost));
    const hourly = dialog.locator('[data-testid="plan-hourly"]');
    await hourly.filter({ hasText: /^\$\d/ }).waitFor();
    assert.notEqual(await hourly.innerText(), "$0.00 / hour");
    assert.equal(await hourly.innerText(), `$${plan.cost.hourly.toFixed(2)} / hour`);
    assert.equal(await dialog.locator('[data-testid="plan-warnings"]').count(), 0, "scaling out warns of nothing");
    await shot(page, "scale-plan");
    await dialog.getByRole("button", { name: "Save" }).click();
    await waitForOperation(page, "SUCCEEDED");
    await shot(page, "scale-succeeded");
    await go(page, detail, CLUSTER);
    await groupRow(page, "accel").filter({ hasText: /of 2 running|target 2/ }).waitFor();
    const sent = keysSent(since);
    assert.deepEqual(sent.map((m) => m.method), ["PATCH"], "only the accepted count was sent (the refused one never left the form)");
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("scale that fails in AWS ends FAILED on its progress page, and Retry completes it", async () => {
    const since = mutations.length;
    const fault = await sb.api("/v1/sandbox/faults", {
      method: "POST",
      body: { service: "sagemaker", operation: "UpdateCluster", error_code: "ValidationException", count: 1, message: "injected by the browser test" },
    });
    assert.equal(fault.status, 201);
    const { context, page, problems } = await signedIn();
    await go(page, detail, CLUSTER);
    await page.getByRole("button", { name: "Change size of accel" }).click();
    const dialog = page.getByRole("dialog").filter({ hasText: "Change the size of accel" });
    // Looking at a scale-in first (2 -> 1): the plan warns that work on the removed instance stops.
    await dialog.getByLabel("Instance count").fill("1");
    assert.match(await dialog.locator('[data-testid="plan-warnings"]').innerText(), /work running on them stops/);
    assert.match(await dialog.locator('[data-testid="plan-hourly"]').innerText(), /^-\$\d/);
    await shot(page, "scale-in-plan");
    await dialog.getByLabel("Instance count").fill("3");
    await dialog.locator('[data-testid="plan-warnings"]').waitFor({ state: "detached" });
    await dialog.locator('[data-testid="plan-hourly"]').waitFor();
    await dialog.getByRole("button", { name: "Save" }).click();
    await waitForOperation(page, "FAILED");
    assert.match(await page.locator("[data-step]").filter({ hasText: "injected" }).first().innerText(), /ValidationException|injected/);
    await shot(page, "scale-failed");
    await page.getByRole("button", { name: "Retry" }).click();
    await page.locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor({ timeout: 120_000 });
    const sent = keysSent(since);
    assert.deepEqual(sent.map((m) => m.method), ["PATCH", "POST"]);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("clusters PodStart does not manage are listed with Import, prefilled", async () => {
    // Before the import test adopts it, the HyperPod-on-EKS cluster made behind PodStart's back is external.
    const items = (await sb.api("/v1/clusters")).json.items;
    const external = items.find((c) => c.origin === "external" && c.eks_cluster_name === THEIR_EKS);
    assert.ok(external, `the external cluster is listed: ${JSON.stringify(items.map((c) => [c.name, c.origin]))}`);
    assert.equal(external.importable, true);
    const { context, page } = await signedIn();
    const row = page.getByRole("row").filter({ hasText: external.name });
    await row.getByText("Not managed").waitFor();
    // Other regions' untracked clusters come from the scheduled scan: the page says when it last ran (the sandbox
    // runs it at start).
    const { json: listed } = await sb.api("/v1/clusters");
    assert.ok(listed.discovered_at, JSON.stringify(listed).slice(0, 300));
    assert.match(await page.getByTestId("discovery-note").innerText(), /in regions without its clusters: as of the scan .* \(every 10 minutes\)/);
    await assertCleanText(page, "clusters with an external cluster");
    await shot(page, "clusters-external");
    await row.getByRole("button", { name: `Import ${external.name}` }).click();
    await page.getByRole("heading", { name: "Import cluster", level: 1 }).waitFor();
    assert.equal(await settledValue(page.getByLabel("EKS cluster name"), THEIR_EKS), THEIR_EKS);
    assert.match(await page.locator('[data-testid="import-region-select"]').innerText(), new RegExp(REGION));
    // No PodStart name: the EKS name is not a valid one, and the API says so, with a suggestion, at the field.
    await page.getByRole("button", { name: "Import", exact: true }).click();
    const probe = await sb.api("/v1/clusters/import", { method: "POST", body: { region: REGION, eks_cluster_name: THEIR_EKS }, headers: { "Idempotency-Key": "probe-no-name" } });
    assert.equal(probe.status, 422, JSON.stringify(probe.json));
    const msg = probe.json.errors.find((e) => e.loc.at(-1) === "name").msg;
    const shown = page.getByText(msg, { exact: true });
    await shown.waitFor();
    const id = await shown.evaluate((el) => el.closest("[id]")?.id);
    const describedBy = (await page.getByLabel("PodStart name").getAttribute("aria-describedby")) ?? "";
    assert.ok(id && describedBy.split(" ").includes(id), `the error (${id}) describes the name input (${describedBy})`);
    await shot(page, "import-needs-name");
    await context.close();
  });

  test("import: admin only; a bad name shows at the name field; a good one runs to SUCCEEDED", async () => {
    const since = mutations.length;
    // A viewer sees why Import is not offered.
    if (sb.tokens.viewer) {
      const v = await signedIn(sb.tokens.viewer);
      await v.page.getByTestId("identity").filter({ hasText: "viewer" }).waitFor();
      await go(v.page, "#/import", "Import cluster");
      await v.page.getByText("Only an admin can import a cluster").first().waitFor();
      assert.ok(await v.page.getByRole("button", { name: "Import", exact: true }).isDisabled());
      await shot(v.page, "import-viewer");
      await v.context.close();
    }
    const { context, page } = await signedIn();
    await page.getByRole("button", { name: "Import cluster" }).click();
    await page.getByRole("heading", { name: "Import cluster", level: 1 }).waitFor();
    await pick(page, "import-region-select", REGION);
    await page.getByLabel("EKS cluster name").fill(THEIR_EKS);
    await page.getByLabel("PodStart name").fill("Bad_Name");
    await page.getByRole("button", { name: "Import", exact: true }).click();
    const probe = await sb.api("/v1/clusters/import", { method: "POST", body: { region: REGION, eks_cluster_name: THEIR_EKS, name: "Bad_Name" }, headers: { "Idempotency-Key": "probe-bad-name" } });
    assert.equal(probe.status, 422);
    const msg = probe.json.errors.find((e) => e.loc.at(-1) === "name").msg;
    const shown = page.getByText(msg, { exact: true });
    await shown.waitFor();
    const id = await shown.evaluate((el) => el.closest("[id]")?.id);
    const describedBy = (await page.getByLabel("PodStart name").getAttribute("aria-describedby")) ?? "";
    assert.ok(id && describedBy.split(" ").includes(id), `the error (${id}) describes the name input (${describedBy})`);
    await shot(page, "import-bad-name");
    await page.getByLabel("PodStart name").fill("theirs");
    await page.getByRole("button", { name: "Import", exact: true }).click();
    await waitForOperation(page, "SUCCEEDED");
    await shot(page, "import-succeeded");
    await go(page, "#/clusters", "Clusters");
    await page.getByRole("link", { name: "theirs", exact: true }).waitFor();
    await assertCleanText(page, "clusters after import");
    const sent = keysSent(since);
    assert.deepEqual(sent.map((m) => `${m.method} ${m.path}`), ["POST /v1/clusters/import", "POST /v1/clusters/import"]);
    await context.close();
  });

  test("delete: type the name, then its progress to SUCCEEDED; the list no longer has it", async () => {
    const since = mutations.length;
    const { context, page } = await signedIn();
    await go(page, detail, CLUSTER);
    await page.getByRole("button", { name: "Delete", exact: true }).click();
    const dialog = page.getByRole("dialog").filter({ hasText: `Delete ${CLUSTER}?` });
    const confirm = dialog.getByRole("button", { name: "Delete", exact: true });
    assert.ok(await confirm.isDisabled(), "Delete waits for the typed name");
    await dialog.getByLabel(`Type ${CLUSTER} to confirm`).fill(CLUSTER);
    await shot(page, "delete-confirm");
    await confirm.click();
    await waitForOperation(page, "SUCCEEDED", 180_000);
    await shot(page, "delete-succeeded");
    assert.equal((await sb.api(`/v1/clusters/${CLUSTER}?region=${REGION}`)).status, 404);
    const left = (await sb.api("/v1/clusters")).json.items.length;
    await go(page, "#/clusters", "Clusters");
    await page.getByRole("heading", { level: 1 }).filter({ hasText: `(${left})` }).waitFor();
    assert.equal(await page.getByRole("link", { name: CLUSTER, exact: true }).count(), 0);
    const sent = keysSent(since);
    assert.deepEqual(sent.map((m) => m.method), ["DELETE"]);
    await context.close();
  });

  test("every mutation the UI sent to /v1 carried an Idempotency-Key", () => {
    assert.ok(mutations.length >= 6, `mutations seen: ${mutations.length}`);
    for (const m of mutations) assert.ok(m.key && m.key.length >= 16, `${m.method} ${m.path} without an Idempotency-Key`);
    const methods = new Set(mutations.map((m) => m.method));
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) assert.ok(methods.has(method), `no ${method} was exercised`);
  });
});
