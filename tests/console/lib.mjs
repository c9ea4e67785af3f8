// The browser test's parts: the runtime process (its output kept, since refusals must leave
// a log line), HTTP upstreams that echo what they got, the test's configuration (three
// adapters plus 500 generated REST tools), steps that record a failure and go on, and the
// checks every page gets: what an operator reads (no `null`, `undefined`, `NaN` or
// `[object Object]`), no sideways scrolling, axe-core.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import path from "node:path";

export const ADMIN = "console-admin-token-0123456789";
export const USER = "console-user-token-0123456789";
/** How many generated tools the test's `bulk` adapter has. */
export const BULK = 500;

let failed = false;
/** Failures so far. */
export const failures = [];

export function check(ok, what) {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) {
    failed = true;
    failures.push(what);
  }
  return ok;
}

export function hasFailed() {
  return failed;
}

/**
 * Runs one step; an exception (a selector that never appears, a timeout) is a failure of
 * that step and the test goes on, so one run lists every broken thing.
 */
export async function step(name, fn) {
  try {
    await fn();
  } catch (e) {
    check(false, `${name}: ${String(e.message || e).split("\n")[0]}`);
  }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function until(what, seconds, test) {
  const end = Date.now() + seconds * 1000;
  for (;;) {
    try {
      if (await test()) return true;
    } catch {}
    if (Date.now() > end) {
      check(false, `${what} (waited ${seconds} s)`);
      return false;
    }
    await sleep(200);
  }
}

/**
 * A REST upstream on loopback: answers every request with its name, the path, and the JSON
 * body it got (so a test can see which arguments a tool call sent).
 */
export function upstream(name) {
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      res.setHeader("content-type", "application/json");
      let got = null;
      try {
        got = body ? JSON.parse(body) : null;
      } catch {}
      res.end(JSON.stringify(got === null ? { upstream: name, path: req.url } : { upstream: name, path: req.url, got }));
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

/**
 * Starts the runtime on a free port; resolves with `{mcp, console, log()}`: the MCP URL, the
 * console URL its start-up line named (or null) and everything it has written so far.
 */
export function runtime(bin, config, cleanups) {
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
        const c = log.match(/mcp-runtime console on (\S+)/);
        resolve({ mcp: m[1], console: c ? c[1] : null, log: () => log });
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.on("exit", (code) => reject(new Error(`the runtime exited (${code}):\n${log}`)));
  });
}

/** The test's configuration (TOML). */
export function configText({ a, b, everything, node }) {
  const bulk = [];
  for (let i = 1; i <= BULK; i++) {
    const n = String(i).padStart(4, "0");
    bulk.push(`
[[adapters.tools]]
name = "bulk_${n}"
title = "Bulk record ${i}"
description = "Reads record ${i} of the bulk store (generated tool ${i} of ${BULK})."
path = "/bulk/${i}"
annotations = { readOnlyHint = true }
`);
  }
  return `
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
base_urls = ["${a}", "${b}"]
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
command = "${node}"
args = ["${everything}", "stdio"]
prefix = "ev_"
restart = { initial_backoff_ms = 50, max_backoff_ms = 200 }

[[adapters]]
name = "bulk"
kind = "rest"
base_urls = ["${a}"]

# The form's order (required first) and a boolean left unset: the upstream echoes the body.
[[adapters.tools]]
name = "survey"
description = "Posts its arguments; the upstream answers with what it got."
method = "POST"
path = "/survey"
body = "arguments"
input_schema = { type = "object", required = ["zulu_id"], properties = { alpha_note = { type = "string" }, verbose = { type = "boolean", description = "Say more." }, zulu_id = { type = "string", title = "Zulu id" } } }
${bulk.join("")}
[[auth.tokens]]
subject = "ops"
secret = "${ADMIN}"

[[auth.tokens]]
subject = "alice"
secret = "${USER}"

[rate_limits]
per_caller = { rate = 1000, per_ms = 1000, burst = 200 }

[console]
enabled = true
admin_subjects = ["ops"]

# No lock file yet: every definition of the mcp adapter is served and listed as not pinned.
[pinning]
mode = "warn"
lock_file = "pins.lock"

[[endpoints]]
path = "/mcp/support"
adapters = ["demo"]
include = ["echo", "add"]

[endpoints.tools.echo]
name = "say_back"
description = "Say the text back, word for word."

[endpoints.tools.add]
name = "increment"
arguments = { b = 1 }

[[endpoints]]
path = "/mcp/find"
adapters = ["demo"]
discovery = "search"
`;
}

/** A tools/call of `name` straight to the MCP endpoint (not through the page). */
export async function callTool(mcp, name, args = {}, id = 1) {
  const res = await fetch(mcp, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": name, authorization: `Bearer ${ADMIN}` },
    body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args, _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } } }),
  });
  return res.text();
}

/**
 * What an operator reads must never be a rendering slip: no `null`, `undefined`, `NaN` or
 * `[object Object]` in the visible text or in the names screen readers read (aria-label,
 * title, option labels). What is shown exactly as the server sent it (`[data-verbatim]`: the
 * raw exchange, the redacted config, a result's text or JSON) may say `null` (a JSON value),
 * nothing else.
 */
export async function readableText(page, where) {
  const found = await page.evaluate(() => {
    const bad = /\b(null|undefined|NaN)\b|\[object Object\]/;
    const out = [];
    const json = [...document.querySelectorAll("[data-verbatim]")];
    const hidden = json.map((p) => [p, p.style.display]);
    for (const [p] of hidden) p.style.display = "none";
    const text = document.body.innerText;
    for (const [p, d] of hidden) p.style.display = d;
    for (const line of text.split("\n")) if (bad.test(line)) out.push(line.trim().slice(0, 120));
    for (const p of json) {
      const m = p.textContent.match(/\b(undefined|NaN)\b|\[object Object\]/);
      if (m) out.push(`${p.getAttribute("aria-label") || "pre"}: ${m[0]}`);
    }
    for (const el of document.querySelectorAll("[aria-label], [title], option, [placeholder]")) {
      if (el.closest("[hidden]")) continue;
      for (const v of [el.getAttribute("aria-label"), el.getAttribute("title"), el.getAttribute("placeholder"), el.tagName === "OPTION" ? el.textContent : null]) {
        if (v && bad.test(v)) out.push(`${el.tagName.toLowerCase()} "${v.slice(0, 80)}"`);
      }
    }
    return out;
  });
  check(found.length === 0, `${where}: no null, undefined, NaN or [object Object] in what the operator reads${found.length ? ` (found: ${found.slice(0, 4).join(" | ")})` : ""}`);
}

/** The page does not scroll sideways: the document is no wider than the viewport. */
export async function noOverflow(page, where) {
  const { scroll, view, widest } = await page.evaluate(() => {
    const view = document.documentElement.clientWidth;
    // The element reaching furthest right, to say what to fix.
    let widest = "";
    let right = view;
    for (const el of document.querySelectorAll("body *")) {
      const r = el.getBoundingClientRect();
      if (r.right > right + 1 && r.width > 0) {
        right = r.right;
        widest = `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}${el.className && typeof el.className === "string" ? `.${el.className.split(" ")[0]}` : ""} to ${Math.round(r.right)} px`;
      }
    }
    return { scroll: document.documentElement.scrollWidth, view, widest };
  });
  check(scroll <= view, `${where}: no sideways scrolling (document ${scroll} px wide, viewport ${view} px${widest ? `; widest: ${widest}` : ""})`);
}

export async function axe(page, source, name) {
  await page.evaluate(source);
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ["violations"] }));
  const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  for (const v of bad) console.log(`     ${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`);
  check(bad.length === 0, `axe-core: no serious or critical violation on ${name}`);
}

/**
 * Debian's chromium driven by playwright-core (no browser download), and axe-core's source,
 * both from `modules` (BROWSER_MODULES: INTEROP_DIR/browser/node_modules, tests/interop/setup.sh).
 */
export async function launchChromium(modules) {
  const require = createRequire(path.join(modules, "noop.js"));
  const { chromium } = require("playwright-core");
  const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox"] });
  return { browser, axeSource };
}

/** The Content-Security-Policy violations `page` reports from now on (a live array). */
export function cspViolations(page) {
  const violations = [];
  page.on("console", (m) => {
    if (/Content Security Policy|Refused to/.test(m.text())) violations.push(m.text());
  });
  return violations;
}

/** Log lines added since `before` (a length of the log) that mention `needle`. */
export function newLines(log, before, needle) {
  return log().slice(before).split("\n").filter((l) => l.includes(needle));
}

export { path };
