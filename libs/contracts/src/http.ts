import { z } from 'zod';
import { ErrorCode, FieldIssue } from './errors';
import {
  Permission,
  CreateTokenBody,
  CreatedToken,
  IdParam,
  Me,
  TokenListQuery,
  TokenPage,
  ApiTokenInfo,
} from './identity';
import { PlatformHealth, ServiceHealth, ServiceNameParam } from './services';
import { ToolCatalog } from './tools';

/** RFC 9457 problem details, with our stable `code`. */
export const Problem = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  code: ErrorCode,
  instance: z.string().optional(),
  correlationId: z.string(),
  errors: z.array(FieldIssue).optional(),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type Problem = z.infer<typeof Problem>;

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * One HTTP route: the gateway registers its handler from this, validates with these schemas and the
 * OpenAPI document is generated from the same object, so the docs cannot drift from the code.
 */
export interface RouteDef {
  readonly method: HttpMethod;
  /** OpenAPI-style path, `{param}` placeholders. */
  readonly path: string;
  readonly summary: string;
  readonly tag: string;
  /** `public` routes need no token. */
  readonly auth: 'public' | { readonly permission: Permission } | 'authenticated';
  /** The SSE stream is the one route that also accepts `?token=` (EventSource cannot set headers). */
  readonly queryToken?: boolean;
  readonly params?: z.ZodObject;
  readonly query?: z.ZodObject;
  readonly body?: z.ZodType;
  readonly response: z.ZodType;
  readonly status?: number;
  readonly errors: readonly ErrorCode[];
}

function route<const R extends RouteDef>(r: R): R {
  return r;
}

export const Routes = {
  health: route({
    method: 'GET',
    path: '/api/health',
    summary: 'Health of every service and of NATS, Postgres and Redis; 503 names what is down',
    tag: 'system',
    auth: 'public',
    response: PlatformHealth,
    errors: ['unavailable'],
  }),
  service: route({
    method: 'GET',
    path: '/api/services/{name}',
    summary: 'Ask one service, over NATS, for its own health and identity',
    tag: 'system',
    auth: { permission: 'system:service:query' },
    params: ServiceNameParam,
    response: ServiceHealth,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'unavailable'],
  }),
  me: route({
    method: 'GET',
    path: '/api/me',
    summary: 'The caller: owner, role and permissions',
    tag: 'identity',
    auth: 'authenticated',
    response: Me,
    errors: ['unauthenticated'],
  }),
  createToken: route({
    method: 'POST',
    path: '/api/tokens',
    summary: 'Create an API token (for yourself, or as admin for any owner, creating the owner if needed)',
    tag: 'identity',
    auth: { permission: 'identity:token:create' },
    body: CreateTokenBody,
    response: CreatedToken,
    status: 201,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found'],
  }),
  listTokens: route({
    method: 'GET',
    path: '/api/tokens',
    summary: 'List API tokens (secrets are never shown again), newest first',
    tag: 'identity',
    auth: { permission: 'identity:token:list' },
    query: TokenListQuery,
    response: TokenPage,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found'],
  }),
  revokeToken: route({
    method: 'DELETE',
    path: '/api/tokens/{id}',
    summary: 'Revoke an API token; it stops working at once on every gateway replica within the cache TTL',
    tag: 'identity',
    auth: { permission: 'identity:token:revoke' },
    params: IdParam,
    response: ApiTokenInfo,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found'],
  }),
  toolCatalog: route({
    method: 'GET',
    path: '/api/agent/tools',
    summary:
      'The tools the caller may orchestrate: name, description, JSON Schema, effect, idempotent, source',
    tag: 'tools',
    auth: { permission: 'mcp:tool:list' },
    response: ToolCatalog,
    errors: ['unauthenticated', 'forbidden', 'unavailable'],
  }),
} as const satisfies Record<string, RouteDef>;
