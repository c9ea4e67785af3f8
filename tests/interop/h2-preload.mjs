// Preloaded with `node --import` (tests/run.sh): makes Node's global fetch, which the official
// conformance suite and the TypeScript SDK client use, speak HTTP/2 when the server offers it by
// ALPN, and prints at exit how many connections spoke which protocol, so a run can prove it
// was HTTP/2 (`h2-preload: connections by protocol {"h2":N}`).
//
// Needs INTEROP_DIR (tests/interop/setup.sh installs undici into $INTEROP_DIR/h2).
import diagnostics from 'node:diagnostics_channel';
import { pathToFileURL } from 'node:url';

const dir = process.env.INTEROP_DIR;
if (!dir) throw new Error('h2-preload: set INTEROP_DIR (where tests/interop/setup.sh installed undici)');
const { Agent, setGlobalDispatcher } = await import(pathToFileURL(`${dir}/h2/node_modules/undici/index.js`).href);
setGlobalDispatcher(new Agent({ allowH2: true }));

const seen = {};
diagnostics.subscribe('undici:client:connected', ({ socket }) => {
    const protocol = socket.alpnProtocol || 'http/1.1';
    seen[protocol] = (seen[protocol] || 0) + 1;
});
process.on('exit', () => process.stderr.write(`h2-preload: connections by protocol ${JSON.stringify(seen)}\n`));
