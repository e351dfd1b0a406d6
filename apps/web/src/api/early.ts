/**
 * The reads a page needs before it can draw, sent as soon as the document arrives.
 *
 * The console's main bundle takes a while to evaluate on a slow machine, and until it has, no
 * query runs: a run page used to ask for its run only after the whole bundle had loaded, and then
 * waited for the answer with nothing else to do. `boot.ts`, a tiny first script, sends these reads
 * while the bundle evaluates; the client's `request` then takes the answer in flight instead of
 * asking again (see `takeEarly`).
 */

import { routePath, Routes } from './routes';

const TOKEN_KEY = 'switchyard.token';

/** The API token of this tab: session storage, so it goes when the tab does. */
export const tokenStore = {
  get(): string | null {
    return sessionStorage.getItem(TOKEN_KEY);
  },
  set(token: string): void {
    sessionStorage.setItem(TOKEN_KEY, token);
  },
  clear(): void {
    sessionStorage.removeItem(TOKEN_KEY);
  },
};

const RUN_PATH = /^\/runs\/([0-9a-f-]{36})$/;

/** The run a page's path shows (`/runs/{id}`), if it is a run page. */
export function runIdOfPath(path: string): string | undefined {
  return RUN_PATH.exec(path)?.[1];
}

/** What the page at `path` reads first: who is signed in (every page), and a run page's run. */
export function earlyReadsOf(path: string): string[] {
  const runId = runIdOfPath(path);
  return [routePath(Routes.me), ...(runId ? [routePath(Routes.runGet, { runId })] : [])];
}

/** An answer older than this is not taken: the page asks again. */
const MAX_AGE_MS = 10_000;

interface EarlyRead {
  readonly token: string;
  readonly sentAt: number;
  readonly response: Promise<Response>;
}

const inFlight = new Map<string, EarlyRead>();

/** Sends the GETs the page at `path` reads first, as the signed-in token (none when signed out). */
export function startEarlyReads(path: string): void {
  const token = tokenStore.get();
  if (!token) return;
  for (const url of earlyReadsOf(path)) {
    const response = fetch(url, { headers: { accept: 'application/json', 'x-switchyard-token': token } });
    // A read nobody takes (the page changed its mind) must not report an unhandled rejection.
    response.catch(() => undefined);
    inFlight.set(url, { token, sentAt: performance.now(), response });
  }
}

/**
 * The early answer to a GET of `url` sent with `token`, at most once: undefined when none was
 * sent, it was sent with another token, or it is too old to stand for a fresh read.
 */
export function takeEarly(url: string, token: string | null): Promise<Response> | undefined {
  const read = inFlight.get(url);
  if (!read) return undefined;
  inFlight.delete(url);
  if (read.token !== token || performance.now() - read.sentAt > MAX_AGE_MS) return undefined;
  return read.response;
}
