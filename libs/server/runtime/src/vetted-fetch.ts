import { request as httpRequest, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { AppError } from '@switchyard/contracts';
import type { AddressPolicy, VettedTarget } from './address-policy';

export const MAX_REDIRECTS = 5;

export interface VettedFetchOptions {
  readonly method?: 'GET' | 'POST';
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | undefined;
  readonly maxBytes: number;
  /** `truncate` keeps the first maxBytes and says so; `refuse` fails the fetch. */
  readonly overflow: 'truncate' | 'refuse';
  readonly timeoutMs: number;
  /** The caller's own deadline or cancel, on top of timeoutMs. */
  readonly signal?: AbortSignal;
  readonly userAgent: string;
}

export interface VettedResponse {
  readonly url: URL;
  readonly status: number;
  readonly contentType: string;
  readonly body: Buffer;
  readonly truncated: boolean;
  readonly redirects: number;
}

type Hop = Omit<VettedResponse, 'redirects'> | { readonly status: number; readonly location: string };

/**
 * Fetches a URL the address policy allows. Every hop (redirects too, at most five) is vetted and
 * connected to the vetted address, whatever DNS answers by then, so rebinding between check and
 * connect does not work. 303 (and 301/302 after POST, as browsers do) continue as GET without a body.
 */
export async function fetchVetted(
  policy: AddressPolicy,
  url: string | URL,
  opts: VettedFetchOptions,
): Promise<VettedResponse> {
  const signal = opts.signal
    ? AbortSignal.any([opts.signal, AbortSignal.timeout(opts.timeoutMs)])
    : AbortSignal.timeout(opts.timeoutMs);
  let target = await policy.vet(url);
  let method = opts.method ?? 'GET';
  let body = opts.body;
  for (let hop = 0; ; hop++) {
    const res = await once(target, method, body, opts, signal).catch((err: Error) => {
      if (err instanceof AppError) throw err;
      if (signal.aborted)
        throw new AppError(
          'timeout',
          `fetching ${target.url.href} did not finish within ${opts.timeoutMs} ms`,
        );
      throw new AppError('tool_failed', `fetching ${target.url.href} failed: ${err.message}`);
    });
    if (!('location' in res)) return { ...res, redirects: hop };
    if (hop >= MAX_REDIRECTS)
      throw new AppError('tool_failed', `more than ${MAX_REDIRECTS} redirects from ${String(url)}`);
    target = await policy.vet(new URL(res.location, target.url));
    if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
      method = 'GET';
      body = undefined;
    }
  }
}

/** One request to the vetted address; a redirect is answered, not followed. */
/** A request function and a DNS lookup that connect to the vetted address, whatever DNS says by now. */
function pinned(target: VettedTarget): { lookup: LookupFunction; send: typeof httpRequest } {
  const lookup: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all)
      callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  return { lookup, send: target.url.protocol === 'https:' ? httpsRequest : httpRequest };
}

function once(
  target: VettedTarget,
  method: string,
  body: string | undefined,
  opts: VettedFetchOptions,
  signal: AbortSignal,
): Promise<Hop> {
  const { lookup, send } = pinned(target);
  return new Promise((resolve, reject) => {
    const req = send(
      target.url,
      {
        method,
        lookup,
        signal,
        headers: {
          'user-agent': opts.userAgent,
          accept: '*/*',
          ...opts.headers,
          ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}),
        },
      },
      (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (status >= 300 && status < 400 && location) {
          res.resume();
          resolve({ status, location });
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        const finish = () =>
          resolve({
            url: target.url,
            status,
            contentType: String(res.headers['content-type'] ?? ''),
            body: Buffer.concat(chunks),
            truncated,
          });
        res.on('data', (chunk: Buffer) => {
          if (truncated) return;
          const room = opts.maxBytes - size;
          if (chunk.length > room) {
            res.destroy();
            if (opts.overflow === 'refuse') {
              reject(new AppError('tool_failed', `${target.url.href} is larger than ${opts.maxBytes} bytes`));
              return;
            }
            chunks.push(chunk.subarray(0, room));
            size = opts.maxBytes;
            truncated = true;
            finish();
            return;
          }
          chunks.push(chunk);
          size += chunk.length;
        });
        res.on('end', finish);
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The fetch signature clients such as the MCP SDK accept. */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** Statuses whose response has no body by definition (the Response constructor refuses one). */
const NULL_BODY = new Set([101, 204, 205, 304]);

function requestBody(
  body: RequestInit['body'],
  headers: Record<string, string>,
): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) {
    headers['content-type'] ??= 'application/x-www-form-urlencoded;charset=UTF-8';
    return body.toString();
  }
  if (body instanceof Uint8Array) return Buffer.from(body);
  if (body instanceof ArrayBuffer) return Buffer.from(new Uint8Array(body));
  throw new AppError('tool_failed', 'a vetted fetch sends string, form or byte bodies only');
}

/**
 * fetchVetted for clients that take a fetch function (the MCP SDK's transport and OAuth client):
 * every request is vetted by the policy and connected to the vetted address. A redirect is answered,
 * not followed: the SDK follows same-origin ones through this function again, so each hop is vetted.
 * The body streams, so Server-Sent Events work.
 */
export function vettedFetchLike(policy: AddressPolicy): FetchLike {
  return async (url, init = {}) => {
    const target = await policy.vet(url);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, key) => (headers[key] = value));
    const body = requestBody(init.body, headers);
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const { lookup, send } = pinned(target);
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = send(target.url, {
        method: init.method ?? 'GET',
        headers,
        lookup,
        ...(init.signal ? { signal: init.signal } : {}),
      });
      req.on('response', resolve);
      req.on('error', reject);
      req.end(body);
    });
    const out = new Headers();
    for (const [key, value] of Object.entries(res.headers)) {
      if (value === undefined || key === 'set-cookie') continue;
      out.set(key, Array.isArray(value) ? value.join(', ') : value);
    }
    const status = res.statusCode ?? 0;
    if (NULL_BODY.has(status) || init.method === 'HEAD') {
      res.resume();
      return new Response(null, { status, headers: out });
    }
    return new Response(Readable.toWeb(res) as ReadableStream<Uint8Array>, { status, headers: out });
  };
}
