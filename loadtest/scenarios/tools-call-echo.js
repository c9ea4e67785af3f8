// tools/call echo (demo fixtures): the whole request path (checks, argument schema,
// dispatch, result) with an adapter that does no I/O.
//   k6 run --no-usage-report -e BASE_URL=http://127.0.0.1:8080 loadtest/scenarios/tools-call-echo.js

import exec from 'k6/execution';
import { options as scenario, callTool, expectResult } from '../lib/mcp.js';

export const options = scenario('tools_call_echo', 50);

export default function () {
    const text = `k6 ${exec.vu.idInTest}-${exec.vu.iterationInScenario}`;
    const a = callTool('echo', { text }, 'tools/call echo');
    expectResult(a, 'echo', {
        'echoes the text': (r) => r.content && r.content[0] && r.content[0].text === text,
    });
}
