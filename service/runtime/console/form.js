// A form generated from a JSON Schema object (a tool's inputSchema, an elicitation's
// requestedSchema, a prompt's arguments): one labelled field per property, required ones
// first (in the order `required` lists them), then the rest in the schema's order. Enums
// and booleans are choices with an "unset" entry, so an optional value can be left out;
// nested objects and arrays are JSON text.
import { h } from "./app.js";

let seq = 0;

/** `[value, label]` choices of a property, or null when it is not a choice. */
function choices(prop, type) {
  if (Array.isArray(prop.enum)) return prop.enum.map((v, i) => [v, (prop.enumNames && prop.enumNames[i]) || String(v)]);
  const titled = prop.oneOf || prop.anyOf;
  if (Array.isArray(titled) && titled.length && titled.every((o) => o && "const" in o)) return titled.map((o) => [o.const, o.title || String(o.const)]);
  if (type === "boolean") return [[true, "true"], [false, "false"]];
  return null;
}

/** The items of a multi-select (`type: array` of an enum), or null. */
function multi(prop, type) {
  return type === "array" && prop.items ? choices(prop.items, prop.items.type) : null;
}

const INPUT = { email: "email", uri: "url", date: "date" };

/** One property: its label, hint and control, and how to read it (`undefined`: left out). */
function field(name, prop, required) {
  const id = `f${++seq}-${name.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  const type = Array.isArray(prop.type) ? prop.type.find((t) => t !== "null") : prop.type;
  const label = h("label", { for: id }, `${prop.title || name}${required ? " (required)" : ""}`);
  const hint = prop.description ? h("span", { class: "hint muted", id: `${id}-hint` }, prop.description) : null;
  const attrs = { id, name, "aria-describedby": hint ? `${id}-hint` : null, "aria-required": required ? "true" : null };
  const has = prop.default !== undefined;
  let input;
  let read;
  const options = choices(prop, type);
  const many = multi(prop, type);
  if (options) {
    const empty = h("option", { value: "" }, required ? "(choose)" : "(unset: left out)");
    input = h("select", attrs, empty, options.map(([v, text], i) => h("option", { value: String(i), selected: has && v === prop.default }, text)));
    read = () => (input.value === "" ? undefined : options[Number(input.value)][0]);
  } else if (many) {
    input = h("select", { ...attrs, multiple: true, size: Math.min(many.length, 6) }, many.map(([v, text], i) => h("option", { value: String(i), selected: has && Array.isArray(prop.default) && prop.default.includes(v) }, text)));
    read = () => {
      const picked = [...input.selectedOptions].map((o) => many[Number(o.value)][0]);
      return picked.length || required ? picked : undefined;
    };
  } else if (type === "number" || type === "integer") {
    input = h("input", { ...attrs, type: "number", step: type === "integer" ? "1" : "any", value: has ? String(prop.default) : null });
    read = () => (input.value === "" ? undefined : Number(input.value));
  } else if (type === "object" || type === "array") {
    input = h("textarea", { ...attrs, rows: 3, placeholder: type === "array" ? "[]" : "{}" });
    if (has) input.value = JSON.stringify(prop.default);
    read = () => {
      if (input.value.trim() === "") return undefined;
      try {
        return JSON.parse(input.value);
      } catch (e) {
        throw new Error(`${name} is not valid JSON: ${e.message}`);
      }
    };
  } else {
    input = h("input", { ...attrs, type: INPUT[prop.format] || "text", value: has ? String(prop.default) : null });
    read = () => (input.value === "" ? undefined : input.value);
  }
  return {
    element: h("div", { class: "field" }, label, hint, input),
    read() {
      const v = read();
      if (v === undefined && required) throw new Error(`${prop.title || name} is required`);
      return v;
    },
  };
}

/** `{element, read()}`: `read()` returns the arguments object or throws naming the field. */
export function schemaForm(schema, legend) {
  const props = (schema && schema.properties) || {};
  const listed = Array.isArray(schema && schema.required) ? schema.required.filter((n) => n in props) : [];
  const required = new Set(listed);
  const order = [...listed, ...Object.keys(props).filter((n) => !required.has(n))];
  const fields = order.map((name) => [name, field(name, props[name] || {}, required.has(name))]);
  const box = h("fieldset", {}, h("legend", {}, legend),
    fields.length ? fields.map(([, f]) => f.element) : h("p", { class: "muted" }, "No arguments."));
  return {
    element: box,
    read() {
      const out = {};
      for (const [name, f] of fields) {
        const v = f.read();
        if (v !== undefined) out[name] = v;
      }
      return out;
    },
  };
}

/** A prompt's `arguments` (name, title, description, required) as a schema of strings. */
export function argumentsSchema(args) {
  const list = args || [];
  return {
    type: "object",
    properties: Object.fromEntries(list.map((a) => [a.name, { type: "string", title: a.title, description: a.description }])),
    required: list.filter((a) => a.required).map((a) => a.name),
  };
}
