import type { RunFileGrantView } from '@switchyard/contracts';
import { useI18n } from '../i18n/i18n';
import { Badge } from '../ui/bits';

/**
 * The files granted to a run, read-only: each grant's placeholder name, what it is (an upload, a
 * workspace path, a fresh shared folder), its files and whether steps may write there. Host paths
 * come only to admins (the server leaves them out for everyone else).
 */
export function FileGrants({ files }: { files: readonly RunFileGrantView[] }) {
  const { t } = useI18n();
  if (!files.length) return null;
  return (
    <section className="card file-grants" aria-labelledby="run-files-h" data-testid="run-files">
      <h2 id="run-files-h">{t('run.files')}</h2>
      <ul>
        {files.map((f) => (
          <li key={f.name} data-grant={f.name}>
            <code>@file:{f.name}</code> <Badge tone="muted">{t(`run.files.kind.${f.kind}`)}</Badge>{' '}
            <Badge tone={f.writable ? 'warn' : 'info'}>
              {f.writable ? t('run.files.writable') : t('run.files.readOnly')}
            </Badge>
            <div className="sub">
              {f.files.length
                ? f.files.join(', ')
                : f.directory
                  ? t('run.files.emptyFolder')
                  : t('run.files.none')}
              {f.directory && f.files.length ? ` · ${t('run.files.folder')}` : ''}
            </div>
            {f.hostPath ? <code className="sub wrap">{f.hostPath}</code> : null}
          </li>
        ))}
      </ul>
    </section>
  );
}
