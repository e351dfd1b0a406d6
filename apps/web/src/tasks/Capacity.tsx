import type { TaskCapacity, TaskPriority } from '@switchyard/contracts';
import { useI18n, type Translate } from '../i18n/i18n';
import type { MessageKey } from '../i18n/en';
import { formatDuration } from '../ui/bits';

/** The seed's threshold: a task waiting this long means its class is aging. */
export const AGING_MS = 30_000;
const CLASSES: readonly TaskPriority[] = ['interactive', 'normal', 'batch'];

export interface Bound {
  readonly key: MessageKey;
  readonly waiting: number;
  readonly limit: number;
}

/** Every queue bound the capacity route reports, with what currently waits against it. */
export function boundsOf(c: TaskCapacity): Bound[] {
  const q = c.queuedByPriority;
  const o = c.owner.queuedByPriority;
  return [
    { key: 'tasks.bound.global', waiting: c.queued, limit: c.globalQueueLimit },
    { key: 'tasks.bound.batchGlobal', waiting: q.batch, limit: c.batchGlobalLimit },
    {
      key: 'tasks.bound.nonInteractiveGlobal',
      waiting: q.normal + q.batch,
      limit: c.nonInteractiveGlobalLimit,
    },
    { key: 'tasks.bound.owner', waiting: c.owner.queued, limit: c.owner.ownerQueueLimit },
    { key: 'tasks.bound.batchOwner', waiting: o.batch, limit: c.owner.batchOwnerLimit },
    {
      key: 'tasks.bound.nonInteractiveOwner',
      waiting: o.normal + o.batch,
      limit: c.owner.nonInteractiveOwnerLimit,
    },
  ];
}

const OLDEST: Record<TaskPriority, keyof TaskCapacity> = {
  interactive: 'oldestInteractiveQueueWaitMs',
  normal: 'oldestNormalQueueWaitMs',
  batch: 'oldestBatchQueueWaitMs',
};

/** The seed's warnings: a queue bound that is full, a class whose oldest task waited ≥ 30 s. */
export function warningsOf(c: TaskCapacity, t: Translate): string[] {
  const out: string[] = [];
  if (c.saturated) out.push(t('tasks.warn.saturated'));
  for (const b of boundsOf(c)) {
    if (b.limit > 0 && b.waiting >= b.limit)
      out.push(t('tasks.warn.full', { bound: t(b.key), n: b.waiting, limit: b.limit }));
  }
  for (const cls of CLASSES) {
    const wait = c[OLDEST[cls]] as number | null;
    if (wait !== null && wait >= AGING_MS)
      out.push(t('tasks.warn.aging', { cls: t(`tasks.class.${cls}`), s: Math.floor(wait / 1000) }));
  }
  return out;
}

function Meter({ label, value, max }: { label: string; value: number; max: number }) {
  const pct = max > 0 ? Math.min(100, Math.round((value / max) * 100)) : value > 0 ? 100 : 0;
  const tone = pct >= 100 ? 'bad' : pct >= 75 ? 'warn' : 'ok';
  return (
    <div className="meter-row">
      <div className="meter-label">
        <span>{label}</span>
        <strong>
          {value} / {max}
        </strong>
      </div>
      <div
        className={`meter meter-${tone}`}
        role="meter"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={max}
        aria-valuenow={value}
      >
        <span style={{ width: `${pct}%` }} />
      </div>
    </div>
  );
}

/** Global and own utilisation, the class mix, every queue bound and the seed's warnings. */
export function CapacityPanel({ capacity: c }: { capacity: TaskCapacity }) {
  const { t } = useI18n();
  const warnings = warningsOf(c, t);
  return (
    <>
      {warnings.length ? (
        <div className="notice warnings" role="status" data-testid="task-warnings">
          <ul>
            {warnings.map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        </div>
      ) : null}
      <div className="capacity-grid">
        <div className="card">
          <h2>{t('tasks.global')}</h2>
          <Meter label={t('tasks.running')} value={c.running} max={c.runningLimit} />
          <Meter label={t('tasks.waiting')} value={c.queued} max={c.globalQueueLimit} />
          <div className="sub">
            {t('tasks.activeOwners', { n: c.activeOwners })}
            {c.oldestQueueWaitMs !== null
              ? ` · ${t('tasks.oldestWait', { d: formatDuration(c.oldestQueueWaitMs) })}`
              : ''}
          </div>
        </div>
        <div className="card">
          <h2>{t('tasks.mine')}</h2>
          <Meter label={t('tasks.waiting')} value={c.owner.queued} max={c.owner.ownerQueueLimit} />
          <div className="sub">
            {t('tasks.ownRunning', { n: c.owner.running })} ·{' '}
            {t('tasks.ownAvailable', { n: c.owner.ownedQueueAvailable })}
          </div>
        </div>
        <div className="card mix-card">
          <h2>{t('tasks.mix')}</h2>
          <div className="table-wrap">
            <table className="list compact mix" aria-label={t('tasks.mix')}>
              <thead>
                <tr>
                  <th scope="col">{t('tasks.priority')}</th>
                  <th scope="col">{t('tasks.waitingAll')}</th>
                  <th scope="col">{t('tasks.waitingMine')}</th>
                  <th scope="col">{t('tasks.oldest')}</th>
                  <th scope="col">{t('tasks.weight')}</th>
                </tr>
              </thead>
              <tbody>
                {CLASSES.map((cls) => {
                  const oldest = c[OLDEST[cls]] as number | null;
                  return (
                    <tr key={cls}>
                      <td>{t(`tasks.class.${cls}`)}</td>
                      <td>{c.queuedByPriority[cls]}</td>
                      <td>{c.owner.queuedByPriority[cls]}</td>
                      <td className={oldest !== null && oldest >= AGING_MS ? 'error-text' : ''}>
                        {oldest === null ? '—' : formatDuration(oldest)}
                      </td>
                      <td>{c.weights[cls]}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </div>
        <div className="card">
          <h2>{t('tasks.queueBound')}</h2>
          {boundsOf(c).map((b) => (
            <Meter key={b.key} label={t(b.key)} value={b.waiting} max={b.limit} />
          ))}
        </div>
      </div>
    </>
  );
}
