import { Routes } from './http';
import { buildOpenApi } from './openapi';
import { RunEventBody } from './run-events';
import { PERMISSIONS, ROLE_PERMISSIONS, roleAllows } from './identity';

describe('OpenAPI document', () => {
  const doc = buildOpenApi(Routes, { title: 'Switchyard API', version: 'test' }) as {
    openapi: string;
    paths: Record<
      string,
      Record<
        string,
        {
          operationId: string;
          responses: Record<string, { content: Record<string, unknown> }>;
          requestBody?: unknown;
          security?: unknown[];
        }
      >
    >;
    components: { schemas: Record<string, unknown> };
  };

  it("is OpenAPI 3.1 with every route of the table, under /api, the seed's /mcp/tool or the MCP endpoint /mcp", () => {
    expect(doc.openapi).toBe('3.1.0');
    const ops = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(ops.sort()).toEqual(
      Object.values(Routes)
        .map((r) => `${r.method} ${r.path}`)
        .sort(),
    );
    for (const path of Object.keys(doc.paths)) expect(path).toMatch(/^\/(api|mcp\/tool|mcp$)(\/|$)/);
  });

  it('documents problem responses for each declared error and for internal errors', () => {
    const create = doc.paths['/api/tokens']?.['post'];
    expect(create?.responses['201']).toBeDefined();
    for (const status of ['400', '401', '403', '500']) {
      expect(create?.responses[status]?.content['application/problem+json']).toBeDefined();
    }
    expect(doc.components.schemas['Problem']).toMatchObject({ type: 'object' });
  });

  it('describes request bodies from the zod schemas', () => {
    const body = doc.paths['/api/tokens']?.['post']?.requestBody as {
      content: {
        'application/json': {
          schema: { properties: Record<string, unknown>; additionalProperties: boolean };
        };
      };
    };
    expect(Object.keys(body.content['application/json'].schema.properties).sort()).toEqual([
      'expiresInDays',
      'label',
      'owner',
      'role',
    ]);
    expect(body.content['application/json'].schema.additionalProperties).toBe(false);
  });

  it('describes the run stream frame by frame from the event catalog', () => {
    const sse = doc.paths['/api/agent/stream']?.['get']?.responses['200']?.content['text/event-stream'] as {
      schema: { type: string };
      itemSchema: {
        properties: {
          data: {
            contentSchema: {
              oneOf: Array<{ properties: { type: { const: string }; data: { required?: string[] } } }>;
            };
          };
        };
      };
    };
    expect(sse.schema.type).toBe('string');
    const frames = sse.itemSchema.properties.data.contentSchema.oneOf;
    expect(frames.map((f) => f.properties.type.const).sort()).toEqual(
      RunEventBody.options.map((o) => o.shape.type.value).sort(),
    );
    const error = frames.find((f) => f.properties.type.const === 'error');
    expect(error?.properties.data.required).toEqual(expect.arrayContaining(['message', 'code']));
  });

  it('describes the owner feed: run and task frames (and the empty resync), ?token= accepted', () => {
    const op = doc.paths['/api/events']?.['get'];
    const sse = op?.responses['200']?.content['text/event-stream'] as {
      itemSchema: { properties: { data: { contentSchema: { anyOf: Array<Record<string, unknown>> } } } };
    };
    const shapes = sse.itemSchema.properties.data.contentSchema.anyOf;
    const kinds = JSON.stringify(shapes);
    expect(kinds).toContain('"const":"run"');
    expect(kinds).toContain('"const":"task"');
    expect(shapes.some((s) => s['type'] === 'object' && s['additionalProperties'] === false)).toBe(true);
    expect(op?.security).toEqual(expect.arrayContaining([{ queryToken: [] }]));
    expect(doc.paths['/api/agent/inbox']?.['get']?.responses['200']).toBeDefined();
  });

  it('documents the OAuth callback page a browser gets, for the answer and for refusals', () => {
    const callback = doc.paths['/api/mcp/oauth/callback']?.['get'];
    expect(Object.keys(callback?.responses['200']?.content ?? {}).sort()).toEqual([
      'application/json',
      'text/html',
    ]);
    expect(Object.keys(callback?.responses['403']?.content ?? {}).sort()).toEqual([
      'application/problem+json',
      'text/html',
    ]);
    expect(Object.keys(doc.paths['/api/tokens']?.['post']?.responses['201']?.content ?? {})).toEqual([
      'application/json',
    ]);
  });

  it('marks public routes as needing no token', () => {
    expect(doc.paths['/api/health']?.['get']?.security).toEqual([]);
  });
});

describe('roles', () => {
  it('gives admins every permission and users a strict subset without system/admin ones', () => {
    expect(ROLE_PERMISSIONS.admin.size).toBe(PERMISSIONS.length);
    expect(roleAllows('user', 'identity:token:create')).toBe(true);
    expect(roleAllows('user', 'system:service:query')).toBe(false);
    expect(roleAllows('user', 'identity:token:admin')).toBe(false);
    expect(roleAllows('user', 'mcp:tool:edit')).toBe(false);
    expect(roleAllows('user', 'mcp:tool:list')).toBe(true);
  });
});
