// Sign-in links (#token=...): in a fresh tab, in a signed-in tab (switch user), and on the sign-in
// page. The token never reaches the screen or stays in the address bar.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { assertCleanText, launch, newPage, shot, startSandbox } from "./lib.mjs";

let sb;
let browser;

before(async () => {
  sb = await startSandbox();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await sb?.stop();
});

const link = (token, route = "") => `${sb.base}/#${route}${route ? (route.includes("?") ? "&" : "?") : ""}token=${encodeURIComponent(token)}`;

async function identity(page, name) {
  const el = page.getByTestId("identity");
  await el.filter({ hasText: name }).waitFor();
  return el.innerText();
}

async function landedOnClusters(page, where) {
  await page.getByRole("heading", { name: "Clusters", level: 1 }).waitFor();
  const url = page.url();
  for (const t of Object.values(sb.tokens)) if (t) assert.ok(!url.includes(t), `${where}: token left in the URL ${url}`);
  assert.match(url, /#\/clusters$/, `${where}: lands on Clusters`);
  const text = await assertCleanText(page, where, Object.values(sb.tokens));
  assert.ok(!/Not found/.test(text), `${where}: shows Not found`);
  assert.ok(!/token=/.test(text), `${where}: shows token=`);
}

describe("sign-in links", () => {
  test("a link opened in a fresh tab signs in and lands on Clusters", async () => {
    const { context, page, problems } = await newPage(browser);
    await page.goto(link(sb.tokens.admin));
    await landedOnClusters(page, "fresh tab");
    assert.match(await identity(page, "sandbox-admin"), /sandbox-admin \(admin\)/);
    assert.equal(await page.evaluate(() => sessionStorage.getItem("podstart.token")), sb.tokens.admin);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("a link for another user, opened in a signed-in tab, switches the user", async () => {
    assert.ok(sb.tokens.viewer, "the sandbox writes a viewer token");
    const { context, page, problems } = await newPage(browser);
    await page.goto(link(sb.tokens.admin));
    await landedOnClusters(page, "first link");
    await page.evaluate(() => (window.location.hash = "#/operations"));
    await page.getByRole("heading", { name: "Operations", level: 1 }).waitFor();
    // The same tab, the viewer's link: only the fragment changes, so the page does not reload.
    await page.goto(link(sb.tokens.viewer));
    await landedOnClusters(page, "signed-in tab, viewer link");
    assert.match(await identity(page, "sandbox-viewer"), /sandbox-viewer \(viewer\)/);
    assert.equal(await page.evaluate(() => sessionStorage.getItem("podstart.token")), sb.tokens.viewer);
    await shot(page, "signin-switched-to-viewer");
    // And back, with a link that names a route (#/operations?token=...): the identity follows.
    const other = sb.tokens.operator ?? sb.tokens.admin;
    await page.evaluate((h) => (window.location.hash = h), link(other, "/operations").split("#")[1]);
    await page.getByRole("heading", { name: "Operations", level: 1 }).waitFor();
    await identity(page, sb.tokens.operator ? "(operator)" : "(admin)");
    assert.ok(!page.url().includes(other), "token left in the URL");
    await assertCleanText(page, "signed-in tab, link with a route", Object.values(sb.tokens));
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("a link opened on the sign-in page signs in", async () => {
    const { context, page } = await newPage(browser);
    await page.goto(`${sb.base}/`);
    await page.getByLabel("Access token").waitFor();
    await page.goto(link(sb.tokens.admin));
    await landedOnClusters(page, "sign-in page");
    await identity(page, "sandbox-admin");
    await context.close();
  });
});
