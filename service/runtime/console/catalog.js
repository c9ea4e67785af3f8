// The Catalog page: every tool, resource, template and prompt with its adapter and kind,
// searchable (name, title, description, adapter, kind) and filterable by adapter, drawn a
// page at a time so that an imported API of thousands of tools stays usable.
import { api, h, put } from "./app.js";
import { haystack, matcher, searchBox } from "./search.js";
import { count, paged, pagedTable, table } from "./ui.js";

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

const typeOf = (p) => [].concat(p.type || (p.enum ? "enum" : p.oneOf ? "one of" : "any")).join(" | ") + (p.enum ? `: ${p.enum.join(", ")}` : "");

/** A schema as a table of its properties (nested ones by their type). */
function schemaTable(caption, schema) {
  const props = (schema && schema.properties) || {};
  const req = new Set((schema && schema.required) || []);
  if (!Object.keys(props).length) return h("p", { class: "muted" }, `${caption}: no properties.`);
  return table(caption, ["Property", "Type", "Required", "Description"], Object.entries(props).map(([k, p]) => [
    h("code", {}, k), typeOf(p), req.has(k) ? "yes" : "no", p.description || "",
  ]));
}

const where = (x) => `${x.adapter} · ${x.kind}`;

/** One tool: its summary now, its details when opened (thousands of schema tables are not drawn up front). */
function tool(t) {
  const d = t.tool;
  const el = h("details", { class: "tool", id: `tool-${d.name}` },
    h("summary", {}, h("span", { class: "name" }, d.name), d.title && d.title !== d.name ? h("span", {}, ` ${d.title}`) : "",
      " ", h("span", { class: "muted" }, where(t)),
      d.description ? h("span", { class: "gist muted" }, d.description) : ""));
  el.addEventListener("toggle", () => {
    if (!el.open || el.dataset.drawn) return;
    el.dataset.drawn = "1";
    el.append(
      d.description ? h("p", { class: "prose" }, d.description) : "",
      schemaTable(`Input of ${d.name}`, d.inputSchema),
      d.outputSchema ? schemaTable(`Output of ${d.name}`, d.outputSchema) : "",
      d.annotations ? h("p", {}, "Annotations: ", h("code", {}, JSON.stringify(d.annotations))) : "",
      table(`Policy of ${d.name}`, ["Setting", "Value"], policyRows(t.policy)),
      h("p", {}, h("a", { href: `#playground?tool=${encodeURIComponent(d.name)}` }, `Try ${d.name} in the playground`)));
  });
  return el;
}

export async function catalog(target) {
  const c = await api("catalog");
  const entries = {
    tools: c.tools.map((t) => ({ t, hay: haystack(t.tool.name, t.tool.title, t.tool.description, t.adapter, t.kind) })),
    resources: c.resources.map((r) => ({ r, hay: haystack(r.item.uri, r.item.name, r.item.title, r.item.description, r.adapter, r.kind) })),
    templates: c.resource_templates.map((r) => ({ r, hay: haystack(r.item.uriTemplate, r.item.name, r.item.title, r.item.description, r.adapter, r.kind) })),
    prompts: c.prompts.map((p) => ({ p, hay: haystack(p.item.name, p.item.title, p.item.description, p.adapter, p.kind) })),
  };
  const adapterNames = [...new Set([...c.tools, ...c.resources, ...c.resource_templates, ...c.prompts].map((x) => x.adapter))].sort();
  const adapter = h("select", { id: "catalog-adapter" }, h("option", { value: "" }, "All adapters"), adapterNames.map((a) => h("option", { value: a }, a)));
  const status = h("p", { id: "catalog-count", role: "status" });
  // Redrawn as one types: not read out (the count is, role=status).
  const sections = h("div", { id: "catalog-results", "aria-live": "off" });
  let query = "";
  const draw = () => {
    const match = matcher(query);
    const pick = (list, of) => list.filter((e) => match(e.hay) && (!adapter.value || of(e).adapter === adapter.value));
    const tools = pick(entries.tools, (e) => e.t);
    const resources = pick(entries.resources, (e) => e.r);
    const templates = pick(entries.templates, (e) => e.r);
    const prompts = pick(entries.prompts, (e) => e.p);
    const filtered = query.trim() || adapter.value;
    const of = (n, all, one) => (filtered ? `${n} of ${count(all, one)}` : count(all, one));
    status.textContent = `${of(tools.length, entries.tools.length, "tool")} ${filtered ? "match" : "in all"}; ` +
      `${of(resources.length, entries.resources.length, "resource")}, ${of(templates.length, entries.templates.length, "template")}, ${of(prompts.length, entries.prompts.length, "prompt")}.`;
    const none = (what) => h("p", { class: "muted" }, filtered ? `No ${what} match.` : `No ${what}.`);
    const toolBox = h("div", { id: "tools" });
    const more = paged(toolBox, tools.map((e) => e.t), tool);
    const [rTable, rMore] = pagedTable("Resources", ["URI", "Name", "Adapter"], resources, (e) => [h("code", {}, e.r.item.uri), e.r.item.name, where(e.r)]);
    const [tTable, tMore] = pagedTable("Templates", ["URI template", "Name", "Adapter"], templates, (e) => [h("code", {}, e.r.item.uriTemplate), e.r.item.name, where(e.r)]);
    const [pTable, pMore] = pagedTable("Prompts", ["Name", "Arguments", "Adapter"], prompts, (e) => [e.p.item.name, (e.p.item.arguments || []).map((a) => a.name).join(", "), where(e.p)]);
    put(sections,
      h("h3", {}, `Tools (${tools.length})`), tools.length ? [toolBox, more] : none("tools"),
      h("h3", {}, `Resources (${resources.length})`), resources.length ? [rTable, rMore] : none("resources"),
      h("h3", {}, `Resource templates (${templates.length})`), templates.length ? [tTable, tMore] : none("templates"),
      h("h3", {}, `Prompts (${prompts.length})`), prompts.length ? [pTable, pMore] : none("prompts"));
  };
  const search = searchBox("catalog-search", "Search the catalog", "Words in a name, title, description, adapter or kind; all must appear.", (v) => {
    query = v;
    draw();
  });
  adapter.addEventListener("change", draw);
  put(target, h("h2", {}, "Catalog"),
    h("div", { class: "filters", role: "search" }, search.element, h("div", { class: "field" }, h("label", { for: "catalog-adapter" }, "Adapter"), adapter)),
    status, sections);
  draw();
}
