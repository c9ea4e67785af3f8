// Skills interop probe (SEP-2640): the official TypeScript SDK's skills client
// (@modelcontextprotocol/client/ext/skills, `SkillsClient`), pinned to revision 2026-07-28,
// against a running server that serves tests/fixtures/skills (service/config/conformance.toml).
// The client lists the skills, gets one, reads its SKILL.md and a supporting file (the SDK
// verifies each file's size, digest and, for SKILL.md, frontmatter against the entry, and
// throws on any mismatch), and lists a directory; the probe also checks the listed digests
// against the files on disk, and that the SDK refuses a file whose entry lies.
// Prints `PASS name (detail)` / `FAIL name: reason` per check and a closing `N passed, N failed`;
// exit status 1 when a check failed.
//
// Usage: $INTEROP_DIR/bin/node tests/interop/ts-skills-probe.mjs URL
// Env:   INTEROP_DIR  where tests/interop/setup.sh installed the SDK (default <repo>/target/interop)
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, ensure, finish, importInstalled } from './probe.mjs';

const REV = '2026-07-28';
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIXTURES = join(ROOT, 'tests', 'fixtures', 'skills');
const INTEROP_DIR = process.env.INTEROP_DIR || join(ROOT, 'target', 'interop');
const url = process.argv[2];
if (!url) {
    console.error('usage: node tests/interop/ts-skills-probe.mjs URL');
    process.exit(2);
}

const { Client, StreamableHTTPClientTransport } = await importInstalled(INTEROP_DIR, 'ts', '@modelcontextprotocol/client');
const { SkillsClient, SkillVerificationError } = await importInstalled(
    INTEROP_DIR,
    'ts',
    '@modelcontextprotocol/client',
    './ext/skills',
);

const PDF = 'skill://pdf-processing/SKILL.md';
const REFUNDS = 'skill://acme/billing/refunds/SKILL.md';
const onDisk = (uri) => {
    const bytes = readFileSync(join(FIXTURES, decodeURIComponent(uri.slice('skill://'.length))));
    return { digest: `sha256:${createHash('sha256').update(bytes).digest('hex')}`, size: bytes.length };
};

const client = new Client({ name: 'mcp-runtime-ts-skills-probe', version: '1.0.0' }, { versionNegotiation: { mode: { pin: REV } } });
const opts = { timeout: 15000 };
console.log(`# official TypeScript SDK SkillsClient (@modelcontextprotocol/client/ext/skills) pinned to ${REV} -> ${url}`);
let connected = false;
await check('connect', async () => {
    await client.connect(new StreamableHTTPClientTransport(new URL(url)), opts);
    connected = true;
    return `protocol ${client.getNegotiatedProtocolVersion()}`;
});
if (!connected) finish(1);
const skills = new SkillsClient(client);

await check('extension declared', async () => {
    ensure(skills.supported, 'SkillsClient.supported is false: io.modelcontextprotocol/skills (with resources) not declared');
    ensure(skills.directoryRead, 'directoryRead not declared');
    return 'io.modelcontextprotocol/skills {directoryRead: true}';
});

let pdf;
await check('skills/list', async () => {
    const listing = await skills.list(undefined, opts);
    const uris = listing.skills.map((s) => s.uri);
    ensure(uris.includes(PDF) && uris.includes(REFUNDS), `listed ${JSON.stringify(uris)}`);
    ensure(listing.invalid.length === 0, `invalid entries: ${JSON.stringify(listing.invalid)}`);
    ensure(Number.isInteger(listing.ttlMs) && ['public', 'private'].includes(listing.cacheScope), 'no cache hints');
    pdf = listing.skills.find((s) => s.uri === PDF);
    return `${uris.length} skills; ttlMs=${listing.ttlMs} cacheScope=${listing.cacheScope}`;
});

await check('digests and sizes match the files on disk', async () => {
    ensure(pdf, 'no pdf-processing entry');
    for (const r of pdf.resources) {
        const disk = onDisk(r.uri);
        ensure(r.digest === disk.digest && r.size === disk.size, `${r.uri}: listed ${r.digest}/${r.size}, disk ${disk.digest}/${disk.size}`);
    }
    return `${pdf.resources.length} files of pdf-processing`;
});

await check('skills/get', async () => {
    const { skill, ttlMs, cacheScope } = await skills.get(REFUNDS, opts);
    ensure(skill.uri === REFUNDS && skill.frontmatter.name === 'refunds', JSON.stringify(skill));
    ensure(Number.isInteger(ttlMs) && cacheScope, 'no cache hints');
    return `${skill.resources.length} files`;
});

await check('read SKILL.md (size, digest, frontmatter verified by the SDK)', async () => {
    const file = await skills.read(pdf, undefined, opts);
    ensure(file.verified, 'not verified');
    ensure(file.frontmatter?.name === 'pdf-processing', `frontmatter ${JSON.stringify(file.frontmatter)}`);
    ensure(file.mimeType === 'text/markdown', `mimeType ${file.mimeType}`);
    return `${file.bytes.byteLength} bytes, ${file.body.split('\n').length} body lines`;
});

await check('read a supporting file by its relative path', async () => {
    const file = await skills.read(pdf, 'references/FORMS.md', opts);
    ensure(file.verified && file.text.startsWith('# Forms'), `read ${JSON.stringify(file.text)}`);
    return `${file.uri}: ${file.bytes.byteLength} bytes verified`;
});

await check('the SDK refuses content its entry does not describe', async () => {
    const lying = {
        ...pdf,
        resources: pdf.resources.map((r) => (r.uri === PDF ? { ...r, digest: `sha256:${'0'.repeat(64)}` } : r)),
    };
    try {
        await skills.read(lying, undefined, { ...opts, cacheMode: 'refresh' });
    } catch (e) {
        ensure(e instanceof SkillVerificationError && e.reason === 'digest', `threw ${e}`);
        return 'SkillVerificationError (digest)';
    }
    throw new Error('read a file whose digest does not match without an error');
});

await check('resources/directory/read', async () => {
    const root = await skills.readDirectory('skill://pdf-processing', opts);
    const names = root.resources.map((r) => `${r.name}${r.mimeType === 'inode/directory' ? '/' : ''}`);
    ensure(names.includes('SKILL.md') && names.includes('references/') && names.includes('templates/'), `children ${names}`);
    const sub = await skills.readDirectory('skill://pdf-processing/templates', opts);
    const subNames = sub.resources.map((r) => r.name);
    ensure(subNames.includes('invoice.md') && subNames.includes('regional'), `templates/ children ${subNames}`);
    return `skill://pdf-processing: ${names.join(' ')}`;
});

await client.close();
finish();
