// The Storage panel on a sandbox cluster: a bad bucket is refused on its field, an existing bucket is
// mounted (progress on the operation page, then its claim Bound on the cluster page), then removed
// (the bucket stays); every mutation carried an Idempotency-Key.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { assertCleanText, launch, mutations, newPage, shot, startSandbox } from "./lib.mjs";

const REGION = "us-west-2";
const CLUSTER = "br-storage";
const BUCKET = "br-datasets";

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
  await sb.aws(`
import boto3
s3 = boto3.client("s3", region_name="${REGION}")
s3.create_bucket(Bucket="${BUCKET}", CreateBucketConfiguration={"LocationConstraint": "${REGION}"})
s3.put_object(Bucket="${BUCKET}", Key="train/a.jsonl", Body=b"{}")
`);
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
  await page.goto(`${sb.base}/#token=${encodeURIComponent(sb.token)}`);
  await page.getByRole("heading", { name: "Clusters", level: 1 }).waitFor();
  const detail = `#/clusters/${REGION}/${CLUSTER}`;
  await page.evaluate((h) => (window.location.hash = h), detail);
  const storage = page.getByRole("table", { name: "Storage" });
  await storage.getByText("podstart-data", { exact: true }).waitFor();

  // A bucket that does not exist: the field says so, nothing starts.
  await page.getByRole("button", { name: "Add storage" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByRole("textbox", { name: "Bucket" }).fill("no-such-bucket");
  await dialog.getByRole("button", { name: "Add storage" }).click();
  await dialog.getByText(/no bucket 'no-such-bucket'/).waitFor();
  problems.length = 0; // the refused request's 422 is expected

  await dialog.getByRole("textbox", { name: "Bucket" }).fill(BUCKET);
  await dialog.getByRole("textbox", { name: "Prefix" }).fill("train/");
  await dialog.getByRole("textbox", { name: "Volume name" }).fill("train");
  await dialog.getByRole("textbox", { name: "Namespace" }).fill("ml");
  await dialog.getByRole("button", { name: "Add storage" }).click();
  await page.waitForURL(/#\/operations\/op-/);
  await page.locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });
  await assertCleanText(page, "storage.add operation");
  await shot(page, "storage-added");

  await page.evaluate((h) => (window.location.hash = h), detail);
  await page.locator('[data-testid="pvc-train"]', { hasText: "Bound (train in ml)" }).waitFor();
  const row = await storage.getByRole("row").filter({ has: page.getByRole("rowheader", { name: "train", exact: true }) }).innerText();
  assert.match(row, new RegExp(`${BUCKET}/train/`), row);
  await assertCleanText(page, "cluster storage panel");

  await page.getByRole("button", { name: "Remove train" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Remove" }).click();
  await page.waitForURL(/#\/operations\/op-/);
  await page.locator('[data-testid="operation-status"][data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });
  const left = (await sb.api(`/v1/clusters/${CLUSTER}/storage?region=${REGION}`)).json.items.map((i) => i.name);
  assert.ok(!left.includes("train"), left.join(", "));
  const objects = await sb.aws(`
import boto3
print(len(boto3.client("s3", region_name="${REGION}").list_objects_v2(Bucket="${BUCKET}")["Contents"]))
`);
  assert.equal(String(objects).trim(), "1");

  const mine = mutations.slice(since);
  assert.equal(mine.length, 3, JSON.stringify(mine));
  for (const m of mine) assert.ok(m.key && m.key.length >= 16, `${m.method} ${m.path} without an Idempotency-Key`);
  assert.deepEqual(problems, []);
});
