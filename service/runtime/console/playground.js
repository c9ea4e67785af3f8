// The playground: calls a tool through the real MCP endpoint as an MCP 2026-07-28 client
// (`_meta` with protocol version, client info and capabilities; `Mcp-Method` / `Mcp-Name`
// headers) and runs MRTR rounds: on `input_required` it shows each elicitation as a form and
// sends the call again with `inputResponses` and the sealed `requestState`
// (MCP 2026-07-28 basic/patterns/mrtr).
import { h, mcpPath, put, token } from "./app.js";
import { schemaForm } from "./form.js";

const VERSION = "2026-07-28";
let nextId = 0;

function meta() {
  return {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientInfo": { name: "mcp-runtime-console", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
  };
}

/** One JSON-RPC request; the final response, from JSON or from an SSE stream. */
async function rpc(method, params, log) {
  const body = { jsonrpc: "2.0", id: ++nextId, method, params: { ...params, _meta: meta() } };
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": VERSION,
    "mcp-method": method,
    authorization: `Bearer ${token()}`,
  };
  if (params.name) headers["mcp-name"] = params.name;
  log("request", { headers: { ...headers, authorization: "Bearer [hidden]" }, body });
  const res = await fetch(mcpPath(), { method: "POST", headers, body: JSON.stringify(body) });
  const text = await res.text();
  let messages;
  if ((res.headers.get("content-type") || "").startsWith("text/event-stream")) {
    messages = text.split("\n\n").map((b) => b.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n")).filter(Boolean).map((d) => JSON.parse(d));
  } else {
    messages = text ? [JSON.parse(text)] : [];
  }
  log(`response (HTTP ${res.status})`, messages.length === 1 ? messages[0] : messages);
  const last = messages[messages.length - 1];
  if (!last) throw new Error(`HTTP ${res.status} with no JSON-RPC answer`);
  return last;
}

export async function playground(target, catalog) {
  const tools = catalog.tools.map((t) => t.tool);
  put(target, h("h2", {}, "Playground"));
  if (!mcpPath()) {
    target.append(h("p", {}, "The playground calls the MCP endpoint from this page, so it works when the console is on the main listener (console.listener = \"main\")."));
    return;
  }
  const exchange = h("pre", { id: "exchange", tabindex: "0", "aria-label": "Raw exchange" });
  const result = h("div", { id: "result", "aria-live": "polite" });
  const rounds = h("div", { id: "rounds" });
  const log = (what, data) => {
    exchange.textContent += `--- ${what}\n${JSON.stringify(data, null, 2)}\n`;
  };
  const select = h("select", { id: "pg-tool", name: "tool" }, tools.map((t) => h("option", { value: t.name }, t.title || t.name)));
  const formBox = h("div");
  let form;
  const pick = () => {
    const tool = tools.find((t) => t.name === select.value);
    form = schemaForm(tool ? tool.inputSchema : {}, `Arguments of ${select.value}`);
    const desc = tool && tool.description ? h("p", { class: "muted" }, tool.description) : null;
    formBox.replaceChildren(desc || "", form.element);
  };
  select.addEventListener("change", pick);
  pick();

  const show = (answer) => {
    if (answer.error) {
      result.replaceChildren(h("p", { class: "bad" }, `Error ${answer.error.code}: ${answer.error.message}`));
      return;
    }
    const r = answer.result || {};
    const texts = (r.content || []).filter((c) => c.type === "text").map((c) => c.text);
    result.replaceChildren(
      h("h3", {}, r.isError ? "Tool error" : "Result"),
      h("p", { class: r.isError ? "bad" : "ok", id: "result-text" }, texts.join("\n") || "(no text content)"),
      r.structuredContent ? h("pre", {}, JSON.stringify(r.structuredContent, null, 2)) : "",
    );
  };

  /** Runs the call, answering each input_required round through a form, until it completes. */
  const call = async (params) => {
    const answer = await rpc("tools/call", params, log);
    const r = answer.result;
    if (!r || r.resultType !== "input_required") {
      rounds.replaceChildren();
      return show(answer);
    }
    const forms = [];
    const box = h("form", { id: "round-form" }, h("h3", {}, "The tool asks for input"));
    for (const [key, req] of Object.entries(r.inputRequests || {})) {
      if (req.method !== "elicitation/create" || (req.params.mode && req.params.mode !== "form")) {
        box.append(h("p", { class: "bad" }, `${key}: ${req.method} is not supported by the playground`));
        continue;
      }
      box.append(h("p", {}, req.params.message || ""));
      const f = schemaForm(req.params.requestedSchema, key);
      forms.push([key, f]);
      box.append(f.element);
    }
    const send = (action) => async (ev) => {
      ev.preventDefault();
      try {
        const inputResponses = {};
        for (const [key, f] of forms) inputResponses[key] = action === "accept" ? { action, content: f.read() } : { action };
        await call({ name: params.name, arguments: params.arguments, inputResponses, requestState: r.requestState });
      } catch (e) {
        result.replaceChildren(h("p", { class: "bad", role: "alert" }, e.message));
      }
    };
    box.append(h("button", { type: "submit" }, "Send"), " ", h("button", { type: "button", onclick: send("decline") }, "Decline"));
    box.addEventListener("submit", send("accept"));
    rounds.replaceChildren(box);
    result.replaceChildren(h("p", {}, "Waiting for your answer (round sealed in requestState)."));
  };

  const run = h("form", { id: "pg-form" },
    h("label", { for: "pg-tool" }, "Tool"), select, formBox,
    h("button", { type: "submit" }, "Call tool"));
  run.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    exchange.textContent = "";
    try {
      await call({ name: select.value, arguments: form.read() });
    } catch (e) {
      result.replaceChildren(h("p", { class: "bad", role: "alert" }, e.message));
    }
  });
  target.append(run, rounds, result, h("h3", {}, "Raw exchange"), exchange);
}
