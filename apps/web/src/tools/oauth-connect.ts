import { useCallback, useEffect, useRef, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import {
  ErrorCode,
  httpStatusFor,
  MCP_OAUTH_MESSAGE,
  McpOAuthPopupMessage,
  type McpToolRecord,
} from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { ApiError, call } from '../api/client';

/** Where Connect stands for the one record being connected (one sign-in at a time). */
export type ConnectState =
  | { readonly phase: 'starting'; readonly id: number }
  /** The provider's page is open in the popup (or, `blocked`, offered as a link for a new tab). */
  | { readonly phase: 'waiting'; readonly id: number; readonly url: string; readonly blocked: boolean }
  | { readonly phase: 'connected'; readonly id: number; readonly name: string; readonly tested: boolean }
  | { readonly phase: 'cancelled'; readonly id: number }
  | { readonly phase: 'failed'; readonly id: number; readonly error: unknown };

export const POPUP_NAME = 'switchyard-oauth';
const POPUP_WIDTH = 520;
const POPUP_HEIGHT = 700;
/** How often the page looks whether the person closed the popup (a browser has no event for it). */
const CLOSED_POLL_MS = 400;

/** A popup centred on this window; null when the browser blocked it. */
export function openPopup(url: string): Window | null {
  const left = Math.round(window.screenX + Math.max(0, (window.outerWidth - POPUP_WIDTH) / 2));
  const top = Math.round(window.screenY + Math.max(0, (window.outerHeight - POPUP_HEIGHT) / 2));
  return window.open(
    url,
    POPUP_NAME,
    `popup=yes,width=${POPUP_WIDTH},height=${POPUP_HEIGHT},left=${left},top=${top}`,
  );
}

/** The callback's refusal as the API client reports refusals (a code it does not know keeps 400). */
function refusal(code: string, detail: string): ApiError {
  const known = ErrorCode.safeParse(code);
  return new ApiError(known.success ? httpStatusFor(known.data) : 400, code, detail);
}

/**
 * Connect for REMOTE records that sign in with OAuth. A click opens a blank popup at once (a popup
 * opened after an await is blocked by browsers), asks the gateway to start, and sends the popup to
 * the provider's page; `{connected: true}` closes it and refreshes. The callback page tells this
 * page by postMessage (only from our own origin) and on a BroadcastChannel (same-origin by
 * construction: a tab opened from the link when the popup was blocked has no opener); either way the
 * records are read again, since they, not the message, are the truth. A popup closed without a
 * message ends the wait: the record is read once more, in case the message was missed.
 */
export function useOAuthConnect(texts: { preparing: string }): {
  state: ConnectState | null;
  connect: (record: McpToolRecord) => void;
  cancel: () => void;
  dismiss: () => void;
} {
  const queries = useQueryClient();
  const [state, setState] = useState<ConnectState | null>(null);
  const popup = useRef<Window | null>(null);
  // The sign-in under way: its record and when it was last connected, to tell a new grant from an old one.
  const pending = useRef<{ id: number; connectedAt: string | null; run: number } | null>(null);
  const runs = useRef(0);

  const refresh = useCallback(async () => {
    await Promise.all([
      queries.invalidateQueries({ queryKey: ['mcp-records'] }),
      queries.invalidateQueries({ queryKey: ['tool-catalog'] }),
    ]);
  }, [queries]);

  const finish = useCallback(
    (next: ConnectState) => {
      pending.current = null;
      if (popup.current && !popup.current.closed) popup.current.close();
      popup.current = null;
      // Connected shows once the list does too, so the row and the message never disagree.
      if (next.phase === 'connected') void refresh().finally(() => setState(next));
      else {
        setState(next);
        void refresh();
      }
    },
    [refresh],
  );

  const received = useCallback(
    (data: unknown) => {
      const m = McpOAuthPopupMessage.safeParse(data);
      if (!m.success) return;
      const p = pending.current;
      if (!p) {
        void refresh(); // another tab's sign-in: the list shows it
        return;
      }
      if (m.data.ok) {
        if (m.data.id !== p.id) return void refresh();
        const tested = queries
          .getQueriesData<{ items: McpToolRecord[] }>({ queryKey: ['mcp-records'] })
          .some(([, page]) => page?.items.some((r) => r.id === p.id && r.tested));
        finish({ phase: 'connected', id: p.id, name: m.data.name, tested });
      } else finish({ phase: 'failed', id: p.id, error: refusal(m.data.code, m.data.detail) });
    },
    [finish, queries, refresh],
  );

  useEffect(() => {
    const onMessage = (e: MessageEvent) => {
      if (e.origin !== window.location.origin) return;
      if ((e.data as { type?: unknown } | null)?.type !== MCP_OAUTH_MESSAGE) return;
      received(e.data);
    };
    window.addEventListener('message', onMessage);
    const channel = typeof BroadcastChannel === 'undefined' ? null : new BroadcastChannel(MCP_OAUTH_MESSAGE);
    if (channel) channel.onmessage = (e: MessageEvent) => received(e.data);
    return () => {
      window.removeEventListener('message', onMessage);
      channel?.close();
    };
  }, [received]);

  // The popup closed without a word: read the record; a new grant means the message was missed.
  useEffect(() => {
    if (state?.phase !== 'waiting' || state.blocked) return;
    const timer = setInterval(() => {
      const p = pending.current;
      if (!p || !popup.current || !popup.current.closed) return;
      clearInterval(timer);
      void call(Routes.mcpToolGet, { params: { id: p.id } })
        .then((r) => {
          if (pending.current?.run !== p.run) return;
          const fresh = r.oauth?.state === 'connected' && r.oauth.connectedAt !== p.connectedAt;
          finish(
            fresh
              ? { phase: 'connected', id: p.id, name: r.name, tested: r.tested }
              : { phase: 'cancelled', id: p.id },
          );
        })
        .catch((error: unknown) => {
          if (pending.current?.run === p.run) finish({ phase: 'failed', id: p.id, error });
        });
    }, CLOSED_POLL_MS);
    return () => clearInterval(timer);
  }, [state, finish]);

  useEffect(
    () => () => {
      if (popup.current && !popup.current.closed) popup.current.close();
    },
    [],
  );

  const connect = useCallback(
    (record: McpToolRecord) => {
      const run = ++runs.current;
      pending.current = { id: record.id, connectedAt: record.oauth?.connectedAt ?? null, run };
      // Client credentials need no page; anything else opens the popup inside the click.
      const needsPerson = record.oauth?.grant !== 'client_credentials';
      let win: Window | null = null;
      if (needsPerson) {
        win = openPopup('about:blank');
        if (win) {
          try {
            win.document.title = record.name;
            win.document.body.textContent = texts.preparing;
          } catch {
            // not ours to write (a named window reused across origins): it is navigated below
          }
        }
      }
      popup.current = win;
      setState({ phase: 'starting', id: record.id });
      call(Routes.mcpToolConnect, { params: { id: record.id } })
        .then((answer) => {
          if (pending.current?.run !== run) return;
          if ('connected' in answer) {
            finish({ phase: 'connected', id: record.id, name: record.name, tested: record.tested });
            return;
          }
          const url = answer.authorizationUrl;
          if (!/^https?:\/\//i.test(url)) {
            finish({
              phase: 'failed',
              id: record.id,
              error: refusal('tool_failed', 'the server answered a sign-in address that is not http(s)'),
            });
            return;
          }
          if (win && win.closed) {
            finish({ phase: 'cancelled', id: record.id }); // closed while the server was asked
            return;
          }
          if (win) win.location.href = url;
          setState({ phase: 'waiting', id: record.id, url, blocked: win === null });
        })
        .catch((error: unknown) => {
          if (pending.current?.run === run) finish({ phase: 'failed', id: record.id, error });
        });
    },
    [finish, texts.preparing],
  );

  const cancel = useCallback(() => {
    const p = pending.current;
    if (p) finish({ phase: 'cancelled', id: p.id });
  }, [finish]);

  const dismiss = useCallback(() => setState(null), []);

  return { state, connect, cancel, dismiss };
}
