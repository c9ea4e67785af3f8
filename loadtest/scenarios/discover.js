// server/discover: the pre-rendered capability document every client fetches first.
//   k6 run --no-usage-report -e BASE_URL=http://127.0.0.1:8080 -e VUS=10 -e DURATION=10s loadtest/scenarios/discover.js

import { options as scenario, rpc, expectResult } from '../lib/mcp.js';

export const options = scenario('discover', 50);

export default function () {
    const a = rpc('server/discover', {}, 'server/discover');
    expectResult(a, 'discover', {
        'supports 2026-07-28': (r) => Array.isArray(r.supportedVersions) && r.supportedVersions.includes('2026-07-28'),
        'cache hints': (r) => Number.isInteger(r.ttlMs) && typeof r.cacheScope === 'string',
    });
}
