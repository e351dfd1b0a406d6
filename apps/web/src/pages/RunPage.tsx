import { Suspense, useCallback, useDeferredValue, useEffect, useRef, useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { RESUMABLE_RUN_STATUSES, type RunEvent } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { useAuth } from '../api/auth';
import { call } from '../api/client';
import { inboxKey } from '../api/inbox';
import { useI18n } from '../i18n/i18n';
import { useRunStream } from '../live/run-stream';
import { RunStatusBadge } from '../runs/badges';
import { EventLog } from '../runs/EventLog';
import { FileGrants } from '../runs/FileGrants';
import { PlanGate, StepGates } from '../runs/Gates';
import { InputRequestForm } from '../elicitation/InputRequestForm';
import { applyEvent, copyView, FINISHED, nextView, touchedSteps, viewOf, type RunView } from '../runs/model';
import { RewindDialog } from '../runs/RewindDialog';
import { StepList } from '../runs/StepList';
import { useCatalog } from '../runs/catalog';
import { ErrorNote, JsonView, Loading, PageHeader } from '../ui/bits';
import { DagView } from '../runs/prefetch';

// The run page always draws its plan: fetch that code as soon as the page's own is here.
void DagView.preload();

/**
 * One run, live: the plan as a DAG, the gates waiting for a person, each step's result and the
 * event log. The view folds the stored history, then the stream from the last event it holds.
 */
const NO_EVENTS: RunEvent[] = [];

export default function RunPage() {
  const { runId = '' } = useParams();
  // One instance per run: no view, stream, selection or dialog of another run carries over.
  return <RunScreen key={runId} runId={runId} />;
}

function RunScreen({ runId }: { runId: string }) {
  const { t } = useI18n();
  const { can } = useAuth();
  const navigate = useNavigate();
  const queries = useQueryClient();
  const detail = useQuery({
    queryKey: ['run', runId],
    queryFn: () => call(Routes.runGet, { params: { runId } }),
    // The stream keeps the view current; the detail is the starting point.
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  });
  const catalog = useCatalog();
  const [view, setView] = useState<RunView | undefined>();
  const [events, setEvents] = useState<RunEvent[]>([]);
  // The log is below the plan and steps: it draws after them, in renders React may interrupt, so
  // neither a page's first drawing nor a streaming frame waits for a long log (the first drawing
  // starts from an empty log: without an initial value the first render draws the whole of it).
  const logEvents = useDeferredValue(events, NO_EVENTS);
  const [selected, setSelected] = useState<string | undefined>();
  const [rewinding, setRewinding] = useState(false);
  const live = useRef<RunView | undefined>(undefined);
  const pending = useRef<RunEvent[]>([]);
  /** Steps changed since the last drawn frame (null: all of them). */
  const dirty = useRef<Set<string> | null>(new Set());
  const shown = useRef<RunView | undefined>(undefined);
  const frame = useRef<number | undefined>(undefined);
  const [startSeq, setStartSeq] = useState<number | undefined>();

  // The stored history becomes the view in the render that first has it (an update during render:
  // React renders again before committing), not in an effect after a commit and a frame of
  // "loading" on a page whose data was already here.
  if (detail.data && view === undefined) {
    const v = viewOf(detail.data);
    live.current = v;
    shown.current = copyView(v);
    setView(shown.current);
    setEvents(detail.data.events);
    setStartSeq(v.lastSeq);
  }

  useEffect(
    () => () => {
      live.current = undefined;
      if (frame.current !== undefined) cancelAnimationFrame(frame.current);
    },
    [],
  );

  // Events arrive in bursts (hundreds a second): fold them at once, draw once per frame.
  const onEvent = useCallback(
    (e: RunEvent) => {
      const v = live.current;
      if (!v || !applyEvent(v, e)) return;
      pending.current.push(e);
      const touched = touchedSteps(e);
      if (touched === null) dirty.current = null;
      else touched.forEach((id) => dirty.current?.add(id));
      if (frame.current !== undefined) return;
      frame.current = requestAnimationFrame(() => {
        frame.current = undefined;
        const batch = pending.current.splice(0);
        shown.current = nextView(v, shown.current, dirty.current);
        dirty.current = new Set();
        setView(shown.current);
        setEvents((old) => [...old, ...batch]);
        if (
          batch.some(
            (x) =>
              x.type.endsWith('approval_requested') ||
              x.type.endsWith('approved') ||
              x.type.startsWith('step_input_') ||
              FINISHED.has(v.status),
          )
        ) {
          void queries.invalidateQueries({ queryKey: inboxKey });
          void queries.invalidateQueries({ queryKey: ['runs'] });
        }
      });
    },
    [queries],
  );
  // A finished run's stream is closed by the server; resuming the run here opens it again.
  const [wake, setWake] = useState(0);
  const stream = useRunStream(runId, startSeq, onEvent, {
    finished: view !== undefined && FINISHED.has(view.status),
    wake,
  });

  const control = useMutation({
    mutationFn: async (action: 'cancel' | 'resume' | 'fork') => {
      if (action === 'cancel') return call(Routes.runCancel, { params: { runId } });
      if (action === 'resume') return call(Routes.runResume, { params: { runId } });
      return call(Routes.runFork, { params: { runId } });
    },
    onSuccess: (reply, action) => {
      if (action === 'resume') setWake((n) => n + 1);
      if (action === 'fork' && 'runId' in reply) void navigate(`/runs/${reply.runId}`);
    },
  });

  if (detail.isPending) return <Loading />;
  if (detail.error) return <ErrorNote error={detail.error} />;
  if (!view) return <Loading />;

  const steps = [...view.steps.values()];
  const effects = new Map((catalog.data ?? []).map((tool) => [tool.name, tool.effect]));
  for (const s of steps) s.effect ??= effects.get(s.tool);
  const finished = FINISHED.has(view.status);
  const selectedStep = selected ? view.steps.get(selected) : undefined;

  return (
    <section className="run-page">
      <PageHeader
        title={
          <>
            {view.goal || t('run.title')} <RunStatusBadge status={view.status} />
          </>
        }
        actions={
          <>
            <span className={`stream-state ${stream}`} data-testid="stream-state">
              {stream === 'open'
                ? t('common.live')
                : stream === 'reconnecting'
                  ? t('common.reconnecting')
                  : ''}
            </span>
            {!finished && can('agent:run:cancel') ? (
              <button
                type="button"
                className="danger"
                onClick={() => control.mutate('cancel')}
                disabled={control.isPending}
              >
                {t('run.cancel')}
              </button>
            ) : null}
            {RESUMABLE_RUN_STATUSES.has(view.status) && can('agent:run:start') ? (
              <button type="button" onClick={() => control.mutate('resume')} disabled={control.isPending}>
                {t('run.resume')}
              </button>
            ) : null}
            {finished && can('agent:run:start') ? (
              <>
                <button type="button" onClick={() => control.mutate('fork')} disabled={control.isPending}>
                  {t('run.fork')}
                </button>
                <button type="button" onClick={() => setRewinding(true)} disabled={!steps.length}>
                  {t('run.rewind')}
                </button>
              </>
            ) : null}
          </>
        }
      />
      <ErrorNote error={control.error} />
      {view.error ? (
        <div className="error-note" role="alert" data-testid="run-error" data-code={view.error.code}>
          <strong>
            {t('run.error')} <code className="code-tag">{view.error.code}</code>
          </strong>
          <div>{view.error.message}</div>
        </div>
      ) : null}
      {view.status === 'completed' ? (
        <div className="card result" data-testid="run-result">
          <h2>{t('run.result')}</h2>
          {view.summary ? <p>{view.summary}</p> : null}
          <JsonView value={view.result} label={t('run.result')} />
        </div>
      ) : null}
      {view.planGate && view.plan ? <PlanGate view={view} config={detail.data.config} /> : null}
      <StepGates view={view} />
      {[...view.inputs.values()].map((r) => (
        <InputRequestForm
          key={r.id}
          request={r}
          heading={r.stepId ? <strong>{t('input.step', { step: r.stepId })} </strong> : null}
        />
      ))}
      {!view.plan ? (
        <div className="card planning">
          <h2>{view.status === 'planning' ? t('run.planning') : t('run.noPlan')}</h2>
          {view.planText ? (
            <pre className="tokens" data-testid="plan-tokens">
              {view.planText}
            </pre>
          ) : null}
        </div>
      ) : (
        <div className="run-grid">
          <div className="card dag-card">
            <h2>{t('run.plan')}</h2>
            <Suspense fallback={<Loading />}>
              <DagView steps={steps} selected={selected} onSelect={setSelected} />
            </Suspense>
          </div>
          <StepList steps={steps} selected={selectedStep?.id} onSelect={setSelected} />
        </div>
      )}
      <FileGrants files={view.files} />
      <EventLog events={logEvents} />
      {rewinding ? (
        <RewindDialog
          runId={runId}
          steps={steps}
          onClose={() => setRewinding(false)}
          onDone={(next) => {
            setRewinding(false);
            void navigate(`/runs/${next}`);
          }}
        />
      ) : null}
    </section>
  );
}
