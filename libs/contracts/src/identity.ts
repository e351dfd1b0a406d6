import { z } from 'zod';

export const Role = z.enum(['admin', 'user']);
export type Role = z.infer<typeof Role>;

/**
 * Permission strings in `<area>:<entity>:<action>` form. Later features add theirs here; a route
 * names the one it needs and the gateway's guard checks it against the caller's role.
 */
export const PERMISSIONS = [
  'system:service:query',
  'identity:owner:list',
  'identity:token:create',
  'identity:token:list',
  'identity:token:revoke',
  'identity:token:admin',
  'mcp:tool:list',
  'mcp:tool:query',
  'mcp:tool:add',
  'mcp:tool:edit',
  'mcp:tool:remove',
  'mcp:tool:test',
  'mcp:tool:export',
  'agent:agent:list',
  'agent:agent:add',
  'agent:agent:edit',
  'agent:agent:remove',
  'agent:run:start',
  'agent:run:list',
  'agent:run:approve',
  'agent:run:cancel',
  'agent:chat:use',
  'settings:permissions:read',
  'settings:permissions:edit',
  'settings:hooks:read',
  'settings:hooks:edit',
  'settings:memory:read',
  'settings:memory:edit',
  'workflow:list',
  'workflow:edit',
  'agent:task:list',
  'agent:task:submit',
  'plugin:plugin:manage',
  'plugin:hook:list',
  'plugin:hook:trust',
  'mcp:market:browse',
  'mcp:market:edit',
  'mcp:server:use',
  'settings:mcp:read',
  'settings:mcp:edit',
] as const;
export const Permission = z.enum(PERMISSIONS);
export type Permission = z.infer<typeof Permission>;

const ADMIN_ONLY: ReadonlySet<Permission> = new Set<Permission>([
  'system:service:query',
  'identity:owner:list',
  'identity:token:admin',
  'mcp:tool:add',
  'mcp:tool:edit',
  'mcp:tool:remove',
  'mcp:tool:test',
  'mcp:tool:export',
  'plugin:plugin:manage',
  'plugin:hook:list',
  'plugin:hook:trust',
  'mcp:market:browse',
  'mcp:market:edit',
]);

export const ROLE_PERMISSIONS: Readonly<Record<Role, ReadonlySet<Permission>>> = {
  admin: new Set(PERMISSIONS),
  user: new Set(PERMISSIONS.filter((p) => !ADMIN_ONLY.has(p))),
};

export function roleAllows(role: Role, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].has(permission);
}

/** Owner names double as CLI arguments and log fields: keep them boring. */
export const OwnerName = z
  .string()
  .min(1)
  .max(64)
  .regex(
    /^[a-z0-9][a-z0-9._-]*$/,
    'lowercase letters, digits, ".", "_" or "-", starting with a letter or digit',
  );

export const Owner = z.object({
  id: z.string().uuid(),
  name: OwnerName,
  role: Role,
  createdAt: z.string(),
});
export type Owner = z.infer<typeof Owner>;

export const Me = z.object({
  owner: Owner,
  permissions: z.array(Permission),
  tokenId: z.string().uuid(),
});
export type Me = z.infer<typeof Me>;

export const CreateTokenBody = z
  .object({
    owner: OwnerName.optional().describe(
      'owner to create the token for; defaults to the caller. Others need identity:token:admin',
    ),
    role: Role.optional().describe('role of a new owner (created when missing); admins only; default "user"'),
    label: z.string().min(1).max(100).optional(),
    expiresInDays: z.number().int().min(1).max(3650).optional(),
  })
  .strict();
export type CreateTokenBody = z.infer<typeof CreateTokenBody>;

export const ApiTokenInfo = z.object({
  id: z.string().uuid(),
  ownerId: z.string().uuid(),
  ownerName: z.string(),
  label: z.string().nullable(),
  prefix: z.string().describe('first characters of the token, to recognise it'),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
  expiresAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
});
export type ApiTokenInfo = z.infer<typeof ApiTokenInfo>;

export const CreatedToken = z.object({
  token: z.string().describe('the secret; shown once, stored only as a SHA-256 digest'),
  info: ApiTokenInfo,
});
export type CreatedToken = z.infer<typeof CreatedToken>;

export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(200).optional().describe("opaque cursor from the previous page's nextCursor"),
});
export type PageQuery = z.infer<typeof PageQuery>;

export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), nextCursor: z.string().nullable() });
}

/** Numbered pages (management lists, where a total and page numbers help the UI). */
export const NumberedPageQuery = z.object({
  pageNum: z.coerce.number().int().min(1).default(1),
  pageSize: z.coerce.number().int().min(1).max(200).default(20),
});

export function numberedPageOf<T extends z.ZodType>(item: T) {
  return z.object({
    items: z.array(item),
    total: z.number().int(),
    pageNum: z.number().int(),
    pageSize: z.number().int(),
  });
}

export const TokenPage = pageOf(ApiTokenInfo);
export type TokenPage = z.infer<typeof TokenPage>;

export const TokenListQuery = PageQuery.extend({
  owner: OwnerName.optional().describe("list another owner's tokens (identity:token:admin)"),
});
export type TokenListQuery = z.infer<typeof TokenListQuery>;

export const IdParam = z.object({ id: z.string().uuid() });
export type IdParam = z.infer<typeof IdParam>;

/** Tokens look like `sy_<43 base64url chars>`; the prefix lets scanners spot leaked ones. */
export const TOKEN_PREFIX = 'sy_';
