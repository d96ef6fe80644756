// UI bench: first-load transfer size and time against a sandbox, and time to render a 2,000-row
// operations table (the list is served by a Playwright route, so no 2,000 real operations are needed).
// Run: cd web && npm run build && npm run bench
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { REPO, launch, newPage, startSandbox } from "./lib.mjs";

const ROWS = 2000;
const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;

function distSizes() {
  const dir = join(REPO, "web", "dist");
  let raw = 0, gz = 0;
  const walk = (d) => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(js|css|html|svg)$/.test(f)) {
        const b = readFileSync(p);
        raw += b.length;
        gz += gzipSync(b).length;
      }
    }
  };
  walk(dir);
  return { raw, gz };
}

function fakeOperations(n) {
  const statuses = ["SUCCEEDED", "FAILED", "RUNNING", "CANCELLED", "PENDING"];
  const t = Date.parse("2026-01-01T00:00:00Z");
  return Array.from({ length: n }, (_, i) => ({
    id: `op-${String(i).padStart(5, "0")}`,
    kind: i % 3 ? "cluster.create" : "instance_group.add",
    target: { cluster: `cluster-${i % 40}`, region: "us-west-2", resource: null },
    status: statuses[i % statuses.length],
    phase: "hyperpod_cluster",
    steps: [],
    principal: { sub: "admin", name: "admin" },
    created_at: new Date(t + i * 60_000).toISOString(),
    updated_at: new Date(t + i * 60_000 + 30_000).toISOString(),
    version: 3,
  }));
}

/** A running job's page: each new log line's time on screen minus the time the pod wrote it (the line's own
 * millisecond timestamp; the sandbox and the browser share this machine's clock). */
async function liveLogLatency() {
  const cluster = "bench-logs";
  const made = await sb.api("/v1/clusters", { method: "POST", headers: { "Idempotency-Key": "bench-logs-cluster" },
    body: { name: cluster, region: "us-west-2", instance_groups: [{ name: "cpu", instance_type: "ml.c5.large", instance_count: 1, availability_zone: "us-west-2a" }] } });
  if ((await sb.waitOperation(made.json.id)).status !== "SUCCEEDED") throw new Error("bench cluster failed");
  const job = await sb.api(`/v1/clusters/${cluster}/jobs?region=us-west-2`, { method: "POST", headers: { "Idempotency-Key": "bench-logs-job" },
    body: { name: "tail", recipe: "pytorch", image: "123456789012.dkr.ecr.us-west-2.amazonaws.com/t:1", instance_type: "ml.c5.large",
            nodes: 1, gpus_per_node: 0, parameters: { script: "train.py", epochs: 1 } } });
  if ((await sb.waitOperation(job.json.id)).status !== "SUCCEEDED") throw new Error("bench job failed");
  const { context, page } = await newPage(browser);
  await page.goto(`${sb.base}/#token=${encodeURIComponent(sb.token)}`);
  await page.getByRole("heading", { name: "Clusters", level: 1 }).waitFor();
  await page.evaluate((h) => (window.location.hash = h), `#/clusters/us-west-2/${cluster}/jobs/tail`);
  await page.getByTestId("job-logs").waitFor();
  const lags = await page.evaluate(async () => {
    const box = document.querySelector('[data-testid="job-logs"]');
    const seen = new Set((box.textContent ?? "").split("\n"));
    const out = [];
    await new Promise((done) => {
      const obs = new MutationObserver(() => {
        const now = Date.now();
        for (const line of (box.textContent ?? "").split("\n")) {
          if (seen.has(line)) continue;
          seen.add(line);
          const at = Date.parse(line.split(" ", 1)[0]);
          if (!Number.isNaN(at)) out.push(now - at);
        }
      });
      obs.observe(box, { childList: true, characterData: true, subtree: true });
      setTimeout(() => { obs.disconnect(); done(); }, 15_000);
    });
    return out;
  });
  await context.close();
  const sorted = [...lags].sort((a, b) => a - b);
  const q = (p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : NaN);
  return { n: sorted.length, p50: q(0.5), p95: q(0.95) };
}

function fakeNodes(n) {
  const t = Date.parse("2026-01-01T00:00:00Z");
  const health = ["Schedulable", "Schedulable", "Schedulable", "UnschedulablePendingReboot", "Unschedulable"];
  return Array.from({ length: n }, (_, i) => ({
    node_id: `i-${(0x100000000 + i).toString(16).padStart(17, "0")}`, node_logical_id: null,
    kubernetes_node: `hyperpod-i-${i}`, group: `cpu${Math.floor(i / 340)}`, instance_type: "ml.c5.large",
    zone: "us-west-2a", status: "Running", status_message: null, health: health[i % health.length],
    ready: i % 5 !== 4, gpus_allocatable: 0, efa_allocatable: 0,
    launch_time: new Date(t + i * 1000).toISOString(), last_action: null,
  }));
}

/** The cluster page's Nodes tab with 2,000 nodes (served by a route): time to rows, then a scroll from top to
 * bottom one step per frame, counting frames that took longer than 1.5 frames (dropped). */
async function nodesTable(cluster) {
  const { context, page } = await newPage(browser);
  const rows = fakeNodes(ROWS);
  await page.route(new RegExp(`/v1/clusters/${cluster}/nodes(\\?|$)`), (route) =>
    route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify({ items: rows, next_token: null }) }));
  await page.goto(`${sb.base}/#token=${encodeURIComponent(sb.token)}`);
  await page.getByRole("heading", { name: "Clusters", level: 1 }).waitFor();
  const out = await page.evaluate(async ({ n, hash }) => {
    const t = performance.now();
    window.location.hash = hash;
    const sel = `table[data-rows="${n}"] tbody tr[aria-rowindex]`;
    while (!document.querySelector(sel)) await new Promise((r) => requestAnimationFrame(r));
    const first = performance.now() - t;
    const table = document.querySelector(`table[data-rows="${n}"]`);
    const scroller = table.closest(".ps-vtable-scroll") ?? document.querySelector(".ps-vtable-scroll");
    const steps = 240;
    const step = scroller.scrollHeight / steps;
    // one pass top to bottom (down) or back (up), one step per frame
    const pass = async (down) => {
      const gaps = [];
      let last = performance.now();
      for (let i = 1; i <= steps; i++) {
        scroller.scrollTop = (down ? i : steps - i) * step;
        await new Promise((r) => requestAnimationFrame(r));
        const now = performance.now();
        gaps.push(now - last);
        last = now;
      }
      const sorted = [...gaps].sort((a, b) => a - b);
      const frame = sorted[Math.floor(sorted.length / 2)];
      return { frames: gaps.length, frame, dropped: gaps.filter((g) => g > 1.5 * frame).length, worst: sorted[sorted.length - 1] };
    };
    // at once, while the rest of the cluster page is still loading (its other panels' requests and renders)...
    const loading = await pass(true);
    const lastRow = !!document.querySelector(`tr[aria-rowindex="${n + 1}"]`);
    // ...and once the page has settled, as a user scrolls a list they are reading: back up, then down again
    await new Promise((r) => setTimeout(r, 1500));
    await pass(false);
    await new Promise((r) => setTimeout(r, 500));
    const settled = await pass(true);
    return { first, ...loading, lastRow, settled };
  }, { n: ROWS, hash: `#/clusters/us-west-2/${cluster}` });
  await context.close();
  return out;
}

const sb = await startSandbox();
const browser = await launch();
try {
  const dist = distSizes();
  // First load, cold cache.
  const { context, page } = await newPage(browser);
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  let wire = 0, requests = 0;
  cdp.on("Network.loadingFinished", (e) => { wire += e.encodedDataLength; requests += 1; });
  const t0 = Date.now();
  await page.goto(`${sb.base}/#token=${encodeURIComponent(sb.token)}`);
  await page.getByRole("heading", { name: "Clusters", level: 1 }).waitFor();
  const toHeading = Date.now() - t0;
  await page.waitForLoadState("networkidle");
  const nav = await page.evaluate(() => {
    const n = performance.getEntriesByType("navigation")[0];
    const fcp = performance.getEntriesByName("first-contentful-paint")[0];
    return { domContentLoaded: n.domContentLoadedEventEnd, load: n.loadEventEnd, fcp: fcp ? fcp.startTime : null };
  });
  const firstWire = wire, firstRequests = requests;

  // 2,000-row operations table.
  const ops = fakeOperations(ROWS);
  await page.route(/\/v1\/operations(\?|$)/, (route) =>
    route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify({ items: ops, next_token: null }) }));
  const render = await page.evaluate(async (rows) => {
    const t = performance.now();
    window.location.hash = "#/operations";
    const sel = `table[data-rows="${rows}"] tbody tr[aria-rowindex]`;
    while (!document.querySelector(sel)) await new Promise((r) => requestAnimationFrame(r));
    const first = performance.now() - t;
    const scroller = document.querySelector(".ps-vtable-scroll");
    const t2 = performance.now();
    scroller.scrollTop = scroller.scrollHeight;
    const last = `tr[aria-rowindex="${rows + 1}"]`;
    while (!document.querySelector(last)) await new Promise((r) => requestAnimationFrame(r));
    return { first, scrollToEnd: performance.now() - t2, domRows: document.querySelectorAll("table[data-rows] tbody tr[aria-rowindex]").length };
  }, ROWS);
  await context.close();

  const live = await liveLogLatency();
  const nodes = await nodesTable("bench-logs");

  console.log("PodStart web UI bench");
  console.log(`  dist (js+css+html+svg):     ${kb(dist.raw)} raw, ${kb(dist.gz)} gzipped (all chunks)`);
  console.log(`  first load transferred:     ${kb(firstWire)} in ${firstRequests} requests (sandbox serves uncompressed)`);
  console.log(`  first load, to "Clusters":  ${toHeading} ms (DOMContentLoaded ${nav.domContentLoaded.toFixed(0)} ms, load ${nav.load.toFixed(0)} ms, FCP ${nav.fcp?.toFixed(0) ?? "n/a"} ms)`);
  console.log(`  ${ROWS}-row operations table: ${render.first.toFixed(0)} ms to first rows (navigation + fetch + render), ${render.scrollToEnd.toFixed(0)} ms to scroll to the last row; ${render.domRows} rows in the DOM`);
  console.log(`  ${ROWS}-node Nodes tab: ${nodes.first.toFixed(0)} ms to first rows; scrolled to the last row (${nodes.lastRow ? "reached" : "NOT reached"}) in ${nodes.frames} frames of ~${nodes.frame.toFixed(1)} ms: ${nodes.dropped} dropped (> 1.5 frames), worst ${nodes.worst.toFixed(0)} ms, while the page was still loading`);
  console.log(`  ${ROWS}-node Nodes tab, page settled: ${nodes.settled.frames} frames of ~${nodes.settled.frame.toFixed(1)} ms: ${nodes.settled.dropped} dropped, worst ${nodes.settled.worst.toFixed(0)} ms`);
  console.log(`  live job log (pod writes a line -> the job page shows it), ${live.n} lines: p50 ${live.p50} ms, p95 ${live.p95} ms (goal p95 <= 2000 ms): ${live.p95 <= 2000 ? "OK" : "OVER"}`);
} finally {
  await browser.close();
  await sb.stop();
}
