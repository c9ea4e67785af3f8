// Tool search probe: the official TypeScript SDK client (@modelcontextprotocol/client), pinned
// to revision 2026-07-28, against a server with `[discovery] mode = "search"` over the embedded
// demo tools (service/config/search.toml): it lists the three search tools, finds `add` from
// other words, reads its definition, runs it through `call_tool`, and answers the question
// `greet` asks (an MRTR round the SDK drives) through `call_tool` as well.
// Prints `PASS name (detail)` / `FAIL name: reason` per check and `N passed, N failed`.
//
// Usage: $INTEROP_DIR/bin/node tests/interop/ts-search-probe.mjs URL
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, ensure, finish, importInstalled } from './probe.mjs';

const REV = '2026-07-28';
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const INTEROP_DIR = process.env.INTEROP_DIR || join(ROOT, 'target', 'interop');
const url = process.argv[2];
if (!url) {
    console.error('usage: node tests/interop/ts-search-probe.mjs URL');
    process.exit(2);
}
const { Client, StreamableHTTPClientTransport } = await importInstalled(INTEROP_DIR, 'ts', '@modelcontextprotocol/client');

const asked = [];
const client = new Client(
    { name: 'mcp-runtime-ts-search-probe', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: REV } }, capabilities: { elicitation: { form: {} } } },
);
client.setRequestHandler('elicitation/create', async (req) => {
    asked.push(req.params?.message ?? 'elicitation');
    return { action: 'accept', content: { name: 'Grace' } };
});
const opts = { timeout: 15000 };
const texts = (r) => (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join(' ');

console.log(`# official TypeScript client, tool search -> ${url}`);
let connected = false;
await check('connect', async () => {
    await client.connect(new StreamableHTTPClientTransport(new URL(url)), opts);
    connected = true;
    return `protocol ${client.getNegotiatedProtocolVersion()}`;
});
if (!connected) finish(1);

await check('tools-list-shows-the-search-tools', async () => {
    const names = (await client.listTools(undefined, { ...opts, cacheMode: 'refresh' })).tools.map((t) => t.name);
    ensure(JSON.stringify(names) === JSON.stringify(['search_tools', 'describe_tools', 'call_tool']), `listed ${names}`);
    return names.join(', ');
});

await check('search-finds-add-from-other-words', async () => {
    const r = await client.callTool({ name: 'search_tools', arguments: { query: 'sum of two numbers', limit: 3 } }, opts);
    const found = r.structuredContent?.tools?.map((t) => t.name) ?? [];
    ensure(found[0] === 'add', `found ${found}`);
    return found.join(', ');
});

await check('describe-gives-the-schema', async () => {
    const r = await client.callTool({ name: 'describe_tools', arguments: { names: ['add'] } }, opts);
    const schema = r.structuredContent?.tools?.[0]?.inputSchema;
    ensure(JSON.stringify(schema?.required) === '["a","b"]', `inputSchema ${JSON.stringify(schema)}`);
    return 'add: a, b';
});

await check('call-tool-runs-add', async () => {
    const r = await client.callTool({ name: 'call_tool', arguments: { name: 'add', arguments: { a: 2, b: 40 } } }, opts);
    ensure(r.structuredContent?.sum === 42, `got ${JSON.stringify(r)}`);
    return 'sum 42';
});

await check('call-tool-carries-an-mrtr-round', async () => {
    const r = await client.callTool({ name: 'call_tool', arguments: { name: 'greet', arguments: {} } }, opts);
    ensure(asked.length === 1, `asked ${asked.length} times`);
    ensure(texts(r).includes('Grace'), `got ${texts(r)}`);
    return texts(r);
});

await client.close();
finish();
