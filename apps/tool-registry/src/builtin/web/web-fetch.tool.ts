import { Inject } from '@nestjs/common';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { z } from 'zod';
import { AppError, type ToolResult } from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import { APP_CONFIG } from '@switchyard/server-runtime';
import { BuiltinTool, textOutput, type BuiltinToolHandler, type ToolRunContext } from '../builtin-tool';
import { AddressPolicy, type VettedTarget } from '@switchyard/server-runtime';

const MAX_REDIRECTS = 5;
const TEXTUAL = /^(text\/|application\/(json|xml|javascript|x-www-form-urlencoded|[a-z.+-]*\+(json|xml)))/i;
/** Headers a caller may not set: they belong to the transport or would smuggle identity. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'upgrade',
  'proxy-authorization',
  'te',
  'trailer',
]);

const WebFetchParams = z
  .object({
    url: z.string().min(1).max(8192),
    method: z.enum(['GET', 'POST']).default('GET'),
    headers: z
      .record(
        z.string().regex(/^[A-Za-z0-9-]{1,100}$/, 'header names are letters, digits and dashes'),
        z.string().max(8192),
      )
      .optional(),
    body: z
      .string()
      .max(1024 * 1024)
      .optional()
      .describe('request body for POST'),
  })
  .strict();

interface FetchedResponse {
  readonly url: URL;
  readonly status: number;
  readonly contentType: string;
  readonly body: Buffer;
  readonly truncated: boolean;
  readonly redirects: number;
}

/**
 * GET or POST a URL. Every hop (redirects too) is vetted by the address policy and connected to
 * the vetted address; the body is cut at WEB_FETCH_MAX_BYTES and the whole call at
 * WEB_FETCH_TIMEOUT_MS (or the caller's deadline, if sooner).
 */
@BuiltinTool({
  name: 'web_fetch',
  description:
    'Fetch a public http(s) URL with GET or POST and return status, content type and the (text) body. Redirects are followed ' +
    'up to 5 times and re-checked; private and loopback addresses are refused; the body is cut at a size limit.',
  params: WebFetchParams,
  effect: 'external',
  idempotent: false,
  outputSchema: textOutput(
    'three lines (status and final URL, "content-type: …", "bytes: …"), a blank line, then the body as text',
    ['200 https://example.com/\ncontent-type: text/html; charset=UTF-8\nbytes: 1256\n\n<!doctype html>…'],
  ),
})
export class WebFetchTool implements BuiltinToolHandler<typeof WebFetchParams> {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly policy: AddressPolicy,
  ) {}

  async run(args: z.infer<typeof WebFetchParams>, ctx: ToolRunContext): Promise<ToolResult> {
    for (const name of Object.keys(args.headers ?? {})) {
      if (RESERVED_HEADERS.has(name.toLowerCase()))
        throw new AppError('validation_failed', `header ${name} cannot be set`);
    }
    if (args.body !== undefined && args.method !== 'POST')
      throw new AppError('validation_failed', 'a body needs method POST');
    const { timeoutMs, maxBytes } = this.config.tools.webFetch;
    const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
    let target = await this.policy.vet(args.url);
    let method: 'GET' | 'POST' = args.method;
    let body = args.body;
    for (let hop = 0; ; hop++) {
      const res = await this.once(target, method, args.headers ?? {}, body, maxBytes, signal).catch(
        (err: Error) => {
          if (signal.aborted)
            throw new AppError(
              'timeout',
              `fetching ${target.url.href} did not finish within ${timeoutMs} ms`,
            );
          throw new AppError('tool_failed', `fetching ${target.url.href} failed: ${err.message}`);
        },
      );
      if ('location' in res) {
        if (hop >= MAX_REDIRECTS)
          throw new AppError('tool_failed', `more than ${MAX_REDIRECTS} redirects from ${args.url}`);
        target = await this.policy.vet(new URL(res.location, target.url));
        // 303 (and 301/302 after POST, as browsers do) continue as GET without the body.
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
        }
        continue;
      }
      return this.render({ ...res, redirects: hop });
    }
  }

  private once(
    target: VettedTarget,
    method: string,
    headers: Record<string, string>,
    body: string | undefined,
    maxBytes: number,
    signal: AbortSignal,
  ): Promise<Omit<FetchedResponse, 'redirects'> | { status: number; location: string }> {
    // Connect to the address that was vetted, whatever DNS says by now.
    const lookup: LookupFunction = (_host, options, callback) => {
      if ((options as { all?: boolean }).all)
        callback(null, [{ address: target.address, family: target.family }]);
      else callback(null, target.address, target.family);
    };
    const request = target.url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = request(
        target.url,
        {
          method,
          lookup,
          signal,
          headers: {
            'user-agent': 'switchyard-web-fetch/0.1',
            accept: '*/*',
            ...headers,
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
            const room = maxBytes - size;
            if (chunk.length > room) {
              chunks.push(chunk.subarray(0, room));
              size = maxBytes;
              truncated = true;
              res.destroy();
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

  private render(res: FetchedResponse): ToolResult {
    const head = [
      `${res.status} ${res.url.href}${res.redirects ? ` (after ${res.redirects} redirect${res.redirects > 1 ? 's' : ''})` : ''}`,
      `content-type: ${res.contentType || 'unknown'}`,
      `bytes: ${res.body.length}${res.truncated ? ` (cut at ${this.config.tools.webFetch.maxBytes})` : ''}`,
    ].join('\n');
    const textual = TEXTUAL.test(res.contentType) || (!res.contentType && !res.body.includes(0));
    const shown = textual
      ? res.body.toString('utf8')
      : `[binary content of ${res.body.length} bytes not shown]`;
    return {
      content: [{ type: 'text', text: `${head}\n\n${shown}` }],
      isError: res.status >= 400,
      truncated: res.truncated,
    };
  }
}

export const WEB_TOOLS = [WebFetchTool] as const;
