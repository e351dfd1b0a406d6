import { useCallback, useDeferredValue, useMemo, useRef, useState } from 'react';
import { graphOf, type FlowDoc } from './doc';
import {
  canRedo,
  canUndo,
  historyOf,
  record,
  recordFrom,
  redo,
  replace,
  undo,
  type History,
} from './history';

/** What decides whether there is something to save: the graph and the inputs, not selection or sizes measured. */
export function contentKey(doc: FlowDoc): string {
  return JSON.stringify([graphOf(doc), doc.inputSchema]);
}

/**
 * The document being edited with its undo history. `edit` makes an undo step (edits sharing a key
 * fold into one), `live` changes the present without one (selection, a drag in progress), and a
 * gesture (drag, resize) becomes one step from where it began when it ends.
 */
export function useFlowEditor(initial: FlowDoc) {
  const [history, setHistory] = useState<History<FlowDoc>>(() => historyOf(initial));
  const gestureBase = useRef<FlowDoc | undefined>(undefined);
  const [savedKey, setSavedKey] = useState(() => contentKey(initial));
  // Serialising the whole flow on every frame of a drag would cost the drag its frames: the
  // comparison follows the document at React's pace.
  const settled = useDeferredValue(history.present);
  const key = useMemo(() => contentKey(settled), [settled]);

  const edit = useCallback((fn: (doc: FlowDoc) => FlowDoc, foldKey?: string) => {
    setHistory((h) => record(h, fn(h.present), foldKey));
  }, []);
  const live = useCallback(
    (fn: (doc: FlowDoc) => FlowDoc) => setHistory((h) => replace(h, fn(h.present))),
    [],
  );
  const present = useRef(history.present);
  present.current = history.present;
  const beginGesture = useCallback(() => {
    gestureBase.current ??= present.current;
  }, []);
  const endGesture = useCallback(() => {
    const base = gestureBase.current;
    gestureBase.current = undefined;
    if (!base) return;
    const baseKey = contentKey(base);
    setHistory((h) => (baseKey === contentKey(h.present) ? h : recordFrom(h, base, h.present)));
  }, []);
  const reset = useCallback((doc: FlowDoc) => {
    gestureBase.current = undefined;
    setHistory(historyOf(doc));
    setSavedKey(contentKey(doc));
  }, []);
  /** `doc` (what a save sent) is what the server holds now; edits made since stay unsaved. */
  const markSaved = useCallback((doc: FlowDoc) => setSavedKey(contentKey(doc)), []);

  return {
    doc: history.present,
    history,
    dirty: key !== savedKey,
    canUndo: canUndo(history),
    canRedo: canRedo(history),
    undo: useCallback(() => setHistory(undo), []),
    redo: useCallback(() => setHistory(redo), []),
    edit,
    live,
    beginGesture,
    endGesture,
    reset,
    markSaved,
  };
}

export type FlowEditor = ReturnType<typeof useFlowEditor>;
