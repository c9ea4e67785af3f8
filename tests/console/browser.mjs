// The operator console in a real browser (Debian's chromium driven by playwright-core, no
// browser download): the real runtime binary with the demo tools, a REST adapter over two
// real HTTP upstreams on loopback, static tokens for an administrator and an ordinary caller.
// Checks: the console refuses without a token and with a non-admin one; it loads with the
// admin's; the catalog lists the demo tools; the playground calls `echo` and completes a
// `greet` elicitation round; an upstream killed during the test shows as ejected within a
// few seconds; the config view shows no secret; no page breaks its Content-Security-Policy;
// axe-core finds no serious or critical violation on any page. Screenshots go to OUT.
//
// Usage: node tests/console/browser.mjs BIN OUT   (NODE_PATH: INTEROP_DIR/browser/node_modules)
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import http from "node:http";
import os from "node:os";
import path from "node:path";

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
const require = createRequire(path.join(modules, "noop.js"));
const { chromium } = require("playwright-core");
const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
// The reference MCP server the adapters page shows as a hosted stdio process (setup.sh
// installs it beside the browser packages).
const everything = path.join(modules, "../../upstreams/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
if (!existsSync(everything)) {
  console.error(`${everything} is missing: run bash tests/interop/setup.sh`);
  process.exit(2);
}
mkdirSync(out, { recursive: true });

const ADMIN = "console-admin-token-0123456789";
const USER = "console-user-token-0123456789";
const cleanups = [];
let failed = false;
// What the browser said (page errors, console lines) and the page, printed when a step fails.
const logs = [];
let current = null;
const check = (ok, what) => {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failed = true;
};

/** A REST upstream on loopback answering GET /who with its name. */
function upstream(name) {
  const server = http.createServer((req, res) => {
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ upstream: name }));
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

/** Starts the runtime on a free port; resolves with its MCP URL. */
function runtime(config) {
  const child = spawn(bin, ["serve", "--config", config, "--listen", "127.0.0.1:0"], { stdio: ["ignore", "pipe", "pipe"] });
  cleanups.push(() => child.kill("SIGKILL"));
  let log = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the runtime did not start within 20 s:\n${log}`)), 20000);
    const read = (chunk) => {
      log += chunk;
      const m = log.match(/mcp-runtime listening on (\S+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.on("exit", (code) => reject(new Error(`the runtime exited (${code}):\n${log}`)));
  });
}

async function until(what, seconds, test) {
  const end = Date.now() + seconds * 1000;
  for (;;) {
    try {
      if (await test()) return true;
    } catch {}
    if (Date.now() > end) {
      check(false, `${what} (waited ${seconds} s)`);
      return false;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function axe(page, name) {
  await page.evaluate(axeSource);
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ["violations"] }));
  const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  for (const v of bad) console.log(`     ${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`);
  check(bad.length === 0, `axe-core: no serious or critical violation on ${name}`);
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(out, `${name}.png`), fullPage: true });
}

async function main() {
  const a = await upstream("a");
  const b = await upstream("b");
  cleanups.push(() => a.close(), () => b.close());
  const url = (s) => `http://127.0.0.1:${s.address().port}`;
  const dir = mkdtempSync(path.join(os.tmpdir(), "console-"));
  const config = path.join(dir, "console.toml");
  writeFileSync(config, `
[server]
name = "console-demo"
call_timeout_ms = 5000

[[adapters]]
name = "demo"
kind = "fixtures"
set = "demo"

[[adapters]]
name = "inventory"
kind = "rest"
base_urls = ["${url(a)}", "${url(b)}"]
ejection = { consecutive_failures = 1, eject_ms = 60000 }
retry = { max_attempts = 2, initial_backoff_ms = 10, max_backoff_ms = 50 }

[[adapters.tools]]
name = "who"
description = "Which upstream answered."
path = "/who"
annotations = { readOnlyHint = true }

[[adapters]]
name = "everything"
kind = "mcp"
command = "${process.execPath}"
args = ["${everything}", "stdio"]
prefix = "ev_"
restart = { initial_backoff_ms = 50, max_backoff_ms = 200 }

[[auth.tokens]]
subject = "ops"
secret = "${ADMIN}"

[[auth.tokens]]
subject = "alice"
secret = "${USER}"

[rate_limits]
per_caller = { rate = 100, per_ms = 1000, burst = 20 }

[console]
enabled = true
admin_subjects = ["ops"]
`);
  const mcp = await runtime(config);
  const base = mcp.replace(/\/mcp$/, "/console/");
  console.log(`runtime at ${mcp}, console at ${base}`);

  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox"] });
  cleanups.push(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  const violations = [];
  current = page;
  page.on("pageerror", (e) => logs.push(String(e)));
  page.on("console", (m) => {
    logs.push(m.text());
    if (/Content Security Policy|Refused to/.test(m.text())) violations.push(m.text());
  });

  // Without a token: the sign-in form, and the API refuses.
  await page.goto(base);
  await page.waitForSelector("#login:not([hidden])");
  const bare = await page.evaluate(async () => (await fetch("api/overview")).status);
  check(bare === 401, `the API without a token answers 401 (got ${bare})`);
  await shot(page, "login");
  await axe(page, "the sign-in page");

  // A valid token that is not an administrator's.
  await page.fill("#token", USER);
  await page.click("#login-form button");
  await page.waitForSelector("#login-error:has-text('not a console administrator')");
  check(true, "a non-admin token is refused with a message naming the rule");

  // The administrator.
  await page.fill("#token", ADMIN);
  await page.click("#login-form button");
  await page.waitForSelector("text=console-demo");
  check(await page.isHidden("#login"), "the console loads with the admin token");
  await shot(page, "overview");
  await axe(page, "Overview");

  await page.click("a[href='#catalog']");
  await page.waitForSelector("#tool-echo", { timeout: 10000 });
  for (const t of ["echo", "greet", "add", "who"]) check(await page.isVisible(`#tool-${t}`), `the catalog lists ${t}`);
  await page.click("#tool-greet summary");
  await shot(page, "catalog");
  await axe(page, "Catalog");

  await page.click("a[href='#playground']");
  await page.waitForSelector("#pg-tool");
  await page.selectOption("#pg-tool", "echo");
  await page.fill("#pg-form input[name=text]", "hello from the console");
  await page.click("#pg-form button[type=submit]");
  await page.waitForSelector("#result-text");
  check((await page.textContent("#result-text")) === "hello from the console", "the playground calls echo through the MCP endpoint");
  const raw = await page.textContent("#exchange");
  check(raw.includes('"mcp-method": "tools/call"') && raw.includes("io.modelcontextprotocol/protocolVersion"), "the raw exchange shows the request's headers and _meta");
  await page.selectOption("#pg-tool", "greet");
  await page.click("#pg-form button[type=submit]");
  await page.waitForSelector("#round-form");
  check((await page.textContent("#exchange")).includes('"resultType": "input_required"'), "greet asks for input (input_required)");
  await page.fill("#round-form input[name=name]", "Ada");
  await shot(page, "playground-elicitation");
  await axe(page, "Playground (elicitation round)");
  await page.click("#round-form button[type=submit]");
  await page.waitForSelector("#result-text:has-text('Hello, Ada!')");
  const rounds = await page.textContent("#exchange");
  // The retry answers the question by its key; requestState goes back whenever the server sent one.
  const sentState = /"resultType": "input_required"[\s\S]*"requestState"/.test(rounds);
  check(/"inputResponses": \{\s*"user_name"/.test(rounds) && (!sentState || /"requestState"[\s\S]*"inputResponses"|"inputResponses"[\s\S]*"requestState"/.test(rounds.split("--- request").pop())),
    "the retry carried the answer in inputResponses (and requestState when sent); the result: Hello, Ada!");
  await shot(page, "playground");

  await page.click("a[href='#adapters']");
  await page.waitForSelector("[aria-label='Adapter inventory']");
  check((await page.locator("[data-state=in_rotation]").count()) === 2, "both upstreams are in rotation");
  // Kill upstream b, then call its tool: round-robin reaches b, fails, ejects it (threshold 1).
  b.closeAllConnections();
  await new Promise((r) => b.close(r));
  const killed = Date.now();
  for (let i = 0; i < 4; i++) {
    await fetch(mcp, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "who", authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: i + 1, method: "tools/call", params: { name: "who", arguments: {}, _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } } }),
    });
  }
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
  await axe(page, "Adapters");

  await page.click("a[href='#calls']");
  await page.waitForSelector("#calls table");
  const calls = await page.textContent("#calls table");
  check(calls.includes("echo") && calls.includes("greet") && calls.includes("ops"), "the Calls page lists recent calls with tool and caller");
  await until("the Calls page charts a tool (a line needs three samples, 5 s apart)", 20, async () => (await page.locator("#calls svg polyline").count()) > 0);
  await shot(page, "calls");
  await axe(page, "Calls");

  await page.click("a[href='#config']");
  await page.waitForSelector("pre[aria-label='Redacted configuration']");
  const shown = await page.textContent("main");
  check(!shown.includes(ADMIN) && !shown.includes(USER), "the config view shows no token");
  await shot(page, "config");
  await axe(page, "Config");

  check(violations.length === 0, `no Content-Security-Policy violation (${violations.join(" | ") || "none"})`);
}

try {
  await main();
} catch (e) {
  console.error(e);
  if (current) console.error(`page text: ${await current.textContent("body").catch(() => "?")}`);
  console.error(`browser console:\n${logs.join("\n")}`);
  failed = true;
} finally {
  for (const c of cleanups.reverse()) {
    try {
      await c();
    } catch {}
  }
}
console.log(failed ? "console browser test: FAILED" : `console browser test: ok (screenshots in ${out})`);
process.exit(failed ? 1 : 0);
