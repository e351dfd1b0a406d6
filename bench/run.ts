import { join } from 'node:path';
import { runChatBench } from './chat.bench';
import { runMcpBench } from './mcp.bench';
import { runRpcBench } from './rpc.bench';
import { runRunsBench } from './runs.bench';
import { runScaleBench, SCALE_PARTS } from './scale.bench';
import { runTasksBench } from './tasks.bench';
import { runToolsBench } from './tools.bench';
import { runTriggersBench } from './triggers.bench';
import { runWebBench } from './web.bench';

/**
 * `npm run bench -- <name…>`; no name runs them all. Results land in bench/results/<name>.json.
 * A word after a bench's name that is no bench names a part of it (`npm run bench -- scale idle`),
 * for the benches that have parts; such a run writes bench/results/<name>-<parts>.json.
 */
const BENCHES: Record<string, (outDir: string, parts: string[]) => Promise<Record<string, unknown>>> = {
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

/** The benches that can run some of their parts (`npm run bench -- scale idle`). */
const PARTS: Record<string, readonly string[]> = { scale: SCALE_PARTS };

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args[0] !== undefined && !BENCHES[args[0]]) {
    process.stderr.write(`unknown benchmark: ${args[0]}; available: ${Object.keys(BENCHES).join(', ')}\n`);
    process.exit(64);
  }
  const runs: Array<{ name: string; parts: string[] }> = [];
  for (const arg of args) {
    if (BENCHES[arg]) runs.push({ name: arg, parts: [] });
    else runs[runs.length - 1]?.parts.push(arg);
  }
  for (const { name, parts } of runs) {
    const unknown = parts.filter((p) => !PARTS[name]?.includes(p));
    if (unknown.length) {
      process.stderr.write(
        `unknown benchmark or part of ${name}: ${unknown.join(', ')}; benchmarks: ${Object.keys(BENCHES).join(', ')}` +
          `; parts of ${name}: ${PARTS[name]?.join(', ') ?? 'none'}\n`,
      );
      process.exit(64);
    }
  }
  const outDir = join(__dirname, '..', '..', 'bench', 'results');
  for (const { name, parts } of runs.length
    ? runs
    : Object.keys(BENCHES).map((n) => ({ name: n, parts: [] }))) {
    process.stdout.write(`running ${name}${parts.length ? ` (${parts.join(', ')})` : ''}…\n`);
    const result = await BENCHES[name]!(outDir, parts);
    const { machine: _machine, method: _method, ...summary } = result;
    process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
