// tools/list: the first page, served from the page the registry rendered when the config
// was loaded (no per-request serialisation), with its cache hints (ttlMs / cacheScope).
//   k6 run --no-usage-report -e BASE_URL=http://127.0.0.1:8080 loadtest/scenarios/tools-list.js

import { options as scenario, rpc, expectResult } from '../lib/mcp.js';

export const options = scenario('tools_list', 50);

export default function () {
    const a = rpc('tools/list', {}, 'tools/list');
    expectResult(a, 'tools/list', {
        'lists tools': (r) => Array.isArray(r.tools) && r.tools.length > 0,
        'cache hints': (r) => Number.isInteger(r.ttlMs) && typeof r.cacheScope === 'string',
    });
}
