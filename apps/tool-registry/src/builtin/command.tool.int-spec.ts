import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError, type ToolResult } from '@switchyard/contracts';
import { createLogger } from '@switchyard/server-observability';
import { testConfig, waitFor } from '@switchyard/testing';
import { CommandSandbox } from './command-sandbox';
import { ExecuteCommandTool } from './command.tool';
import { WorkspaceGuard } from './workspace.guard';

const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';
const as = (ownerId: string, role: 'user' | 'admin' = 'user') => ({ correlationId: 't', ownerId, role });
const textOf = (r: ToolResult) => (r.content[0] as { text: string }).text;
/** What the program printed (the first line of the result echoes the command itself). */
const output = (r: ToolResult) => textOf(r).split('\n').slice(1).join('\n');

async function makeTool(env: Record<string, string>): Promise<ExecuteCommandTool> {
  const config = testConfig('tool-registry', { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env });
  const sandbox = new CommandSandbox(
    config,
    createLogger({ level: 'silent', service: 'tool-registry', instanceId: 't' }),
  );
  await sandbox.onModuleInit();
  return new ExecuteCommandTool(config, new WorkspaceGuard(config), sandbox);
}

/** Real child processes in the real sandbox (bubblewrap). The corpus of shell tricks must be refused before anything runs. */
describe('execute_command', () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'sy-cmd-')));
  const ws = join(base, 'ws');
  const areaA = join(ws, 'owners', A);
  const canary = join(base, 'canary.txt');
  const SECRET = `canary-${process.pid}-secret`;
  let tool: ExecuteCommandTool;
  const ctx = (caller = as(A)) => ({ signal: new AbortController().signal, caller });
  const run = async (command: string, caller = as(A)) => tool.run({ command }, ctx(caller));

  beforeAll(async () => {
    writeFileSync(canary, SECRET);
    // Visible to this process (and so to an unsandboxed child) but never to a sandboxed one.
    process.env['SY_TEST_CANARY'] = SECRET;
    tool = await makeTool({ WORKSPACE_DIR: ws });
  });

  afterAll(() => {
    delete process.env['SY_TEST_CANARY'];
    rmSync(base, { recursive: true, force: true });
  });

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
    const t = await makeTool({ WORKSPACE_DIR: ws, PATH: base, COMMAND_ALLOWLIST: 'dir' });
    await expect(t.run({ command: 'dir' }, ctx())).rejects.toMatchObject({
      code: 'forbidden',
      message: expect.stringContaining('no such program'),
    });
  });

  it('runs an allowlisted program in the workspace, sandboxed, without a shell', async () => {
    const r = await run(
      'node -e console.log(process.cwd(),process.argv.length,Object.keys(process.env).sort().join(String.fromCharCode(44)))',
    );
    const out = textOf(r);
    expect(r.isError).toBe(false);
    expect(r.sandboxed).toBe(true);
    expect(out).toContain('exit code 0 (sandboxed)');
    // The owner's area is shown at the workspace's own path.
    expect(out).toContain(`${ws} 1`);
    // Only the minimal environment: none of the service's variables.
    expect(out).toMatch(/CI,HOME,LANG,PATH,PWD,TERM,TMPDIR\n/);
  });

  it("runs under a backstop timeout that ends it even if the registry dies (the sandbox's PID 2)", async () => {
    const r = await run('cat /proc/2/cmdline');
    expect(r.isError).toBe(false);
    expect(textOf(r)).toMatch(
      /stdout:\n\/usr\/bin\/timeout.--signal=KILL.37s.\/usr\/bin\/cat.\/proc\/2\/cmdline/,
    );
  });

  it('passes arguments split on whitespace, unquoted', async () => {
    const r = await run('echo  "a  b"   c');
    expect((r.content[0] as { text: string }).text).toContain('stdout:\n"a b" c\n');
  });

  it('reports a failing exit code as an error result', async () => {
    const r = await run('ls /definitely/not/here');
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
    await run('ls');
    writeFileSync(
      join(areaA, 'spawner.js'),
      "require('child_process').spawn(process.execPath, ['-e', 'setInterval(Object, 1000)', process.argv[2]], { stdio: 'inherit' });\n" +
        'setInterval(Object, 1000);\n',
    );
    const running = tool.run(
      { command: `node spawner.js ${marker}` },
      { signal: controller.signal, caller: as(A) },
    );
    const count = () => {
      try {
        return execFileSync('pgrep', ['-f', marker]).toString().trim().split('\n').filter(Boolean).length;
      } catch {
        return 0;
      }
    };
    await waitFor(() => count() >= 2, 60_000, 50);
    controller.abort('cancelled');
    const r = await running;
    expect(r.isError).toBe(true);
    expect((r.content[0] as { text: string }).text).toContain('cancelled and killed');
    await waitFor(() => count() === 0, 60_000, 50);
  });

  describe('as a hostile owner, inside the sandbox', () => {
    const repoFile = join(process.cwd(), 'package.json');
    const envFile = join(process.cwd(), '.env');

    it.each([
      ['cat of a canary outside the workspace', () => `cat ${canary}`],
      ["cat of the repository's package.json", () => `cat ${repoFile}`],
      ["cat of the repository's .env", () => `cat ${envFile}`],
      ['cat of /proc/1/environ', () => 'cat /proc/1/environ'],
      ["cat of this service's environ", () => `cat /proc/${process.pid}/environ`],
      ["cat of the parent's environ", () => `cat /proc/${process.ppid}/environ`],
      ['python3 -c reading the canary', () => `python3 -c print(open('${canary}').read())`],
      ['python3 -c reading os.environ', () => "python3 -c print(__import__('os').environ)"],
      ['python3 -c reading /proc/1/environ', () => "python3 -c print(open('/proc/1/environ').read())"],
      [
        'node -e reading the canary',
        () => `node -e console.log(require('fs').readFileSync('${canary}','utf8'))`,
      ],
      [
        'node -e reading the .env',
        () => `node -e console.log(require('fs').readFileSync('${envFile}','utf8'))`,
      ],
      ['node -e reading process.env', () => 'node -e console.log(JSON.stringify(process.env))'],
      ['ls of the host root', () => `ls ${base}`],
    ])('%s shows nothing of the host', async (_, command) => {
      const r = await run(command());
      const out = output(r);
      expect(r.sandboxed).toBe(true);
      expect(out).not.toContain(SECRET);
      expect(out).not.toMatch(/DATABASE_URL|TOOL_CONFIG_KEY|SWITCHYARD_ADMIN_TOKEN|"name": "switchyard"/);
    });

    it('shows only the sandbox at /', async () => {
      const r = await run('ls /');
      expect(r.isError).toBe(false);
      const entries = textOf(r).split('stdout:\n')[1]?.split('stderr:')[0]?.trim().split('\n') ?? [];
      expect(entries.length).toBeGreaterThan(3);
      for (const e of entries)
        expect([
          'bin',
          'dev',
          'etc',
          'lib',
          'lib32',
          'lib64',
          'libx32',
          'proc',
          'sbin',
          'tmp',
          'usr',
        ]).toContain(e);
    });

    it('has no network: a connect to Postgres on 127.0.0.1 fails', async () => {
      const r = await run(
        "node -e require('net').connect(5432,'127.0.0.1').on('error',function(e){console.log('ERR',e.code)}).on('connect',function(){console.log('CONNECTED')})",
      );
      expect(output(r)).toContain('ERR ECONNREFUSED');
      expect(output(r)).not.toContain('CONNECTED');
    });

    it("keeps owners apart: B sees nothing of A's files", async () => {
      const wrote = await run(`node -e require('fs').writeFileSync('a-only.txt','${SECRET}')`, as(A));
      expect(wrote.isError).toBe(false);
      expect(readFileSync(join(areaA, 'a-only.txt'), 'utf8')).toBe(SECRET);
      for (const command of [
        'cat a-only.txt',
        `cat ${ws}/a-only.txt`,
        `cat ${areaA}/a-only.txt`,
        `ls ${ws}/owners`,
        'ls -R /tmp',
      ]) {
        const r = await run(command, as(B));
        expect(output(r)).not.toContain(SECRET);
        expect(output(r)).not.toMatch(/a-only\.txt(?!: No such file)/);
      }
    });

    it('works inside the workspace: ls, cat and python3 -c', async () => {
      writeFileSync(join(areaA, 'notes.txt'), 'hello from the workspace');
      expect(textOf(await run('ls'))).toContain('notes.txt');
      expect(textOf(await run('cat notes.txt'))).toContain('hello from the workspace');
      expect(textOf(await run(`cat ${ws}/notes.txt`))).toContain('hello from the workspace');
      const py = await run("python3 -c print(open('notes.txt').read().upper())");
      expect(py.isError).toBe(false);
      expect(textOf(py)).toContain('HELLO FROM THE WORKSPACE');
    });
  });

  describe('where the host cannot sandbox (bwrap missing)', () => {
    let unsandboxed: ExecuteCommandTool;

    beforeAll(async () => {
      unsandboxed = await makeTool({ WORKSPACE_DIR: ws, COMMAND_SANDBOX_BIN: join(base, 'no-such-bwrap') });
    });

    it('refuses users with a sentence saying why and how to enable it', async () => {
      const err = await unsandboxed.run({ command: 'ls' }, ctx(as(A))).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('forbidden');
      expect((err as AppError).message).toMatch(
        /^execute_command is unavailable: .*bubblewrap is not installed.*apt-get install bubblewrap/,
      );
    });

    it('runs for admins, and says so in the result', async () => {
      const r = await unsandboxed.run({ command: 'ls' }, ctx(as(A, 'admin')));
      expect(r.sandboxed).toBe(false);
      expect(textOf(r)).toMatch(/exit code 0 \(NOT sandboxed: bubblewrap is not installed/);
    });

    it('is also refused when switched off by configuration', async () => {
      const off = await makeTool({ WORKSPACE_DIR: ws, COMMAND_SANDBOX: 'none' });
      await expect(off.run({ command: 'ls' }, ctx(as(B)))).rejects.toMatchObject({
        code: 'forbidden',
        message: expect.stringContaining('COMMAND_SANDBOX=none'),
      });
    });
  });
});
