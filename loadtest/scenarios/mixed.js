// A mixed client population: what agents do against one endpoint. Per iteration, by weight:
//   15 % server/discover, 30 % tools/list, 40 % tools/call echo, 15 % an MRTR greet flow
//   (two requests). Thresholds hold overall and per operation (tag `op`).
// Also the CI smoke run (tests/run.sh: 5 VUs x 5 s, generous P95_MS).
//   k6 run --no-usage-report -e BASE_URL=http://127.0.0.1:8080 loadtest/scenarios/mixed.js

import exec from 'k6/execution';
import { options as scenario, rpc, callTool, expectResult, mrtrFlow } from '../lib/mcp.js';

export const options = scenario('mixed', 50, {
    'http_req_duration{op:server/discover}': ['p(95)<{P95}'],
    'http_req_duration{op:tools/list}': ['p(95)<{P95}'],
    'http_req_duration{op:tools/call echo}': ['p(95)<{P95}'],
    'http_req_duration{op:mrtr round 1}': ['p(95)<{P95}'],
    'http_req_duration{op:mrtr retry}': ['p(95)<{P95}'],
});

export default function () {
    const dice = Math.random() * 100;
    if (dice < 15) {
        expectResult(rpc('server/discover', {}, 'server/discover'), 'discover');
    } else if (dice < 45) {
        expectResult(rpc('tools/list', {}, 'tools/list'), 'tools/list', {
            'lists tools': (r) => Array.isArray(r.tools) && r.tools.length > 0,
        });
    } else if (dice < 85) {
        const text = `mixed ${exec.vu.idInTest}-${exec.vu.iterationInScenario}`;
        expectResult(callTool('echo', { text }, 'tools/call echo'), 'echo', {
            'echoes the text': (r) => r.content && r.content[0] && r.content[0].text === text,
        });
    } else {
        mrtrFlow('greet', {}, 3);
    }
}
