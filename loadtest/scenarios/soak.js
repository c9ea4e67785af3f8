// The soak mix (loadtest/soak.sh): per iteration, by weight, 10 % server/discover, 20 %
// tools/list, 35 % tools/call echo (rate-limited, so every call runs the Redis script),
// 10 % add, 10 % utc_now (a child process), 15 % rest_status (two upstreams, one flapping).
// Counts answers with a 5xx status (`status_5xx`) and failed calls (`failed_calls`: not
// HTTP 200, a JSON-RPC error, or a tool error), and logs each failure with its time in ms
// so soak.sh can tell the calls in flight at a fault from the others.
//   k6 run --no-usage-report -e BASE_URL=http://127.0.0.1:8080 -e DURATION=600s loadtest/scenarios/soak.js

import exec from 'k6/execution';
import { Counter } from 'k6/metrics';
import { rpc, callTool } from '../lib/mcp.js';

const status5xx = new Counter('status_5xx');
const failedCalls = new Counter('failed_calls');
const calls = new Counter('calls');

export const options = {
    scenarios: {
        soak: {
            executor: 'constant-vus',
            vus: Number(__ENV.VUS || 8),
            duration: __ENV.DURATION || '600s',
            gracefulStop: '5s',
        },
    },
    summaryTrendStats: ['avg', 'med', 'p(95)', 'p(99)', 'max'],
};

function count(answer, op) {
    calls.add(1);
    const status = answer.res.status;
    if (status >= 500) status5xx.add(1);
    const result = answer.result;
    if (status === 200 && result !== null && result.isError !== true) return;
    failedCalls.add(1);
    const why = result && result.isError ? JSON.stringify(result.content).slice(0, 160) : String(answer.res.body).slice(0, 160);
    console.warn(`SOAK-FAILED ${Date.now()} ${op} ${status} ${why}`);
}

export default function () {
    const dice = Math.random() * 100;
    const n = `${exec.vu.idInTest}-${exec.vu.iterationInScenario}`;
    if (dice < 10) count(rpc('server/discover', {}), 'server/discover');
    else if (dice < 30) count(rpc('tools/list', {}), 'tools/list');
    else if (dice < 65) count(callTool('echo', { text: `soak ${n}` }), 'echo');
    else if (dice < 75) count(callTool('add', { a: 1, b: 2 }), 'add');
    else if (dice < 85) count(callTool('utc_now', {}), 'utc_now');
    else count(callTool('rest_status', {}), 'rest_status');
}
