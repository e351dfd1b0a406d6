import { render, screen, within } from '@testing-library/react';
import type { RunFileGrantView } from '@switchyard/contracts';
import { I18nProvider } from '../i18n/i18n';
import { FileGrants } from './FileGrants';

/** A run's file grants, read-only: placeholder names, kinds, files, writability; host paths when given. */

const grants: RunFileGrantView[] = [
  { name: 'workbook', kind: 'refs', files: ['sales.xlsx'], directory: false, writable: false },
  {
    name: 'outputDir',
    kind: 'shared',
    files: [],
    directory: true,
    writable: true,
    hostPath: '/ws/runs/r1/out',
  },
];

test('lists each grant with its placeholder, kind, files and whether steps may write there', () => {
  render(
    <I18nProvider lang="en">
      <FileGrants files={grants} />
    </I18nProvider>,
  );
  const list = screen.getByRole('region', { name: 'Files granted to this run' });
  const book = within(list).getByText('@file:workbook').closest('li') as HTMLElement;
  expect(within(book).getByText('upload')).toBeTruthy();
  expect(within(book).getByText('read-only')).toBeTruthy();
  expect(within(book).getByText('sales.xlsx')).toBeTruthy();
  const out = within(list).getByText('@file:outputDir').closest('li') as HTMLElement;
  expect(within(out).getByText('shared folder')).toBeTruthy();
  expect(within(out).getByText('writable')).toBeTruthy();
  expect(within(out).getByText('/ws/runs/r1/out')).toBeTruthy();
  expect(within(out).getByText(/a folder made for this run/)).toBeTruthy();
});

test('shows nothing for a run without grants, and speaks Chinese', () => {
  const { container } = render(
    <I18nProvider lang="en">
      <FileGrants files={[]} />
    </I18nProvider>,
  );
  expect(container.textContent).toBe('');
  render(
    <I18nProvider lang="zh">
      <FileGrants files={grants} />
    </I18nProvider>,
  );
  expect(screen.getByRole('region', { name: '此运行获授权的文件' })).toBeTruthy();
});
