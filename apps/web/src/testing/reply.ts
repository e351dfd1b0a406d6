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
