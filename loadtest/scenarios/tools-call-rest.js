// tools/call of a REST tool: `rest_status` (loadtest/config/rest.toml: GET /status on a
// loopback upstream that run.sh starts), one upstream request per call. Stops with SKIP
// when the server does not list it (see lib/adapter.js).
//   k6 run --no-usage-report -e BASE_URL=http://127.0.0.1:8080 loadtest/scenarios/tools-call-rest.js

import { adapterScenario } from '../lib/adapter.js';

const s = adapterScenario('rest_status', {});
export const options = s.options;
export const setup = s.setup;
export default s.run;
