import { z } from 'zod';
import { httpStatusFor } from './errors';
import { MAX_JSON_DEPTH } from './input-text';
import { Problem, RouteDef } from './http';

type JsonSchema = Record<string, unknown>;

function schemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
  delete json['$schema'];
  return json;
}

function parametersOf(shape: z.ZodObject | undefined, where: 'path' | 'query'): JsonSchema[] {
  if (!shape) return [];
  const json = schemaOf(shape, 'input');
  const properties = (json['properties'] ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json['required'] as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, schema]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    ...(typeof schema['description'] === 'string' ? { description: schema['description'] } : {}),
    schema,
  }));
}

/**
 * An SSE response: the body is text, and each frame carries one JSON value of `frame` as its data.
 * `itemSchema` is how OpenAPI 3.2 describes the frames of a sequential media type; 3.1 tools that do
 * not know it still see a string.
 */
function eventStreamOf(frame: z.ZodType): JsonSchema {
  return {
    schema: {
      type: 'string',
      description:
        'server-sent events: `id: <frame id>`, `event: <type>`, `data: <the event as JSON>` per frame',
    },
    itemSchema: {
      type: 'object',
      required: ['id', 'event', 'data'],
      properties: {
        id: {
          type: 'string',
          description:
            "the frame's id (a run's sequence number; `<epoch>-<n>` on /api/events): send it back as Last-Event-ID",
        },
        event: { type: 'string', description: "the event's type (`run`, `task` or `resync` on /api/events)" },
        data: {
          type: 'string',
          contentMediaType: 'application/json',
          contentSchema: schemaOf(frame, 'output'),
        },
      },
    },
  };
}

/** The page a browser gets from a route that negotiates `text/html` (`alsoProduces`). */
const htmlPage: JsonSchema = {
  schema: {
    type: 'string',
    contentMediaType: 'text/html',
    description: 'a page for a person, sent when the request prefers text/html (a browser); JSON otherwise',
  },
};

/** Builds the OpenAPI 3.1 document from the route table: the schemas the gateway validates with. */
export function buildOpenApi(
  routes: Record<string, RouteDef>,
  info: { title: string; version: string },
): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  const problemRef = { $ref: '#/components/schemas/Problem' };
  for (const [operationId, r] of Object.entries(routes)) {
    const responses: Record<string, JsonSchema> = {
      [String(r.status ?? 200)]: {
        description: 'success',
        content: {
          [r.produces ?? 'application/json']:
            r.produces === 'text/event-stream'
              ? eventStreamOf(r.response)
              : r.produces === 'application/octet-stream'
                ? { schema: { type: 'string', contentMediaType: 'application/octet-stream' } }
                : { schema: schemaOf(r.response, 'output') },
          ...(r.alsoProduces ? { [r.alsoProduces]: htmlPage } : {}),
        },
      },
    };
    const codes = new Set(r.errors);
    codes.add('internal');
    for (const code of codes) {
      const status = String(httpStatusFor(code));
      const existing = responses[status];
      const codesHere = existing ? `${String(existing['description'])}, ${code}` : `problem: ${code}`;
      responses[status] = {
        description: codesHere,
        content: {
          'application/problem+json': { schema: problemRef },
          ...(r.alsoProduces ? { [r.alsoProduces]: htmlPage } : {}),
        },
      };
    }
    const operation: JsonSchema = {
      operationId,
      summary: r.summary,
      tags: [r.tag],
      parameters: [
        ...parametersOf(r.params, 'path'),
        ...parametersOf(r.query, 'query'),
        ...(r.idempotencyKey
          ? [
              {
                name: 'Idempotency-Key',
                in: 'header',
                required: false,
                description:
                  'a repeat with the same key and body within 24 h answers the first result; the same key with another body is 409',
                schema: { type: 'string', minLength: 1, maxLength: 255 },
              },
            ]
          : []),
      ],
      responses,
    };
    if (r.auth === 'public') operation['security'] = [];
    else if (typeof r.auth === 'object') {
      operation['x-switchyard-permission'] =
        'permission' in r.auth ? r.auth.permission : { anyOf: r.auth.anyOf };
    }
    if (r.queryToken) operation['security'] = [{ token: [] }, { bearer: [] }, { queryToken: [] }];
    if (r.consumes) {
      operation['requestBody'] = {
        required: true,
        content: { [r.consumes]: { schema: { type: 'string', contentMediaType: r.consumes } } },
      };
    }
    if (r.body) {
      operation['requestBody'] = {
        required: true,
        content: { 'application/json': { schema: schemaOf(r.body, 'input') } },
      };
    }
    (paths[r.path] ??= {})[r.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      ...info,
      description:
        'Switchyard REST API. Authenticate with `X-Switchyard-Token: <token>` or `Authorization: Bearer <token>`. ' +
        'Errors are `application/problem+json` with a stable `code`. ' +
        `Every body, query and path value is refused with 400 \`validation_failed\` (and the path) when a string ` +
        `holds U+0000 or an unpaired surrogate, or when objects and arrays nest deeper than ${MAX_JSON_DEPTH} levels.`,
    },
    servers: [{ url: '/' }],
    security: [{ token: [] }, { bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        token: { type: 'apiKey', in: 'header', name: 'X-Switchyard-Token' },
        bearer: { type: 'http', scheme: 'bearer' },
        queryToken: { type: 'apiKey', in: 'query', name: 'token' },
      },
      schemas: { Problem: schemaOf(Problem, 'output') },
    },
  };
}
