import { Inject } from '@nestjs/common';
import { z } from 'zod';
import { AppError, type ToolResult } from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import { APP_CONFIG } from '@switchyard/server-runtime';
import { BuiltinTool, textOutput, type BuiltinToolHandler, type ToolRunContext } from '../builtin-tool';
import { AddressPolicy, fetchVetted, type VettedResponse } from '@switchyard/server-runtime';

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
    const res = await fetchVetted(this.policy, args.url, {
      method: args.method,
      headers: args.headers ?? {},
      body: args.body,
      maxBytes,
      overflow: 'truncate',
      timeoutMs,
      signal: ctx.signal,
      userAgent: 'switchyard-web-fetch/0.1',
    });
    return this.render(res);
  }

  private render(res: VettedResponse): ToolResult {
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
