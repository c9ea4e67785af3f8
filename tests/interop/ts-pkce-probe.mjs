// Authorization code + PKCE probe: the official TypeScript SDK client's interactive OAuth flow
// against a running runtime with `[auth]` and the real issuer (tests/interop/issuer.mjs,
// oidc-provider). The SDK finds the issuer through the runtime's 401 and RFC 9728 metadata,
// makes the PKCE verifier and its S256 challenge and names the runtime as `resource`
// (RFC 8707). The user agent is scripted: `redirectToAuthorization` follows the issuer's
// redirects and posts its development login and consent forms over HTTP (cookies kept) until
// the redirect to the client's callback; `finishAuth(code)` trades the code and the verifier
// for a token (the issuer's RFC 9207 `iss` checked), and `tools/call` succeeds with it. A code presented with the wrong verifier is
// refused by the issuer.
// Prints `PASS name (detail)` / `FAIL name: reason` per check and `N passed, N failed`.
//
// Usage: $INTEROP_DIR/bin/node tests/interop/ts-pkce-probe.mjs MCP_URL ISSUER_URL
//        (client `app` of issuer.mjs: public, redirect URI http://127.0.0.1/callback)
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { browse, check, ensure, finish, importInstalled } from './probe.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const INTEROP_DIR = process.env.INTEROP_DIR || join(ROOT, 'target', 'interop');
const [url, issuer] = process.argv.slice(2);
if (!url || !issuer) {
    console.error('usage: node tests/interop/ts-pkce-probe.mjs MCP_URL ISSUER_URL');
    process.exit(2);
}
const CALLBACK = 'http://127.0.0.1/callback';

const { Client, StreamableHTTPClientTransport, UnauthorizedError } =
    await importInstalled(INTEROP_DIR, 'ts', '@modelcontextprotocol/client');

/// The issuer's answer at CALLBACK, reached by a scripted person (`browse`, probe.mjs).
async function callbackFrom(start, user) {
    const end = await browse(start, user, (u) => `${u.origin}${u.pathname}` === CALLBACK);
    ensure(end.status === 0, `${end.status} at ${end.url.pathname}: ${end.text.slice(0, 300)}`);
    return end.url.searchParams;
}

/// The SDK's interactive client, as a host application implements it; the "browser" is `browse`.
class ScriptedUser {
    constructor(user) {
        this.user = user;
        this.stored = undefined;
        this.verifier = undefined;
        this.callback = undefined;
        this.authorizationUrl = undefined;
    }
    get redirectUrl() { return CALLBACK; }
    get clientMetadata() {
        return { client_name: 'pkce-probe', redirect_uris: [CALLBACK], grant_types: ['authorization_code'],
                 response_types: ['code'], token_endpoint_auth_method: 'none' };
    }
    clientInformation() { return { client_id: 'app' }; }
    tokens() { return this.stored; }
    saveTokens(tokens) { this.stored = tokens; }
    saveDiscoveryState(state) { this.discovery = state; }
    discoveryState() { return this.discovery; }
    saveCodeVerifier(v) { this.verifier = v; }
    codeVerifier() { return this.verifier; }
    async redirectToAuthorization(authorizationUrl) {
        this.authorizationUrl = authorizationUrl;
        this.callback = await callbackFrom(authorizationUrl, this.user);
    }
}

const claims = (jwt) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());

await check('auth code + PKCE (S256) → token for the runtime → tools/call', async () => {
    const user = new ScriptedUser('ada');
    const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: user });
    try {
        await new Client({ name: 'pkce-probe', version: '1.0.0' }).connect(first);
        throw new Error('connected without authorization');
    } catch (e) {
        ensure(e instanceof UnauthorizedError, `expected UnauthorizedError, got ${e?.message ?? e}`);
    }
    const asked = user.authorizationUrl.searchParams;
    ensure(asked.get('code_challenge_method') === 'S256' && asked.get('code_challenge'), `no S256 PKCE: ${user.authorizationUrl}`);
    ensure(asked.get('resource') === url, `resource ${asked.get('resource')}, not ${url}`);
    const code = user.callback?.get('code');
    ensure(code, `no code at the callback: ${user.callback}`);
    // RFC 9207: the issuer names itself in the authorization response; the SDK checks it.
    ensure(user.callback.get('iss') === issuer, `iss ${user.callback.get('iss')} at the callback`);
    await first.finishAuth(code, user.callback.get('iss'));
    const c = claims(user.stored.access_token);
    ensure(c.aud === url && c.sub === 'ada', `token claims ${JSON.stringify(c)}`);

    const client = new Client({ name: 'pkce-probe', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: user }));
    const r = await client.callTool({ name: 'echo', arguments: { text: 'pkce' } });
    ensure(r.content?.[0]?.text === 'pkce', `echo answered ${JSON.stringify(r)}`);
    await client.close();
    return `sub ${c.sub}, aud ${c.aud}, scope ${c.scope}`;
});

await check('a code with the wrong verifier is refused by the issuer', async () => {
    const user = new ScriptedUser('bea');
    const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: user });
    await new Client({ name: 'pkce-probe', version: '1.0.0' }).connect(transport).catch(() => {});
    const code = user.callback?.get('code');
    ensure(code, 'no code at the callback');
    const body = new URLSearchParams({
        grant_type: 'authorization_code', code, client_id: 'app', redirect_uri: CALLBACK, resource: url,
        code_verifier: 'x'.repeat(64),
    });
    const res = await fetch(`${issuer}/token`, { method: 'POST', body });
    const answer = await res.json();
    ensure(res.status === 400 && answer.error === 'invalid_grant', `${res.status} ${JSON.stringify(answer)}`);
    return answer.error_description ?? answer.error;
});

finish();
