// The pages: each renders into `target` from the JSON API and may return `{live}`, a function
// the live feed calls with every update (`{calls, adapters}`).
import { api, h, put } from "./app.js";
import { lineChart } from "./chart.js";
import { playground } from "./playground.js";

const when = (ms) => (ms ? new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC") : "-");
const dur = (ms) => {
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h ${Math.floor((s % 3600) / 60)}m ${s % 60}s`;
};
const card = (title, pairs) => h("div", { class: "card" }, h("h3", {}, title),
  h("dl", {}, pairs.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])));
const table = (caption, heads, rows) => h("table", {}, h("caption", { class: "muted" }, caption),
  h("thead", {}, h("tr", {}, heads.map((x) => h("th", { scope: "col" }, x)))),
  h("tbody", {}, rows.map((r) => h("tr", {}, r.map((c) => h("td", {}, c))))));
const state = (ok, yes, no) => h("span", { class: ok ? "ok" : "bad" }, ok ? yes : no);

async function overview(target) {
  const o = await api("overview");
  const reload = o.last_reload
    ? [state(o.last_reload.ok, "accepted", "rejected"), ` at ${when(o.last_reload.at_ms)}`, o.last_reload.error ? ` (${o.last_reload.error})` : ""]
    : "none since start";
  const redis = o.redis ? state(o.redis.up, "up", "down") : "not configured (one replica, local state)";
  put(target, 
    h("h2", {}, "Overview"),
    h("div", { class: "cards" },
      card("Server", [["Name", o.server.name], ["Version", o.server.version], ["Runtime", `${o.runtime.version} (${o.runtime.build} build)`]]),
      card("This replica", [["Id", o.replica], ["Started", when(o.started_ms)], ["Uptime", dur(o.uptime_ms)]]),
      card("Configuration", [["File", o.config_file], ["Last reload", h("span", {}, reload)], ["MCP endpoint", o.mcp_path]]),
      card("Cluster", [["Redis", h("span", {}, redis)], ["Replicas seen", o.replicas ? String(o.replicas.length) : "-"]]),
      card("Serving", [["Adapters", String(o.counts.adapters)], ["Tools", String(o.counts.tools)], ["Listen streams", String(o.counts.listen_streams)]]),
    ),
    o.replicas ? table("Replicas with a heartbeat in the last 15 s", ["Replica", "Last heartbeat"],
      o.replicas.map((r) => [r.self ? `${r.replica} (this one)` : r.replica, when(r.last_seen_ms)])) : "",
  );
}

function policyRows(p) {
  const rate = (l) => (l ? `${l.rate} per ${l.per_ms} ms (burst ${l.burst})` : "none");
  return [
    ["Timeout", `${p.timeout_ms} ms`],
    ["Rate limit per caller", rate(p.rate_limit_per_caller)],
    ["Rate limit (tool)", rate(p.rate_limit_global)],
    ["Required scopes", p.access && p.access.scopes.length ? p.access.scopes.join(" ") : "none"],
    ["Confirm first", p.confirm ? "yes" : "no"],
    ["Result cache", p.cache_ttl_ms ? `${p.cache_ttl_ms} ms` : "off"],
  ];
}

/** A schema as a table of its properties (nested ones as JSON). */
function schemaTable(caption, schema) {
  const props = (schema && schema.properties) || {};
  const req = new Set((schema && schema.required) || []);
  if (!Object.keys(props).length) return h("p", { class: "muted" }, `${caption}: no properties.`);
  return table(caption, ["Property", "Type", "Required", "Description"], Object.entries(props).map(([k, p]) => [
    h("code", {}, k), [].concat(p.type || (p.enum ? "enum" : "any")).join(" | ") + (p.enum ? `: ${p.enum.join(", ")}` : ""),
    req.has(k) ? "yes" : "no", p.description || "",
  ]));
}

async function catalog(target) {
  const c = await api("catalog");
  put(target, h("h2", {}, "Catalog"),
    h("h3", {}, `Tools (${c.tools.length})`),
    c.tools.map((t) => h("details", { class: "tool", id: `tool-${t.tool.name}` },
      h("summary", {}, `${t.tool.name} `, h("span", { class: "muted" }, `${t.adapter} · ${t.kind || "?"}`)),
      h("p", {}, t.tool.description || ""),
      schemaTable("Input", t.tool.inputSchema),
      t.tool.outputSchema ? schemaTable("Output", t.tool.outputSchema) : "",
      t.tool.annotations ? h("p", {}, "Annotations: ", h("code", {}, JSON.stringify(t.tool.annotations))) : "",
      table("Policy", ["Setting", "Value"], policyRows(t.policy)))),
    h("h3", {}, `Resources (${c.resources.length})`),
    table("Resources", ["URI", "Name", "Adapter"], c.resources.map((r) => [h("code", {}, r.item.uri), r.item.name, `${r.adapter} · ${r.kind}`])),
    h("h3", {}, `Resource templates (${c.resource_templates.length})`),
    table("Templates", ["URI template", "Name", "Adapter"], c.resource_templates.map((r) => [h("code", {}, r.item.uriTemplate), r.item.name, `${r.adapter} · ${r.kind}`])),
    h("h3", {}, `Prompts (${c.prompts.length})`),
    table("Prompts", ["Name", "Arguments", "Adapter"], c.prompts.map((p) => [p.item.name, (p.item.arguments || []).map((a) => a.name).join(", "), `${p.adapter} · ${p.kind}`])),
  );
}

function adapterView(list) {
  return list.adapters.map((a) => {
    const s = a.status;
    const health = s.healthy === null || s.healthy === undefined ? "no health to report" : state(s.healthy, "healthy", "no backend available");
    return h("section", { class: "card", "aria-label": `Adapter ${a.name}` },
      h("h3", {}, `${a.name} `, h("span", { class: "muted" }, `${a.kind} · ${a.tools} tools`)),
      h("p", {}, health, s.concurrency ? ` · ${s.concurrency[0]} of ${s.concurrency[1]} concurrent calls running` : ""),
      s.backends.length ? table(`Backends of ${a.name}`, ["Target", "State", "Since", "Failures", "Pid", "Restarts"], s.backends.map((b) => [
        h("code", {}, b.target), h("span", { class: b.state === "ejected" || b.state === "stopped" ? "bad" : "ok", "data-state": b.state }, b.state),
        when(b.since_ms), String(b.failures), b.pid ?? "-", b.restarts ?? "-",
      ])) : "");
  });
}

/** A page drawn from `api/<name>` by `view`, then redrawn from each live update's `<name>`. */
function livePage(name, title, intro, view) {
  return async (target) => {
    const box = h("div", { id: name });
    const draw = (data) => put(box, view(data));
    draw(await api(name));
    put(target, h("h2", {}, title), h("p", { class: "muted" }, intro), box);
    return { live: (u) => draw(u[name]) };
  };
}

const adapters = livePage("adapters", "Adapters", "Live: refreshed every 2 s.", adapterView);

function callsView(c) {
  const tools = Object.keys(c.series);
  const charts = tools.length
    ? tools.map((t) => h("section", { class: "chart", "aria-label": `Charts of ${t}` }, h("h3", {}, t),
        lineChart(c.series[t], "rate", "rate", "calls/s"),
        lineChart(c.series[t], "error_rate", "errors", "share"),
        lineChart(c.series[t], "p50_ms", "p50", "ms"),
        lineChart(c.series[t], "p99_ms", "p99", "ms")))
    : [h("p", { class: "muted" }, `No tool calls sampled yet (one point every ${c.sample_every_ms / 1000} s).`)];
  const heads = ["When", "Method", "Name", "Caller", "Outcome", "Duration", "Request id"];
  if (c.arguments_shown) heads.push("Arguments");
  const rows = c.recent.map((r) => {
    const row = [when(r.at_ms), r.method, r.name, r.caller || "-",
      h("span", { class: r.outcome === "ok" ? "ok" : r.outcome === "input_required" ? "" : "bad" }, r.outcome, r.error ? ` (${r.error})` : ""),
      `${r.duration_ms.toFixed(1)} ms`, r.request_id || "-"];
    if (c.arguments_shown) row.push(h("code", {}, JSON.stringify(r.arguments ?? null)));
    return row;
  });
  return [h("div", { class: "charts" }, charts), h("h3", {}, `Last ${c.recent.length} calls on this replica`),
    table("Recent calls, newest first", heads, rows)];
}

const calls = livePage("calls", "Calls",
  "Per-tool rate, error rate, p50 and p99 over 15 minutes, from the runtime's own counters; live.", callsView);

async function config(target) {
  const c = await api("config");
  put(target, h("h2", {}, "Configuration"),
    h("p", {}, "File: ", h("code", {}, c.file), ". Secrets (tokens, keys, passwords, headers, credentials in URLs) are redacted."),
    h("pre", { tabindex: "0", "aria-label": "Redacted configuration" }, JSON.stringify(c.config, null, 2)));
}

async function playgroundPage(target) {
  await playground(target, await api("catalog"));
}

export const pages = { overview, catalog, playground: playgroundPage, adapters, calls, config };
