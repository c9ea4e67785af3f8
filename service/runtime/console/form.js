// A form generated from a JSON Schema object (a tool's inputSchema, an elicitation's
// requestedSchema): one labelled field per property; nested objects and arrays as JSON text.
import { h } from "./app.js";

let seq = 0;

/** `{element, read()}`: `read()` returns the arguments object or throws naming the field. */
export function schemaForm(schema, legend) {
  const props = (schema && schema.properties) || {};
  const required = new Set((schema && schema.required) || []);
  const fields = [];
  const box = h("fieldset", {}, h("legend", {}, legend));
  if (!Object.keys(props).length) box.append(h("p", { class: "muted" }, "No arguments."));
  for (const [name, prop] of Object.entries(props)) {
    const id = `f${++seq}-${name.replace(/[^A-Za-z0-9_-]/g, "_")}`;
    const type = Array.isArray(prop.type) ? prop.type.find((t) => t !== "null") : prop.type;
    const title = prop.title || name;
    const hint = prop.description ? h("span", { class: "muted", id: `${id}-hint` }, ` ${prop.description}`) : null;
    const labelText = `${title}${required.has(name) ? " (required)" : ""}`;
    let input;
    if (Array.isArray(prop.enum)) {
      input = h("select", { id, name }, required.has(name) ? null : h("option", { value: "" }, "(none)"),
        prop.enum.map((v) => h("option", { value: JSON.stringify(v) }, String(v))));
    } else if (type === "boolean") {
      input = h("input", { id, name, type: "checkbox" });
    } else if (type === "number" || type === "integer") {
      input = h("input", { id, name, type: "number", step: type === "integer" ? "1" : "any" });
    } else if (type === "object" || type === "array") {
      input = h("textarea", { id, name, rows: 3, placeholder: type === "array" ? "[]" : "{}" });
    } else {
      input = h("input", { id, name, type: "text" });
    }
    if (prop.default !== undefined && input.type !== "checkbox") input.value = typeof prop.default === "string" ? prop.default : JSON.stringify(prop.default);
    if (hint) input.setAttribute("aria-describedby", `${id}-hint`);
    if (required.has(name)) input.setAttribute("aria-required", "true");
    box.append(h("label", { for: id }, labelText), hint, input);
    fields.push({ name, type, input, required: required.has(name), isEnum: Array.isArray(prop.enum) });
  }
  return {
    element: box,
    read() {
      const out = {};
      for (const f of fields) {
        const raw = f.input.type === "checkbox" ? f.input.checked : f.input.value;
        if (f.input.type === "checkbox") {
          out[f.name] = raw;
          continue;
        }
        if (raw === "") {
          if (f.required) throw new Error(`${f.name} is required`);
          continue;
        }
        if (f.isEnum) out[f.name] = JSON.parse(raw);
        else if (f.type === "number" || f.type === "integer") out[f.name] = Number(raw);
        else if (f.type === "object" || f.type === "array") {
          try {
            out[f.name] = JSON.parse(raw);
          } catch (e) {
            throw new Error(`${f.name} is not valid JSON: ${e.message}`);
          }
        } else out[f.name] = raw;
      }
      return out;
    },
  };
}
