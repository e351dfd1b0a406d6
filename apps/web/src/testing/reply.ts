import { PERMISSIONS } from '@switchyard/contracts';

/**
 * For component tests that stub `fetch`: a response the API client reads like the server's (JSON,
 * or problem+json for a refusal unless `type` says otherwise).
 */
export function reply(status: number, body: unknown, type?: string) {
  const text = JSON.stringify(body);
  const contentType = type ?? (status >= 400 ? 'application/problem+json' : 'application/json');
  return {
    ok: status >= 200 && status < 300,
    status,
    statusText: String(status),
    headers: { get: (h: string) => (h.toLowerCase() === 'content-type' ? contentType : null) },
    text: () => Promise.resolve(text),
    json: () => Promise.resolve(JSON.parse(text) as unknown),
  };
}

export interface SentRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly body: unknown;
}

/**
 * Stubs `fetch` with a fake server: `answer` gets each request (JSON body parsed) and returns the
 * response, or undefined for a 404 that names the request. Every request is kept, in order.
 */
export function stubFetch(answer: (req: SentRequest) => unknown): SentRequest[] {
  const sent: SentRequest[] = [];
  globalThis.fetch = ((url: string, init?: RequestInit) => {
    const [path = '', qs = ''] = url.split('?');
    const req: SentRequest = {
      method: init?.method ?? 'GET',
      path,
      query: new URLSearchParams(qs),
      body: typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined,
    };
    sent.push(req);
    const res = answer(req) ?? reply(404, { code: 'not_found', detail: `no mock for ${req.method} ${path}` });
    return Promise.resolve(res);
  }) as unknown as typeof fetch;
  return sent;
}

/** `GET /api/me` for a user holding every permission. */
export function meReply(ownerId: string) {
  return reply(200, {
    owner: { id: ownerId, name: 'ada', role: 'user', createdAt: '' },
    permissions: PERMISSIONS,
    tokenId: '00000000-0000-4000-8000-000000000002',
  });
}
