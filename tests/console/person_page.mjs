// A page a person reads outside the console (the runtime's own HTML pages, e.g. a person's
// connections page under /oauth/), in a real browser (Debian's chromium driven by
// playwright-core), opened with the cookie their sign-in left: at 1280 and 360 px, no text
// null/undefined/NaN, no sideways scrolling, axe-core finds no serious or critical violation,
// no Content-Security-Policy violation, and each EXPECT line is in the text. Run by e2e tests
// (`user_auth::own_page`) after they signed the person in over real HTTP.
//
// Usage: node tests/console/person_page.mjs URL COOKIE_NAME=VALUE OUT NAME
//   EXPECT: lines the page's text must hold; BROWSER_MODULES: INTEROP_DIR/browser/node_modules
import { mkdirSync } from "node:fs";
import { axe, check, cspViolations, hasFailed, launchChromium, noOverflow, path, readableText, step } from "./lib.mjs";

const [url, cookie, out, name] = process.argv.slice(2);
if (!url || !cookie || !out || !name || !process.env.BROWSER_MODULES) {
  console.error("usage: EXPECT=... BROWSER_MODULES=... node tests/console/person_page.mjs URL COOKIE_NAME=VALUE OUT NAME");
  process.exit(2);
}
mkdirSync(out, { recursive: true });

const { browser, axeSource } = await launchChromium(process.env.BROWSER_MODULES);
// axe-core is injected by the test, not by the page: the page's own policy allows no script.
const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, bypassCSP: true });
const [cookieName, ...rest] = cookie.split("=");
await context.addCookies([{ name: cookieName, value: rest.join("="), url }]);
const page = await context.newPage();
const violations = cspViolations(page);

await step("open", async () => {
  const res = await page.goto(url);
  check(res.status() === 200, `${name} answers 200 (got ${res.status()})`);
  const text = await page.innerText("body");
  for (const line of (process.env.EXPECT || "").split("\n").filter(Boolean)) {
    check(text.includes(line), `${name} reads "${line}"${text.includes(line) ? "" : ` (text: ${text.slice(0, 300)})`}`);
  }
});
for (const width of [1280, 360]) {
  await step(`${name} at ${width} px`, async () => {
    await page.setViewportSize({ width, height: 860 });
    await readableText(page, `${name} at ${width} px`);
    await noOverflow(page, `${name} at ${width} px`);
    await page.screenshot({ path: path.join(out, `${name}-${width}.png`), fullPage: true });
  });
}
await step("axe", () => axe(page, axeSource, name));
check(violations.length === 0, `no Content-Security-Policy violation${violations.length ? `: ${violations[0]}` : ""}`);
await browser.close();
console.log(hasFailed() ? `${name}: FAILED` : `${name}: 0 failed`);
process.exit(hasFailed() ? 1 : 0);
