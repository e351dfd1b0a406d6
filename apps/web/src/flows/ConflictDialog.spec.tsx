import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import { I18nProvider } from '../i18n/i18n';
import { ApiError } from '../api/client';
import { ConflictDialog } from './ConflictDialog';

/** The 409 dialog only ever calls back what the person chose; it never saves by itself. */

function renderDialog(onSaveCopy: () => unknown = jest.fn()) {
  const calls = { onReload: jest.fn(), onSaveCopy: jest.fn(onSaveCopy), onClose: jest.fn() };
  render(
    <I18nProvider lang="en">
      <ConflictDialog
        error={new ApiError(409, 'conflict', 'revision 3 is stale; the current revision is 4')}
        {...calls}
      />
    </I18nProvider>,
  );
  return calls;
}

test('explains the newer revision and offers both ways out, safest first', () => {
  renderDialog();
  const dialog = screen.getByRole('dialog', { name: 'Someone else saved this flow' });
  expect(dialog.textContent).toContain('the current revision is 4');
  expect(document.activeElement?.textContent).toBe('Save mine as a copy');
});

test('"Reload theirs" calls only onReload', () => {
  const calls = renderDialog();
  fireEvent.click(screen.getByRole('button', { name: 'Reload theirs (discard mine)' }));
  expect(calls.onReload).toHaveBeenCalledTimes(1);
  expect(calls.onSaveCopy).not.toHaveBeenCalled();
  expect(calls.onClose).not.toHaveBeenCalled();
});

test('"Save mine as a copy" calls only onSaveCopy, and a failed copy is shown, not swallowed', async () => {
  const calls = renderDialog(() => Promise.reject(new ApiError(400, 'validation_failed', 'name is empty')));
  fireEvent.click(screen.getByRole('button', { name: 'Save mine as a copy' }));
  expect(calls.onSaveCopy).toHaveBeenCalledTimes(1);
  expect(await screen.findByText('name is empty')).toBeTruthy();
  expect(calls.onReload).not.toHaveBeenCalled();
  await waitFor(() =>
    expect(screen.getByRole('button', { name: 'Save mine as a copy' }).hasAttribute('disabled')).toBe(false),
  );
});

test('Escape and "Keep editing" close without choosing', () => {
  const calls = renderDialog();
  fireEvent.keyDown(document, { key: 'Escape' });
  fireEvent.click(screen.getByRole('button', { name: 'Keep editing' }));
  expect(calls.onClose).toHaveBeenCalledTimes(2);
  expect(calls.onReload).not.toHaveBeenCalled();
  expect(calls.onSaveCopy).not.toHaveBeenCalled();
});
