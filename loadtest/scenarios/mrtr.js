// A multi round-trip flow (MRTR, MCP 2026-07-28, basic/patterns/mrtr): round 1 answers
// input_required, the retry carries inputResponses (and requestState when the server sent one)
// and completes.
//   MRTR_TOOL  default greet (demo fixtures: asks for a name by elicitation);
//              test_input_required_result_request_state (conformance fixtures) adds a
//              sealed requestState, i.e. AES-GCM seal + open per flow.
//   k6 run --no-usage-report -e BASE_URL=http://127.0.0.1:8080 loadtest/scenarios/mrtr.js

import { Trend } from 'k6/metrics';
import { options as scenario, mrtrFlow } from '../lib/mcp.js';

const TOOL = __ENV.MRTR_TOOL || 'greet';
const flowDuration = new Trend('mrtr_flow_duration', true);

export const options = scenario('mrtr', 50, { mrtr_flow_duration: ['p(95)<{P95}'] });

export default function () {
    const start = Date.now();
    if (mrtrFlow(TOOL, {}, 3) === 2) flowDuration.add(Date.now() - start);
}
