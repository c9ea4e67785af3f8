// Client interop probe, 2025-era leg: the v1 TypeScript SDK client (@modelcontextprotocol/sdk 1.x,
// what most deployed clients embed) with `Client` + `StreamableHTTPClientTransport` in its only
// mode (the `initialize` handshake), against a running server with the embedded default config's
// demo tools. It must connect (a 2025 revision and an Mcp-Session-Id), list tools, call `echo`,
// and answer the MRTR tool `greet`'s question as a real `elicitation/create` request on the
// call's SSE stream (MCP 2026-07-28 basic/transports/streamable-http § Backward compatibility;
// MCP 2025-11-25 client/elicitation).
// Prints `PASS name (detail)` / `FAIL name: reason` per check and a closing `N passed, N failed`;
// exit status 1 when a check failed.
//
// Usage: $INTEROP_DIR/bin/node tests/interop/ts1-client-probe.mjs URL
// Env:   INTEROP_DIR  where tests/interop/setup.sh installed the SDK (default <repo>/target/interop)
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { check, ensure, finish } from './probe.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const INTEROP_DIR = process.env.INTEROP_DIR || join(ROOT, 'target', 'interop');
const url = process.argv[2];
if (!url) {
    console.error('usage: node tests/interop/ts1-client-probe.mjs URL');
    process.exit(2);
}

const dir = join(INTEROP_DIR, 'ts1', 'node_modules', '@modelcontextprotocol', 'sdk');
let manifest;
try {
    manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
} catch {
    console.error(`@modelcontextprotocol/sdk is not installed under ${INTEROP_DIR}: run \`bash tests/interop/setup.sh\``);
    process.exit(2);
}
const load = (sub) => import(pathToFileURL(join(dir, 'dist', 'esm', sub)).href);
const { Client } = await load('client/index.js');
const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');
const { ElicitRequestSchema } = await load('types.js');

// What crossed the wire: each POST's JSON-RPC method (or response id) and its status. Entries are
// recorded before the response arrives: the call's result can reach the client on its SSE stream
// before the 202 of the answer POST does, so the checks wait for `inFlight` to settle.
const wire = [];
const inFlight = [];
function recordingFetch(input, init = {}) {
    let body;
    try {
        body = typeof init.body === 'string' ? JSON.parse(init.body) : undefined;
    } catch {}
    const entry = { method: init.method ?? 'GET', body, status: undefined };
    wire.push(entry);
    const res = fetch(input, init).then((r) => {
        entry.status = r.status;
        return r;
    });
    inFlight.push(res.catch(() => {}));
    return res;
}

const asked = [];
const client = new Client({ name: 'mcp-runtime-ts1-probe', version: '1.0.0' }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params?.message ?? 'elicitation');
    return { action: 'accept', content: { name: 'Interop' } };
});
const opts = { timeout: 15000 };
const texts = (r) => (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join(' ');

console.log(`# v1 TypeScript SDK client (@modelcontextprotocol/sdk ${manifest.version}) -> ${url}`);
const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch });
let connected = false;
await check('connect', async () => {
    await client.connect(transport, opts);
    connected = true;
    const version = transport.protocolVersion;
    ensure(String(version).startsWith('2025-'), `negotiated ${version}, expected a 2025 revision`);
    ensure(transport.sessionId, 'no Mcp-Session-Id');
    return `protocol ${version}, server ${client.getServerVersion()?.name}, session id of ${transport.sessionId.length} chars`;
});
if (!connected) {
    finish(1);
}
await check('tools-list', async () => {
    const tools = (await client.listTools(undefined, opts)).tools;
    for (const name of ['echo', 'greet']) ensure(tools.some((t) => t.name === name), `${name} not listed`);
    return `${tools.length} tools`;
});
await check('tools-call-echo', async () => {
    const r = await client.callTool({ name: 'echo', arguments: { text: 'hello from sdk v1' } }, undefined, opts);
    ensure(!r.isError && texts(r) === 'hello from sdk v1', `result ${JSON.stringify(r.content)}`);
    return texts(r);
});
await check('tools-call-elicitation', async () => {
    const r = await client.callTool({ name: 'greet', arguments: {} }, undefined, opts);
    ensure(!r.isError, `isError: ${JSON.stringify(r.content)}`);
    ensure(asked.length > 0, 'the server never sent elicitation/create');
    ensure(texts(r).includes('Interop'), `final text ${JSON.stringify(texts(r))} does not use the answer`);
    await Promise.race([Promise.all(inFlight), new Promise((r) => setTimeout(r, 5000))]);
    const answers = wire.filter((x) => x.body && x.body.method === undefined && x.body.id !== undefined);
    ensure(answers.length > 0 && answers.every((x) => x.status === 202), `answer POSTs got ${answers.map((x) => x.status)}`);
    return `asked ${JSON.stringify(asked)}, ${answers.length} answer POST(s), result ${JSON.stringify(texts(r))}`;
});
await check('no-http-errors', async () => {
    await Promise.race([Promise.all(inFlight), new Promise((r) => setTimeout(r, 5000))]);
    const bad = wire.filter((x) => x.status >= 400 && !(x.method === 'GET' && x.status === 405) && x.method !== 'DELETE');
    ensure(bad.length === 0, `statuses ${bad.map((x) => `${x.method} ${x.body?.method ?? ''} ${x.status}`)}`);
    return `${wire.length} requests`;
});
try {
    await client.close();
} catch {}
finish();
