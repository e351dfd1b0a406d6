import { join } from 'node:path';
import { runChatBench } from './chat.bench';
import { runMcpBench } from './mcp.bench';
import { runRpcBench } from './rpc.bench';
import { runRunsBench } from './runs.bench';
import { runScaleBench } from './scale.bench';
import { runTasksBench } from './tasks.bench';
import { runToolsBench } from './tools.bench';
import { runTriggersBench } from './triggers.bench';
import { runWebBench } from './web.bench';

/** `npm run bench -- <name…>`; no name runs them all. Results land in bench/results/<name>.json. */
const BENCHES: Record<string, (outDir: string) => Promise<Record<string, unknown>>> = {
  rpc: runRpcBench,
  tools: runToolsBench,
  runs: runRunsBench,
  tasks: runTasksBench,
  triggers: runTriggersBench,
  web: runWebBench,
  chat: runChatBench,
  mcp: runMcpBench,
  scale: runScaleBench,
};

async function main(): Promise<void> {
  const names = process.argv.slice(2);
  const unknown = names.filter((n) => !BENCHES[n]);
  if (unknown.length) {
    process.stderr.write(
      `unknown benchmark(s): ${unknown.join(', ')}; available: ${Object.keys(BENCHES).join(', ')}\n`,
    );
    process.exit(64);
  }
  const outDir = join(__dirname, '..', '..', 'bench', 'results');
  for (const name of names.length ? names : Object.keys(BENCHES)) {
    process.stdout.write(`running ${name}…\n`);
    const result = await BENCHES[name]!(outDir);
    const { machine: _machine, method: _method, ...summary } = result;
    process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
