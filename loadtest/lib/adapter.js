// A tools/call scenario for an adapter-backed tool (CLI: a child process per call; REST: an
// upstream HTTP request per call). TOOL and TOOL_ARGS (JSON) override the script's
// defaults. When the server does not list the tool, setup() stops the run at once with a
// SKIP message (k6 exit code 108): the adapter is not in this build or not in the config.

import exec from 'k6/execution';
import { options as scenario, callTool, expectResult, listedTools } from './mcp.js';

/** `{ options, setup, run }` for calling `defaultTool` with `defaultArgs`. */
export function adapterScenario(defaultTool, defaultArgs) {
    const tool = __ENV.TOOL || defaultTool;
    const args = __ENV.TOOL_ARGS ? JSON.parse(__ENV.TOOL_ARGS) : defaultArgs;
    return {
        options: scenario(`tools_call_${tool.replace(/[^A-Za-z0-9_]/g, '_')}`, 100),
        setup() {
            const names = listedTools();
            if (!names.includes(tool)) {
                exec.test.abort(`SKIP: the server does not list the tool '${tool}' (it lists: ${names.join(', ')})`);
            }
        },
        run() {
            expectResult(callTool(tool, args, `tools/call ${tool}`), tool, {
                'not isError': (r) => r.isError !== true,
                'has content': (r) => Array.isArray(r.content) && r.content.length > 0,
            });
        },
    };
}
