import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError } from '@switchyard/contracts';
import { testConfig, waitFor } from '@switchyard/testing';
import { ExecuteCommandTool } from './command.tool';
import { WorkspaceGuard } from './workspace.guard';

/** Real child processes. The corpus of shell tricks must be refused before anything runs. */
describe('execute_command', () => {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'sy-cmd-')));
  const config = testConfig('tool-registry', {
    WORKSPACE_DIR: ws,
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
  });
  const tool = new ExecuteCommandTool(config, new WorkspaceGuard(config));
  const ctx = () => ({ signal: new AbortController().signal, caller: { correlationId: 'test' } });

  afterAll(() => rmSync(ws, { recursive: true, force: true }));

  it.each([
    ['chaining with ;', 'echo hi; rm -rf /'],
    ['chaining with &&', 'echo hi && cat /etc/passwd'],
    ['a pipe', 'cat /etc/passwd | node'],
    ['background &', 'node server.js &'],
    ['command substitution $()', 'echo $(id)'],
    ['backticks', 'echo `id`'],
    ['a variable', 'echo $HOME'],
    ['output redirection', 'echo x > /etc/hosts'],
    ['input redirection', 'cat < /etc/shadow'],
    ['a newline', 'echo hi\nrm -rf /'],
    ['a carriage return', 'echo hi\rrm x'],
    ['an env prefix', 'LD_PRELOAD=/tmp/x.so node -v'],
    ['an env prefix on an allowed program', 'PATH=/tmp git status'],
    ['env as a wrapper', 'env node -v'],
    ['a program outside the allowlist', 'rm -rf /'],
    ['bash', 'bash -c id'],
    ['sudo', 'sudo ls'],
    ['an absolute program path', '/bin/sh -c id'],
    ['a relative program path', './node_modules/.bin/tsc'],
    ['a traversal to a program', '../../bin/sh'],
  ])('refuses %s', (_, command) => {
    let err: unknown;
    try {
      tool.parse(command);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('forbidden');
    expect((err as AppError).message).toMatch(/^command refused: /);
  });

  it('refuses an allowlisted name that is no installed program', async () => {
    const narrow = testConfig('tool-registry', { WORKSPACE_DIR: ws, PATH: ws, COMMAND_ALLOWLIST: 'dir' });
    const t = new ExecuteCommandTool(narrow, new WorkspaceGuard(narrow));
    await expect(t.run({ command: 'dir' }, ctx())).rejects.toMatchObject({
      code: 'forbidden',
      message: expect.stringContaining('no such program'),
    });
  });

  it('runs an allowlisted program in the workspace without a shell', async () => {
    const r = await tool.run(
      {
        command:
          'node -e console.log(process.cwd(),process.argv.length,Object.keys(process.env).sort().join(String.fromCharCode(44)))',
      },
      ctx(),
    );
    const out = (r.content[0] as { text: string }).text;
    expect(r.isError).toBe(false);
    expect(out).toContain('exit code 0');
    expect(out).toContain(`${ws} 1`);
    // Only the minimal environment: none of the service's variables.
    expect(out).toMatch(/CI,HOME,LANG,PATH,TERM/);
  });

  it('passes arguments split on whitespace, unquoted', async () => {
    const r = await tool.run({ command: 'echo  "a  b"   c' }, ctx());
    expect((r.content[0] as { text: string }).text).toContain('stdout:\n"a b" c\n');
  });

  it('reports a failing exit code as an error result', async () => {
    const r = await tool.run({ command: 'ls /definitely/not/here' }, ctx());
    expect(r.isError).toBe(true);
    expect((r.content[0] as { text: string }).text).toMatch(/exit code [1-9]/);
  });

  it('keeps only the last 8 KiB of output', async () => {
    const r = await tool.run(
      { command: 'node -e process.stdout.write(String(1).repeat(20000)+String(2))' },
      ctx(),
    );
    const out = (r.content[0] as { text: string }).text;
    expect(r.truncated).toBe(true);
    expect(out).toContain('last 8192 of 20001 bytes');
    expect(out).toMatch(/1{8000,}2\n/);
  });

  it('kills the whole process group when cancelled, leaving no process behind', async () => {
    const controller = new AbortController();
    const marker = `sy-sleeper-${process.pid}-${Date.now()}`;
    // The program starts a grandchild that would outlive a plain kill of the child.
    writeFileSync(
      join(ws, 'spawner.js'),
      "require('child_process').spawn(process.execPath, ['-e', 'setInterval(Object, 1000)', process.argv[2]], { stdio: 'inherit' });\n" +
        'setInterval(Object, 1000);\n',
    );
    const running = tool.run(
      { command: `node spawner.js ${marker}` },
      { signal: controller.signal, caller: { correlationId: 't' } },
    );
    const count = () => {
      try {
        return execFileSync('pgrep', ['-f', marker]).toString().trim().split('\n').filter(Boolean).length;
      } catch {
        return 0;
      }
    };
    await waitFor(() => count() >= 2, 10_000, 50);
    controller.abort('cancelled');
    const r = await running;
    expect(r.isError).toBe(true);
    expect((r.content[0] as { text: string }).text).toContain('cancelled and killed');
    await waitFor(() => count() === 0, 5_000, 50);
  });
});
