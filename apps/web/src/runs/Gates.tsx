import { lazy, Suspense, useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import type { PermissionMode } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { call } from '../api/client';
import { useAuth } from '../api/auth';
import { useI18n } from '../i18n/i18n';
import { Badge, codeKey, ErrorNote, JsonView, Loading } from '../ui/bits';
import type { RunView } from './model';

// The editor brings the plan validator (Ajv): loaded when a person starts editing.
const PlanGateEditor = lazy(() => import('./PlanEditor'));

const DECISION_TONE = { allow: 'ok', ask: 'wait', deny: 'bad' } as const;

/**
 * The plan gate: the whole plan with each step's effect and what the permission rules would decide
 * for it; approve as is, edit and approve (checked as you type, the server checks again), or cancel.
 */
export function PlanGate({ view, config }: { view: RunView; config: Record<string, unknown> }) {
  const { t } = useI18n();
  const { can } = useAuth();
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(() => JSON.stringify(view.plan, null, 2));
  const mode = (config['permissionMode'] as PermissionMode | undefined) ?? 'ask';
  const steps = view.plan?.steps ?? [];
  // One request for the whole plan: a request per step took every connection the tab has.
  const calls = steps.map((s) => ({ tool: s.tool, arguments: s.arguments as Record<string, unknown> }));
  const decisions = useQuery({
    queryKey: ['evaluate', calls, mode],
    queryFn: () => call(Routes.permissionsEvaluateMany, { body: { calls, permissionMode: mode } }),
    staleTime: 30_000,
    enabled: calls.length > 0 && can('settings:permissions:read'),
  });
  const approve = useMutation({
    mutationFn: (edited: boolean) =>
      call(Routes.runApprove, {
        params: { runId: view.runId },
        ...(edited ? { body: JSON.parse(text) as unknown } : {}),
      }),
    onSuccess: () => setEditing(false),
  });
  const cancel = useMutation({ mutationFn: () => call(Routes.runCancel, { params: { runId: view.runId } }) });
  const canApprove = can('agent:run:approve');
  return (
    <div className="card gate" data-testid="plan-gate">
      <h2>
        {t('run.gate.plan')} <span className="sub">({steps.length})</span>
      </h2>
      {/* Bounded: a long plan scrolls inside the gate, its buttons stay in view under it, and the
          page below does not move by the whole table's height when the gate closes. */}
      <div className="gate-steps" tabIndex={0} role="region" aria-label={t('run.steps')}>
        <table className="list compact">
          <thead>
            <tr>
              <th scope="col">{t('run.steps')}</th>
              <th scope="col">{t('run.tool')}</th>
              <th scope="col">{t('run.effect')}</th>
              <th scope="col">{t('run.decision')}</th>
            </tr>
          </thead>
          <tbody>
            {steps.map((s, i) => {
              const d = decisions.data?.items[i];
              const step = view.steps.get(s.id);
              return (
                <tr key={s.id} data-step-id={s.id}>
                  <td>
                    <strong>{s.id}</strong>
                    {s.description ? <div className="sub">{s.description}</div> : null}
                  </td>
                  <td>
                    <code>{s.tool}</code>
                  </td>
                  <td>
                    {step?.effect ? (
                      <span className={`badge effect-${step.effect}`}>{step.effect}</span>
                    ) : null}
                  </td>
                  <td>
                    {d && 'error' in d ? (
                      <>
                        <Badge tone="bad" title={t(codeKey(d.error.code) ?? 'error.code.internal')}>
                          {d.error.code}
                        </Badge>
                        <div className="sub">{d.error.message}</div>
                      </>
                    ) : d ? (
                      <>
                        <Badge tone={DECISION_TONE[d.decision]} title={d.reason}>
                          {d.decision}
                        </Badge>
                        <div className="sub">{d.rule ?? d.hook ?? d.floor ?? d.reason}</div>
                      </>
                    ) : decisions.isFetching ? (
                      <span className="sub" aria-busy="true">
                        {t('common.loading')}
                      </span>
                    ) : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <ErrorNote error={approve.error ?? cancel.error ?? decisions.error} />
      {canApprove ? (
        <div className="actions">
          {editing ? (
            <Suspense fallback={<Loading />}>
              <PlanGateEditor
                text={text}
                onChange={setText}
                label={t('run.editPlan')}
                approveLabel={t('run.approveEdited')}
                busy={approve.isPending}
                onApprove={() => approve.mutate(true)}
              />
            </Suspense>
          ) : (
            <>
              <button
                type="button"
                className="primary"
                disabled={approve.isPending}
                onClick={() => approve.mutate(false)}
              >
                {t('run.approve')}
              </button>
              <button type="button" onClick={() => setEditing(true)}>
                {t('run.editPlan')}
              </button>
            </>
          )}
          <button
            type="button"
            className="danger"
            disabled={cancel.isPending}
            onClick={() => cancel.mutate()}
          >
            {t('run.cancel')}
          </button>
        </div>
      ) : null}
    </div>
  );
}

/** Each open step gate: the call's arguments, the rule or hook that asked, release or cancel. */
export function StepGates({ view }: { view: RunView }) {
  const { t } = useI18n();
  const { can } = useAuth();
  const release = useMutation({
    mutationFn: (stepId: string) =>
      call(Routes.runApprove, { params: { runId: view.runId }, query: { stepId } }),
  });
  const gates = [...view.steps.values()].filter((s) => s.status === 'awaiting_approval');
  if (!gates.length) return null;
  return (
    <>
      {gates.map((s) => (
        <div className="card gate" key={s.id} data-testid="step-gate" data-step-id={s.id}>
          <h2>{t('run.gate.step', { step: s.id })}</h2>
          <p>
            <code>{s.tool}</code>{' '}
            {s.effect ? <span className={`badge effect-${s.effect}`}>{s.effect}</span> : null}
          </p>
          <h3>{t('run.gate.reason')}</h3>
          <p>
            {s.reason}
            {s.permission?.rule ? <code className="code-tag">{s.permission.rule}</code> : null}
            {s.permission?.hook ? <code className="code-tag">{s.permission.hook}</code> : null}
            {s.permission?.floor ? <code className="code-tag">{s.permission.floor}</code> : null}
          </p>
          <h3>{t('run.gate.arguments')}</h3>
          <JsonView value={s.arguments} label={t('run.gate.arguments')} />
          <ErrorNote error={release.error} />
          {can('agent:run:approve') ? (
            <div className="actions">
              <button
                type="button"
                className="primary"
                disabled={release.isPending}
                onClick={() => release.mutate(s.id)}
              >
                {t('run.gate.release')}
              </button>
            </div>
          ) : null}
        </div>
      ))}
    </>
  );
}
