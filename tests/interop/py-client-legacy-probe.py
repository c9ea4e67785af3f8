"""Client interop probe, 2025-era leg: the official Python SDK client (`mcp`) in its legacy mode
(`mode="legacy"`: the `initialize` handshake, as before 2026-07-28), against a running server with
the embedded default config's demo tools. It must connect (a 2025 revision and an Mcp-Session-Id),
list tools, call `echo`, and answer the MRTR tool `greet`'s question as a real
`elicitation/create` request on the call's SSE stream (MCP 2026-07-28
basic/transports/streamable-http § Backward compatibility; MCP 2025-11-25 client/elicitation).
Prints `PASS name (detail)` / `FAIL name: reason` per check and a closing `N passed, N failed`;
exit status 1 when a check failed.

Usage: $INTEROP_DIR/py/bin/python tests/interop/py-client-legacy-probe.py URL
"""

import asyncio
import importlib.metadata
import json
import sys
from typing import Any

import httpx2
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from probe import check, ensure, finish

def texts(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def main(url: str) -> int:
    # What crossed the wire: each request's JSON-RPC method (or response id), status, session id.
    # Recorded when the request goes out: the call's result can reach the client on its SSE
    # stream before the 202 of the answer POST does, so `settled` waits for the statuses.
    wire: list[dict[str, Any]] = []

    async def on_request(request: httpx2.Request) -> None:
        try:
            body = json.loads(request.content) if request.content else None
        except ValueError:
            body = None
        request.extensions["probe"] = entry = {"verb": request.method, "body": body, "status": None, "session": None}
        wire.append(entry)

    async def on_response(response: httpx2.Response) -> None:
        entry = response.request.extensions.get("probe")
        if entry is not None:
            entry["status"], entry["session"] = response.status_code, response.headers.get("mcp-session-id")

    async def settled() -> None:
        for _ in range(50):
            if all(x["status"] is not None for x in wire):
                return
            await asyncio.sleep(0.1)

    asked: list[str] = []

    async def elicit(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(getattr(params, "message", "elicitation"))
        return types.ElicitResult(action="accept", content={"name": "Interop"})

    print(f"# official Python client (mcp {importlib.metadata.version('mcp')}), legacy mode -> {url}", flush=True)
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(15.0), event_hooks={"request": [on_request], "response": [on_response]}) as http:
        client = Client(
            streamable_http_client(url, http_client=http),
            mode="legacy",
            elicitation_callback=elicit,
            client_info=types.Implementation(name="mcp-runtime-py-legacy-probe", version="1.0.0"),
            read_timeout_seconds=15,
        )
        try:
            await client.__aenter__()
        except Exception as e:  # noqa: BLE001
            print(f"FAIL connect: {type(e).__name__}: {e}")
            return finish(not_run=1)
        try:

            async def connect() -> str:
                version = str(client.protocol_version)
                ensure(version.startswith("2025-"), f"negotiated {version}, expected a 2025 revision")
                ensure(any(isinstance(x["body"], dict) and x["body"].get("method") == "initialize" for x in wire), "no initialize on the wire")
                session = next((x["session"] for x in wire if x["session"]), None)
                ensure(session, "no Mcp-Session-Id")
                return f"protocol {version}, session id of {len(session)} chars"

            async def tools_list() -> str:
                tools = (await client.list_tools()).tools
                for name in ("echo", "greet"):
                    ensure(any(t.name == name for t in tools), f"{name} not listed")
                return f"{len(tools)} tools"

            async def echo() -> str:
                r = await client.call_tool("echo", {"text": "hello from legacy mode"})
                ensure(not r.is_error and texts(r) == "hello from legacy mode", f"result {r.content}")
                return texts(r)

            async def elicitation() -> str:
                r = await client.call_tool("greet", {})
                ensure(not r.is_error, f"isError: {r.content}")
                ensure(asked, "the server never sent elicitation/create")
                ensure("Interop" in texts(r), f"final text {texts(r)!r} does not use the answer")
                await settled()
                answers = [x for x in wire if isinstance(x["body"], dict) and "method" not in x["body"] and "id" in x["body"]]
                ensure(answers and all(x["status"] == 202 for x in answers), f"answer POSTs got {[x['status'] for x in answers]}")
                return f"asked {asked}, {len(answers)} answer POST(s), result {texts(r)!r}"

            async def no_http_errors() -> str:
                await settled()
                bad = [x for x in wire if x["status"] is None or x["status"] >= 400 and not (x["verb"] == "GET" and x["status"] == 405) and x["verb"] != "DELETE"]
                ensure(not bad, f"statuses {[(x['verb'], x['status']) for x in bad]}")
                return f"{len(wire)} requests"

            await check("connect", connect)
            await check("tools-list", tools_list)
            await check("tools-call-echo", echo)
            await check("tools-call-elicitation", elicitation)
            await check("no-http-errors", no_http_errors)
        finally:
            try:
                await client.__aexit__(None, None, None)
            except Exception:  # noqa: BLE001
                pass
    return finish()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python tests/interop/py-client-legacy-probe.py URL", file=sys.stderr)
        sys.exit(2)
    sys.exit(asyncio.run(main(sys.argv[1])))
