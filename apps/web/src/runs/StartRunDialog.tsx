import { useState, type FormEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import type { PermissionMode } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { call } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { ErrorNote, FieldErrors } from '../ui/bits';
import { Modal } from '../ui/Modal';
import { PermissionModeSelect } from './PermissionModeSelect';
import { PlanEditor, usePlanCheck } from './PlanEditor';

const EXAMPLE = JSON.stringify(
  { steps: [{ id: 'hello', tool: 'wait', description: 'say hello', arguments: { ms: 0, value: 'hello' } }] },
  null,
  2,
);

/** Start a run from a goal (the model plans; tokens stream on the run page) or from a pasted plan. */
export default function StartRunDialog({
  onClose,
  onStarted,
}: {
  onClose: () => void;
  onStarted: (runId: string) => void;
}) {
  const { t } = useI18n();
  const [mode, setMode] = useState<'goal' | 'plan'>('goal');
  const [goal, setGoal] = useState('');
  const [plan, setPlan] = useState(EXAMPLE);
  const [planApproval, setPlanApproval] = useState(true);
  const [permissionMode, setPermissionMode] = useState<PermissionMode>('ask');
  const check = usePlanCheck(mode === 'plan' ? plan : '');
  const start = useMutation({
    mutationFn: () =>
      call(Routes.runStart, {
        body: {
          goal: mode === 'goal' ? goal : goal || 'supplied plan',
          config: { planApproval, permissionMode },
          ...(mode === 'plan' ? { workflow: JSON.parse(plan) as unknown } : {}),
        },
      }),
    onSuccess: (r) => onStarted(r.runId),
  });
  const blocked = mode === 'goal' ? !goal.trim() : check.state !== 'checked' || !check.result.ok;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!blocked) start.mutate();
  };
  return (
    <Modal title={t('runs.start.title')} onClose={onClose} wide>
      <form onSubmit={submit} className="form">
        <div role="tablist" className="tabs">
          <button type="button" role="tab" aria-selected={mode === 'goal'} onClick={() => setMode('goal')}>
            {t('runs.start.fromGoal')}
          </button>
          <button type="button" role="tab" aria-selected={mode === 'plan'} onClick={() => setMode('plan')}>
            {t('runs.start.fromPlan')}
          </button>
        </div>
        <label htmlFor="goal">{t('runs.start.goal')}</label>
        <textarea
          id="goal"
          rows={mode === 'goal' ? 4 : 2}
          value={goal}
          onChange={(e) => setGoal(e.target.value)}
        />
        <FieldErrors error={start.error} path="goal" />
        {mode === 'plan' ? (
          <>
            <PlanEditor value={plan} onChange={setPlan} label={t('runs.start.plan')} />
            <FieldErrors error={start.error} path="workflow" />
          </>
        ) : null}
        <div className="row">
          <label className="check">
            <input
              type="checkbox"
              checked={planApproval}
              onChange={(e) => setPlanApproval(e.target.checked)}
            />
            {t('runs.start.planApproval')}
          </label>
          <PermissionModeSelect value={permissionMode} onChange={setPermissionMode} />
        </div>
        <ErrorNote error={start.error} />
        <div className="actions">
          <button type="button" onClick={onClose}>
            {t('common.cancel')}
          </button>
          <button type="submit" className="primary" disabled={blocked || start.isPending}>
            {t('runs.start.submit')}
          </button>
        </div>
      </form>
    </Modal>
  );
}
