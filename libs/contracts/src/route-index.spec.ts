import { routeIndexOf, Routes } from './http';

describe('the route index (what a client needs to call a route)', () => {
  it('holds every route with its method, path and media types, and no schema', () => {
    const index = routeIndexOf(Routes);
    expect(Object.keys(index)).toEqual(Object.keys(Routes));
    for (const [name, def] of Object.entries(Routes)) {
      const ref = index[name as keyof typeof Routes];
      expect(ref).toEqual({
        method: def.method,
        path: def.path,
        ...('produces' in def ? { produces: def.produces } : {}),
        ...('consumes' in def ? { consumes: def.consumes } : {}),
      });
    }
    // Plain data: it survives JSON unchanged (the console's build inlines it that way).
    expect(JSON.parse(JSON.stringify(index))).toEqual(index);
    expect(index.runGet).toEqual({ method: 'GET', path: '/api/agent/runs/{runId}' });
  });
});
