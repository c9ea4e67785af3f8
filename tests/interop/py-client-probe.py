"""Client interop probe: the official Python SDK client (`mcp`), pinned to revision 2026-07-28,
against a running server with the embedded default config's demo tools (`echo`, `add`, the MRTR
tool `greet`, a resource, the prompt `hello_prompt`). It checks what the SDK returns and, through
a recording HTTP transport, what crossed the wire. Prints `PASS name (detail)` / `FAIL name: reason`
per check and a closing `N passed, N failed`; exit status 1 when a check failed.

Usage: $INTEROP_DIR/py/bin/python tests/interop/py-client-probe.py URL
Env:   PROBE_H2C=1  speak HTTP/2 in cleartext with prior knowledge (as meshes and gateways do
                    upstream) and check that every exchange was HTTP/2 (check `wire-http2`)
"""

import asyncio
import json
import os
import random
import string
import sys
from typing import Any

import httpx2
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from probe import CheckFailed, check, ensure, finish

REV = "2026-07-28"
H2C = os.environ.get("PROBE_H2C") == "1"


class Exchange:
    def __init__(self, body: Any, headers: dict[str, str], status: int, session_id: str | None, messages: list[Any], version: str):
        self.body, self.headers, self.status, self.session_id, self.messages = body, headers, status, session_id, messages
        self.version = version

    def answer(self) -> Any:
        rid = self.body.get("id") if isinstance(self.body, dict) else None
        return next((m for m in self.messages if isinstance(m, dict) and m.get("id") == rid and rid is not None), None)


class Recording(httpx2.AsyncBaseTransport):
    """Passes every request to the real transport and keeps a parsed copy of the exchange."""

    def __init__(self) -> None:
        # h2c: HTTP/2 only, which httpx2 speaks over cleartext with prior knowledge.
        self.inner = httpx2.AsyncHTTPTransport(http1=False, http2=True) if H2C else httpx2.AsyncHTTPTransport()
        self.exchanges: list[Exchange] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        content = await response.aread()
        try:
            body = json.loads(request.content) if request.content else None
        except ValueError:
            body = None
        messages: list[Any] = []
        kind = response.headers.get("content-type", "")
        parts = (
            [line[5:] for line in content.decode(errors="replace").splitlines() if line.startswith("data:")]
            if "event-stream" in kind
            else [content.decode(errors="replace")]
        )
        for part in parts:
            try:
                messages.append(json.loads(part))
            except ValueError:
                pass
        headers = {k.lower(): v for k, v in request.headers.items()}
        version = response.extensions.get("http_version", b"HTTP/1.1")
        version = version.decode() if isinstance(version, bytes) else str(version)
        self.exchanges.append(Exchange(body, headers, response.status_code, response.headers.get("mcp-session-id"), messages, version))
        return httpx2.Response(
            response.status_code,
            headers=[(k, v) for k, v in response.headers.items() if k.lower() not in ("content-length", "transfer-encoding")],
            content=content,
            request=request,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()

    def results(self, method: str) -> list[Any]:
        return [a for x in self.exchanges if isinstance(x.body, dict) and x.body.get("method") == method and (a := x.answer())]


def cache_hints(method: str, result: dict[str, Any]) -> str:
    ttl, scope = result.get("ttlMs"), result.get("cacheScope")
    ensure(isinstance(ttl, int) and not isinstance(ttl, bool) and ttl >= 0, f"{method}: ttlMs {ttl!r} on the wire")
    ensure(scope in ("public", "private"), f"{method}: cacheScope {scope!r} on the wire")
    return f"ttlMs={ttl} cacheScope={scope}"


def texts(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def main(url: str) -> int:
    wire = Recording()
    asked: list[str] = []

    async def elicit(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(getattr(params, "message", "elicitation"))
        schema = getattr(params, "requested_schema", None) or {}
        props = schema.get("properties", {}) if isinstance(schema, dict) else {}
        content = {k: (True if p.get("type") == "boolean" else 1 if p.get("type") in ("number", "integer") else "Interop") for k, p in props.items()}
        return types.ElicitResult(action="accept", content=content)

    def last(method: str) -> dict[str, Any]:
        answers = wire.results(method)
        ensure(answers and "result" in answers[-1], f"no {method} result on the wire")
        return answers[-1]["result"]

    print(f"# official Python client (mcp) pinned to {REV} -> {url}", flush=True)
    async with httpx2.AsyncClient(transport=wire, timeout=httpx2.Timeout(15.0)) as http:
        client = Client(
            streamable_http_client(url, http_client=http),
            mode=REV,
            elicitation_callback=elicit,
            client_info=types.Implementation(name="mcp-runtime-py-probe", version="1.0.0"),
            read_timeout_seconds=15,
        )
        try:
            await client.__aenter__()
        except Exception as e:  # noqa: BLE001
            print(f"FAIL connect: {type(e).__name__}: {e}")
            return finish(not_run=1)
        try:

            async def connect() -> str:
                ensure(client.protocol_version == REV, f"negotiated {client.protocol_version}")
                return f"protocol {client.protocol_version} (pinned: no request at connect)"

            async def discover() -> str:
                # The pinned client adopted a synthesized discover result at connect; ask the server.
                d = types.DiscoverResult.model_validate(await client.session.send_discover(REV))
                ensure(REV in d.supported_versions, f"supportedVersions {d.supported_versions}")
                ensure(d.capabilities.tools is not None, "no tools capability")
                raw = last("server/discover")
                ensure(raw.get("_meta", {}).get("io.modelcontextprotocol/serverInfo", {}).get("name"), "no serverInfo in result _meta")
                return f"{','.join(d.supported_versions)}; {cache_hints('server/discover', raw)}"

            tools: list[types.Tool] = []

            async def tools_list() -> str:
                nonlocal tools
                tools = (await client.list_tools(cache_mode="refresh")).tools
                for name in ("echo", "add", "greet"):
                    ensure(any(t.name == name for t in tools), f"{name} not listed")
                return f"{len(tools)} tools; {cache_hints('tools/list', last('tools/list'))}"

            async def echo() -> str:
                token = "probe-" + "".join(random.choices(string.ascii_lowercase + string.digits, k=8))
                r = await client.call_tool("echo", {"text": token})
                ensure(not r.is_error, f"isError: {r.content}")
                ensure(token in texts(r), f"text {texts(r)!r} lacks {token}")
                return texts(r)

            async def structured() -> str:
                r = await client.call_tool("add", {"a": 2, "b": 3})
                ensure(not r.is_error, f"isError: {r.content}")
                ensure(5 in (r.structured_content or {}).values(), f"structuredContent {r.structured_content}")
                listed = next((t for t in tools if t.name == "add"), None)
                return f"structuredContent {json.dumps(r.structured_content)}, outputSchema {'listed' if listed and listed.output_schema else 'absent'}"

            async def mrtr() -> str:
                start = len(wire.exchanges)
                r = await client.call_tool("greet", {})
                ensure(not r.is_error, f"isError: {r.content}")
                rounds = [x for x in wire.exchanges[start:] if isinstance(x.body, dict) and x.body.get("method") == "tools/call"]
                ensure(len(rounds) >= 2, f"{len(rounds)} HTTP round(s), expected an input_required round and a retry")
                first = (rounds[0].answer() or {}).get("result", {})
                ensure(first.get("resultType") == "input_required", f"first round resultType {first.get('resultType')!r}")
                ensure(rounds[-1].body.get("params", {}).get("inputResponses"), "the retry carried no inputResponses")
                ensure(asked, "the SDK never asked the client for input")
                ensure("Interop" in texts(r), f"final text {texts(r)!r} does not use the answer")
                return f"{len(rounds)} rounds, asked {asked}, result {texts(r)!r}"

            uri: str | None = None

            async def resources_list() -> str:
                nonlocal uri
                r = await client.list_resources(cache_mode="refresh")
                ensure(r.resources, "no resource listed")
                uri = str(r.resources[0].uri)
                return f"{len(r.resources)} resource(s), first {uri}; {cache_hints('resources/list', last('resources/list'))}"

            async def resources_read() -> str:
                ensure(uri, "nothing to read")
                r = await client.read_resource(uri, cache_mode="refresh")
                ensure(any(str(c.uri) == uri for c in r.contents), f"no contents for {uri}")
                return f"{r.contents[0].mime_type}; {cache_hints('resources/read', last('resources/read'))}"

            async def prompts_list() -> str:
                r = await client.list_prompts(cache_mode="refresh")
                ensure(any(p.name == "hello_prompt" for p in r.prompts), "hello_prompt not listed")
                return f"{len(r.prompts)} prompt(s); {cache_hints('prompts/list', last('prompts/list'))}"

            async def prompts_get() -> str:
                r = await client.get_prompt("hello_prompt", {"name": "Interop"})
                ensure(r.messages, "no messages")
                first = r.messages[0].content
                ensure("Interop" in getattr(first, "text", ""), "the argument is not in the messages")
                return f"{len(r.messages)} message(s): {getattr(first, 'text', '')!r}"

            async def unknown_tool() -> str:
                try:
                    r = await client.call_tool("no_such_tool_for_the_probe", {})
                except MCPError as e:
                    answers = wire.results("tools/call")
                    error = answers[-1].get("error") if answers else None
                    ensure(error, "the SDK raised but no JSON-RPC error crossed the wire")
                    ensure(error.get("code") == -32602, f"JSON-RPC error {error.get('code')}, expected -32602")
                    return f"-32602: {e}"
                raise CheckFailed(f"a result instead of a JSON-RPC error (isError {r.is_error})")

            async def no_session() -> str:
                ensure(not any(x.session_id for x in wire.exchanges), "a response carried Mcp-Session-Id")
                ensure(not any(isinstance(x.body, dict) and x.body.get("method") == "initialize" for x in wire.exchanges), "the client sent initialize")
                return f"{len(wire.exchanges)} exchanges, no Mcp-Session-Id, no initialize"

            async def result_type() -> str:
                results = [a for x in wire.exchanges if (a := x.answer()) and "result" in a]
                ensure(results, "no result captured")
                bad = [a for a in results if a["result"].get("resultType") not in ("complete", "input_required")]
                ensure(not bad, f"{len(bad)} result(s) without resultType: {json.dumps(bad[0]['result'])[:120] if bad else ''}")
                return f"{len(results)} results, each with resultType"

            async def request_headers() -> str:
                posts = [x for x in wire.exchanges if isinstance(x.body, dict) and x.body.get("method")]
                bad = [x for x in posts if x.headers.get("mcp-protocol-version") != REV or x.headers.get("mcp-method") != x.body["method"]]
                ensure(not bad, f"{len(bad)} POST(s) without matching MCP-Protocol-Version/Mcp-Method")
                return f"{len(posts)} POSTs with MCP-Protocol-Version and Mcp-Method"

            async def http2() -> str:
                versions = sorted({x.version for x in wire.exchanges})
                ensure(versions == ["HTTP/2"], f"exchanges spoke {versions}")
                return f"{len(wire.exchanges)} exchanges, all HTTP/2 (h2c)"

            checks = [
                ("connect", connect),
                ("discover", discover),
                ("tools-list", tools_list),
                ("tools-call-echo", echo),
                ("tools-call-structured", structured),
                ("tools-call-mrtr", mrtr),
                ("resources-list", resources_list),
                ("resources-read", resources_read),
                ("prompts-list", prompts_list),
                ("prompts-get", prompts_get),
                ("error-unknown-tool", unknown_tool),
                ("wire-no-session", no_session),
                ("wire-result-type", result_type),
                ("wire-request-headers", request_headers),
            ]
            if H2C:
                checks.append(("wire-http2", http2))
            for name, fn in checks:
                await check(name, fn)
        finally:
            try:
                await client.__aexit__(None, None, None)
            except Exception:  # noqa: BLE001, S110 - closing is best effort
                pass
    return finish()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python tests/interop/py-client-probe.py URL", file=sys.stderr)
        sys.exit(2)
    sys.exit(asyncio.run(main(sys.argv[1])))
