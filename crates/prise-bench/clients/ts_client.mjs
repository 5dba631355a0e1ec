// The official TypeScript SDK client (@modelcontextprotocol/sdk) as a benchmark
// client: sequential tools/call of `echo`, one latency per call, printed as JSON.
//
// usage: node ts_client.mjs SDK_DIR CALLS WARMUP (--url URL | -- SERVER ARGS...)
// SDK_DIR is the installed package's folder (the peers live outside this tree).
import { pathToFileURL } from 'node:url';

const [sdk, callsArg, warmupArg, mode, ...rest] = process.argv.slice(2);
const load = (path) => import(pathToFileURL(`${sdk}/dist/esm/${path}`).href);
const { Client } = await load('client/index.js');
let transport;
if (mode === '--url') {
  const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');
  transport = new StreamableHTTPClientTransport(new URL(rest[0]));
} else {
  const { StdioClientTransport } = await load('client/stdio.js');
  transport = new StdioClientTransport({ command: rest[0], args: rest.slice(1) });
}
const client = new Client({ name: 'bench', version: '0' });
await client.connect(transport);
const calls = Number(callsArg);
const warmup = Number(warmupArg);
const latencies = [];
for (let i = 0; i < warmup + calls; i++) {
  const started = process.hrtime.bigint();
  await client.callTool({ name: 'echo', arguments: { message: 'hi' } });
  if (i >= warmup) latencies.push(Number(process.hrtime.bigint() - started));
}
await client.close();
console.log(JSON.stringify({ latencies_ns: latencies }));
