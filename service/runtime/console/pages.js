// The pages: each renders into `target` from the JSON API and may return `{feed, live}`: what
// the live feed streams for it (`view=...`) and the function called with every update.
import { api, apiPost, follow, h, put } from "./app.js";
import { catalog } from "./catalog.js";
import { connections } from "./connections.js";
import { lineChart } from "./chart.js";
import { playground } from "./playground.js";
import { searchBox } from "./search.js";
import { card, count, dur, json, mark, table, when } from "./ui.js";

function overviewCards(o) {
  const r = o.last_reload;
  const reload = r ? [mark(r.ok, "accepted", "rejected"), ` at ${when(r.at_ms)}`, r.ok ? "" : " (reason below)"] : "none since start";
  const redis = o.redis ? mark(o.redis.up, "up", "down") : "not configured (one replica, local state)";
  return [
    h("div", { class: "cards" },
      card("Server", [["Name", o.server.name], ["Version", o.server.version], ["Runtime", `${o.runtime.version} (${o.runtime.build} build)`]]),
      card("This replica", [["Id", o.replica], ["Started", when(o.started_ms)], ["Uptime", dur(o.uptime_ms)]]),
      card("Configuration", [["File", h("code", {}, o.config_file)], ["Last reload", h("span", {}, reload)], ["MCP endpoint", h("code", {}, o.mcp_path)]]),
      card("Cluster", [["Redis", h("span", {}, redis)], ["Replicas seen", o.replicas ? String(o.replicas.length) : "-"]]),
      card("Serving", [["Adapters", String(o.counts.adapters)], ["Tools", String(o.counts.tools)], ["Listen streams", String(o.counts.listen_streams)]]),
    ),
    o.replicas ? table("Replicas with a heartbeat in the last 15 s", ["Replica", "Last heartbeat"],
      o.replicas.map((x) => [x.self ? `${x.replica} (this one)` : x.replica, when(x.last_seen_ms)])) : "",
  ];
}

/** A rejected reload, in full width (its reason can be long: a path, a key, a caret line). */
function reloadNotice(r) {
  if (!r || r.ok) return "";
  return h("section", { class: "notice", "aria-labelledby": "reload-title" },
    h("h3", { id: "reload-title" }, `Reload rejected at ${when(r.at_ms)}; the previous configuration keeps serving`),
    h("pre", { class: "wrap", tabindex: "0", "aria-label": "Why the reload was rejected" }, r.error || "(no reason given)"));
}

/** Live: the cards redrawn from each update; the reload notice only when the reload changes. */
async function overview(target) {
  const box = h("div", { id: "overview", "aria-live": "off" });
  const notice = h("div", { id: "reload", role: "status" });
  let shown;
  const draw = (o) => {
    put(box, overviewCards(o));
    const r = o.last_reload;
    const key = r ? `${r.at_ms}` : "";
    if (key !== shown) {
      shown = key;
      put(notice, reloadNotice(r));
    }
  };
  draw(await api("overview"));
  put(target, h("h2", {}, "Overview"), h("p", { class: "muted" }, "Live: refreshed every 2 s."), notice, box);
  return { feed: "view=overview", live: (u) => draw(u.overview) };
}

function adapterView(list) {
  return list.adapters.map((a) => {
    const s = a.status;
    const health = s.healthy === null || s.healthy === undefined ? "no health to report" : mark(s.healthy, "healthy", "no backend available");
    return h("section", { class: "card", "aria-label": `Adapter ${a.name}` },
      h("h3", {}, `${a.name} `, h("span", { class: "muted" }, `${a.kind} · ${count(a.tools, "tool")}`)),
      h("p", {}, health, s.concurrency ? ` · ${s.concurrency[0]} of ${s.concurrency[1]} concurrent calls running` : ""),
      s.backends.length ? table(`Backends of ${a.name}`, ["Target", "State", "Since", "Failures", "Pid", "Restarts"], s.backends.map((b) => [
        h("code", {}, b.target), h("span", { class: b.state === "ejected" || b.state === "stopped" ? "bad" : "ok", "data-state": b.state }, b.state.replaceAll("_", " ")),
        when(b.since_ms), String(b.failures), b.pid ?? "-", b.restarts ?? "-",
      ])) : "");
  });
}

async function adapters(target) {
  const box = h("div", { id: "adapters", "aria-live": "off" });
  const draw = (data) => put(box, adapterView(data));
  draw(await api("adapters"));
  put(target, h("h2", {}, "Adapters"), h("p", { class: "muted" }, "Live: refreshed every 2 s."), box);
  return { feed: "view=adapters", live: (u) => draw(u.adapters) };
}

function endpointView(e) {
  const tools = e.tools.map((t) => [h("code", {}, t.name), t.name === t.catalog_name ? "-" : h("code", {}, t.catalog_name), t.adapter,
    t.fixed && Object.keys(t.fixed).length ? h("code", {}, JSON.stringify(t.fixed)) : "-", t.description || "-"]);
  const c = e.counts;
  return h("section", { class: "card", "aria-label": `Endpoint ${e.path}` },
    h("h3", {}, h("code", {}, e.path), " ", h("span", { class: "muted" },
      `${count(c.tools, "tool")} · ${count(c.resources, "resource")} · ${count(c.templates, "template")} · ${count(c.prompts, "prompt")}`)),
    e.discovery === "search" ? h("p", { class: "muted" }, "Tool search: its tools/list shows search_tools, describe_tools and call_tool; the tools below are found and called through them.") : null,
    table(`Tools of ${e.path}`, ["Tool", "Catalog tool", "Adapter", "Fixed arguments", "Description"], tools));
}

/** Approves `u` as shown; the page is drawn again once the registry is rebuilt. */
function approveButton(u, redraw) {
  const status = h("span", { role: "status" });
  const button = h("button", { type: "button", class: "secondary", "aria-label": `Approve ${u.key}` }, "Approve");
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      await apiPost("pins/approve", { key: u.key, sha256: u.sha256 });
      status.textContent = " Approved: served as it is now, on every replica. Run `mcp-runtime pin` to record it in the lock file.";
      setTimeout(redraw, 800);
    } catch (e) {
      status.textContent = ` Not approved: ${e.message}`;
      status.className = "error";
      button.disabled = false;
    }
  });
  return h("div", { class: "actions" }, button, status);
}

function pinView(p, redraw) {
  if (!p.mode) return h("p", { class: "muted" }, "Definition pinning is off ([pinning] mode = \"off\").");
  const head = h("p", {}, `Mode ${p.mode}, lock file `, h("code", {}, p.lock_file || "-"), `: ${count(p.pinned, "definition")} pinned, `,
    p.unpinned.length ? mark(false, "", `${count(p.unpinned.length, "definition")} without a matching pin`) : mark(true, "every served definition matches its pin", ""), ".");
  const items = p.unpinned.map((u) => h("details", { class: "pin" },
    h("summary", {}, h("code", {}, u.key), " · ", u.withheld ? h("span", { class: "bad" }, "withheld") : "served (warn mode)",
      u.pinned ? " · differs from its pin" : " · not pinned yet"),
    h("div", { class: "side" },
      h("div", {}, h("h4", {}, "Pinned"), u.pinned ? json(`Pinned definition of ${u.key}`, u.pinned) : h("p", { class: "muted" }, "Not pinned yet.")),
      h("div", {}, h("h4", {}, "Current"), json(`Current definition of ${u.key}`, u.current))),
    approveButton(u, redraw)));
  return [head, ...items];
}

async function endpoints(target) {
  const e = await api("endpoints");
  const redraw = () => endpoints(target);
  put(target, h("h2", {}, "Endpoints"),
    h("p", { class: "muted" }, "Virtual endpoints ([[endpoints]]) beside ", h("code", {}, e.mcp_path), ", and upstream definitions against their pins ([pinning]). Approve a definition here (every replica follows, with [redis]) or by running `mcp-runtime pin` and reviewing the lock file."),
    h("h3", {}, "Virtual endpoints"),
    e.endpoints.length ? e.endpoints.map(endpointView) : h("p", { class: "muted" }, `None configured: ${e.mcp_path} serves everything.`),
    h("h3", {}, "Definition pinning"), pinView(e.pinning, redraw));
}

function callsView(c) {
  const charts = c.charted.length
    ? c.charted.map((s) => h("section", { class: "chart", "aria-label": `Charts of ${s.tool}` }, h("h3", {}, `${s.tool} `, h("span", { class: "muted" }, `${count(s.calls, "call")} in 15 min`)),
        lineChart(s.points, "rate", "rate", "calls/s"),
        lineChart(s.points, "error_rate", "errors", "share"),
        lineChart(s.points, "p50_ms", "p50", "ms"),
        lineChart(s.points, "p99_ms", "p99", "ms")))
    : [h("p", { class: "muted" }, c.chart_filter ? `No tool with calls matches '${c.chart_filter}'.` : `No tool calls sampled yet (one point every ${c.sample_every_ms / 1000} s).`)];
  const scope = c.chart_filter ? `${c.matched} of ${count(c.tools_with_series, "tool")} with calls match '${c.chart_filter}'` : `${count(c.tools_with_series, "tool")} with calls`;
  const charted = c.matched === 0 ? `${scope}.` : c.matched <= c.chart_limit ? `${scope}; all charted.`
    : `${scope}; the ${c.chart_limit} busiest are charted. Filter to chart others.`;
  const heads = ["When", "Method", "Name", "Caller", "Client", "Outcome", "Duration", "Request id"];
  if (c.arguments_shown) heads.push("Arguments");
  const rows = c.recent.map((r) => {
    const row = [when(r.at_ms), r.method, r.name, r.caller || "-", r.client || "-",
      h("span", { class: r.outcome === "ok" ? "ok" : r.outcome === "input_required" ? "" : "bad" }, r.outcome, r.error ? ` (${r.error})` : ""),
      `${r.duration_ms.toFixed(1)} ms`, r.request_id || "-"];
    if (c.arguments_shown) row.push(r.arguments === undefined || r.arguments === null ? "-" : h("code", {}, JSON.stringify(r.arguments)));
    return row;
  });
  return [h("p", { id: "calls-charted" }, charted), h("div", { class: "charts" }, charts),
    h("h3", {}, `Last ${count(c.recent.length, "call")} on this replica`), table("Recent calls, newest first", heads, rows)];
}

/** Live; charts the busiest tools only (the server picks them), a filter reaches the others. */
async function calls(target) {
  const box = h("div", { id: "calls", "aria-live": "off" });
  const draw = (data) => put(box, callsView(data));
  let filter = "";
  let timer;
  const query = () => `view=calls&chart=${encodeURIComponent(filter)}`;
  const search = searchBox("calls-filter", "Chart tools whose name contains", "The busiest 12 matching tools of the last 15 minutes are charted.", (v) => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      filter = v.trim();
      draw(await api(`calls?chart=${encodeURIComponent(filter)}`));
      follow(query());
    }, 250);
  });
  draw(await api("calls"));
  put(target, h("h2", {}, "Calls"),
    h("p", { class: "muted" }, "Per-tool rate, error rate, p50 and p99 over 15 minutes, from the runtime's own counters; live."),
    h("div", { class: "filters", role: "search" }, search.element), box);
  return { feed: query(), live: (u) => draw(u.calls) };
}

async function config(target) {
  const c = await api("config");
  put(target, h("h2", {}, "Configuration"),
    h("p", {}, "File: ", h("code", {}, c.file), ". Secrets (tokens, keys, passwords, headers, credentials in URLs) are redacted."),
    json("Redacted configuration", c.config));
}

export const pages = { overview, catalog, playground, adapters, endpoints, connections, calls, config };
