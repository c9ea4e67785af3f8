"""The docs harness's MCP client (tests/docs/blocks.py): the official Python SDK (`mcp` 2.x,
pinned by tests/interop/setup.sh) connects the way a page says a client connects and lists the
server's tools. Prints one JSON line {"tools": [names]}; exit status 1, with the reason on
stderr, when it cannot connect or list.

Usage: $INTEROP_DIR/py/bin/python tests/docs/client.py http URL ['Name: value' ...]
       $INTEROP_DIR/py/bin/python tests/docs/client.py stdio COMMAND [ARG ...]
         (stdio: the server's environment is this process's; 2025-era handshake, as desktop
         agents speak to their bridges)
"""

import asyncio
import json
import os
import sys

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

TIMEOUT = 30.0


async def tools_over_http(url: str, headers: dict[str, str]) -> list[str]:
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(TIMEOUT)) as http:
        async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=TIMEOUT) as client:
            return [t.name for t in (await client.list_tools()).tools]


async def tools_over_stdio(command: str, args: list[str]) -> list[str]:
    server = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    async with Client(server, mode="legacy", read_timeout_seconds=TIMEOUT) as client:
        return [t.name for t in (await client.list_tools()).tools]


def main() -> None:
    if len(sys.argv) < 3 or sys.argv[1] not in ("http", "stdio"):
        sys.exit(__doc__)
    if sys.argv[1] == "http":
        headers = dict(h.split(": ", 1) for h in sys.argv[3:])
        work = tools_over_http(sys.argv[2], headers)
    else:
        work = tools_over_stdio(sys.argv[2], sys.argv[3:])
    try:
        tools = asyncio.run(asyncio.wait_for(work, TIMEOUT * 2))
    except BaseException as e:  # noqa: BLE001 - the reason is the whole answer
        while isinstance(e, BaseExceptionGroup) and e.exceptions:
            e = e.exceptions[0]
        sys.exit(f"{type(e).__name__}: {e}")
    print(json.dumps({"tools": tools}))


if __name__ == "__main__":
    main()
