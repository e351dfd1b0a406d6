import { AppError, ServerJson } from '@switchyard/contracts';
import { importPlan, maskedConfig, recordNameOf } from './market-import';
import { entriesOf } from './market-source';

const server = (over: Record<string, unknown>) =>
  ServerJson.parse({ name: 'io.github.acme/thing', version: '1.0.0', ...over });

describe('market import plans', () => {
  it('an oci package: docker run with its variables passed through and arguments in order', () => {
    const plan = importPlan(
      server({
        packages: [
          {
            registryType: 'oci',
            identifier: 'ghcr.io/acme/thing',
            version: '1.0.0',
            transport: { type: 'stdio' },
            runtimeArguments: [{ type: 'named', name: '--network', value: 'none' }],
            packageArguments: [{ type: 'positional', default: '/data' }],
            environmentVariables: [{ name: 'TOKEN', isRequired: true, isSecret: true }],
          },
        ],
      }),
      { env: { TOKEN: 's3cret' } },
    );
    expect(plan).toEqual({
      kind: 'LOCAL',
      config: {
        command: 'docker',
        args: ['run', '-i', '--rm', '-e', 'TOKEN', '--network', 'none', 'ghcr.io/acme/thing:1.0.0', '/data'],
        env: { TOKEN: 's3cret' },
      },
    });
    expect(JSON.stringify(maskedConfig(plan))).not.toContain('s3cret');
  });

  it('prefers a package, picks the remote when asked, and refuses what it cannot run', () => {
    const both = server({
      packages: [{ registryType: 'npm', identifier: 'thing', transport: { type: 'stdio' } }],
      remotes: [{ type: 'streamable-http', url: 'https://thing.example.com/mcp' }],
    });
    expect(importPlan(both, {}).kind).toBe('LOCAL');
    expect(importPlan(both, {}).config).toEqual({ command: 'npx', args: ['-y', 'thing'] });
    expect(importPlan(both, { kind: 'REMOTE' })).toEqual({
      kind: 'REMOTE',
      config: { baseUrl: 'https://thing.example.com/mcp' },
    });
    const sse = server({ remotes: [{ type: 'sse', url: 'https://thing.example.com/sse' }] });
    expect(() => importPlan(sse, { kind: 'REMOTE' })).toThrow(/no streamable-http remote; it has sse/);
    const required = server({
      packages: [
        {
          registryType: 'pypi',
          identifier: 'thing',
          transport: { type: 'stdio' },
          packageArguments: [{ type: 'positional', valueHint: 'path', isRequired: true }],
        },
      ],
    });
    try {
      importPlan(required, {});
      throw new Error('expected a refusal');
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).issues).toEqual([
        { path: 'packages[0].packageArguments[0]', message: expect.stringContaining('(path)') },
      ]);
    }
  });

  it('names records after the last part of the entry name', () => {
    expect(recordNameOf('io.github.acme/weather')).toBe('weather');
  });

  it('reads a single server.json and reports a listing item that is not an object', () => {
    expect(entriesOf(JSON.stringify({ name: 'a.b/c', version: '1' })).entries).toHaveLength(1);
    expect(entriesOf(JSON.stringify({ servers: [42] })).problems).toEqual([
      { path: 'servers[0]', message: expect.any(String) },
    ]);
    expect(entriesOf('not json').problems).toEqual([{ path: '', message: 'the source is not valid JSON' }]);
  });
});
