// What every client probe shares: one `PASS name (detail)` / `FAIL name: reason` line per
// check, and a closing `N passed, N failed` with exit status 1 when a check failed.

let passed = 0;
let failed = 0;
const oneLine = (s) => String(s).replace(/\s+/g, ' ').slice(0, 300);

/** Runs one check: `fn` returns a detail for the PASS line, or throws the reason it failed. */
export async function check(name, fn) {
    try {
        const detail = await fn();
        passed++;
        console.log(`PASS ${name}${detail ? ` (${oneLine(detail)})` : ''}`);
    } catch (e) {
        failed++;
        console.log(`FAIL ${name}: ${oneLine(e?.message ?? e)}`);
    }
}

/** Throws `message` unless `condition` holds. */
export function ensure(condition, message) {
    if (!condition) throw new Error(message);
}

/** Prints the closing line and exits; `notRun` counts checks that could not start at all. */
export function finish(notRun = 0) {
    console.log(`${passed} passed, ${failed + notRun} failed`);
    process.exit(failed + notRun ? 1 : 0);
}

/**
 * Imports an npm package installed by setup.sh under `INTEROP_DIR/<part>` (ESM ignores
 * NODE_PATH); `subpath` picks one of its exports (`./ext/skills`) instead of its main entry.
 */
export async function importInstalled(interopDir, part, pkg, subpath) {
    const { readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { pathToFileURL } = await import('node:url');
    const dir = join(interopDir, part, 'node_modules', pkg);
    let manifest;
    try {
        manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    } catch {
        console.error(`${pkg} is not installed under ${interopDir}: run \`bash tests/interop/setup.sh\``);
        process.exit(2);
    }
    let entry = subpath ? manifest.exports?.[subpath] : (manifest.exports?.['.'] ?? manifest.module ?? manifest.main);
    while (entry && typeof entry === 'object') entry = entry.import ?? entry.default;
    return import(pathToFileURL(join(dir, entry)).href);
}

/**
 * A person's browser, scripted: follows redirects, keeps cookies per host, and submits the
 * form of each page it lands on (oidc-provider's development login gets `user` and any
 * password; its consent is confirmed) until a page without a form, or until the next URL
 * satisfies `stop` (not fetched then). Returns `{ url, status, text }` of where it ended.
 */
export async function browse(start, user, stop = () => false) {
    const jars = new Map();
    let next = new URL(start);
    let init = { method: 'GET' };
    for (let hop = 0; hop < 30; hop++) {
        if (stop(next)) return { url: next, status: 0, text: '' };
        const jar = jars.get(next.host) ?? new Map();
        jars.set(next.host, jar);
        const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
        const res = await fetch(next, { ...init, redirect: 'manual', headers: { ...init.headers, cookie } });
        for (const c of res.headers.getSetCookie()) {
            const pair = c.split(';')[0];
            const at = pair.indexOf('=');
            jar.set(pair.slice(0, at), pair.slice(at + 1));
        }
        if (res.status >= 300 && res.status < 400) {
            next = new URL(res.headers.get('location'), next);
            init = { method: 'GET' };
            continue;
        }
        const html = await res.text();
        const form = html.match(/<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/);
        if (!form) return { url: next, status: res.status, text: html.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim() };
        const fields = new URLSearchParams();
        for (const [, name, value] of form[2].matchAll(/<input[^>]*name="([^"]+)"(?:[^>]*value="([^"]*)")?/g)) {
            fields.set(name, value ?? '');
        }
        if (fields.has('login')) {
            fields.set('login', user);
            fields.set('password', 'any');
        }
        next = new URL(form[1].replaceAll('&amp;', '&'), next);
        init = { method: 'POST', body: fields.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } };
    }
    throw new Error(`more than 30 hops from ${start}`);
}
