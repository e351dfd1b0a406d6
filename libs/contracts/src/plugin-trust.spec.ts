import { parsePluginHooks, PLUGIN_HOOKS_MAX_BYTES } from './plugin-trust';

describe('parsePluginHooks', () => {
  it("reads Claude Code's grouped shape: events mapped, matchers as rule matchers, names by position", () => {
    const out = parsePluginHooks(
      JSON.stringify({
        hooks: {
          PreToolUse: [
            { matcher: 'write_file|edit_*', hooks: [{ type: 'command', command: './check.sh', timeout: 5 }] },
            { matcher: 'Command(git push:*)', hooks: [{ type: 'http', url: 'https://hooks.example.com/x' }] },
          ],
          Stop: [{ hooks: [{ type: 'command', command: 'true' }] }],
          Notification: [{ hooks: [{ type: 'command', command: 'true' }] }],
        },
      }),
    );
    expect(out.issues).toEqual([]);
    expect(out.ignored).toEqual([
      { path: 'hooks.Notification', message: expect.stringContaining('unknown event') },
    ]);
    expect(out.hooks).toEqual([
      {
        name: 'PreToolUse-0-0',
        event: 'pre_tool_use',
        matchers: ['Tool(write_file)', 'Tool(edit_*)'],
        type: 'command',
        command: './check.sh',
        timeoutSeconds: 5,
        failClosed: false,
        cwd: '',
      },
      {
        name: 'PreToolUse-1-0',
        event: 'pre_tool_use',
        matchers: ['Command(git push:*)'],
        type: 'http',
        url: 'https://hooks.example.com/x',
        timeoutSeconds: 30,
        failClosed: false,
        cwd: '',
      },
      expect.objectContaining({ name: 'Stop-0-0', event: 'run_complete', matchers: [] }),
    ]);
  });

  it('reads a flat list (bare or under "hooks") with names, cwd and failClosed', () => {
    const hook = {
      name: 'audit',
      event: 'post_tool_use',
      matcher: 'Tool(excel_*)',
      type: 'command',
      command: './audit.sh',
      cwd: './bin',
      failClosed: true,
    };
    for (const doc of [[hook], { hooks: [hook] }]) {
      const out = parsePluginHooks(JSON.stringify(doc));
      expect(out.issues).toEqual([]);
      expect(out.hooks).toEqual([
        {
          name: 'audit',
          event: 'post_tool_use',
          matchers: ['Tool(excel_*)'],
          type: 'command',
          command: './audit.sh',
          timeoutSeconds: 30,
          failClosed: true,
          cwd: 'bin',
        },
      ]);
    }
  });

  it.each<[string, string, string]>([
    [
      'a cwd with ..',
      JSON.stringify([{ name: 'a', event: 'pre_tool_use', type: 'command', command: 'x', cwd: 'a/../../b' }]),
      '[0].cwd',
    ],
    [
      'an absolute cwd',
      JSON.stringify([{ name: 'a', event: 'pre_tool_use', type: 'command', command: 'x', cwd: '/etc' }]),
      '[0].cwd',
    ],
    [
      'a duplicate name',
      JSON.stringify([1, 2].map(() => ({ name: 'a', event: 'pre_tool_use', type: 'command', command: 'x' }))),
      'a',
    ],
    [
      'a command hook with a url',
      JSON.stringify([
        { name: 'a', event: 'pre_tool_use', type: 'command', command: 'x', url: 'https://x.y' },
      ]),
      '[0].url',
    ],
    [
      'a regex matcher',
      JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Write.*', hooks: [] }] } }),
      'hooks.PreToolUse[0].matcher',
    ],
    ['an unknown top-level field', JSON.stringify({ hooks: [], extra: 1 }), 'extra'],
    ['neither shape', JSON.stringify({ nothing: true }), ''],
    ['invalid JSON (never echoed)', 'root:x:0:0:root', ''],
  ])('reports %s by path', (_, text, path) => {
    const out = parsePluginHooks(text);
    expect(out.issues.map((i) => i.path)).toContain(path);
    expect(JSON.stringify(out.issues)).not.toContain('root:x');
  });

  it('refuses a file beyond the size limit without parsing it', () => {
    const out = parsePluginHooks(`[${' '.repeat(PLUGIN_HOOKS_MAX_BYTES)}]`);
    expect(out.hooks).toEqual([]);
    expect(out.issues[0]?.message).toContain(`at most ${PLUGIN_HOOKS_MAX_BYTES}`);
  });
});
