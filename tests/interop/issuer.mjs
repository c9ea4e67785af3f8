// A real OAuth 2.1 authorization server for the authorization tests: oidc-provider (an
// OpenID-certified implementation, installed by setup.sh) on loopback, issuing JWT access
// tokens (RFC 9068; opaque ones, checked by RFC 7662 introspection, for resources ending in
// /opaque) for the resources the token request names (RFC 8707), through client
// credentials and authorization code + PKCE (its development login and consent pages,
// driven over HTTP by the tests) and token exchange (RFC 8693: the runtime trades a caller's
// token for one meant for an upstream, same `sub`). Fresh keys at every start (ES256 signs access tokens;
// an RS256 key is published too), so restarting it on the same port rotates its keys.
//
// Usage: node issuer.mjs PORT       prints "issuer listening on http://127.0.0.1:PORT" when ready
// Environment: WEB_REDIRECT_URIS (comma-separated): the redirect URIs of client `web` (secret
//   web-secret-0123456789, client_secret_basic, authorization code + refresh tokens): the
//   runtime's /oauth/callback, as its sign-in client and as an upstream's client.
//
// Test-only routes next to the provider's own:
//   GET  /test/stats   {"jwks": n, "evil": n, "exchanges": n, "revoked": n}: key-set fetches so
//                      far (the unknown-kid flood is counted here), token exchanges answered,
//                      grants revoked (RFC 7009 revocation of a refresh token revokes its grant)
//   POST /test/sign    {"claims": {...}, "kid"?, "alg"?: "ES256"|"RS256"|"HS256", "header"?: {...},
//                      "foreign"?: true}: a JWS of any claims with the issuer's own key (expired,
//                      not-yet-valid, wrong audience ...), with HMAC keyed by its RSA public key
//                      (HS256), or with a fresh key it never published (foreign)
//   GET  /test/evil-jwks  counted in /test/stats as "evil": where forged jku/x5u headers point
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const port = Number(process.argv[2]);
const dir = process.env.INTEROP_DIR;
if (!port || !dir) {
  console.error('usage: INTEROP_DIR=... node issuer.mjs PORT');
  process.exit(2);
}
// oidc-provider and its jose live in INTEROP_DIR/oidc (setup.sh), not beside this script.
const require = createRequire(join(dir, 'oidc', 'package.json'));
const load = async (name) => import(pathToFileURL(require.resolve(name)).href);
const { default: Provider } = await load('oidc-provider');
const jose = await load('jose');

const issuer = `http://127.0.0.1:${port}`;
const stamp = Date.now().toString(36);
const keys = {};
for (const alg of ['ES256', 'RS256']) {
  const { privateKey } = await jose.generateKeyPair(alg, { extractable: true });
  keys[alg] = { ...(await jose.exportJWK(privateKey)), kid: `${alg.toLowerCase()}-${stamp}`, alg, use: 'sig' };
}

const SCOPES = ['tools:read', 'tools:admin', 'files:write'];
// The resource of the runtime under test (tests/e2e: RESOURCE): the only audience whose
// tokens may be exchanged.
const RUNTIME_RESOURCE = 'https://mcp.test/mcp';
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const provider = new Provider(issuer, {
  clients: [
    {
      client_id: 'machine',
      client_secret: 'machine-secret-0123456789',
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_post',
    },
    {
      // The TypeScript SDK's ClientCredentialsProvider authenticates with client_secret_basic.
      client_id: 'machine-basic',
      client_secret: 'machine-secret-0123456789',
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
    },
    {
      // The runtime itself, for RFC 7662 introspection of opaque tokens and token exchange.
      client_id: 'mcp-runtime',
      client_secret: 'runtime-secret-0123456789',
      grant_types: ['client_credentials', TOKEN_EXCHANGE],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
    },
    {
      // The runtime's browser sign-in and its client at an upstream ([user_auth]).
      client_id: 'web',
      client_secret: 'web-secret-0123456789',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: (process.env.WEB_REDIRECT_URIS || 'http://127.0.0.1/oauth/callback').split(','),
      token_endpoint_auth_method: 'client_secret_basic',
    },
    {
      client_id: 'app',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: ['http://127.0.0.1/callback'],
    },
  ],
  jwks: { keys: [keys.ES256, keys.RS256] },
  scopes: ['openid', 'offline_access', ...SCOPES],
  pkce: { required: () => true },
  ttl: { ClientCredentials: 300 },
  cookies: { keys: ['test-cookie-key-0123456789'] },
  features: {
    devInteractions: { enabled: true },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (ctx, client, oneOf) => oneOf ?? undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource) => ({
        scope: SCOPES.join(' '),
        audience: resource,
        // Resources ending in /short get tokens that are due for a refresh within seconds.
        accessTokenTTL: resource.endsWith('/short') ? 62 : 300,
        // Resources ending in /opaque get opaque tokens, which only introspection can check.
        accessTokenFormat: resource.endsWith('/opaque') ? 'opaque' : 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
  // Refresh tokens for every client allowed the grant (no offline_access dance).
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  loadExistingGrant: async (ctx) => {
    // Consent once per login: the dev consent page grants what was asked.
    const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
  },
});
provider.proxy = false;

// RFC 8693 token exchange (oidc-provider has no built-in handler; this is its documented
// extension point): the subject token must be a valid access token of this issuer for the
// runtime's resource; the answer is a JWT access token for the requested audience (or
// resource) with the same `sub`, the runtime named as actor (`act`, RFC 8693 § 4.1).
const publicKeys = jose.createLocalJWKSet({
  keys: Object.values(keys).map(({ d, p, q, dp, dq, qi, ...pub }) => pub),
});
let exchanges = 0;
provider.registerGrantType(TOKEN_EXCHANGE, async (ctx) => {
  exchanges += 1;
  const params = ctx.oidc.params;
  const refuse = (error, error_description) => {
    ctx.status = 400;
    ctx.body = { error, error_description };
  };
  if (params.subject_token_type !== ACCESS_TOKEN_TYPE) {
    return refuse('invalid_request', `subject_token_type must be ${ACCESS_TOKEN_TYPE}`);
  }
  let subject;
  try {
    ({ payload: subject } = await jose.jwtVerify(params.subject_token, publicKeys, {
      issuer, audience: RUNTIME_RESOURCE,
    }));
  } catch (e) {
    return refuse('invalid_grant', `the subject token is not a valid access token for ${RUNTIME_RESOURCE} (${e.code})`);
  }
  const audience = params.audience ?? params.resource;
  if (!audience) return refuse('invalid_target', 'name the audience or the resource of the token');
  const clientId = ctx.oidc.client.clientId;
  const now = Math.floor(Date.now() / 1000);
  const access = await new jose.SignJWT({ sub: subject.sub, client_id: clientId, scope: params.scope, act: { sub: clientId } })
    .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: keys.ES256.kid })
    .setIssuer(issuer)
    .setAudience(audience)
    .setIssuedAt(now)
    .setExpirationTime(now + 300)
    .setJti(crypto.randomUUID())
    .sign(await jose.importJWK(keys.ES256, 'ES256'));
  ctx.body = {
    access_token: access, issued_token_type: ACCESS_TOKEN_TYPE, token_type: 'Bearer', expires_in: 300, scope: params.scope,
  };
}, ['subject_token', 'subject_token_type', 'requested_token_type', 'audience', 'resource', 'scope']);

let revoked = 0;
provider.on('grant.revoked', () => { revoked += 1; });
let jwksFetches = 0;
let evilFetches = 0; // fetches of the key set a forged `jku` / `x5u` points at: must stay 0
provider.use(async (ctx, next) => {
  if (ctx.path === '/jwks') jwksFetches += 1;
  if (ctx.path === '/test/evil-jwks') evilFetches += 1;
  if (ctx.path === '/test/stats') {
    ctx.body = { jwks: jwksFetches, evil: evilFetches, exchanges, revoked };
    return;
  }
  if (ctx.path === '/test/sign' && ctx.method === 'POST') {
    const chunks = [];
    for await (const c of ctx.req) chunks.push(c);
    const { claims, kid, alg = 'ES256', header = {}, foreign = false } = JSON.parse(Buffer.concat(chunks).toString());
    let key;
    if (alg === 'HS256') {
      // The classic confusion attack: HMAC keyed with the published RSA public key.
      const { d, p, q, dp, dq, qi, ...pub } = keys.RS256;
      key = new TextEncoder().encode(JSON.stringify(pub));
    } else if (foreign) {
      key = (await jose.generateKeyPair(alg)).privateKey;  // an attacker's key, never published
    } else {
      key = await jose.importJWK(keys[alg], alg);
    }
    ctx.body = await new jose.SignJWT(claims)
      .setProtectedHeader({ alg, typ: 'at+jwt', kid: kid ?? keys[alg === 'HS256' ? 'RS256' : alg].kid, ...header })
      .sign(key);
    ctx.type = 'text/plain';
    return;
  }
  await next();
});

provider.listen(port, '127.0.0.1', () => console.log(`issuer listening on ${issuer}`));
