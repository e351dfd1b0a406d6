import { useInfiniteQuery, useQuery, useQueryClient } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { FINISHED_TASK_STATES, TaskState } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { useAuth } from '../api/auth';
import { call } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { EmptyState, ErrorNote, Loading, PageHeader } from '../ui/bits';
import { useNow } from '../ui/useNow';
import { CapacityPanel } from '../tasks/Capacity';
import { TaskRow } from '../tasks/TaskRows';
import { useWorkflows, workflowName } from '../triggers/workflows';

const PAGE = 50;
/** While the page is open it refreshes this often (the owner feed also invalidates ['tasks']). */
const REFRESH_MS = 2_000;

/** Background tasks: queue pressure and limits, the seed's warnings, and the owner's tasks. */
export default function TasksPage() {
  const { t } = useI18n();
  const { can } = useAuth();
  const queries = useQueryClient();
  const [params, setParams] = useSearchParams();
  const stateParam = params.get('state');
  const state = TaskState.safeParse(stateParam).success ? (stateParam as TaskState) : undefined;

  const capacity = useQuery({
    queryKey: ['tasks', 'capacity'],
    queryFn: ({ signal }) => call(Routes.taskCapacity, { signal }),
    refetchInterval: REFRESH_MS,
  });
  const tasks = useInfiniteQuery({
    queryKey: ['tasks', 'list', { state }],
    queryFn: ({ pageParam, signal }) =>
      call(Routes.taskList, {
        query: { limit: PAGE, ...(state ? { state } : {}), ...(pageParam ? { cursor: pageParam } : {}) },
        signal,
      }),
    initialPageParam: '' as string,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    refetchInterval: REFRESH_MS,
  });
  const items = tasks.data?.pages.flatMap((p) => p.items) ?? [];
  const anyActive = items.some((x) => !FINISHED_TASK_STATES.has(x.state));
  const now = useNow(anyActive);
  const canKill = can('agent:task:submit');
  const workflows = useWorkflows();

  return (
    <section>
      <PageHeader
        title={t('tasks.title')}
        actions={
          <button type="button" onClick={() => void queries.invalidateQueries({ queryKey: ['tasks'] })}>
            {t('common.refresh')}
          </button>
        }
      />
      {capacity.isPending ? <Loading /> : null}
      <ErrorNote error={capacity.error} />
      {capacity.data ? <CapacityPanel capacity={capacity.data} /> : null}

      <h2>{t('tasks.list')}</h2>
      <div className="filters">
        <label className="inline">
          {t('tasks.stateFilter')}{' '}
          <select
            value={state ?? ''}
            onChange={(e) => {
              const next = new URLSearchParams(params);
              if (e.target.value) next.set('state', e.target.value);
              else next.delete('state');
              setParams(next, { replace: true });
            }}
          >
            <option value="">{t('common.all')}</option>
            {TaskState.options.map((s) => (
              <option key={s} value={s}>
                {t(`tasks.state.${s}`)}
              </option>
            ))}
          </select>
        </label>
      </div>
      {tasks.isPending ? <Loading /> : null}
      <ErrorNote error={tasks.error} />
      {tasks.isSuccess && !items.length ? (
        <EmptyState>{state ? t('tasks.emptyFiltered') : t('tasks.empty')}</EmptyState>
      ) : null}
      {items.length ? (
        <div className="table-wrap">
          <table className="list tasks" aria-label={t('tasks.list')}>
            <thead>
              <tr>
                <th scope="col">{t('tasks.task')}</th>
                <th scope="col">{t('tasks.priority')}</th>
                <th scope="col">{t('tasks.state')}</th>
                <th scope="col">{t('tasks.wait')}</th>
                <th scope="col">{t('tasks.duration')}</th>
                <th scope="col">{t('runs.created')}</th>
                <th scope="col">
                  <span className="visually-hidden">{t('common.actions')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {items.map((task) => (
                <TaskRow
                  key={task.id}
                  task={task}
                  fetchedAt={tasks.dataUpdatedAt}
                  now={now}
                  canKill={canKill}
                  workflow={workflowName(workflows.data, task.workflowId)}
                  onKill={async () => {
                    await call(Routes.taskKill, { params: { id: task.id } });
                    await queries.invalidateQueries({ queryKey: ['tasks'] });
                  }}
                />
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {tasks.hasNextPage ? (
        <button type="button" onClick={() => void tasks.fetchNextPage()} disabled={tasks.isFetchingNextPage}>
          {t('common.more')}
        </button>
      ) : null}
    </section>
  );
}
