import { FILE_NAME_MAX_BYTES, RunFilesInput, boundPathOf, isGrantList, sanitizeFileName } from './files';
import { StartRunBody } from './runs';

describe('sanitizeFileName', () => {
  it.each([
    ['report.xlsx', 'report.xlsx'],
    ['../../etc/passwd', '_.._etc_passwd'],
    ['a/b\\c', 'a_b_c'],
    ['nul\0byte', 'nul_byte'],
    ['..', 'file'],
    ['.hidden', 'hidden'],
    ['', 'file'],
    ['line\nbreak', 'line_break'],
  ])('%j → %j', (raw, safe) => expect(sanitizeFileName(raw)).toBe(safe));

  it('cuts long names to 255 bytes on a character boundary', () => {
    const name = sanitizeFileName('表'.repeat(200));
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(FILE_NAME_MAX_BYTES);
    expect(name).toBe('表'.repeat(85));
  });
});

describe('RunFilesInput', () => {
  it('still takes the old list of workspace paths', () => {
    const files = RunFilesInput.parse(['a.txt', 'b/c.md']);
    expect(isGrantList(files)).toBe(false);
  });

  it('takes the three grant kinds', () => {
    const files = RunFilesInput.parse([
      { name: 'book', refs: ['7b0e3c9e-5f5a-4c47-9e4e-3f9d0c1a2b3c'] },
      { name: 'src', nativePath: 'data/in.csv' },
      { name: 'out', createSharedDirectory: true },
    ]);
    expect(isGrantList(files)).toBe(true);
  });

  it.each([
    [
      'a name twice',
      [
        { name: 'a', createSharedDirectory: true },
        { name: 'a', createSharedDirectory: true },
      ],
    ],
    ['two kinds at once', [{ name: 'a', refs: ['7b0e3c9e-5f5a-4c47-9e4e-3f9d0c1a2b3c'], nativePath: 'x' }]],
    ['a name with a slash', [{ name: 'a/b', createSharedDirectory: true }]],
    ['createSharedDirectory false', [{ name: 'a', createSharedDirectory: false }]],
    ['a ref that is not an id', [{ name: 'a', refs: ['../x'] }]],
    ['no refs', [{ name: 'a', refs: [] }]],
  ])('refuses %s', (_, files) => expect(RunFilesInput.safeParse(files).success).toBe(false));

  it('is accepted by a start body in both shapes', () => {
    expect(StartRunBody.safeParse({ goal: 'x', files: ['a.txt'] }).success).toBe(true);
    expect(
      StartRunBody.safeParse({ goal: 'x', files: [{ name: 'o', createSharedDirectory: true }] }).success,
    ).toBe(true);
  });
});

describe('boundPathOf', () => {
  const grant = {
    name: 'book',
    kind: 'refs' as const,
    request: { name: 'book', refs: ['7b0e3c9e-5f5a-4c47-9e4e-3f9d0c1a2b3c'] },
    hostPath: '/srv/ws/owners/o/.switchyard/runs/r/book',
    viewPath: '/srv/ws/.switchyard/runs/r/book',
    files: ['q3.xlsx'],
    directory: false,
    writable: false,
  };

  it('points a one-file grant at the file, as each kind of tool sees it', () => {
    expect(boundPathOf(grant, 'workspace')).toBe('/srv/ws/.switchyard/runs/r/book/q3.xlsx');
    expect(boundPathOf(grant, 'sandbox')).toBe('/run/switchyard/files/book/q3.xlsx');
    expect(boundPathOf(grant, 'host')).toBe('/srv/ws/owners/o/.switchyard/runs/r/book/q3.xlsx');
  });

  it('points a directory grant at the directory', () => {
    const shared = { ...grant, kind: 'shared' as const, files: [], directory: true, writable: true };
    expect(boundPathOf(shared, 'sandbox')).toBe('/run/switchyard/files/book');
  });
});
