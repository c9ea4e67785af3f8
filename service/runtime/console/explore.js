// What the playground can try, by kind: tools (called with a form of their input schema),
// prompts (got with their arguments) and resources (read; a template's variables filled in
// first), each with how to search it, the request it makes and how its answer is shown.
import { h } from "./app.js";
import { argumentsSchema, schemaForm } from "./form.js";
import { haystack } from "./search.js";
import { json, verbatim } from "./ui.js";

/** The `{name}` variables of an RFC 6570 level-1 template (what the runtime routes by). */
const variables = (template) => [...new Set([...template.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]))];

/** `template` with each `{name}` replaced by its value, percent-encoded as simple expansion does. */
const expand = (template, values) => template.replace(/\{([A-Za-z0-9_]+)\}/g, (_, v) => encodeURIComponent(values[v] ?? ""));

const describe = (...lines) => lines.filter(Boolean).map((l) => h("p", { class: "muted prose" }, l));

/** One content block of a result or message: text, image, audio, a link or an embedded resource. */
function block(c, i) {
  const label = `Content ${i + 1}`;
  switch (c.type) {
    case "text":
      return verbatim(label, c.text);
    case "image":
      return h("figure", {}, h("img", { src: `data:${c.mimeType};base64,${c.data}`, alt: `Image ${i + 1} of the result (${c.mimeType})` }), h("figcaption", { class: "muted" }, c.mimeType));
    case "audio":
      return h("p", { class: "muted" }, `Audio (${c.mimeType}, ${Math.round((c.data || "").length * 0.75)} bytes)`);
    case "resource_link":
      return h("p", {}, "Link to ", h("code", {}, c.uri), c.name ? ` (${c.name})` : "");
    case "resource":
      if (c.resource) return h("div", {}, h("p", {}, "Embedded ", h("code", {}, c.resource.uri)), contents([c.resource]));
      return json(label, c);
    default:
      return json(label, c);
  }
}

/** A resource's `contents`: text shown as sent, blobs by size (images drawn). */
function contents(list) {
  return (list || []).map((c, i) => h("div", { class: "content" },
    h("p", {}, h("code", {}, c.uri), c.mimeType ? h("span", { class: "muted" }, ` ${c.mimeType}`) : ""),
    typeof c.text === "string" ? verbatim(`Text of ${c.uri}`, c.text)
      : (c.mimeType || "").startsWith("image/") ? h("img", { src: `data:${c.mimeType};base64,${c.blob}`, alt: `Image ${i + 1}: ${c.uri}` })
        : h("p", { class: "muted" }, `Binary, ${Math.round((c.blob || "").length * 0.75)} bytes`)));
}

function toolResult(r) {
  const texts = (r.content || []).filter((c) => c.type === "text").map((c) => c.text);
  const others = (r.content || []).filter((c) => c.type !== "text");
  return [
    h("h3", {}, r.isError ? "Tool error" : "Result"),
    h("p", { class: `${r.isError ? "bad" : "ok"} result`, id: "result-text", "data-verbatim": "" }, texts.join("\n") || "(no text content)"),
    others.map(block),
    r.structuredContent ? [h("h4", {}, "Structured content"), json("Structured content", r.structuredContent)] : "",
  ];
}

function promptResult(r) {
  return [
    h("h3", {}, "Messages"),
    r.description ? h("p", { class: "muted" }, r.description) : "",
    (r.messages || []).map((m, i) => h("section", { class: "message", "aria-label": `Message ${i + 1} (${m.role})` },
      h("p", { class: "role" }, m.role), [].concat(m.content || []).map(block))),
  ];
}

function resourceResult(r) {
  return [h("h3", {}, "Contents"), r.contents && r.contents.length ? contents(r.contents) : h("p", { class: "muted" }, "No contents.")];
}

/**
 * The kinds, each `{label, noun, action, method, items, form(item), show(result)}`; an item is
 * `{value, text, hay, ...}` and `form(item)` gives `{element, params()}`.
 */
export function kinds(catalog) {
  return {
    tools: {
      label: "Tools", noun: "tool", action: "Call tool", method: "tools/call", show: toolResult,
      items: catalog.tools.map(({ tool: t, adapter, kind }) => ({
        value: t.name, text: t.title && t.title !== t.name ? `${t.name}: ${t.title}` : t.name,
        hay: haystack(t.name, t.title, t.description, adapter, kind), def: t,
      })),
      form: ({ def }) => {
        const f = schemaForm(def.inputSchema, `Arguments of ${def.name}`);
        return { element: [describe(def.description), f.element], params: () => ({ name: def.name, arguments: f.read() }) };
      },
    },
    prompts: {
      label: "Prompts", noun: "prompt", action: "Get prompt", method: "prompts/get", show: promptResult,
      items: catalog.prompts.map(({ item: p, adapter, kind }) => ({
        value: p.name, text: p.title && p.title !== p.name ? `${p.name}: ${p.title}` : p.name,
        hay: haystack(p.name, p.title, p.description, adapter, kind), def: p,
      })),
      form: ({ def }) => {
        const f = schemaForm(argumentsSchema(def.arguments), `Arguments of ${def.name}`);
        return { element: [describe(def.description), f.element], params: () => ({ name: def.name, arguments: f.read() }) };
      },
    },
    resources: {
      label: "Resources", noun: "resource", action: "Read resource", method: "resources/read", show: resourceResult,
      items: [
        ...catalog.resources.map(({ item: r, adapter, kind }) => ({
          value: r.uri, text: `${r.name}: ${r.uri}`, hay: haystack(r.uri, r.name, r.title, r.description, adapter, kind), def: r,
        })),
        ...catalog.resource_templates.map(({ item: t, adapter, kind }) => ({
          value: t.uriTemplate, text: `${t.name}: ${t.uriTemplate} (template)`, hay: haystack(t.uriTemplate, t.name, t.title, t.description, "template", adapter, kind), def: t, template: true,
        })),
      ],
      form: ({ def, template }) => {
        if (!template) {
          return { element: describe(def.description, `Reads ${def.uri}${def.mimeType ? ` (${def.mimeType})` : ""}.`), params: () => ({ uri: def.uri }) };
        }
        const names = variables(def.uriTemplate);
        const schema = { type: "object", properties: Object.fromEntries(names.map((n) => [n, { type: "string" }])), required: names };
        const f = schemaForm(schema, `Variables of ${def.uriTemplate}`);
        return {
          element: [describe(def.description, `Fills in ${def.uriTemplate} and reads the URI it makes.`), f.element],
          params: () => ({ uri: expand(def.uriTemplate, f.read()) }),
        };
      },
    },
  };
}
