import type { z } from 'zod';
import {
  Problem,
  type FieldIssue,
  type RouteDef,
  type RouteRef,
  type StoredFile,
} from '@switchyard/contracts';
import { takeEarly, tokenStore } from './early';
import { routePath, Routes } from './routes';

/** What the server said when it refused a request: its stable code, its sentence, and field paths. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors: readonly FieldIssue[] = [],
    readonly correlationId?: string,
    /** The problem's `details` (e.g. which limit a `budget_exceeded` crossed). */
    readonly details?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** The issues reported at `path` (dot-joined, as problem+json gives them) or below it. */
  at(path: string): FieldIssue[] {
    return this.errors.filter((e) => e.path === path || e.path.startsWith(`${path}.`));
  }
}

type Input<S> = S extends z.ZodType ? z.input<S> : never;
export type RouteInput<R extends RouteDef> = (R['params'] extends z.ZodType
  ? { params: Input<R['params']> }
  : { params?: undefined }) &
  (R['query'] extends z.ZodType ? { query?: Input<R['query']> } : { query?: undefined }) &
  (R['body'] extends z.ZodType ? { body?: unknown } : { body?: undefined }) & {
    signal?: AbortSignal;
    headers?: Record<string, string>;
    /** The raw body of an upload route (`consumes`), sent with its own type. */
    upload?: Blob;
  };
export type RouteOutput<R extends RouteDef> = z.output<R['response']>;
/** The route a ref stands for; for a union of refs, the union of their routes. */
export type RouteOf<F extends RouteRef> = F extends RouteRef<infer R> ? R : never;

export { tokenStore };

/** Listeners told when the server refuses the token (expired or revoked): the app signs out. */
const unauthenticated = new Set<() => void>();
export function onUnauthenticated(fn: () => void): () => void {
  unauthenticated.add(fn);
  return () => unauthenticated.delete(fn);
}

async function problemOf(res: Response): Promise<ApiError> {
  return problemFrom(res.status, res.statusText, await res.text().catch(() => ''));
}

/** A refusal's body as an ApiError: problem+json as the server said it, anything else by status. */
function problemFrom(status: number, statusText: string, text: string): ApiError {
  try {
    const p = Problem.safeParse(JSON.parse(text));
    if (p.success)
      return new ApiError(
        status,
        p.data.code,
        p.data.detail,
        p.data.errors ?? [],
        p.data.correlationId,
        p.data.details,
      );
  } catch {
    // not problem+json: a proxy's page or a network failure
  }
  return new ApiError(status, status >= 500 ? 'unavailable' : 'internal', text.slice(0, 300) || statusText);
}

/**
 * Sends one request of the contract table and answers the raw response once it is a 2xx (a stream
 * reads its body as it arrives); a refusal rejects with an ApiError, a network failure with an
 * `unavailable` one.
 */
export async function request<F extends RouteRef>(
  def: F,
  input: RouteInput<RouteOf<F>> = {} as RouteInput<RouteOf<F>>,
): Promise<Response> {
  const token = tokenStore.get();
  const headers: Record<string, string> = { accept: 'application/json', ...(input.headers ?? {}) };
  if (token) headers['x-switchyard-token'] = token;
  const init: RequestInit = { method: def.method, headers };
  if (input.signal) init.signal = input.signal;
  if (input.body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(input.body);
  } else if (input.upload !== undefined) {
    headers['content-type'] = input.upload.type || 'application/octet-stream';
    init.body = input.upload;
  }
  const url = routePath(def, input.params as Record<string, unknown>, input.query as Record<string, unknown>);
  // A read the boot script sent as the page arrived (api/early.ts) is taken in flight.
  const early = def.method === 'GET' && !input.signal && !input.headers ? takeEarly(url, token) : undefined;
  let res: Response;
  try {
    res = await (early ?? fetch(url, init));
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 'unavailable', 'the server cannot be reached; check your connection');
  }
  if (!res.ok) {
    const problem = await problemOf(res);
    if (problem.status === 401 && token) unauthenticated.forEach((fn) => fn());
    throw problem;
  }
  return res;
}

/**
 * Calls one route of the contract table: the path, method and types come from `Routes`, so the
 * client cannot drift from the server. Resolves with the parsed body, rejects with an ApiError.
 */
export async function call<F extends RouteRef>(
  def: F,
  input: RouteInput<RouteOf<F>> = {} as RouteInput<RouteOf<F>>,
): Promise<RouteOutput<RouteOf<F>>> {
  type Out = RouteOutput<RouteOf<F>>;
  const res = await request(def, input);
  if (def.produces === 'text/csv') return (await res.text()) as Out;
  if (res.status === 204) return undefined as Out;
  return (await res.json()) as Out;
}

/** Uploads one file to the caller's files (`POST /api/files`): its bytes as the body, its name in the query. */
export async function uploadFile(file: File, signal?: AbortSignal): Promise<StoredFile> {
  const res = await request(Routes.fileUpload, {
    query: { name: file.name },
    upload: file,
    ...(signal ? { signal } : {}),
  });
  return (await res.json()) as StoredFile;
}

/**
 * Sends an upload route's raw body with XMLHttpRequest, whose upload events say how much has left
 * (fetch cannot): `onProgress(sent, total)` as bytes go out. Answers and refusals as `call` gives them.
 */
export function uploadWithProgress<F extends RouteRef>(
  def: F,
  body: Blob,
  onProgress: (sent: number, total: number) => void,
): Promise<RouteOutput<RouteOf<F>>> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(def.method, routePath(def));
    const token = tokenStore.get();
    xhr.setRequestHeader('accept', 'application/json');
    xhr.setRequestHeader('content-type', body.type || 'application/octet-stream');
    if (token) xhr.setRequestHeader('x-switchyard-token', token);
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : body.size);
    xhr.onerror = () =>
      reject(new ApiError(0, 'unavailable', 'the server cannot be reached; check your connection'));
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        resolve(JSON.parse(xhr.responseText) as RouteOutput<RouteOf<F>>);
        return;
      }
      const problem = problemFrom(xhr.status, xhr.statusText, xhr.responseText);
      if (problem.status === 401 && token) unauthenticated.forEach((fn) => fn());
      reject(problem);
    };
    xhr.send(body);
  });
}
