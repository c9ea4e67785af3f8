// The playground's MCP client: one JSON-RPC request to the real MCP endpoint as an MCP
// 2026-07-28 client (`_meta` with protocol version, client info and capabilities;
// `Mcp-Method` / `Mcp-Name` headers; the admin's bearer token), the answer read from JSON or
// from an SSE stream, and everything logged for the raw exchange (token hidden).
import { mcpPath, token } from "./app.js";

const VERSION = "2026-07-28";
let nextId = 0;

function meta() {
  return {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientInfo": { name: "mcp-runtime-console", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {}, url: {} } },
  };
}

/**
 * A header value as clients must send it (MCP 2026-07-28 basic/transports/streamable-http §
 * Request metadata headers): literal when visible ASCII without surrounding blanks,
 * otherwise `=?base64?...?=` of its UTF-8.
 */
export function headerValue(v) {
  if (/^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(v) && !v.startsWith("=?base64?")) return v;
  const bytes = new TextEncoder().encode(v);
  return `=?base64?${btoa(String.fromCharCode(...bytes))}?=`;
}

/** `method` with `params`; resolves with the final JSON-RPC answer. `log(what, data)` sees both ways. */
export async function rpc(method, params, log) {
  const body = { jsonrpc: "2.0", id: ++nextId, method, params: { ...params, _meta: meta() } };
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": VERSION,
    "mcp-method": method,
    authorization: `Bearer ${token()}`,
  };
  // The routing value the body names: a tool's or prompt's name, a resource's URI.
  const name = params.name ?? params.uri;
  if (typeof name === "string") headers["mcp-name"] = headerValue(name);
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
