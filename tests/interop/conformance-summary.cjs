// Summarises one run of the conformance suite: one line per scenario from the per-scenario
// checks.json files, then `N passed, N failed` over the scored scenarios. Scenarios the suite's
// own report lists under "Not scored" (extensions, pending, added after the revision) are
// INFO lines and never counted. Exit status 1 when a scored scenario failed or none ran.
//
// Usage: node conformance-summary.cjs <results folder> <the suite's log>
'use strict';
const fs = require('fs');
const path = require('path');

const [out, log] = process.argv.slice(2);
const report = fs.readFileSync(log, 'utf8');
const notScored = new Map();
const tail = report.split(/\n(?=Not scored)/)[1];
if (tail) for (const m of tail.matchAll(/^\s+[✓✗]\s+(\S+)\s+\(([^)]+)\)/gm)) notScored.set(m[1], m[2]);

const scenarios = [];
for (const entry of fs.readdirSync(out)) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/.exec(entry);
    const file = path.join(out, entry, 'checks.json');
    if (!m || !fs.existsSync(file)) continue;
    let checks;
    try {
        checks = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (e) {
        checks = [{ status: 'FAILURE', id: 'checks.json', errorMessage: String(e) }];
    }
    scenarios.push({ name: m[1], checks, at: fs.statSync(file).mtimeMs });
}
scenarios.sort((a, b) => a.at - b.at);

let passed = 0;
let failed = 0;
let ok = 0;
let bad = 0;
let warnings = 0;
const brief = (c) => `${c.id}: ${(c.errorMessage || c.description || '').replace(/\s+/g, ' ').slice(0, 160)}`;
for (const s of scenarios) {
    const failures = s.checks.filter((c) => c.status === 'FAILURE');
    const warns = s.checks.filter((c) => c.status === 'WARNING');
    const why = failures.slice(0, 3).map(brief).join(' | ');
    if (notScored.has(s.name)) {
        console.log(`INFO ${s.name} [not scored: ${notScored.get(s.name)}] ${failures.length ? `failing (${why})` : 'passing'}`);
        continue;
    }
    ok += s.checks.filter((c) => c.status === 'SUCCESS').length;
    bad += failures.length;
    warnings += warns.length;
    if (failures.length) {
        failed++;
        console.log(`FAIL ${s.name}: ${why}`);
    } else {
        passed++;
        const w = warns.length ? ` (${warns.length} warning(s): ${warns.map((c) => c.id).join(', ')})` : '';
        console.log(`PASS ${s.name}${w}`);
    }
}
if (!scenarios.length) {
    failed++;
    console.log(`FAIL conformance: no scenario wrote results (server unreachable, or the suite failed: see ${log})`);
}
console.log(`# scored checks: ${ok} ok, ${bad} failing, ${warnings} warnings`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
