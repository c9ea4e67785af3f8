// The console's Connections page in a real browser (Debian's chromium driven by
// playwright-core), as an administrator reads it after people connected their own upstream
// accounts ([user_auth]): who is connected to what and since when, no token anywhere in the
// page, a filter, and Remove. At 1280 and 360 px: no text null/undefined/NaN, no sideways
// scrolling, axe-core finds no serious or critical violation, no Content-Security-Policy
// violation. Run by the e2e test `user_auth::console`, which connected the people first and
// checks afterwards that the removed caller is asked to connect again.
//
// Usage: node tests/console/connections.mjs CONSOLE_URL ADMIN_TOKEN OUT
//   EXPECT: {"callers": [...], "upstream": "...", "remove": "<caller>"}
//   SECRETS: the tokens the upstream saw, one per line (none may appear in the page)
//   BROWSER_MODULES: INTEROP_DIR/browser/node_modules
import { mkdirSync } from "node:fs";
import { axe, check, cspViolations, hasFailed, launchChromium, noOverflow, path, readableText, sleep, step } from "./lib.mjs";

const [base, token, out] = process.argv.slice(2);
const expect = JSON.parse(process.env.EXPECT || "{}");
const secrets = (process.env.SECRETS || "").split("\n").filter((s) => s.length > 8);
if (!base || !token || !out || !expect.callers || !process.env.BROWSER_MODULES) {
  console.error("usage: EXPECT=... SECRETS=... BROWSER_MODULES=... node tests/console/connections.mjs CONSOLE_URL ADMIN_TOKEN OUT");
  process.exit(2);
}
mkdirSync(out, { recursive: true });

const { browser, axeSource } = await launchChromium(process.env.BROWSER_MODULES);
const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
page.setDefaultTimeout(8000);
const violations = cspViolations(page);
const rows = () => page.$$eval("#connections tbody tr", (trs) => trs.map((tr) => [...tr.cells].map((td) => td.innerText.trim())));

await step("sign in and open Connections", async () => {
  await page.goto(base);
  await page.fill("#token", token);
  await page.click("#login-form button");
  await page.waitForSelector("#login", { state: "hidden" });
  await page.evaluate(() => (location.hash = "#connections"));
  await page.waitForSelector('#page h2:text-is("Connections")');
  await page.waitForSelector("#connections-count");
});

await step("who is connected to what, and since when", async () => {
  const intro = await page.textContent("#page p.muted");
  check(intro.includes(expect.upstream) && intro.includes("Tokens are never shown"), `the page names the upstreams and says tokens are never shown ("${intro.trim().slice(0, 160)}")`);
  const count = await page.textContent("#connections-count");
  check(count.trim() === `${expect.callers.length} connections.`, `the count reads "${expect.callers.length} connections." (got "${count.trim()}")`);
  const got = await rows();
  for (const caller of expect.callers) {
    const row = got.find((r) => r[0] === caller);
    check(!!row && row[1] === expect.upstream, `a row for ${caller} at ${expect.upstream}${row ? "" : ` (rows: ${JSON.stringify(got)})`}`);
    if (row) {
      check(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/.test(row[2]), `${caller}: when connected, as a time (${row[2]})`);
      check(/UTC|not said/.test(row[3]), `${caller}: the token's expiry (${row[3]})`);
      check(row[4] === "yes" || row[4] === "no", `${caller}: refreshable yes or no (${row[4]})`);
    }
  }
  const html = await page.content();
  const leaked = secrets.filter((s) => html.includes(s));
  check(secrets.length > 0 && leaked.length === 0, `none of the ${secrets.length} tokens the upstream saw is in the page`);
});

for (const [width, name] of [[1280, "wide"], [360, "narrow"]]) {
  await step(`the page at ${width} px`, async () => {
    await page.setViewportSize({ width, height: 860 });
    await sleep(200);
    await readableText(page, `Connections at ${width} px`);
    await noOverflow(page, `Connections at ${width} px`);
    await page.screenshot({ path: path.join(out, `connections-${name}.png`), fullPage: true });
  });
}
await step("axe", () => axe(page, axeSource, "Connections"));

await step("a filter finds one caller", async () => {
  const other = expect.callers.find((c) => c !== expect.remove);
  const word = other.split("#").pop();
  await page.fill("#connections-filter", word);
  await sleep(200);
  const count = await page.textContent("#connections-count");
  check(count.trim() === `1 of ${expect.callers.length} connections match '${word}'.`, `filtering by '${word}' reads "${count.trim()}"`);
  check((await rows()).length === 1, "one row is left");
  await page.fill("#connections-filter", "");
  await sleep(200);
});

await step("Remove", async () => {
  await page.click(`button[aria-label="Remove ${expect.remove} at ${expect.upstream}"]`);
  const status = await page.waitForSelector("#connections [role=status]:has-text('Removed')");
  check(!!status, `removing says "${(await status.textContent()).trim()}"`);
  await page.waitForFunction((gone) => ![...document.querySelectorAll("#connections tbody tr td:first-child")].some((td) => td.innerText.trim() === gone), expect.remove, { timeout: 6000 });
  const left = await rows();
  check(left.length === expect.callers.length - 1, `after removing, ${left.length} row(s) left: ${left.map((r) => r[0]).join(", ")}`);
});

check(violations.length === 0, `no Content-Security-Policy violation${violations.length ? `: ${violations[0]}` : ""}`);
await browser.close();
console.log(hasFailed() ? "connections page: FAILED" : "connections page: 0 failed");
process.exit(hasFailed() ? 1 : 0);
