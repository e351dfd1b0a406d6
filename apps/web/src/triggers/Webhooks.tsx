import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  PermissionMode,
  WebhookHeaders,
  type DeliveryState,
  type Trigger,
  type WorkflowSummary,
} from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { useAuth } from '../api/auth';
import { call } from '../api/client';
import { useI18n } from '../i18n/i18n';
import {
  Badge,
  CopyButton,
  EmptyState,
  ErrorNote,
  FieldErrors,
  Loading,
  formatDuration,
  formatTime,
  PageHeader,
} from '../ui/bits';
import { ConfirmButton } from '../ui/Confirm';
import { Modal } from '../ui/Modal';
import { parseJsonObject } from '../ui/forms';
import { WorkflowPicker } from './WorkflowPicker';
import { useWorkflows, workflowName } from './workflows';

export const webhooksKey = ['tasks', 'webhooks'] as const;
const DELIVERY_TONE: Record<DeliveryState, string> = {
  CLAIMED: 'wait',
  QUEUED: 'wait',
  SUBMITTED: 'run',
  COMPLETED: 'ok',
  FAILED: 'bad',
  CANCELLED: 'muted',
  INTERRUPTED: 'warn',
};

function absolute(url: string): string {
  return new URL(url, window.location.origin).toString();
}

/** A secret shown this once, with copy; closing the dialog forgets it. */
function SecretOnce({
  title,
  secret,
  url,
  onClose,
}: {
  title: string;
  secret: string;
  url: string;
  onClose: () => void;
}) {
  const { t } = useI18n();
  return (
    <Modal title={title} onClose={onClose}>
      <p className="notice">{t('settings.tokens.once')}</p>
      <label htmlFor="secret-once">{t('triggers.secret')}</label>
      <div className="copy-row">
        <input
          id="secret-once"
          readOnly
          value={secret}
          data-testid="secret-once"
          onFocus={(e) => e.target.select()}
        />
        <CopyButton text={secret} />
      </div>
      <label htmlFor="secret-url">{t('triggers.url')}</label>
      <div className="copy-row">
        <input id="secret-url" readOnly value={absolute(url)} onFocus={(e) => e.target.select()} />
        <CopyButton text={absolute(url)} />
      </div>
      <p className="hint">{t('triggers.howToDeliver', { header: WebhookHeaders.secret })}</p>
      <div className="actions">
        <button type="button" className="primary" onClick={onClose}>
          {t('triggers.secretStored')}
        </button>
      </div>
    </Modal>
  );
}

function WebhookDialog({
  workflows,
  onClose,
  onCreated,
}: {
  workflows: readonly WorkflowSummary[];
  onClose: () => void;
  onCreated: (secret: string, url: string) => void;
}) {
  const { t } = useI18n();
  const [workflowId, setWorkflowId] = useState('');
  const [inputs, setInputs] = useState('{}');
  const [mode, setMode] = useState<PermissionMode>('ask');
  const [requireSignature, setRequireSignature] = useState(false);
  const parsed = parseJsonObject(inputs);
  const create = useMutation({
    mutationFn: () =>
      call(Routes.triggerCreate, {
        body: { workflowId, inputs: parsed.ok ? parsed.value : {}, permissionMode: mode, requireSignature },
      }),
    onSuccess: (created) => onCreated(created.secret, created.url),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (parsed.ok && workflowId) create.mutate();
  };
  return (
    <Modal title={t('triggers.webhook.new')} onClose={onClose} wide>
      <form onSubmit={submit} noValidate className="stack">
        <label htmlFor="wh-workflow">{t('triggers.workflow')}</label>
        <WorkflowPicker id="wh-workflow" value={workflowId} onChange={setWorkflowId} workflows={workflows} />
        <FieldErrors error={create.error} path="workflowId" />
        <label htmlFor="wh-inputs">{t('triggers.inputs')}</label>
        <textarea
          id="wh-inputs"
          rows={5}
          value={inputs}
          onChange={(e) => setInputs(e.target.value)}
          aria-invalid={!parsed.ok}
        />
        <div className="hint">{t('triggers.webhook.inputsHint')}</div>
        {!parsed.ok ? <div className="field-error">{parsed.message}</div> : null}
        <FieldErrors error={create.error} path="inputs" />
        <div className="row">
          <div>
            <label htmlFor="wh-mode">{t('runs.start.mode')}</label>
            <select id="wh-mode" value={mode} onChange={(e) => setMode(e.target.value as PermissionMode)}>
              {PermissionMode.options.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
            <FieldErrors error={create.error} path="permissionMode" />
          </div>
          <label className="check">
            <input
              type="checkbox"
              checked={requireSignature}
              onChange={(e) => setRequireSignature(e.target.checked)}
            />
            {t('triggers.webhook.requireSignature')}
          </label>
        </div>
        <div className="hint">{t('triggers.modeHint')}</div>
        <ErrorNote error={create.error} />
        <div className="actions">
          <button type="button" onClick={onClose}>
            {t('common.cancel')}
          </button>
          <button type="submit" className="primary" disabled={!parsed.ok || !workflowId || create.isPending}>
            {t('common.create')}
          </button>
        </div>
      </form>
    </Modal>
  );
}

/** The delivery audit of one trigger, newest first, paged by cursor. */
function Deliveries({ trigger }: { trigger: Trigger }) {
  const { t, lang } = useI18n();
  const list = useInfiniteQuery({
    queryKey: [...webhooksKey, 'deliveries', trigger.id],
    queryFn: ({ pageParam, signal }) =>
      call(Routes.triggerDeliveries, {
        params: { id: trigger.id },
        query: { limit: 50, ...(pageParam ? { cursor: pageParam } : {}) },
        signal,
      }),
    initialPageParam: '' as string,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    refetchInterval: 5_000,
  });
  const items = list.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <div className="deliveries" data-testid="deliveries">
      <h3>{t('triggers.deliveries')}</h3>
      {list.isPending ? <Loading /> : null}
      <ErrorNote error={list.error} />
      {list.isSuccess && !items.length ? (
        <EmptyState>{t('triggers.deliveries.empty', { header: WebhookHeaders.secret })}</EmptyState>
      ) : null}
      {items.length ? (
        <table className="list compact" aria-label={t('triggers.deliveries')}>
          <thead>
            <tr>
              <th scope="col">{t('triggers.delivery.accepted')}</th>
              <th scope="col">{t('tasks.state')}</th>
              <th scope="col">{t('tasks.duration')}</th>
              <th scope="col">{t('tasks.task')}</th>
            </tr>
          </thead>
          <tbody>
            {items.map((d) => (
              <tr key={d.id}>
                <td>
                  {formatTime(d.acceptedAt, lang)}
                  {d.idempotencyKey ? <div className="sub">{t('triggers.delivery.eventId')}</div> : null}
                </td>
                <td>
                  <Badge tone={DELIVERY_TONE[d.state]}>{d.state.toLowerCase()}</Badge>
                  {d.error ? <div className="error-text">{d.error}</div> : null}
                </td>
                <td>{d.durationMs === null ? '—' : formatDuration(d.durationMs)}</td>
                <td>{d.taskId ? <Link to="/tasks">{d.taskId.slice(0, 8)}</Link> : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {list.hasNextPage ? (
        <button type="button" onClick={() => void list.fetchNextPage()} disabled={list.isFetchingNextPage}>
          {t('common.more')}
        </button>
      ) : null}
    </div>
  );
}

/** Webhook triggers: create (secret shown once), rotate (new secret once), delivery audit, delete. */
export function Webhooks() {
  const { t, lang } = useI18n();
  const { can } = useAuth();
  const queries = useQueryClient();
  const workflows = useWorkflows();
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<{ title: string; secret: string; url: string } | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const list = useQuery({
    queryKey: webhooksKey,
    queryFn: ({ signal }) => call(Routes.triggerList, { signal }),
  });
  const items = list.data?.items ?? [];
  const canEdit = can('agent:task:submit');
  const refresh = () => queries.invalidateQueries({ queryKey: webhooksKey });
  const newButton = canEdit ? (
    <button type="button" className="primary" onClick={() => setCreating(true)}>
      {t('triggers.webhook.new')}
    </button>
  ) : null;

  return (
    <section aria-label={t('triggers.webhooks')}>
      <PageHeader level={2} title={t('triggers.webhooks')} actions={newButton} />
      {list.isPending ? <Loading /> : null}
      <ErrorNote error={list.error} />
      {list.isSuccess && !items.length ? (
        <EmptyState action={newButton}>{t('triggers.webhooks.empty')}</EmptyState>
      ) : null}
      <ul className="cards">
        {items.map((w) => (
          <li key={w.id} className="card" data-trigger-id={w.id}>
            <div className="card-head">
              <div>
                <strong>{workflowName(workflows.data, w.workflowId)}</strong>{' '}
                <Badge tone={w.status === 'active' ? 'ok' : 'bad'}>{t(`triggers.status.${w.status}`)}</Badge>{' '}
                {w.requireSignature ? <Badge tone="info">{t('triggers.webhook.signed')}</Badge> : null}
                <div className="sub">
                  <code>{absolute(w.url)}</code> <CopyButton text={absolute(w.url)} />
                </div>
                <div className="sub">
                  {w.permissionMode} · {t('runs.created')} {formatTime(w.createdAt, lang)}
                  {w.rotatedAt ? ` · ${t('triggers.rotated', { at: formatTime(w.rotatedAt, lang) })}` : ''}
                </div>
              </div>
              <div className="actions">
                <button
                  type="button"
                  aria-expanded={open === w.id}
                  onClick={() => setOpen(open === w.id ? null : w.id)}
                >
                  {t('triggers.deliveries')}
                </button>
                {canEdit ? (
                  <>
                    <ConfirmButton
                      label={t('triggers.rotate')}
                      title={t('triggers.rotate')}
                      body={<p>{t('triggers.rotate.body')}</p>}
                      confirmLabel={t('triggers.rotate')}
                      danger={false}
                      onConfirm={async () => {
                        const r = await call(Routes.triggerRotate, { params: { id: w.id } });
                        setSecret({ title: t('triggers.rotate.done'), secret: r.secret, url: w.url });
                        await refresh();
                      }}
                    />
                    <ConfirmButton
                      label={t('common.delete')}
                      title={t('triggers.webhook.deleteTitle')}
                      body={<p>{t('triggers.webhook.deleteBody')}</p>}
                      confirmLabel={t('common.delete')}
                      onConfirm={async () => {
                        await call(Routes.triggerDelete, { params: { id: w.id } });
                        await refresh();
                      }}
                    />
                  </>
                ) : null}
              </div>
            </div>
            {Object.keys(w.inputs).length ? (
              <details>
                <summary>{t('triggers.inputs')}</summary>
                <pre className="json-inline">{JSON.stringify(w.inputs, null, 2)}</pre>
              </details>
            ) : null}
            {open === w.id ? <Deliveries trigger={w} /> : null}
          </li>
        ))}
      </ul>
      {creating ? (
        <WebhookDialog
          workflows={workflows.data ?? []}
          onClose={() => setCreating(false)}
          onCreated={(s, url) => {
            setCreating(false);
            setSecret({ title: t('triggers.webhook.created'), secret: s, url });
            void refresh();
          }}
        />
      ) : null}
      {secret ? <SecretOnce {...secret} onClose={() => setSecret(null)} /> : null}
    </section>
  );
}
