import { useCallback, useEffect, useRef, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { RunEvent } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { call } from '../api/client';
import { useRunStream } from '../live/run-stream';
import { applyEvent, copyView, FINISHED, viewOf, type RunView } from '../runs/model';

/**
 * A run followed live for the canvas: its detail first, then its stream, folded into one view per
 * animation frame (a run's events come in bursts).
 */
export function useLiveRun(runId: string | undefined): RunView | undefined {
  const detail = useQuery({
    queryKey: ['run', runId],
    queryFn: () => call(Routes.runGet, { params: { runId: runId as string } }),
    enabled: runId !== undefined,
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  });
  const [view, setView] = useState<RunView | undefined>();
  const [startSeq, setStartSeq] = useState<number | undefined>();
  const live = useRef<RunView | undefined>(undefined);
  const frame = useRef<number | undefined>(undefined);

  useEffect(() => {
    if (!detail.data || live.current?.runId === runId) return;
    const v = viewOf(detail.data);
    live.current = v;
    setView(copyView(v));
    setStartSeq(v.lastSeq);
  }, [detail.data, runId]);

  useEffect(() => {
    if (runId !== undefined) return undefined;
    live.current = undefined;
    setView(undefined);
    setStartSeq(undefined);
    return undefined;
  }, [runId]);

  useEffect(
    () => () => {
      if (frame.current !== undefined) cancelAnimationFrame(frame.current);
    },
    [],
  );

  const onEvent = useCallback((e: RunEvent) => {
    const v = live.current;
    if (!v || !applyEvent(v, e) || frame.current !== undefined) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = undefined;
      setView(copyView(v));
    });
  }, []);
  useRunStream(runId ?? '', runId === undefined ? undefined : startSeq, onEvent, {
    finished: view !== undefined && FINISHED.has(view.status),
  });
  return runId === undefined ? undefined : view;
}
