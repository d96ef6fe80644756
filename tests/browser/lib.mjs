// Shared helpers for the browser tests and the bench: a sandbox on a free port, Debian's Chromium
// driven by playwright-core (installed in web/node_modules; no browser downloads).
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const HERE = dirname(fileURLToPath(import.meta.url));
export const REPO = resolve(HERE, "..", "..");
export const ARTIFACTS = join(REPO, "test-artifacts", "browser");
const require = createRequire(join(REPO, "web", "package.json"));
export const { chromium } = require("playwright-core");

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const CHROMIUM_ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--no-first-run",
];

export function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.on("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Start `python -m sandbox` (the product's one port) and wait for /healthz. */
export async function startSandbox({ timeScale = 300 } = {}) {
  if (!existsSync(join(REPO, "web", "dist", "index.html"))) throw new Error("web/dist is missing: run `npm run build` in web/ first");
  const port = await freePort();
  const stateDir = mkdtempSync(join(tmpdir(), "podstart-browser-"));
  const python = process.env.PODSTART_PYTHON ?? join(REPO, ".venv", "bin", "python");
  const logs = [];
  const child = spawn(python, ["-m", "sandbox"], {
    cwd: REPO,
    env: {
      ...process.env,
      PYTHONPATH: REPO,
      PODSTART_PORT: String(port),
      PODSTART_STATE_DIR: stateDir,
      PODSTART_TIME_SCALE: String(timeScale),
      PODSTART_AWS_PORT: "0",
      PODSTART_KUBE_PORT: "0",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.on("data", (d) => logs.push(String(d)));
  child.stderr.on("data", (d) => logs.push(String(d)));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`sandbox exited ${child.exitCode}:\n${logs.join("")}`);
    try {
      const r = await fetch(`${base}/healthz`);
      if (r.ok) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) {
      child.kill("SIGTERM");
      throw new Error(`sandbox did not become healthy:\n${logs.join("")}`);
    }
    await sleep(250);
  }
  const token = readFileSync(join(stateDir, "token"), "utf8").trim();
  // One token per role (admin always; viewer and operator when this sandbox writes them).
  const tokenFile = (name) => (existsSync(join(stateDir, name)) ? readFileSync(join(stateDir, name), "utf8").trim() : undefined);
  const tokens = { admin: token, operator: tokenFile("operator-token"), viewer: tokenFile("viewer-token") };
  const api = async (path, { method = "GET", body, headers = {}, as = token } = {}) => {
    const r = await fetch(`${base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${as}`, ...(body ? { "Content-Type": "application/json" } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await r.text();
    let json = null;
    try { json = text ? JSON.parse(text) : null; } catch { json = text; }
    return { status: r.status, json };
  };
  const stop = async () => {
    if (child.exitCode !== null) return;
    child.kill("SIGINT");
    for (let i = 0; i < 40 && child.exitCode === null; i++) await sleep(100);
    if (child.exitCode === null) child.kill("SIGKILL");
  };
  /** Run Python (boto3) against the embedded AWS, as an operator would with the aws CLI. */
  const aws = async (code) => {
    const info = (await api("/v1/sandbox")).json;
    const r = spawnSync(python, ["-c", code], {
      cwd: REPO,
      encoding: "utf8",
      env: {
        ...process.env, PYTHONPATH: REPO, AWS_ENDPOINT_URL: info.aws_endpoint, AWS_DEFAULT_REGION: "us-west-2",
        AWS_ACCESS_KEY_ID: "testing", AWS_SECRET_ACCESS_KEY: "testing",
      },
    });
    if (r.status !== 0) throw new Error(`embedded AWS script failed:\n${r.stderr}`);
    return r.stdout;
  };
  /** Wait for an operation to end (through the API), and return it. */
  const waitOperation = async (id, timeout = 180_000) => {
    const deadline = Date.now() + timeout;
    for (;;) {
      let op;
      for (let attempt = 1; ; attempt++) {
        try {
          op = (await api(`/v1/operations/${id}?wait=10`)).json;
          break;
        } catch (e) {
          // A GET is safe to repeat: a connection the server closed under us is not the test's subject.
          if (attempt < 3 && e.cause?.code === "UND_ERR_SOCKET") continue;
          throw new Error(`GET /v1/operations/${id}: ${e.message} (${e.cause?.code ?? e.cause ?? ""})\n${logs.slice(-20).join("")}`);
        }
      }
      if (["SUCCEEDED", "FAILED", "CANCELLED"].includes(op.status)) return op;
      if (Date.now() > deadline) throw new Error(`operation ${id} still ${op.status}`);
    }
  };
  return { base, port, token, tokens, api, aws, waitOperation, stop, logs, hasClusters: (await api("/v1/clusters")).status !== 404 };
}

export async function launch() {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: apt-get install -y chromium`);
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}

/** Every mutation the UI sends to /v1, with its Idempotency-Key (tests assert each has one). */
export const mutations = [];

/** A page that records console errors and failed requests (tests assert there are none). */
export async function newPage(browser) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await context.newPage();
  const problems = [];
  page.on("request", (r) => {
    const url = new URL(r.url());
    // a plan (?dry_run=true) changes nothing: it is not a mutation
    if (url.pathname.startsWith("/v1/") && !["GET", "HEAD", "OPTIONS"].includes(r.method()) && url.searchParams.get("dry_run") !== "true")
      mutations.push({ method: r.method(), path: url.pathname, key: r.headers()["idempotency-key"] });
  });
  page.on("console", (m) => { if (m.type() === "error") problems.push(`console: ${m.text()}`); });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  // A failed request shows in the console without its URL: record which one it was.
  page.on("response", (r) => { if (r.status() >= 400) problems.push(`http ${r.status()}: ${r.request().method()} ${r.url().replace(/token=[^&]+/, "token=***")}`); });
  return { context, page, problems };
}

/** The words that must never reach the screen. */
export const BANNED = [/\bnull\b/, /\bundefined\b/, /\bNaN\b/, /\[object Object\]/];

/** Assert the page's visible text holds none of the banned words (nor any of `secrets`, e.g. tokens). */
export async function assertCleanText(page, where, secrets = []) {
  const text = await page.evaluate(() => document.body.innerText);
  const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  for (const re of [...BANNED, ...secrets.filter(Boolean).map((s) => new RegExp(escape(s)))]) {
    const m = re.exec(text);
    if (m) throw new Error(`${where}: ${JSON.stringify(m[0])} on screen: …${text.slice(Math.max(0, m.index - 80), m.index + 80)}…`);
  }
  return text;
}

/** Click what sends a mutation the API refuses, and wait for that refusal itself (a 4xx answer to a request that
 * is not a plan): the form's plan may show the same reason earlier, so waiting for the text alone would let a test
 * clear its expected problems before the refused request's answer arrives. */
export async function clickRefused(page, locator) {
  const refused = page.waitForResponse((r) => r.status() >= 400 && r.status() < 500 && r.request().method() !== "GET"
    && new URL(r.url()).searchParams.get("dry_run") !== "true");
  await locator.click();
  return refused;
}

/** Sign in to the sandbox's UI with a token in the URL fragment (the admin's unless told) and wait for the
 * Clusters page. */
export async function signIn(page, sb, token = sb.token) {
  await page.goto(`${sb.base}/#token=${encodeURIComponent(token)}`);
  await page.getByRole("heading", { name: "Clusters", level: 1 }).waitFor();
}

/** Open a tab of a cluster's page by clicking it (the tab lands in the URL). */
export async function openTab(page, region, cluster, tab) {
  if (!page.url().includes(`#/clusters/${region}/${cluster}`)) {
    await page.evaluate((h) => (window.location.hash = h), `#/clusters/${region}/${cluster}`);
    await page.getByRole("heading", { name: cluster, level: 1 }).waitFor();
  }
  await page.getByRole("tab", { name: tab, exact: true }).click();
  await page.getByRole("tab", { name: tab, exact: true, selected: true }).waitFor();
}

/** Sign in, open a cluster's page, and open its Endpoints tab. */
export async function openEndpointsPage(page, sb, region, cluster) {
  await signIn(page, sb);
  await openTab(page, region, cluster, "Endpoints");
  await page.waitForURL(new RegExp(`#/clusters/${region}/${cluster}/endpoints$`));
  await page.getByRole("table", { name: "Inference endpoints" }).waitFor();
}

export async function shot(page, name) {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

const AXE = join(REPO, "web", "node_modules", "axe-core", "axe.min.js");

/** axe-core on the page as it is: no serious or critical violation (each one named, with where it is). */
export async function assertAccessible(page, where) {
  if (!(await page.evaluate(() => typeof window.axe !== "undefined"))) await page.addScriptTag({ path: AXE });
  const found = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.slice(0, 3).map((n) => `${n.target.join(" ")} ${n.html.slice(0, 160)}`).join("; ")})`);
  });
  assert.deepEqual(found, [], `${where}: axe-core violations`);
}

/** The page scrolls only down: no horizontal scroll bar at the viewport's width. */
export async function assertNoHorizontalScroll(page, where) {
  const { scroll, width, widest } = await page.evaluate(() => {
    const d = document.documentElement;
    // the element that sticks out furthest, to say what overflows
    let widest = "";
    let right = d.clientWidth;
    for (const el of document.querySelectorAll("body *")) {
      const r = el.getBoundingClientRect();
      if (r.right > right + 1 && r.width > 0 && getComputedStyle(el).visibility !== "hidden") {
        right = r.right;
        widest = `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}.${[...el.classList].slice(0, 2).join(".")} (${Math.round(r.right)} px)`;
      }
    }
    return { scroll: d.scrollWidth, width: d.clientWidth, widest };
  });
  assert.ok(scroll <= width, `${where}: the page scrolls sideways at ${width} px (${scroll} px wide; widest: ${widest})`);
}

/** The page's checks and artifacts: axe-core (no serious or critical violation) at 1280 px, a screenshot at 1280
 * px and at 800 px (test-artifacts/browser/<name>-1280.png, -800.png), and no horizontal scroll at 800 px. The
 * viewport is put back after. */
/** An input's value once it equals `expected` (a form fills some fields from data it loads after it opens), or
 * its value after `timeout` ms, for the caller's assert to show. */
export async function settledValue(locator, expected, timeout = 10_000) {
  const deadline = Date.now() + timeout;
  let value = await locator.inputValue();
  while (value !== expected && Date.now() < deadline) {
    await sleep(100);
    value = await locator.inputValue();
  }
  return value;
}

export async function checkPage(page, name) {
  const size = page.viewportSize();
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.waitForTimeout(150);
  await assertAccessible(page, name);
  await shot(page, `${name}-1280`);
  await page.setViewportSize({ width: 800, height: 900 });
  await page.waitForTimeout(300);
  await assertNoHorizontalScroll(page, `${name} at 800 px`);
  await shot(page, `${name}-800`);
  if (size) await page.setViewportSize(size);
}

/** An action was accepted and the page stayed where it was: a flash follows the operation (with links to it and to
 * what it acted on). Waits for that flash (the newest of `kind` when given) and returns its operation id. */
export async function flashOf(page, kind) {
  const sel = kind ? `[data-testid="flash-operation"][data-kind="${kind}"]` : '[data-testid="flash-operation"]';
  const flash = page.locator(sel).first(); // the newest is on top
  await flash.waitFor({ timeout: 30_000 });
  assert.doesNotMatch(page.url(), /#\/operations\//, "the action left the page for the operation's");
  return flash.getAttribute("data-operation");
}

/** Wait until the flash of operation `id` says `status` (the page it was started from updating live). */
export async function flashStatus(page, id, status, timeout = 120_000) {
  await page.locator(`[data-testid="flash-operation"][data-operation="${id}"][data-status="${status}"]`).waitFor({ timeout });
}

/** From the flash of the action just accepted (the page stayed), follow "View operation" to its progress page. (The
 * flash re-renders as the operation moves: a click that landed on a replaced element is made again.) */
export async function viewOperationFromFlash(page, kind) {
  const id = await flashOf(page, kind);
  const link = page.locator(`[data-testid="flash-operation"][data-operation="${id}"]`).getByRole("link", { name: "View operation" });
  for (let attempt = 1; ; attempt++) {
    await link.click();
    try {
      await page.waitForURL(new RegExp(`#/operations/${id}$`), { timeout: 5000 });
      return id;
    } catch (e) {
      if (attempt >= 3) throw e;
    }
  }
}

/** Choose `option` in the Select whose trigger is `trigger` (a locator), as a user would: open it, pick the option,
 * and see the trigger show it; a pick that did not take (the list re-rendered under the pointer on a loaded machine)
 * is made again, up to three times. */
export async function choose(page, trigger, option) {
  const item = page.getByRole("option", { name: option, exact: true });
  for (let attempt = 1; ; attempt++) {
    if (!(await item.isVisible())) await trigger.click();
    await item.click();
    try {
      await trigger.filter({ hasText: option }).waitFor({ timeout: 5000 });
      return;
    } catch (e) {
      if (attempt >= 3) throw e;
    }
  }
}

/** Follow a side navigation link (opening the navigation first when a narrow window closed it). */
export async function sideNav(page, name) {
  const link = page.getByRole("navigation", { name: "Navigation" }).getByRole("link", { name, exact: true });
  if (!(await link.isVisible())) await page.getByRole("button", { name: "Open navigation" }).first().click();
  await link.click();
}

/** Setup most walks share: a cluster made through the REST API (one Idempotency-Key), watched to SUCCEEDED. */
export async function createCluster(sb, key, body) {
  const r = await sb.api("/v1/clusters", { method: "POST", headers: { "Idempotency-Key": key }, body });
  assert.equal(r.status, 202, JSON.stringify(r.json));
  const op = await sb.waitOperation(r.json.id);
  assert.equal(op.status, "SUCCEEDED", JSON.stringify(op.error));
  return op;
}

/** Setup, not the path under test: EKS add-ons created straight in the embedded AWS, each waited to ACTIVE. */
export async function addonsActive(sb, region, cluster, names) {
  await sb.aws(`
import boto3
import time
eks = boto3.client("eks", region_name="${region}")
for name in ${JSON.stringify(names)}:
    eks.create_addon(clusterName="${cluster}", addonName=name)
    deadline = time.monotonic() + 30
    while eks.describe_addon(clusterName="${cluster}", addonName=name)["addon"]["status"] != "ACTIVE":
        assert time.monotonic() < deadline, name + " did not become ACTIVE"
        time.sleep(0.1)
`);
}
