"""Each user's own upstream account, through the official Python SDK client (`mcp`) pinned to
2026-07-28: a tool whose adapter has `user_auth` answers the first call with a URL-mode
elicitation; the SDK hands it to the elicitation callback, where a scripted person (`browse`,
probe.py) opens the URL, signs in at the identity provider and consents at the upstream over
real HTTP; the SDK's retry of the call then succeeds, and a later call asks nothing. Prints
`PASS name (detail)` / `FAIL name: reason` per check and `N passed, N failed`.

Usage: PROBE_TOKEN=... $INTEROP_DIR/py/bin/python tests/interop/py-connect-probe.py MCP_URL TOOL USER
"""

import asyncio
import os
import sys
from typing import Any

import httpx2
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from probe import browse, check, ensure, finish

REV = "2026-07-28"


async def main(url: str, tool: str, user: str, token: str) -> int:
    asked: list[Any] = []

    async def elicit(_context: Any, params: Any) -> types.ElicitResult:
        asked.append(params)
        if getattr(params, "mode", None) != "url":
            return types.ElicitResult(action="decline")
        status, text = await browse(params.url, user)
        return types.ElicitResult(action="accept" if status == 200 and "is connected" in text else "cancel")

    print(f"# official Python client (mcp) pinned to {REV}, user {user} -> {url} {tool}", flush=True)
    headers = {"authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0)) as http:
        client = Client(
            streamable_http_client(url, http_client=http),
            mode=REV,
            elicitation_callback=elicit,
            client_info=types.Implementation(name="mcp-runtime-py-connect-probe", version="1.0.0"),
            read_timeout_seconds=30,
        )
        try:
            await client.__aenter__()
        except Exception as e:  # noqa: BLE001
            print(f"FAIL connect: {type(e).__name__}: {e}")
            return finish(not_run=1)
        try:

            async def first() -> str:
                r = await client.call_tool(tool, {})
                ensure(not r.is_error, f"the call failed: {r}")
                ensure(len(asked) == 1 and asked[0].mode == "url", f"asked {asked}")
                ensure("/oauth/start?link=" in asked[0].url, f"the URL: {asked[0].url}")
                return f'asked "{asked[0].message}"'

            async def later() -> str:
                r = await client.call_tool(tool, {})
                ensure(not r.is_error, f"the call failed: {r}")
                ensure(len(asked) == 1, "asked again")
                return "connected once"

            await check("a URL elicitation, completed in the browser, then the call", first)
            await check("a later call asks nothing", later)
        finally:
            await client.__aexit__(None, None, None)
    return finish()


if __name__ == "__main__":
    if len(sys.argv) != 4 or not os.environ.get("PROBE_TOKEN"):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        sys.exit(2)
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], os.environ["PROBE_TOKEN"])))
