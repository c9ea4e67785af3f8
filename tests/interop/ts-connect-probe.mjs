// Each user's own upstream account, through the official TypeScript SDK client
// (@modelcontextprotocol/client) pinned to 2026-07-28: a tool whose adapter has `user_auth`
// answers the first call with a URL-mode elicitation; the SDK hands it to the client's
// `elicitation/create` handler, where a scripted person (`browse`, probe.mjs) opens the URL,
// signs in at the identity provider and consents at the upstream over real HTTP; the SDK's
// retry of the call then succeeds, and a later call asks nothing.
// Prints `PASS name (detail)` / `FAIL name: reason` per check and `N passed, N failed`.
//
// Usage: $INTEROP_DIR/bin/node tests/interop/ts-connect-probe.mjs MCP_URL TOOL USER
// Env:   PROBE_TOKEN  the caller's access token for the runtime (the user's, at its issuer)
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { browse, check, ensure, finish, importInstalled } from './probe.mjs';

const REV = '2026-07-28';
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const INTEROP_DIR = process.env.INTEROP_DIR || join(ROOT, 'target', 'interop');
const [url, tool, user] = process.argv.slice(2);
const token = process.env.PROBE_TOKEN;
if (!url || !tool || !user || !token) {
    console.error('usage: PROBE_TOKEN=... node tests/interop/ts-connect-probe.mjs MCP_URL TOOL USER');
    process.exit(2);
}

const { Client, StreamableHTTPClientTransport } = await importInstalled(INTEROP_DIR, 'ts', '@modelcontextprotocol/client');

const asked = [];
const client = new Client(
    { name: 'mcp-runtime-ts-connect-probe', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: REV } }, capabilities: { elicitation: { url: {} } } },
);
client.setRequestHandler('elicitation/create', async (req) => {
    const { mode, url: link, message } = req.params ?? {};
    asked.push({ mode, link, message });
    if (mode !== 'url') return { action: 'decline' };
    const page = await browse(link, user);
    return page.status === 200 && page.text.includes('is connected') ? { action: 'accept' } : { action: 'cancel' };
});
const withToken = (input, init = {}) => {
    const headers = new Headers(init.headers ?? {});
    headers.set('authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
};
const opts = { timeout: 30000 };

console.log(`# official TypeScript client pinned to ${REV}, user ${user} -> ${url} ${tool}`);
let connected = false;
await check('connect', async () => {
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: withToken }), opts);
    connected = true;
    return `protocol ${client.getNegotiatedProtocolVersion()}`;
});
if (!connected) finish(2);

await check('a URL elicitation, completed in the browser, then the call', async () => {
    const r = await client.callTool({ name: tool, arguments: {} }, opts);
    ensure(!r.isError, `the call failed: ${JSON.stringify(r)}`);
    ensure(asked.length === 1 && asked[0].mode === 'url', `asked ${JSON.stringify(asked)}`);
    ensure(asked[0].link.includes('/oauth/start?link='), `the URL: ${asked[0].link}`);
    return `asked "${asked[0].message}"; ${JSON.stringify(r.content?.[0]?.text ?? r.structuredContent).slice(0, 80)}`;
});

await check('a later call asks nothing', async () => {
    const r = await client.callTool({ name: tool, arguments: {} }, opts);
    ensure(!r.isError, `the call failed: ${JSON.stringify(r)}`);
    ensure(asked.length === 1, `asked again: ${JSON.stringify(asked.at(-1))}`);
    return 'connected once';
});

await client.close();
finish();
