// Client interop probe: the official TypeScript SDK client (@modelcontextprotocol/client),
// pinned to revision 2026-07-28, against a running server with the embedded default config's
// demo tools (`echo`, `add`, the MRTR tool `greet`, a resource, the prompt `hello_prompt`).
// It checks what the SDK returns and, through a wrapped fetch, what crossed the wire.
// Prints `PASS name (detail)` / `FAIL name: reason` per check and a closing `N passed, N failed`;
// exit status 1 when a check failed.
//
// Usage: $INTEROP_DIR/bin/node tests/interop/ts-client-probe.mjs URL
// Env:   INTEROP_DIR  where tests/interop/setup.sh installed the SDK (default <repo>/target/interop)
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, ensure, finish, importInstalled } from './probe.mjs';

const REV = '2026-07-28';
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const INTEROP_DIR = process.env.INTEROP_DIR || join(ROOT, 'target', 'interop');
const url = process.argv[2];
if (!url) {
    console.error('usage: node tests/interop/ts-client-probe.mjs URL');
    process.exit(2);
}

const { Client, StreamableHTTPClientTransport } = await importInstalled(INTEROP_DIR, 'ts', '@modelcontextprotocol/client');

// Every HTTP exchange, parsed: request body and headers, status, session id, JSON-RPC messages.
const wire = [];
const reading = [];
async function recordingFetch(input, init = {}) {
    const res = await fetch(input, init);
    let body;
    try {
        body = typeof init.body === 'string' ? JSON.parse(init.body) : undefined;
    } catch {}
    const x = {
        body,
        headers: Object.fromEntries(new Headers(init.headers ?? {}).entries()),
        status: res.status,
        sessionId: res.headers.get('mcp-session-id'),
        messages: [],
    };
    wire.push(x);
    if (body?.method && body.method !== 'subscriptions/listen') {
        const type = res.headers.get('content-type') ?? '';
        reading.push(
            res
                .clone()
                .text()
                .then((text) => {
                    const parts = type.includes('event-stream')
                        ? text.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5))
                        : [text];
                    for (const p of parts)
                        try {
                            x.messages.push(JSON.parse(p));
                        } catch {}
                })
                .catch(() => {}),
        );
    }
    return res;
}
async function answersTo(method) {
    await Promise.allSettled(reading.splice(0));
    return wire
        .filter((x) => x.body?.method === method)
        .flatMap((x) => x.messages.filter((m) => m.id !== undefined && m.id === x.body.id));
}
async function lastResult(method) {
    const result = (await answersTo(method)).at(-1)?.result;
    ensure(result, `no ${method} result on the wire`);
    return result;
}
function cacheHints(method, result) {
    ensure(Number.isInteger(result.ttlMs) && result.ttlMs >= 0, `${method}: ttlMs ${JSON.stringify(result.ttlMs)} on the wire`);
    ensure(['public', 'private'].includes(result.cacheScope), `${method}: cacheScope ${JSON.stringify(result.cacheScope)} on the wire`);
    return `ttlMs=${result.ttlMs} cacheScope=${result.cacheScope}`;
}
const texts = (r) => (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join(' ');

const asked = [];
const client = new Client(
    { name: 'mcp-runtime-ts-probe', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: REV } }, capabilities: { elicitation: { form: {} } } },
);
client.setRequestHandler('elicitation/create', async (req) => {
    asked.push(req.params?.message ?? 'elicitation');
    const content = {};
    for (const [key, prop] of Object.entries(req.params?.requestedSchema?.properties ?? {}))
        content[key] = prop.type === 'boolean' ? true : prop.type === 'number' || prop.type === 'integer' ? 1 : 'Interop';
    return { action: 'accept', content };
});
const opts = { timeout: 15000 };
const fresh = { timeout: 15000, cacheMode: 'refresh' }; // the SDK caches list results for ttlMs

console.log(`# official TypeScript client (@modelcontextprotocol/client) pinned to ${REV} -> ${url}`);
let connected = false;
await check('connect', async () => {
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch }), opts);
    connected = true;
    const version = client.getNegotiatedProtocolVersion();
    ensure(version === REV, `negotiated ${version}, expected ${REV}`);
    const server = client.getServerVersion();
    return `protocol ${version}, server ${server ? `${server.name}@${server.version}` : 'anonymous'}`;
});
if (!connected) {
    finish(1);
}

await check('discover', async () => {
    const d = await client.discover(opts);
    ensure(d.supportedVersions?.includes(REV), `supportedVersions ${JSON.stringify(d.supportedVersions)}`);
    ensure(d.capabilities?.tools, 'no tools capability');
    const raw = await lastResult('server/discover');
    ensure(raw._meta?.['io.modelcontextprotocol/serverInfo']?.name, 'no serverInfo in result _meta');
    return `${d.supportedVersions.join(',')}; ${cacheHints('server/discover', raw)}`;
});

let tools = [];
await check('tools-list', async () => {
    tools = (await client.listTools(undefined, fresh)).tools;
    for (const name of ['echo', 'add', 'greet']) ensure(tools.some((t) => t.name === name), `${name} not listed`);
    return `${tools.length} tools; ${cacheHints('tools/list', await lastResult('tools/list'))}`;
});

await check('tools-call-echo', async () => {
    const token = `probe-${Math.random().toString(36).slice(2, 10)}`;
    const r = await client.callTool({ name: 'echo', arguments: { text: token } }, opts);
    ensure(!r.isError, `isError: ${JSON.stringify(r.content)}`);
    ensure(texts(r).includes(token), `text ${JSON.stringify(texts(r))} lacks ${token}`);
    return texts(r);
});

await check('tools-call-structured', async () => {
    const r = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } }, opts);
    ensure(!r.isError, `isError: ${JSON.stringify(r.content)}`);
    ensure(Object.values(r.structuredContent ?? {}).includes(5), `structuredContent ${JSON.stringify(r.structuredContent)}`);
    const listed = tools.find((t) => t.name === 'add');
    return `structuredContent ${JSON.stringify(r.structuredContent)}, outputSchema ${listed?.outputSchema ? 'listed' : 'absent'}`;
});

await check('tools-call-mrtr', async () => {
    const from = wire.length;
    const r = await client.callTool({ name: 'greet', arguments: {} }, opts);
    ensure(!r.isError, `isError: ${JSON.stringify(r.content)}`);
    await answersTo('tools/call');
    const rounds = wire.slice(from).filter((x) => x.body?.method === 'tools/call');
    ensure(rounds.length >= 2, `${rounds.length} HTTP round(s), expected an input_required round and a retry`);
    const first = rounds[0].messages.find((m) => m.id === rounds[0].body.id)?.result;
    ensure(first?.resultType === 'input_required', `first round resultType ${JSON.stringify(first?.resultType)}`);
    ensure(rounds.at(-1).body.params?.inputResponses, 'the retry carried no inputResponses');
    ensure(asked.length > 0, 'the SDK never asked the client for input');
    ensure(texts(r).includes('Interop'), `final text ${JSON.stringify(texts(r))} does not use the answer`);
    return `${rounds.length} rounds, asked ${JSON.stringify(asked)}, result ${JSON.stringify(texts(r))}`;
});

let uri;
await check('resources-list', async () => {
    const r = await client.listResources(undefined, fresh);
    uri = r.resources[0]?.uri;
    ensure(uri, 'no resource listed');
    return `${r.resources.length} resource(s), first ${uri}; ${cacheHints('resources/list', await lastResult('resources/list'))}`;
});
await check('resources-read', async () => {
    ensure(uri, 'nothing to read');
    const r = await client.readResource({ uri }, fresh);
    ensure(r.contents?.some((c) => c.uri === uri), `no contents for ${uri}`);
    return `${r.contents[0].mimeType ?? 'no mimeType'}; ${cacheHints('resources/read', await lastResult('resources/read'))}`;
});

await check('prompts-list', async () => {
    const r = await client.listPrompts(undefined, fresh);
    ensure(r.prompts.some((p) => p.name === 'hello_prompt'), 'hello_prompt not listed');
    return `${r.prompts.length} prompt(s); ${cacheHints('prompts/list', await lastResult('prompts/list'))}`;
});
await check('prompts-get', async () => {
    const r = await client.getPrompt({ name: 'hello_prompt', arguments: { name: 'Interop' } }, opts);
    ensure(r.messages?.length, 'no messages');
    ensure(JSON.stringify(r.messages).includes('Interop'), 'the argument is not in the messages');
    return `${r.messages.length} message(s): ${JSON.stringify(r.messages[0].content?.text ?? '')}`;
});

await check('error-unknown-tool', async () => {
    let r;
    try {
        r = await client.callTool({ name: 'no_such_tool_for_the_probe', arguments: {} }, opts);
    } catch {
        const error = (await answersTo('tools/call')).at(-1)?.error;
        ensure(error, 'the SDK threw but no JSON-RPC error crossed the wire');
        ensure(error.code === -32602, `JSON-RPC error ${error.code}, expected -32602`);
        return `-32602: ${error.message}`;
    }
    throw new Error(`a result instead of a JSON-RPC error (isError ${r.isError})`);
});

await Promise.allSettled(reading.splice(0));
await check('wire-no-session', async () => {
    ensure(!wire.some((x) => x.sessionId), 'a response carried Mcp-Session-Id');
    ensure(!wire.some((x) => x.body?.method === 'initialize'), 'the client sent initialize');
    return `${wire.length} exchanges, no Mcp-Session-Id, no initialize`;
});
await check('wire-result-type', async () => {
    const results = wire.flatMap((x) => x.messages.filter((m) => m.result !== undefined && m.id === x.body?.id));
    ensure(results.length, 'no result captured');
    const bad = results.filter((m) => !['complete', 'input_required'].includes(m.result.resultType));
    ensure(!bad.length, `${bad.length} result(s) without resultType: ${String(JSON.stringify(bad[0]?.result)).slice(0, 120)}`);
    return `${results.length} results, each with resultType`;
});
await check('wire-request-headers', async () => {
    const posts = wire.filter((x) => x.body?.method);
    const bad = posts.filter((x) => x.headers['mcp-protocol-version'] !== REV || x.headers['mcp-method'] !== x.body.method);
    ensure(!bad.length, `${bad.length} POST(s) without matching MCP-Protocol-Version/Mcp-Method`);
    return `${posts.length} POSTs with MCP-Protocol-Version and Mcp-Method`;
});

await client.close().catch(() => {});
finish();
