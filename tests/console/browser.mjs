// The operator console in a real browser (Debian's chromium driven by playwright-core, no
// browser download), asserting what an operator reads, not only that pages load. The real
// runtime binary serves the demo tools, a REST adapter over two real HTTP upstreams on
// loopback, a hosted stdio MCP server (the reference server-everything) and 500 generated
// REST tools; static tokens for an administrator and an ordinary caller.
//
// Checks: start-up names the console URL; every API refusal (no token, a wrong one, a
// non-admin's) leaves a log line; the sign-in box takes `Bearer <token>`; Overview is live
// (uptime, a rejected reload); each adapter's real kind on Catalog and Adapters; the 500
// tools are searchable in the catalog and the playground and callable from there; the
// playground's forms (required first, a boolean left unset), an elicitation round answered,
// declined and cancelled as distinct actions, prompts and resources (a template with its
// variable); an upstream killed shows ejected, a hosted server killed shows restarted; Calls
// charts a bounded number of tools with a filter for the rest; Connections without
// [user_auth] says what to configure (with it: connections.mjs); the config view shows no
// secret. On every page, at 1280 and 360 px, with a long reload-rejected message: no text
// `null`/`undefined`/`NaN`/`[object Object]`, no sideways scrolling; axe-core finds no
// serious or critical violation; no Content-Security-Policy violation. Screenshots go to OUT.
//
// Usage: node tests/console/browser.mjs BIN OUT   (BROWSER_MODULES: INTEROP_DIR/browser/node_modules)
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import { ADMIN, USER, axe, callTool, check, configText, failures, hasFailed, launchChromium, newLines, noOverflow, path, readableText, runtime, sleep, step, until, upstream } from "./lib.mjs";
import { pick, playgroundSteps } from "./playground.mjs";

const [bin, out] = process.argv.slice(2);
if (!bin || !out) {
  console.error("usage: node tests/console/browser.mjs BIN OUT");
  process.exit(2);
}
const modules = process.env.BROWSER_MODULES;
if (!modules) {
  console.error("BROWSER_MODULES must name the node_modules with playwright-core and axe-core (tests/interop/setup.sh installs them in INTEROP_DIR/browser)");
  process.exit(2);
}
// The reference MCP server the adapters page shows as a hosted stdio process (setup.sh
// installs it beside the browser packages).
const everything = path.join(modules, "../../upstreams/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
if (!existsSync(everything)) {
  console.error(`${everything} is missing: run bash tests/interop/setup.sh`);
  process.exit(2);
}
mkdirSync(out, { recursive: true });

const cleanups = [];
// What the browser said (page errors, console lines) and the page, printed when a step fails.
const logs = [];
let current = null;
const PAGES = { overview: "Overview", catalog: "Catalog", playground: "Playground", adapters: "Adapters", endpoints: "Endpoints", connections: "Connections", calls: "Calls", config: "Configuration" };
// A key no configuration has, long and unbroken: the reload is rejected and its message is
// the widest text the Overview can be asked to show.
const LONG_KEY = `an_unknown_setting_${"that_keeps_going_".repeat(8)}end`;

const shot = (page, name) => page.screenshot({ path: path.join(out, `${name}.png`), fullPage: true });

/**
 * Opens a page by its hash (not by clicking: a cut-off nav must not hide the other checks),
 * drawn afresh: when it is open already, by way of another page.
 */
async function open(page, name) {
  if ((await page.evaluate(() => location.hash.slice(1).split("?")[0])) === name) {
    const other = name === "config" ? "overview" : "config";
    await page.evaluate((n) => (location.hash = `#${n}`), other);
    await page.waitForSelector(`#page h2:text-is("${PAGES[other]}")`);
  }
  await page.evaluate((n) => (location.hash = `#${n}`), name);
  await page.waitForSelector(`#page h2:text-is("${PAGES[name]}")`);
  await sleep(300);
}

async function main() {
  const a = await upstream("a");
  const b = await upstream("b");
  cleanups.push(() => a.close(), () => b.close());
  const url = (s) => `http://127.0.0.1:${s.address().port}`;
  const dir = mkdtempSync(path.join(os.tmpdir(), "console-"));
  const config = path.join(dir, "console.toml");
  const text = configText({ a: url(a), b: url(b), everything, node: process.execPath });
  writeFileSync(config, text);
  const rt = await runtime(bin, config, cleanups);
  const { mcp, log } = rt;
  const base = mcp.replace(/\/mcp$/, "/console/");
  console.log(`runtime at ${mcp}, console at ${base}`);
  check(rt.console === base, `start-up prints the console URL (mcp-runtime console on ${rt.console})`);

  const { browser, axeSource } = await launchChromium(modules);
  cleanups.push(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  page.setDefaultTimeout(8000);
  const violations = [];
  current = page;
  page.on("pageerror", (e) => logs.push(String(e)));
  page.on("console", (m) => {
    logs.push(m.text());
    if (/Content Security Policy|Refused to/.test(m.text())) violations.push(m.text());
  });

  await step("sign-in and refusals", async () => {
    await page.goto(base);
    await page.waitForSelector("#login:not([hidden])");
    const refused = async (what, headers, status) => {
      const before = log().length;
      const got = await page.evaluate(async (h) => (await fetch("api/overview", { headers: h })).status, headers);
      check(got === status, `the API ${what} answers ${status} (got ${got})`);
      await sleep(300);
      const lines = newLines(log, before, "console");
      check(lines.length > 0, `the API refusal ${what} leaves a log line${lines.length ? `: ${lines[0].trim().slice(0, 140)}` : ""}`);
    };
    await refused("without a token", {}, 401);
    await refused("with a wrong token", { authorization: "Bearer not-a-token-of-this-server-0123" }, 401);
    await refused("with a non-admin token", { authorization: `Bearer ${USER}` }, 403);
    await shot(page, "login");
    await axe(page, axeSource, "the sign-in page");
    await page.fill("#token", USER);
    await page.click("#login-form button");
    await page.waitForSelector("#login-error:has-text('not a console administrator')");
    check(true, "a non-admin token is refused with a message naming the rule");
  });

  await step("the sign-in box takes 'Bearer <token>'", async () => {
    await page.fill("#token", `  bearer ${ADMIN} \n`);
    await page.click("#login-form button");
    const ok = await page.waitForSelector("text=console-demo", { timeout: 5000 }).then(() => true, () => false);
    check(ok && (await page.isHidden("#login")), "the sign-in box accepts a pasted 'bearer <token>' (scheme and blanks stripped)");
    if (!ok) {
      // Go on with the bare token so that the other checks still run.
      await page.fill("#token", ADMIN);
      await page.click("#login-form button");
      await page.waitForSelector("text=console-demo");
    }
    check(await page.isHidden("#login"), "the console loads with the admin token");
  });

  await step("Overview is live", async () => {
    const uptime = page.locator("dt:text-is('Uptime') + dd");
    const first = await uptime.textContent();
    await sleep(3500);
    const then = await uptime.textContent();
    check(first !== then, `Overview updates the uptime without navigation (${first} -> ${then})`);
    await shot(page, "overview");
    await axe(page, axeSource, "Overview");
    await readableText(page, "Overview");
  });

  await step("Catalog", async () => {
    await open(page, "catalog");
    const search = page.locator("#catalog-search");
    const searchable = (await search.count()) === 1;
    check(searchable, "the catalog has a search box");
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    check(height < 8000, `the catalog of 521 tools stays a page, not a wall (${height} px tall)`);
    for (const [tool, adapter, kind] of [["echo", "demo", "fixtures"], ["who", "inventory", "rest"], ["ev_echo", "everything", "mcp"], ["bulk_0001", "bulk", "rest"]]) {
      if (searchable) await search.fill(tool);
      const summary = (await page.textContent(`#tool-${tool} summary`)).replace(/\s+/g, " ");
      check(summary.includes(`${adapter} · ${kind}`), `the catalog shows ${tool}'s adapter and kind '${adapter} · ${kind}' (shows: ${summary.trim()})`);
    }
    const visible = async () => page.locator("details.tool").evaluateAll((els) => els.filter((e) => e.offsetParent !== null).map((e) => e.id));
    if (searchable) {
      for (const [query, want] of [["0427", ["tool-bulk_0427"]], ["bulk record 427", ["tool-bulk_0427"]], ["posts its", ["tool-survey"]], ["inventory", ["tool-who"]]]) {
        await search.fill(query);
        await sleep(150);
        const got = await visible();
        check(JSON.stringify(got) === JSON.stringify(want), `searching the catalog for '${query}' narrows it to ${want.join(", ")} (got ${got.slice(0, 5).join(", ")}${got.length > 5 ? ", ..." : ""})`);
      }
      await search.fill("bulk");
      const status = await page.textContent("#catalog-count");
      check(/501/.test(status), `the catalog says how many match ('bulk': ${status.trim()})`);
      await search.fill("");
    }
    const kinds = await page.locator("#page table").allTextContents();
    check(kinds.some((t) => t.includes("everything · mcp")) && kinds.some((t) => t.includes("demo · fixtures")), "resources and prompts show their adapter's kind");
    if (searchable) await search.fill("greet");
    await page.click("#tool-greet summary");
    await shot(page, "catalog");
    await axe(page, axeSource, "Catalog");
    await readableText(page, "Catalog");
    if (searchable) await search.fill("");
  });

  await playgroundSteps({ page, open, shot, axe: (name) => axe(page, axeSource, name) });

  // Calls of 15 different tools, so that Calls has more to chart than it draws.
  for (let i = 1; i <= 15; i++) await callTool(mcp, `bulk_${String(i).padStart(4, "0")}`, {}, 100 + i);

  await step("Adapters", async () => {
    await open(page, "adapters");
    await page.waitForSelector("[aria-label='Adapter inventory']");
    for (const [adapter, kind] of [["demo", "fixtures"], ["inventory", "rest"], ["everything", "mcp"], ["bulk", "rest"]]) {
      const head = (await page.textContent(`[aria-label='Adapter ${adapter}'] h3`)).replace(/\s+/g, " ");
      check(head.includes(kind), `the Adapters page shows ${adapter}'s kind '${kind}' (shows: ${head.trim()})`);
    }
    const rotation = page.locator("[aria-label='Adapter inventory'] [data-state=in_rotation]");
    check((await rotation.count()) === 2, "both upstreams are in rotation");
    check((await rotation.first().textContent()) === "in rotation", `a backend's state reads as words (shows: ${await rotation.first().textContent()})`);
    // Kill upstream b, then call its tool: round-robin reaches b, fails, ejects it (threshold 1).
    b.closeAllConnections();
    await new Promise((r) => b.close(r));
    const killed = Date.now();
    for (let i = 0; i < 4; i++) await callTool(mcp, "who", {}, i + 1);
    if (await until("the killed upstream shows as ejected on the live Adapters page", 6, async () => (await page.locator("[data-state=ejected]").count()) === 1)) {
      check(true, `the killed upstream shows as ejected ${((Date.now() - killed) / 1000).toFixed(1)} s after the kill`);
    }
    // The hosted stdio server: running with a pid; killed, it is restarted and counted.
    const hosted = page.locator("[aria-label='Adapter everything'] tbody tr");
    await until("the hosted MCP server shows as running with a pid", 20, async () => (await hosted.locator("[data-state=running]").count()) === 1);
    const cells = async () => (await hosted.first().locator("td").allTextContents()).map((c) => c.trim());
    const [, , , , pid, restarts] = await cells();
    check(/^\d+$/.test(pid) && restarts === "0", `the hosted server's pid (${pid}) and restarts (${restarts}) are shown`);
    process.kill(Number(pid), "SIGKILL");
    if (await until("the killed hosted server shows restarted (restarts 1, a new pid)", 20, async () => {
      const [, state, , , now, count] = await cells();
      return state === "running" && count === "1" && now !== pid;
    })) check(true, "the killed hosted server shows restarted with a new pid");
    await shot(page, "adapters");
    await axe(page, axeSource, "Adapters");
    await readableText(page, "Adapters");
  });

  await step("Endpoints", async () => {
    await open(page, "endpoints");
    await page.waitForSelector("[aria-label='Endpoint /mcp/support']");
    const support = (await page.textContent("[aria-label='Endpoint /mcp/support']")).replace(/\s+/g, " ");
    check(support.includes("say_back") && support.includes("echo") && support.includes("Say the text back, word for word."),
      `the Endpoints page shows /mcp/support's renamed tool beside its catalog tool and its description (shows: ${support.slice(0, 200)})`);
    check(support.includes('{"b":1}') && support.includes("increment"), "the Endpoints page shows a tool's fixed arguments");
    const find = (await page.textContent("[aria-label='Endpoint /mcp/find']")).replace(/\s+/g, " ");
    check(find.includes("Tool search: its tools/list shows search_tools") && !support.includes("Tool search"),
      `the Endpoints page says which endpoint finds its tools by search (shows: ${find.slice(0, 160)})`);
    // server-everything's definitions, with no lock file yet: served (warn) and listed as not pinned.
    const pins = page.locator("details.pin");
    check((await pins.count()) > 3, `the Endpoints page lists the upstream definitions not pinned yet (${await pins.count()})`);
    const first = pins.first();
    await first.locator("summary").click();
    const opened = (await first.textContent()).replace(/\s+/g, " ");
    check(opened.includes("served (warn mode)") && opened.includes("Not pinned yet.") && opened.includes("Current"),
      `an unpinned definition opens beside its (missing) pin (shows: ${opened.slice(0, 160)})`);
    // Approving one: the administrator's action is logged, and the definition leaves the list.
    const before = await pins.count();
    const key = (await first.locator("summary code").textContent()).trim();
    const logged = log().length;
    await first.locator("button:text-is('Approve')").click();
    if (await until("the approved definition leaves the list", 8, async () => (await page.locator("details.pin").count()) === before - 1)) {
      check(true, `approving ${key} takes it off the list (${before} → ${before - 1})`);
    }
    const approved = newLines(log, logged, "definition approved");
    check(approved.some((l) => l.includes("ops") && l.includes(key)), `the approval is logged with who approved what (${(approved[0] || "no line").trim().slice(0, 160)})`);
    await shot(page, "endpoints");
    await axe(page, axeSource, "Endpoints");
    await readableText(page, "Endpoints");
  });

  await step("Calls", async () => {
    await open(page, "calls");
    await page.waitForSelector("#calls table");
    const calls = await page.textContent("#calls table");
    check(calls.includes("echo") && calls.includes("greet") && calls.includes("ops"), "the Calls page lists recent calls with tool and caller");
    check(calls.includes("mcp-runtime-console/1"), "the Calls page names a call's client (the playground's clientInfo)");
    await until("the Calls page charts a tool (a line needs three samples, 5 s apart)", 20, async () => (await page.locator("#calls svg polyline").count()) > 0);
    const charted = await page.locator("#calls section.chart").count();
    check(charted > 0 && charted <= 12, `Calls charts a bounded number of tools though 19 have calls (${charted} drawn)`);
    const filter = page.locator("#calls-filter");
    check((await filter.count()) === 1, "Calls has a filter for the tools it does not draw");
    if ((await filter.count()) === 1) {
      await filter.fill("bulk_0007");
      await until("filtering Calls by 'bulk_0007' charts that tool alone", 6, async () => {
        const heads = await page.locator("#calls section.chart h3").allTextContents();
        return heads.length === 1 && heads[0].startsWith("bulk_0007");
      }) && check(true, "filtering Calls by 'bulk_0007' charts that tool alone");
      await filter.fill("");
      await page.waitForFunction(() => document.querySelectorAll("#calls section.chart").length > 1);
    }
    await shot(page, "calls");
    await axe(page, axeSource, "Calls");
    await readableText(page, "Calls");
  });

  await step("Config", async () => {
    await open(page, "config");
    await page.waitForSelector("pre[aria-label='Redacted configuration']");
    const shown = await page.textContent("main");
    check(!shown.includes(ADMIN) && !shown.includes(USER), "the config view shows no token");
    await shot(page, "config");
    await axe(page, axeSource, "Config");
    await readableText(page, "Config");
  });

  await step("a rejected reload shows on the open Overview", async () => {
    await open(page, "overview");
    writeFileSync(config, text.replace("call_timeout_ms = 5000", `call_timeout_ms = 5000\n${LONG_KEY} = 1`));
    const shown = await until("Overview shows the rejected reload without navigation", 15, async () => {
      const t = await page.textContent("#page");
      return t.includes("rejected") && t.includes(LONG_KEY.slice(0, 40));
    });
    if (shown) check(true, "Overview shows the rejected reload and its reason without navigation");
    await shot(page, "overview-rejected");
    await readableText(page, "Overview with a rejected reload");
  });

  await step("Connections without [user_auth] says how to turn it on", async () => {
    await open(page, "connections");
    const text = await page.textContent("#page");
    check(text.includes("not configured: add [user_auth] and [[upstream_auth]]"), `the Connections page says what to configure ("${text.trim().slice(0, 120)}")`);
  });

  await step("every page at 1280 and 360 px", async () => {
    for (const width of [1280, 360]) {
      await page.setViewportSize({ width, height: 860 });
      for (const name of Object.keys(PAGES)) {
        await step(`${name} at ${width} px`, async () => {
          await open(page, name);
          await noOverflow(page, `${PAGES[name]} at ${width} px`);
          await readableText(page, `${PAGES[name]} at ${width} px`);
          if (width === 360) await shot(page, `${name}-360`);
        });
      }
      await step(`the playground's forms at ${width} px`, async () => {
        await open(page, "playground");
        await pick(page, "greet");
        await page.click("#pg-form button[type=submit]");
        await page.waitForSelector("#round-form");
        await noOverflow(page, `the elicitation form at ${width} px`);
        if (width === 360) await shot(page, "playground-elicitation-360");
      });
    }
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  check(violations.length === 0, `no Content-Security-Policy violation (${violations.join(" | ") || "none"})`);
}

try {
  await main();
} catch (e) {
  console.error(e);
  check(false, `the test ran to its end (${String(e.message || e).split("\n")[0]})`);
  if (current) console.error(`page text: ${await current.textContent("body").catch(() => "?")}`);
} finally {
  if (hasFailed()) console.error(`browser console:\n${logs.slice(-40).join("\n")}`);
  for (const c of cleanups.reverse()) {
    try {
      await c();
    } catch {}
  }
}
if (failures.length) console.log(`\n${failures.length} failed:\n${failures.map((f) => `  - ${f}`).join("\n")}`);
console.log(hasFailed() ? "console browser test: FAILED" : `console browser test: ok (screenshots in ${out})`);
process.exit(hasFailed() ? 1 : 0);
