import { join } from 'node:path';
import ts from 'typescript';

const ROOT = join(__dirname, '..', '..');

/**
 * RPC handlers are bound to their contracts by type: `@RpcHandler(contract)` only fits a method that
 * takes the contract's request first and answers what its response schema accepts. Proven by
 * type-checking would-be handlers with the project's real compiler settings.
 */
describe('RpcHandler binds a handler to its contract by type', () => {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!config) throw new Error('no tsconfig.json');

  const errorsOf = (methods: string): string[] => {
    const file = join(ROOT, 'apps/planner/src/rpc-binding-probe.ts');
    const code =
      "import { Rpc, type Workflow } from '@switchyard/contracts';\n" +
      "import type { CallContext } from '@switchyard/server-observability';\n" +
      "import { RpcHandler } from '@switchyard/server-runtime';\n" +
      `export class Probe {\n${methods}\n}\n`;
    const host = ts.createCompilerHost(config.options);
    const read = host.readFile.bind(host);
    host.readFile = (name) => (name === file ? code : read(name));
    const exists = host.fileExists.bind(host);
    host.fileExists = (name) => name === file || exists(name);
    const program = ts.createProgram([file], { ...config.options, noEmit: true }, host);
    return ts
      .getPreEmitDiagnostics(program, program.getSourceFile(file))
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  };

  it('accepts a handler of the contract request and response, and refuses drifted ones', () => {
    const errors = errorsOf(`
  @RpcHandler(Rpc.workflows.get)
  right(q: { id: string }, _ctx: CallContext): Promise<Workflow> { return Promise.reject(new Error(q.id)); }
  @RpcHandler(Rpc.workflows.get)
  wrongReply(_: unknown): Promise<number> { return Promise.resolve(1); }
  @RpcHandler(Rpc.workflows.get)
  wrongRequest(req: { notAField: Date }): Promise<Workflow> { return Promise.reject(new Error(String(req))); }
  @RpcHandler(Rpc.workflows.get)
  callerFirst(ctx: CallContext): Promise<Workflow> { return Promise.reject(new Error(ctx.correlationId)); }`);
    // One refusal per drifted handler, none for the right one.
    expect(errors).toHaveLength(3);
    for (const e of errors) expect(e).toContain('Unable to resolve signature of method decorator');
  }, 60_000);
});
