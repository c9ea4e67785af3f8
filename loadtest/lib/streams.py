"""Holds N idle streams open against a runtime on loopback (loadtest/scale.sh): MCP
2026-07-28 `subscriptions/listen` POSTs, or with --legacy 2025-era GET streams (one
`initialize`, then GETs with its Mcp-Session-Id). Each stream counts once its response head
says 200 (and, for listen, the acknowledgement event arrived). Prints `open N refused M`,
then keeps them until stdin closes, closes them all and prints `closed`.

Usage: python3 loadtest/lib/streams.py HOST:PORT N [--legacy] [--token TOKEN]
"""

import asyncio
import json
import sys

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "scale-streams", "version": "1.0.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def request(host, method, headers, body=b""):
    head = [f"{method} /mcp HTTP/1.1", f"Host: {host}", "Accept: application/json, text/event-stream"]
    head += [f"{k}: {v}" for k, v in headers.items()]
    if body:
        head += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


async def open_one(addr, payload, want_event):
    host, port = addr.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(payload)
    await writer.drain()
    status = (await reader.readline()).split(b" ")[1]
    while (await reader.readline()) not in (b"\r\n", b""):
        pass
    if status != b"200":
        writer.close()
        return None
    if want_event:
        while not (await reader.readline()).startswith(b"data:"):
            pass
    return writer


async def legacy_session(addr, auth):
    body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "scale-streams", "version": "1"}}}).encode()
    host, port = addr.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(request(addr, "POST", {**auth, "Connection": "close"}, body))
    await writer.drain()
    head = (await reader.read()).split(b"\r\n\r\n")[0].decode()
    writer.close()
    for line in head.split("\r\n"):
        if line.lower().startswith("mcp-session-id:"):
            return line.split(":", 1)[1].strip()
    raise SystemExit(f"initialize gave no Mcp-Session-Id: {head}")


async def main():
    addr, n = sys.argv[1], int(sys.argv[2])
    legacy = "--legacy" in sys.argv
    auth = {"Authorization": f"Bearer {sys.argv[sys.argv.index('--token') + 1]}"} if "--token" in sys.argv else {}
    if legacy:
        sid = await legacy_session(addr, auth)
        payload = request(addr, "GET", {**auth, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
    else:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {
            "notifications": {"toolsListChanged": True}, "_meta": META}}).encode()
        payload = request(addr, "POST", {**auth, "MCP-Protocol-Version": "2026-07-28",
                                         "Mcp-Method": "subscriptions/listen"}, body)
    gate = asyncio.Semaphore(100)

    async def one():
        async with gate:
            return await open_one(addr, payload, not legacy)

    results = await asyncio.gather(*(one() for _ in range(n)))
    writers = [w for w in results if w is not None]
    print(f"open {len(writers)} refused {n - len(writers)}", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    for w in writers:
        w.close()
    await asyncio.gather(*(w.wait_closed() for w in writers), return_exceptions=True)
    print("closed", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
