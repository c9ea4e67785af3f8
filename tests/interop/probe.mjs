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
