// tools/call of a CLI tool: `utc_now` (loadtest/config/cli.toml: runs `date -u`), one child
// process per call. Stops with SKIP when the server does not list it (see lib/adapter.js).
//   k6 run --no-usage-report -e BASE_URL=http://127.0.0.1:8080 loadtest/scenarios/tools-call-cli.js

import { adapterScenario } from '../lib/adapter.js';

const s = adapterScenario('utc_now', {});
export const options = s.options;
export const setup = s.setup;
export default s.run;
