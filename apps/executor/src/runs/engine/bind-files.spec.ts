import type { ResolvedGrant, ToolDescriptor } from '@switchyard/contracts';
import { bindFiles } from './step-runner';

const tool = (over: Partial<ToolDescriptor>): ToolDescriptor => ({
  name: 'echo',
  description: '',
  inputSchema: {},
  effect: 'read',
  idempotent: true,
  source: 'builtin',
  ...over,
});

const out: ResolvedGrant = {
  name: 'out',
  kind: 'shared',
  request: { name: 'out', createSharedDirectory: true },
  hostPath: '/srv/ws/owners/o1/.switchyard/runs/r1/out',
  viewPath: '/srv/ws/.switchyard/runs/r1/out',
  files: [],
  directory: true,
  writable: true,
};
const book: ResolvedGrant = {
  ...out,
  name: 'book',
  kind: 'refs',
  request: { name: 'book', refs: ['7b0e3c9e-5f5a-4c47-9e4e-3f9d0c1a2b3c'] },
  hostPath: '/srv/ws/owners/o1/.switchyard/runs/r1/book',
  viewPath: '/srv/ws/.switchyard/runs/r1/book',
  files: ['q3.xlsx'],
  directory: false,
  writable: false,
};

describe('bindFiles (step dispatch)', () => {
  it('binds built-ins to the workspace view and sends no grants with the call', () => {
    const call = bindFiles(tool({}), { path: '@file:out/a.txt', src: '@file:book' }, [out, book]);
    expect(call.args).toEqual({
      path: '/srv/ws/.switchyard/runs/r1/out/a.txt',
      src: '/srv/ws/.switchyard/runs/r1/book/q3.xlsx',
    });
    expect(call.files).toBeUndefined();
  });

  it('binds an eligible sandboxed plugin to its sandbox paths and hands it every grant of the run', () => {
    const call = bindFiles(tool({ source: 'mcp', fileAccess: 'sandbox' }), { book: '@file:book' }, [
      out,
      book,
    ]);
    expect(call.args).toEqual({ book: '/run/switchyard/files/book/q3.xlsx' });
    expect(call.files).toEqual([
      { name: 'out', hostPath: out.hostPath, sandboxPath: '/run/switchyard/files/out', writable: true },
      { name: 'book', hostPath: book.hostPath, sandboxPath: '/run/switchyard/files/book', writable: false },
    ]);
  });

  it('binds an eligible plugin running unsandboxed to the host paths', () => {
    const call = bindFiles(tool({ source: 'mcp', fileAccess: 'host' }), { dir: '@file:out' }, [out]);
    expect(call.args).toEqual({ dir: out.hostPath });
  });

  it.each([
    ['an MCP tool', tool({ source: 'mcp' })],
    ['a workflow tool', tool({ source: 'workflow' })],
  ])('refuses %s that is not eligible, naming file_not_granted', (_, t) => {
    expect(() => bindFiles(t, { p: 'see @file:out' }, [out])).toThrow(/^file_not_granted: echo cannot see/);
  });

  it('does not hand grants to a non-eligible tool that names none', () => {
    expect(bindFiles(tool({ source: 'mcp' }), { p: 'plain' }, [out])).toEqual({ args: { p: 'plain' } });
  });

  it('refuses a name the run was not granted', () => {
    expect(() => bindFiles(tool({}), { p: '@file:other' }, [out])).toThrow(
      'file_not_granted: this run has no file grant named "other" (it has "out")',
    );
  });
});
