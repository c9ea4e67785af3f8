// A stateless MCP server (revision 2026-07-28) on the official TypeScript SDK v2
// (@modelcontextprotocol/server, installed by tests/interop/setup.sh), as a benchmark peer: the
// tools `echo` {text} and `add` {a, b} on a plain node:http server, one fresh McpServer per
// request (the SDK's stateless handler), with cache hints on tools/list.
//
// Usage: $INTEROP_DIR/bin/node loadtest/peers/ts-server/server.mjs [PORT]   (default 3000)
//        endpoint http://127.0.0.1:PORT/mcp; GET /health answers ok
// Env:   INTEROP_DIR  where tests/interop/setup.sh installed (default <repo>/target/interop)
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const INTEROP_DIR = process.env.INTEROP_DIR || join(ROOT, 'target', 'interop');

// ESM ignores NODE_PATH: import the installed packages by path.
async function importInstalled(pkg) {
    const dir = join(INTEROP_DIR, 'ts', 'node_modules', pkg);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    let entry = manifest.exports?.['.'] ?? manifest.module ?? manifest.main;
    while (entry && typeof entry === 'object') entry = entry.import ?? entry.default;
    return import(pathToFileURL(join(dir, entry)).href);
}
const { McpServer, createMcpHandler } = await importInstalled('@modelcontextprotocol/server');
const { z } = await importInstalled('zod');

const PORT = Number(process.argv[2] || 3000);
const HOST = '127.0.0.1';

function buildServer() {
    const server = new McpServer(
        { name: 'mcp-runtime-bench-ts-peer', version: '1.0.0' },
        { capabilities: { tools: {} }, cacheHints: { 'tools/list': { ttlMs: 60000, cacheScope: 'public' } } },
    );
    server.registerTool(
        'echo',
        { description: 'Echoes the given text', inputSchema: z.object({ text: z.string() }) },
        async ({ text }) => ({ content: [{ type: 'text', text }] }),
    );
    server.registerTool(
        'add',
        {
            description: 'Adds two numbers',
            inputSchema: z.object({ a: z.number(), b: z.number() }),
            outputSchema: z.object({ sum: z.number() }),
        },
        async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } }),
    );
    return server;
}

const handler = createMcpHandler(buildServer);
const LOCAL = /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/;

const http = createServer(async (req, res) => {
    const path = new URL(req.url, 'http://localhost').pathname;
    // DNS-rebinding defence: only loopback Host headers.
    if (!LOCAL.test(req.headers.host ?? '')) return void res.writeHead(403).end('forbidden host');
    if (path === '/health') return void res.end('ok');
    if (path !== '/mcp') return void res.writeHead(404).end('not found');
    // node:http → web-standard Request → the SDK's handler → node:http.
    const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : Readable.toWeb(req);
    const request = new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method,
        headers: Object.entries(req.headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]])),
        body,
        duplex: 'half',
    });
    try {
        const response = await handler.fetch(request);
        res.writeHead(response.status, Object.fromEntries(response.headers));
        if (response.body) for await (const chunk of response.body) res.write(chunk);
        res.end();
    } catch (e) {
        if (!res.headersSent) res.writeHead(500);
        res.end(String(e?.message ?? e));
    }
});
http.listen(PORT, HOST, () => console.error(`[ts-peer] listening on http://${HOST}:${PORT}/mcp (pid ${process.pid})`));
const stop = () => {
    http.close();
    void handler.close();
    process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
