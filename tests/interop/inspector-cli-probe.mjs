// Client interop probe, 2025-era leg: the MCP Inspector (@modelcontextprotocol/inspector) in its CLI
// mode (`--cli URL --transport http --method ...`, one process per request, each one an
// `initialize` handshake then the request), against a running server with the embedded default
// config's demo tools: tools/list, then tools/call of `echo` (MCP 2026-07-28
// basic/transports/streamable-http § Backward compatibility). No elicitation: the CLI mode has no
// way to answer one.
// Prints `PASS name (detail)` / `FAIL name: reason` per check and a closing `N passed, N failed`;
// exit status 1 when a check failed.
//
// Usage: $INTEROP_DIR/bin/node tests/interop/inspector-cli-probe.mjs URL
// Env:   INTEROP_DIR  where tests/interop/setup.sh installed the Inspector (default <repo>/target/interop)
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { check, ensure, finish } from './probe.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const INTEROP_DIR = process.env.INTEROP_DIR || join(ROOT, 'target', 'interop');
const url = process.argv[2];
if (!url) {
    console.error('usage: node tests/interop/inspector-cli-probe.mjs URL');
    process.exit(2);
}

const dir = join(INTEROP_DIR, 'inspector', 'node_modules', '@modelcontextprotocol', 'inspector');
let manifest;
try {
    manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
} catch {
    console.error(`@modelcontextprotocol/inspector is not installed under ${INTEROP_DIR}: run \`bash tests/interop/setup.sh\``);
    process.exit(2);
}
// The package's own `mcp-inspector` bin (the launcher), run by this Node rather than through npx.
const bin = join(dir, typeof manifest.bin === 'string' ? manifest.bin : manifest.bin['mcp-inspector']);

async function inspector(...args) {
    const { stdout } = await promisify(execFile)(process.execPath, [bin, '--cli', url, '--transport', 'http', ...args], {
        timeout: 30000,
        env: { ...process.env, NO_COLOR: '1' },
    });
    const out = JSON.parse(stdout);
    ensure(!out.error, `error ${JSON.stringify(out.error)}`);
    return out;
}
const texts = (r) => (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join(' ');

console.log(`# MCP Inspector CLI (@modelcontextprotocol/inspector ${manifest.version}) -> ${url}`);
await check('tools-list', async () => {
    const tools = (await inspector('--method', 'tools/list')).tools ?? [];
    for (const name of ['echo', 'greet']) ensure(tools.some((t) => t.name === name), `${name} not listed`);
    return `${tools.length} tools`;
});
await check('tools-call-echo', async () => {
    const r = await inspector('--method', 'tools/call', '--tool-name', 'echo', '--tool-arg', 'text=hello from inspector');
    ensure(!r.isError && texts(r) === 'hello from inspector', `result ${JSON.stringify(r.content)}`);
    return texts(r);
});
finish();
