import { useState, type ReactNode } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { Workflow } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { call } from '../api/client';
import { useAuth } from '../api/auth';
import { useI18n } from '../i18n/i18n';
import { Badge, EmptyState, ErrorNote, Loading, formatTime } from '../ui/bits';
import { ConfirmButton } from '../ui/Confirm';
import { Modal } from '../ui/Modal';
import { relativeTime } from '../ui/relative-time';
import { useNow } from '../ui/useNow';

/**
 * A flow's published versions, newest first: the one the catalog runs is marked; any of them can be
 * restored into the draft (asking first when that would replace unsaved edits), and the flow can be
 * unpublished. Restoring does not publish: the published version stays until the next publish.
 */
export function VersionsDrawer({
  workflow,
  dirty,
  onRestored,
  onUnpublished,
  onClose,
  title,
  children,
}: {
  workflow: Pick<Workflow, 'id' | 'revision' | 'publishedVersion'>;
  /** The canvas has edits not saved yet: a restore would replace them. */
  dirty: boolean;
  /** The draft as the server now has it, after a restore. */
  onRestored: (workflow: Workflow) => void;
  /** The workflow after an unpublish (its revision may have moved on); `onRestored` when absent. */
  onUnpublished?: (workflow: Workflow) => void;
  onClose: () => void;
  /** The drawer's title when it holds more than the versions. */
  title?: string;
  /** Shown above the versions (the flow's own settings). */
  children?: ReactNode;
}) {
  const { t, lang } = useI18n();
  const { can } = useAuth();
  const queries = useQueryClient();
  const now = useNow(true, 30_000);
  const [asking, setAsking] = useState<number | null>(null);
  const versions = useQuery({
    queryKey: ['workflows', workflow.id, 'versions'],
    queryFn: ({ signal }) => call(Routes.workflowVersions, { params: { id: workflow.id }, signal }),
  });
  const changed = () => void queries.invalidateQueries({ queryKey: ['workflows'] });
  const restore = useMutation({
    mutationFn: (n: number) =>
      call(Routes.workflowRestore, { params: { id: workflow.id, n }, body: { revision: workflow.revision } }),
    onSuccess: (w) => {
      setAsking(null);
      changed();
      onRestored(w);
    },
  });
  const unpublish = () =>
    call(Routes.workflowUnpublish, {
      params: { id: workflow.id },
      body: { revision: workflow.revision },
    }).then((w) => {
      changed();
      (onUnpublished ?? onRestored)(w);
    });
  const editable = can('workflow:edit');
  const items = versions.data?.items ?? [];

  return (
    <Modal title={title ?? t('flows.versions.title')} onClose={onClose} drawer>
      {children}
      <div className="versions-head">
        <span>
          {workflow.publishedVersion !== null
            ? t('flows.versions.serving', { n: workflow.publishedVersion })
            : t('flows.versions.notPublished')}
        </span>
        {editable && workflow.publishedVersion !== null ? (
          <ConfirmButton
            label={t('flows.versions.unpublish')}
            title={t('flows.versions.unpublishTitle')}
            body={t('flows.versions.unpublishBody', { n: workflow.publishedVersion })}
            confirmLabel={t('flows.versions.unpublish')}
            onConfirm={unpublish}
          />
        ) : null}
      </div>
      {versions.isPending ? <Loading /> : null}
      <ErrorNote error={versions.error} />
      <ErrorNote error={restore.error} />
      {versions.isSuccess && !items.length ? <EmptyState>{t('flows.versions.empty')}</EmptyState> : null}
      {items.length ? (
        <ol className="version-list" aria-label={t('flows.versions.title')}>
          {items.map((v) => {
            const published = v.version === workflow.publishedVersion;
            return (
              <li key={v.version} className={published ? 'published' : ''} data-version={v.version}>
                <div className="version-main">
                  <strong>v{v.version}</strong>
                  {published ? <Badge tone="ok">{t('flows.versions.published')}</Badge> : null}
                  <span className="version-name">{v.name}</span>
                </div>
                <div className="sub" title={formatTime(v.createdAt, lang)}>
                  {relativeTime(v.createdAt, now, lang)}
                </div>
                {editable ? (
                  <button
                    type="button"
                    disabled={restore.isPending}
                    aria-label={t('flows.versions.restoreN', { n: v.version })}
                    onClick={() => (dirty ? setAsking(v.version) : restore.mutate(v.version))}
                  >
                    {t('flows.versions.restore')}
                  </button>
                ) : null}
              </li>
            );
          })}
        </ol>
      ) : null}
      {asking !== null ? (
        <Modal title={t('flows.versions.replaceTitle')} onClose={() => setAsking(null)}>
          <p>{t('flows.versions.replaceBody', { n: asking })}</p>
          <ErrorNote error={restore.error} />
          <div className="actions">
            <button type="button" onClick={() => setAsking(null)}>
              {t('common.cancel')}
            </button>
            <button
              type="button"
              className="danger"
              disabled={restore.isPending}
              onClick={() => restore.mutate(asking)}
            >
              {t('flows.versions.replace')}
            </button>
          </div>
        </Modal>
      ) : null}
    </Modal>
  );
}
