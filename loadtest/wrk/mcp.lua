-- wrk script for loadtest/bench-peers.sh: every request is one MCP 2026-07-28 POST with the
-- per-request envelope in params._meta and the routing headers, the same bytes for every
-- system under test.
--
--   wrk -t1 -c32 -d5s -s loadtest/wrk/mcp.lua http://127.0.0.1:PORT/mcp -- tools/call
--   wrk ... -- tools/list
--   wrk ... -- legacy/tools/call SESSION_ID
--
-- legacy/tools/call is a 2025-era client's call (MCP 2026-07-28 basic/transports/streamable-http
-- § Backward compatibility): the Mcp-Session-Id its `initialize` got (bench-peers.sh does that
-- once) and `MCP-Protocol-Version: 2025-11-25` (MCP 2025-11-25 basic/transports § Protocol Version
-- Header), no `_meta` envelope and no Mcp-Method/Mcp-Name routing headers.
--
-- done() prints one line `WRK_JSON {...}` (requests, req/s, p50/p99/max in µs, errors).

local meta = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    .. '"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1.0.0"},'
    .. '"io.modelcontextprotocol/clientCapabilities":{}}'

function init(args)
    local method = args[1] or "tools/call"
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "application/json"
    wrk.headers["Accept"] = "application/json, text/event-stream"
    wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
    wrk.headers["Mcp-Method"] = method
    -- MCP_BEARER (environment): every request carries that bearer token (loadtest/production.sh).
    local token = os.getenv("MCP_BEARER")
    if token and token ~= "" then
        wrk.headers["Authorization"] = "Bearer " .. token
    end
    if method == "legacy/tools/call" then
        local session = args[2] or error("legacy/tools/call needs the session id as its second argument")
        wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
        wrk.headers["Mcp-Method"] = nil
        wrk.headers["Mcp-Session-Id"] = session
        wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",'
            .. '"arguments":{"text":"hello from wrk"}}}'
    elseif method == "tools/call" then
        -- MCP_TOOL (environment): the tool called (default echo; loadtest/endpoints.sh calls
        -- echo under the name a virtual endpoint gives it).
        local tool = os.getenv("MCP_TOOL")
        if not tool or tool == "" then
            tool = "echo"
        end
        wrk.headers["Mcp-Name"] = tool
        wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"' .. tool .. '",'
            .. '"arguments":{"text":"hello from wrk"},' .. meta .. '}}'
    elseif method == "tools/list" then
        wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{' .. meta .. '}}'
    else
        error("unknown method " .. method .. " (tools/call, tools/list or legacy/tools/call)")
    end
end

function done(summary, latency, requests)
    local e = summary.errors
    io.write(string.format(
        'WRK_JSON {"requests":%d,"seconds":%.3f,"rps":%.1f,"p50_us":%d,"p99_us":%d,"max_us":%d,'
            .. '"errors":%d,"non_2xx":%d}\n',
        summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
        latency:percentile(50), latency:percentile(99), latency.max,
        e.connect + e.read + e.write + e.timeout + e.status, e.status))
end
