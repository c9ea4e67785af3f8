// OAuth interop probe: the official TypeScript SDK client's OAuth support against a running
// runtime with `[auth]` and a real issuer (tests/interop/issuer.mjs, oidc-provider). The SDK
// finds everything itself: 401 → RFC 9728 metadata → the issuer's metadata → a client
// credentials token for the runtime's resource → `tools/call` succeeds; a tool whose rule
// needs another scope → 403 insufficient_scope → a token with that scope → success; a token
// for another resource → 401.
// Prints `PASS name (detail)` / `FAIL name: reason` per check and `N passed, N failed`.
//
// Usage: $INTEROP_DIR/bin/node tests/interop/ts-oauth-probe.mjs MCP_URL ISSUER_URL
//        (the runtime's `add` tool needs scope tools:admin; see tests/e2e/oauth.rs)
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, ensure, finish, importInstalled } from './probe.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const INTEROP_DIR = process.env.INTEROP_DIR || join(ROOT, 'target', 'interop');
const [url, issuer] = process.argv.slice(2);
if (!url || !issuer) {
    console.error('usage: node tests/interop/ts-oauth-probe.mjs MCP_URL ISSUER_URL');
    process.exit(2);
}

const { Client, StreamableHTTPClientTransport, ClientCredentialsProvider } =
    await importInstalled(INTEROP_DIR, 'ts', '@modelcontextprotocol/client');

// What crossed the wire: status of every request to the MCP endpoint, and token requests.
const seen = [];
const recording = async (input, init) => {
    const res = await fetch(input, init);
    const target = String(input instanceof Request ? input.url : input);
    seen.push(`${res.status} ${target.replace(url, 'MCP').replace(issuer, 'AS')}`);
    return res;
};

async function connect(authProvider, requestInit) {
    const client = new Client({ name: 'oauth-probe', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider, requestInit, fetch: recording });
    await client.connect(transport);
    return client;
}

const machine = (scope) =>
    new ClientCredentialsProvider({
        clientId: 'machine-basic',
        clientSecret: 'machine-secret-0123456789',
        scope,
        expectedIssuer: issuer,
    });

await check('401 → metadata → client-credentials token → tools/call', async () => {
    seen.length = 0;
    const client = await connect(machine('tools:read'));
    const r = await client.callTool({ name: 'echo', arguments: { text: 'oauth' } });
    ensure(r.content?.[0]?.text === 'oauth', `echo answered ${JSON.stringify(r)}`);
    ensure(seen.some((s) => s.startsWith('401 MCP')), `no 401 first: ${seen.join(', ')}`);
    ensure(seen.some((s) => s.includes('oauth-protected-resource')), `metadata not read: ${seen.join(', ')}`);
    ensure(seen.some((s) => s.startsWith('200 AS/token')), `no token request: ${seen.join(', ')}`);
    await client.close();
    return seen.join(', ');
});

await check('missing scope → 403 insufficient_scope → token with the scope → success', async () => {
    seen.length = 0;
    const client = await connect(machine('tools:read'));
    let r;
    try {
        r = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
    } catch (e) {
        // The SDK surfaces the 403 when it does not step up by itself: do what a host would.
        ensure(seen.some((s) => s.startsWith('403 MCP')), `not a 403: ${e?.message}`);
        const admin = await connect(machine('tools:read tools:admin'));
        r = await admin.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
        await admin.close();
    }
    ensure(r.structuredContent?.sum === 5, `add answered ${JSON.stringify(r)}`);
    ensure(seen.some((s) => s.startsWith('403 MCP')), `no 403 on the way: ${seen.join(', ')}`);
    await client.close();
    return seen.join(', ');
});

await check('a token for another resource → 401', async () => {
    const body = new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: 'machine',
        client_secret: 'machine-secret-0123456789',
        scope: 'tools:read',
        resource: 'https://elsewhere.test/mcp',
    });
    const t = await (await fetch(`${issuer}/token`, { method: 'POST', body })).json();
    ensure(t.access_token, `no token: ${JSON.stringify(t)}`);
    try {
        await connect(undefined, { headers: { Authorization: `Bearer ${t.access_token}` } });
    } catch (e) {
        ensure(/401|nauthori/.test(String(e?.message ?? e)), `refused, but not with 401: ${e?.message}`);
        return 'refused';
    }
    throw new Error('connected with a token for another resource');
});

finish();
