import { Agent, request, type IncomingHttpHeaders } from 'node:http';

export interface ApiResponse {
  readonly status: number;
  /** Content-Type of the answer. */
  readonly type: string;
  /** The parsed JSON body, or `{ text }` when the body is not JSON. */
  readonly json: Record<string, unknown>;
  readonly text: string;
  readonly headers: Headers;
}

export interface ApiRequest {
  readonly token?: string;
  /** Sent as JSON. */
  readonly body?: unknown;
  /** Sent as is, with a JSON content type (for malformed-body tests). */
  readonly raw?: string;
  readonly headers?: Record<string, string>;
}

/** A node:http response's headers as fetch's `Headers` (a repeated header keeps every value). */
export function headersOf(raw: IncomingHttpHeaders): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(raw))
    for (const one of Array.isArray(v) ? v : v === undefined ? [] : [v]) h.append(k, one);
  return h;
}

/** The headers and body a request sends: the token, and JSON with its content type. */
function outgoing(req: ApiRequest): { headers: Record<string, string>; payload: string | undefined } {
  const headers: Record<string, string> = { ...(req.headers ?? {}) };
  if (req.token) headers['x-switchyard-token'] = req.token;
  const payload = req.raw ?? (req.body !== undefined ? JSON.stringify(req.body) : undefined);
  if (payload !== undefined) headers['content-type'] = 'application/json';
  return { headers, payload };
}

/** An answer's body as JSON, or `{ text }` when it is not JSON. */
function parsed(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { text };
  }
}

/** One HTTP call to the API as a client would make it, answer read whatever its type. */
export async function api(
  baseUrl: string,
  method: string,
  path: string,
  req: ApiRequest = {},
): Promise<ApiResponse> {
  const { headers, payload } = outgoing(req);
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    ...(payload !== undefined ? { body: payload } : {}),
  });
  const text = await res.text();
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    json: parsed(text),
    text,
    headers: res.headers,
  };
}

/**
 * The same POST sent both ways through the gateway: plain (its raw-server fast path) and with a fresh
 * Idempotency-Key (which always takes the framework's route). For tests that prove the two answer alike.
 */
export async function postBothWays(
  baseUrl: string,
  path: string,
  raw: string,
  token: string | undefined,
): Promise<{ fast: ApiResponse; framework: ApiResponse }> {
  const send = (key?: string) =>
    api(baseUrl, 'POST', path, {
      raw,
      ...(token ? { token } : {}),
      ...(key ? { headers: { 'idempotency-key': key } } : {}),
    });
  const fast = await send();
  const framework = await send(`k-${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`);
  return { fast, framework };
}

/**
 * `api` over a keep-alive `http.Agent` instead of `fetch`, for benchmark clients: undici's fetch
 * costs several times the CPU of `http.request` per call (0.3 vs 0.04 ms here), and a benchmark's
 * client shares the machine's cores with the stack it measures. Same request and answer shapes.
 */
export class KeepAliveApi {
  private readonly agent: Agent;

  constructor(
    private readonly baseUrl: string,
    maxSockets = 64,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets });
  }

  call(method: string, path: string, req: ApiRequest = {}): Promise<ApiResponse> {
    const { headers, payload } = outgoing(req);
    return this.send(method, path, headers, payload, true);
  }

  /**
   * One attempt; `again` allows one more when a kept-alive socket turns out closed (the server
   * closed it idle just as the request went out: it never saw the request, so sending it again
   * cannot do it twice).
   */
  private send(
    method: string,
    path: string,
    headers: Record<string, string>,
    payload: string | undefined,
    again: boolean,
  ): Promise<ApiResponse> {
    return new Promise((resolve, reject) => {
      const sent = request(`${this.baseUrl}${path}`, { method, headers, agent: this.agent }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('error', reject);
        res.on('end', () => {
          const raw = res.headers;
          resolve({
            status: res.statusCode ?? 0,
            type: String(raw['content-type'] ?? ''),
            json: parsed(text),
            text,
            get headers() {
              return headersOf(raw);
            },
          });
        });
      });
      sent.on('error', (err: NodeJS.ErrnoException) => {
        if (again && sent.reusedSocket && err.code === 'ECONNRESET')
          resolve(this.send(method, path, headers, payload, false));
        else reject(err);
      });
      sent.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
