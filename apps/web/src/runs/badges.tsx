import type { RunStatus } from '@switchyard/contracts';
import { useI18n } from '../i18n/i18n';
import { Badge } from '../ui/bits';
import type { NodeStatus } from './model';

const RUN_TONE: Record<RunStatus, string> = {
  planning: 'info',
  awaiting_plan_approval: 'wait',
  running: 'run',
  awaiting_step_approval: 'wait',
  completed: 'ok',
  failed: 'bad',
  cancelled: 'muted',
  interrupted: 'warn',
};

export function RunStatusBadge({ status }: { status: RunStatus }) {
  const { t } = useI18n();
  return (
    <Badge tone={RUN_TONE[status]} title={status}>
      {t(`status.${status}`)}
    </Badge>
  );
}

export const NODE_TONE: Record<NodeStatus, string> = {
  queued: 'muted',
  awaiting_approval: 'wait',
  running: 'run',
  completed: 'ok',
  failed: 'bad',
  cancelled: 'muted',
  pinned: 'info',
};
