// The traffic of the observability check (tests/observability/run.sh): afterwards every
// series the shipped dashboard and alert rules read must exist, so besides successful calls
// it makes tool errors (an upstream 404, a program exiting 3), calls through a REST adapter
// one of whose upstreams is down (ejections, retries), rate-limited calls and a refused Host.
//   k6 run --no-usage-report -e BASE_URL=http://127.0.0.1:PORT tests/observability/load.js

import http from 'k6/http';
import { check } from 'k6';
import { options as scenario, rpc, callTool, build, settings } from '../../loadtest/lib/mcp.js';

// Refusals and 429s are the point here: only the checks below must hold.
export const options = Object.assign(scenario('observability', 5000), { thresholds: { checks: ['rate>0.99'] } });

const isError = (a) => a.result !== null && a.result.isError === true;
const answered = (a) => a.res.status === 200 && a.result !== null && a.result.isError !== true;

export default function () {
    check(rpc('server/discover', {}), { 'discover answers': answered });
    check(rpc('tools/list', {}), { 'tools/list answers': answered });
    check(callTool('echo', { text: 'observed' }), { 'echo answers': answered });
    check(callTool('ok_cli', {}), { 'a program exiting 0 answers': answered });
    check(callTool('three', {}), { 'a program exiting 3 is a tool error': isError });
    // One upstream of `api` is down: the call is retried on the live one.
    check(callTool('fine', {}), { 'the live upstream answers': answered });
    check(callTool('gone', {}), { 'an upstream 404 is a tool error': isError });
    const limited = callTool('limited', {});
    check(limited, { 'a rate-limited tool answers or says 429': (a) => answered(a) || a.res.status === 429 });
    const req = build('tools/list', {});
    const refused = http.post(settings.url, req.body, { headers: Object.assign({ Host: 'evil.example' }, req.headers) });
    check(refused, { 'a foreign Host is refused': (r) => r.status === 403 });
}
