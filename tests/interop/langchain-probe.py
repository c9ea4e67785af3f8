"""Client interop probe, 2025-era leg: LangChain's MCP adapters (`langchain-mcp-adapters`), in their
default mode (`MultiServerMCPClient` with the `streamable_http` transport, built on the Python SDK's
`initialize` handshake), against a running server with the embedded default config's demo tools.
It must list the tools as LangChain tools and invoke `echo` (MCP 2026-07-28
basic/transports/streamable-http § Backward compatibility). No elicitation: the adapters have no
elicitation UI.
Prints `PASS name (detail)` / `FAIL name: reason` per check and a closing `N passed, N failed`;
exit status 1 when a check failed.

Usage: $INTEROP_DIR/langchain/bin/python tests/interop/langchain-probe.py URL
"""

import asyncio
import importlib.metadata
import sys
from typing import Any

from langchain_mcp_adapters.client import MultiServerMCPClient
from probe import check, ensure, finish

def text_of(result: Any) -> str:
    # A tool's output is a string, or (with content blocks) a list of blocks / (content, artifact).
    if isinstance(result, tuple):
        result = result[0]
    if isinstance(result, str):
        return result
    if isinstance(result, list):
        return " ".join(b.get("text", "") if isinstance(b, dict) else str(getattr(b, "text", b)) for b in result)
    return str(getattr(result, "content", result))


async def main(url: str) -> int:
    v = importlib.metadata.version
    print(f"# langchain-mcp-adapters {v('langchain-mcp-adapters')} (mcp {v('mcp')}) -> {url}", flush=True)
    client = MultiServerMCPClient({"rt": {"url": url, "transport": "streamable_http"}})
    tools: list[Any] = []

    async def get_tools() -> str:
        nonlocal tools
        tools = await asyncio.wait_for(client.get_tools(), 30)
        names = [t.name for t in tools]
        for name in ("echo", "greet"):
            ensure(name in names, f"{name} not listed ({names})")
        return f"{len(tools)} tools: {', '.join(names)}"

    async def invoke_echo() -> str:
        echo = next((t for t in tools if t.name == "echo"), None)
        ensure(echo is not None, "no echo tool")
        out = text_of(await asyncio.wait_for(echo.ainvoke({"text": "hello from langchain"}), 30))
        ensure(out == "hello from langchain", f"echo returned {out!r}")
        return out

    await check("get-tools", get_tools)
    await check("invoke-echo", invoke_echo)
    return finish()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python tests/interop/langchain-probe.py URL", file=sys.stderr)
        sys.exit(2)
    sys.exit(asyncio.run(main(sys.argv[1])))
