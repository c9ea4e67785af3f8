// Writes the official MCP JSON Schema documents that @modelcontextprotocol/conformance ships
// inside its bundle (a map from revision to schema document, used by the suite to validate
// what servers send) to OUT_DIR/schema-<revision>.json, for the revisions this project checks.
//
// Usage: node extract-schemas.cjs <conformance dist/index.js> <OUT_DIR>
// Fails loudly (exit 1) when the bundle's layout is not the one this script understands.
'use strict';
const fs = require('fs');
const path = require('path');

const WANTED = ['2026-07-28', '2025-11-25'];
const [bundle, outDir] = process.argv.slice(2);
if (!bundle || !outDir) {
    console.error('usage: node extract-schemas.cjs <conformance dist/index.js> <OUT_DIR>');
    process.exit(2);
}
const src = fs.readFileSync(bundle, 'utf8');
const fail = (msg) => {
    console.error(`extract-schemas: ${msg} in ${bundle}`);
    process.exit(1);
};

// The literal starting at `start` (an opening brace), up to its matching closing brace.
function literalAt(start) {
    let depth = 0;
    let quote = null;
    for (let i = start; i < src.length; i++) {
        const c = src[i];
        if (quote) {
            if (c === '\\') i++;
            else if (c === quote) quote = null;
            continue;
        }
        if (c === '`' || c === '"' || c === "'") quote = c;
        else if (c === '{') depth++;
        else if (c === '}' && --depth === 0) return src.slice(start, i + 1);
    }
    return fail(`unterminated literal at ${start}`);
}

// Single-assignment lookups of a minified binding: NAME=<literal>.
function binding(name, literalPattern) {
    const re = new RegExp(`(?:^|[,;\\s{(])${name.replace(/\$/g, '\\$')}=(${literalPattern})`, 'g');
    return [...src.matchAll(re)];
}

// The revision → schema map, e.g. {"2025-03-26":Pe,"2025-06-18":Fe,"2025-11-25":Ie,[A]:Le}.
const mapMatch = /\{("\d{4}-\d{2}-\d{2}":[\w$]+,)+\[([\w$]+)\]:([\w$]+)\}/.exec(src);
if (!mapMatch) fail('no revision → schema map found');
const entries = {};
for (const m of mapMatch[0].matchAll(/"(\d{4}-\d{2}-\d{2})":([\w$]+)/g)) entries[m[1]] = m[2];
const keyDefs = binding(mapMatch[2], '`\\d{4}-\\d{2}-\\d{2}`');
const keys = new Set(keyDefs.map((m) => m[1].slice(1, -1)));
if (keys.size !== 1) fail(`the computed key ${mapMatch[2]} is not one revision (${[...keys]})`);
entries[[...keys][0]] = mapMatch[3];

fs.mkdirSync(outDir, { recursive: true });
for (const revision of WANTED) {
    const name = entries[revision];
    if (!name) fail(`no schema for ${revision} (map has ${Object.keys(entries)})`);
    const defs = binding(name, '\\{\\$schema:');
    if (defs.length !== 1) fail(`${defs.length} definitions of ${name} (the ${revision} schema)`);
    const start = defs[0].index + defs[0][0].length - '{$schema:'.length;
    const doc = new Function(`return (${literalAt(start)});`)();
    if (!doc.$defs || !doc.$defs.JSONRPCResponse) fail(`${name} does not look like an MCP schema`);
    const file = path.join(outDir, `schema-${revision}.json`);
    fs.writeFileSync(file, JSON.stringify(doc, null, 2) + '\n');
    console.log(`extract-schemas: ${file} (${Object.keys(doc.$defs).length} $defs)`);
}
