import { createElement, useCallback, useEffect, useRef, type ReactNode } from 'react';
import { useBlocker, type BlockerFunction } from 'react-router';
import { LeavePrompt } from './LeavePrompt';

/**
 * Guards unsaved edits: while `dirty`, closing or reloading the tab asks through the browser's own
 * prompt (`beforeunload`), and a link or `navigate()` to another page is held until the person
 * chooses in `prompt` (render it). Changing only the query string or hash is not leaving.
 *
 * `release()` lets the next navigation through unasked: call it right before navigating away on
 * purpose in the same event that makes the page clean (e.g. after the first save of a new flow),
 * since `dirty` only takes effect on the next render.
 *
 * Needs a data router (`createBrowserRouter`, as `main.tsx` makes), like `useBlocker`.
 */
export function useLeaveGuard(dirty: boolean): { prompt: ReactNode; release: () => void } {
  const released = useRef(false);

  useEffect(() => {
    if (!dirty) return;
    released.current = false;
    const onBeforeUnload = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      // Older browsers show the prompt only when returnValue is set.
      e.returnValue = '';
    };
    window.addEventListener('beforeunload', onBeforeUnload);
    return () => window.removeEventListener('beforeunload', onBeforeUnload);
  }, [dirty]);

  const shouldBlock = useCallback<BlockerFunction>(
    ({ currentLocation, nextLocation }) => {
      if (!dirty || currentLocation.pathname === nextLocation.pathname) return false;
      if (released.current) {
        released.current = false;
        return false;
      }
      return true;
    },
    [dirty],
  );
  const blocker = useBlocker(shouldBlock);
  const release = useCallback(() => {
    released.current = true;
  }, []);

  const prompt =
    blocker.state === 'blocked'
      ? createElement(LeavePrompt, { onStay: () => blocker.reset(), onLeave: () => blocker.proceed() })
      : null;
  return { prompt, release };
}
