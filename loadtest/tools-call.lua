-- wrk script: POST one MCP 2026-07-28 tools/call (the demo `echo` tool) with the routing
-- headers; a traceparent in _meta when TRACEPARENT=1 so the server span has a remote parent.
local meta = '"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}'
if os.getenv("TRACEPARENT") == "1" then
  meta = meta .. ',"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"'
end
wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{' .. meta .. '}}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "echo"
