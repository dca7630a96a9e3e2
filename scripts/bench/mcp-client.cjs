// mcp-client.cjs drives one stdio MCP server with the official TypeScript
// MCP SDK client (@modelcontextprotocol/sdk, what Claude Code uses) for the
// Go benchmarks (cli BenchmarkMCPRunCommand): it spawns the server, times
// spawn → initialize reply, makes one untimed warm-up call and then `calls`
// timed sequential tool calls, and prints one JSON line:
//   {"startup_ms": n, "latencies_ms": [n, ...]}
//
// usage: node mcp-client.cjs SDK_DIR SPEC_JSON
//   SDK_DIR    a directory whose node_modules holds @modelcontextprotocol/sdk
//   SPEC_JSON  {"command": "...", "args": [...], "cwd": "...", "env": {...},
//               "tool": "run_command", "arguments": {...}, "calls": 100}
'use strict';
const path = require('node:path');
const { createRequire } = require('node:module');
const { performance } = require('node:perf_hooks');

async function main() {
  const [sdkDir, specJSON] = process.argv.slice(2);
  const spec = JSON.parse(specJSON);
  const sdk = createRequire(path.join(path.resolve(sdkDir), 'package.json'));
  const { Client } = sdk('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = sdk('@modelcontextprotocol/sdk/client/stdio.js');

  const transport = new StdioClientTransport({
    command: spec.command, args: spec.args || [], cwd: spec.cwd, env: spec.env, stderr: 'inherit',
  });
  const client = new Client({ name: 'agentgate-bench', version: '1.0.0' });
  const t0 = performance.now();
  await client.connect(transport); // spawn, initialize request, its reply
  const startup = performance.now() - t0;

  const call = async () => {
    const res = await client.callTool({ name: spec.tool, arguments: spec.arguments });
    if (res.isError) {
      throw new Error('tool call failed: ' + JSON.stringify(res.content));
    }
  };
  await call(); // warm-up: the first call's one-time costs (connection to the app)
  const latencies = [];
  for (let i = 0; i < spec.calls; i++) {
    const t = performance.now();
    await call();
    latencies.push(performance.now() - t);
  }
  await client.close();
  process.stdout.write(JSON.stringify({ startup_ms: startup, latencies_ms: latencies }) + '\n');
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack || err) + '\n');
  process.exit(1);
});
