// Shared building blocks of the k6 scenarios: settings from __ENV (loopback only, bounded),
// MCP 2026-07-28 requests with the per-request envelope and routing headers, answers read
// from JSON or SSE, checks, and the options/thresholds every scenario uses.
//
// Every request carries, as a conforming client sends it (MCP 2026-07-28,
// basic/transports/streamable-http, request-metadata headers):
//   body     {"jsonrpc":"2.0","id":N,"method":M,"params":{...,"_meta":{protocolVersion,
//            clientInfo, clientCapabilities}}}
//   headers  Content-Type, Accept (JSON and SSE), MCP-Protocol-Version, Mcp-Method, and
//            Mcp-Name for tools/call, prompts/get (the name) and resources/read (the URI).

import http from 'k6/http';
import { check } from 'k6';
import encoding from 'k6/encoding';

export const PROTOCOL_VERSION = '2026-07-28';

// Upper bounds: these scripts are for one machine's loopback, not for load against others.
const MAX_VUS = 200;
const MAX_SECONDS = 600;

function durationSeconds(text) {
    const m = /^(\d+)(ms|s|m)$/.exec(text);
    if (!m) throw new Error(`DURATION must look like 500ms, 10s or 2m, got '${text}'`);
    const n = Number(m[1]);
    return m[2] === 'ms' ? n / 1000 : m[2] === 's' ? n : n * 60;
}

function loopbackUrl(base, path) {
    const m = /^http:\/\/(127(?:\.\d{1,3}){3}|localhost|\[::1\])(?::(\d+))?\/?$/.exec(base);
    if (!m) {
        throw new Error(`BASE_URL must be http://127.x.x.x[:port], http://localhost[:port] or http://[::1][:port] ` +
            `(load tests run on loopback only), got '${base}'`);
    }
    return base.replace(/\/$/, '') + path;
}

function number(name, fallback) {
    const raw = __ENV[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got '${raw}'`);
    return n;
}

/** Settings shared by every scenario, read once per VU from the environment. */
export const settings = (() => {
    const vus = number('VUS', 10);
    const duration = __ENV.DURATION || '10s';
    if (!Number.isInteger(vus) || vus < 1 || vus > MAX_VUS) throw new Error(`VUS must be 1..${MAX_VUS}, got ${vus}`);
    if (durationSeconds(duration) > MAX_SECONDS) throw new Error(`DURATION is capped at ${MAX_SECONDS}s, got ${duration}`);
    return {
        url: loopbackUrl(__ENV.BASE_URL || 'http://127.0.0.1:8080', __ENV.MCP_PATH || '/mcp'),
        vus,
        duration,
        p95: number('P95_MS', null),
        maxErrorRate: number('MAX_ERROR_RATE', 0.01),
    };
})();

/**
 * k6 options for a scenario named `name`: `VUS` constant VUs for `DURATION`, thresholds on
 * p95 latency (`P95_MS`, else `defaultP95`), the HTTP error rate (`MAX_ERROR_RATE`) and the
 * share of passed checks. `extra` adds thresholds (e.g. per operation in the mixed run).
 */
export function options(name, defaultP95, extra) {
    const p95 = settings.p95 === null ? defaultP95 : settings.p95;
    const thresholds = {
        http_req_duration: [`p(95)<${p95}`],
        http_req_failed: [`rate<${settings.maxErrorRate}`],
        checks: [`rate>${1 - settings.maxErrorRate}`],
    };
    for (const [metric, rules] of Object.entries(extra || {})) {
        thresholds[metric] = rules.map((r) => r.replace('{P95}', String(p95)));
    }
    return {
        scenarios: {
            [name]: { executor: 'constant-vus', vus: settings.vus, duration: settings.duration, gracefulStop: '5s' },
        },
        thresholds,
        summaryTrendStats: ['avg', 'min', 'med', 'p(90)', 'p(95)', 'p(99)', 'max'],
        // One connection per VU, kept alive, as an MCP client holds it.
        noConnectionReuse: false,
    };
}

const DEFAULT_CAPABILITIES = { elicitation: {}, sampling: {}, roots: {} };
let nextId = 1;

/** The `_meta` envelope every 2026-07-28 request carries. */
export function envelope(capabilities) {
    return {
        'io.modelcontextprotocol/protocolVersion': PROTOCOL_VERSION,
        'io.modelcontextprotocol/clientInfo': { name: 'mcp-runtime-k6', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': capabilities || DEFAULT_CAPABILITIES,
    };
}

// Header values that are not plain visible ASCII travel base64-encoded (MCP 2026-07-28,
// basic/transports/streamable-http, request-metadata headers).
function headerValue(value) {
    const plain = /^[\x21-\x7e]*$/.test(value) && !value.startsWith('=?base64?');
    return plain ? value : `=?base64?${encoding.b64encode(value, 'std', 's')}?=`;
}

/** The JSON body and headers of one request. */
export function build(method, params, capabilities) {
    const p = Object.assign({}, params || {});
    p._meta = Object.assign(envelope(capabilities), p._meta || {});
    const body = JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: p });
    const headers = {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': PROTOCOL_VERSION,
        'Mcp-Method': method,
    };
    const name = method === 'resources/read' ? p.uri : method === 'tools/call' || method === 'prompts/get' ? p.name : undefined;
    if (typeof name === 'string') headers['Mcp-Name'] = headerValue(name);
    return { body, headers };
}

/** The final JSON-RPC message of an answer (plain JSON, or the last `data:` line of SSE). */
export function message(res) {
    if (!res.body) return null;
    const type = res.headers['Content-Type'] || '';
    try {
        if (type.startsWith('text/event-stream')) {
            const lines = res.body.split('\n').filter((l) => l.startsWith('data:'));
            return lines.length ? JSON.parse(lines[lines.length - 1].slice(5)) : null;
        }
        return JSON.parse(res.body);
    } catch (_) {
        return null;
    }
}

/**
 * Sends one request; `op` tags its metrics (per-operation thresholds in the mixed run).
 * Returns `{ res, msg, result }`, `result` being the JSON-RPC result or null.
 */
export function rpc(method, params, op, capabilities) {
    const req = build(method, params, capabilities);
    const res = http.post(settings.url, req.body, { headers: req.headers, tags: { op: op || method } });
    const msg = message(res);
    const result = msg && msg.result ? msg.result : null;
    return { res, msg, result };
}

/** `tools/call name arguments`. */
export function callTool(name, args, op, capabilities) {
    return rpc('tools/call', { name, arguments: args || {} }, op || `tools/call ${name}`, capabilities);
}

/** Checks an answer: HTTP 200, a JSON-RPC result (not an error), and `more` on the result. */
export function expectResult(answer, label, more) {
    const checks = {
        [`${label}: HTTP 200`]: () => answer.res.status === 200,
        [`${label}: JSON-RPC result`]: () => answer.result !== null,
    };
    for (const [what, fn] of Object.entries(more || {})) {
        checks[`${label}: ${what}`] = () => answer.result !== null && fn(answer.result);
    }
    return check(answer, checks);
}

/** The tool names the server lists (all pages), for scenarios whose tool may be absent. */
export function listedTools() {
    const names = [];
    let cursor;
    for (let page = 0; page < 50; page++) {
        const a = rpc('tools/list', cursor ? { cursor } : {}, 'setup');
        if (!a.result) throw new Error(`tools/list failed: HTTP ${a.res.status} ${a.res.body}`);
        for (const t of a.result.tools) names.push(t.name);
        cursor = a.result.nextCursor;
        if (!cursor) break;
    }
    return names;
}

/**
 * An answer for each input request of an MRTR `input_required` result (MCP 2026-07-28,
 * basic/patterns/mrtr): accept an elicitation with a value for each schema property, answer
 * sampling with a canned assistant message, list one root.
 */
export function answerInputs(inputRequests) {
    const answers = {};
    for (const [key, req] of Object.entries(inputRequests)) {
        if (req.method === 'elicitation/create') {
            const props = (req.params && req.params.requestedSchema && req.params.requestedSchema.properties) || {};
            const content = {};
            for (const [field, schema] of Object.entries(props)) {
                const t = schema.type;
                content[field] = t === 'boolean' ? true : t === 'number' || t === 'integer' ? 1 : 'k6';
            }
            answers[key] = { action: 'accept', content };
        } else if (req.method === 'sampling/createMessage') {
            answers[key] = {
                role: 'assistant',
                content: { type: 'text', text: 'k6 says hi' },
                model: 'k6',
                stopReason: 'endTurn',
            };
        } else if (req.method === 'roots/list') {
            answers[key] = { roots: [{ uri: 'file:///tmp/k6', name: 'k6' }] };
        } else {
            throw new Error(`no canned answer for input request method ${req.method}`);
        }
    }
    return answers;
}

/**
 * One MRTR flow: call `tool`, then answer each `input_required` round (echoing
 * `requestState` when the server sent one) until the result is complete. Returns the
 * number of rounds, or 0 if a round failed (the failed check says which).
 */
export function mrtrFlow(tool, args, maxRounds) {
    let params = { name: tool, arguments: args || {} };
    for (let round = 1; round <= (maxRounds || 5); round++) {
        const a = rpc('tools/call', params, round === 1 ? 'mrtr round 1' : 'mrtr retry');
        const ok = expectResult(a, `mrtr round ${round}`, {
            'resultType complete or input_required': (r) => r.resultType === 'complete' || r.resultType === 'input_required',
            'no tool error': (r) => r.isError !== true,
        });
        if (!ok) return 0;
        if (a.result.resultType === 'complete') return round;
        params = { name: tool, arguments: args || {}, inputResponses: answerInputs(a.result.inputRequests) };
        if (typeof a.result.requestState === 'string') params.requestState = a.result.requestState;
    }
    check(null, { [`mrtr: completes within ${maxRounds || 5} rounds`]: () => false });
    return 0;
}
