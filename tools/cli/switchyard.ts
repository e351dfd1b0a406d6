import { mkdir, readdir, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { AppError, OwnerName, Role } from '@switchyard/contracts';
import { ConfigError, environment, loadConfig } from '@switchyard/server-config';
import { createPrisma, ensureDatabase, migrate } from '@switchyard/server-db';
import { IdentityRepository } from '@switchyard/server-db-identity';

const USAGE = `usage: npm run switchyard -- <command>

commands:
  migrate                                   create the database if missing and apply migrations
  token create --owner <name> [--role admin|user] [--label <text>] [--expires-in-days <n>]
                                            create the owner if missing, print a new token once
  token list --owner <name>                 list an owner's tokens (never the secrets)
  token revoke <token-id>                   revoke a token
  workspace adopt --owner <name>            move files left at the workspace root (from before
                                            owner areas) into that owner's area

configuration comes from the environment (DATABASE_URL, ...); see .env.example`;

class UsageError extends Error {}

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      owner: { type: 'string' },
      role: { type: 'string' },
      label: { type: 'string' },
      'expires-in-days': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, sub, arg] = positionals;
  if (values.help || !command) {
    process.stdout.write(USAGE + '\n');
    return;
  }
  const config = loadConfig('gateway', environment());
  if (command === 'migrate') {
    const created = await ensureDatabase(config.database.url, config.database.ssl);
    if (created) process.stdout.write(`created database ${new URL(config.database.url).pathname.slice(1)}\n`);
    const result = await migrate(config.database.url, {
      log: (l) => process.stdout.write(l + '\n'),
      ssl: config.database.ssl,
    });
    process.stdout.write(
      `migrations: ${result.applied.length} applied, ${result.alreadyApplied.length} already applied\n`,
    );
    return;
  }
  if (command !== 'token' && command !== 'workspace') throw new UsageError(`unknown command "${command}"`);
  const prisma = createPrisma({
    url: config.database.url,
    ssl: config.database.ssl,
    poolSize: 2,
    applicationName: 'switchyard-cli',
  });
  const identity = new IdentityRepository(prisma);
  try {
    if (command === 'workspace') {
      if (sub !== 'adopt') throw new UsageError(`unknown workspace command "${sub ?? ''}"`);
      const owner = values.owner ? await identity.findOwnerByName(values.owner) : null;
      if (!owner) throw new UsageError('--owner <name> of an existing owner is required');
      await adoptLegacyFiles(config.tools.workspaceDir, owner.id, owner.name);
      return;
    }
    if (sub === 'create') {
      const owner = OwnerName.safeParse(values.owner);
      if (!owner.success)
        throw new UsageError('--owner <name> is required: lowercase letters, digits, ".", "_" or "-"');
      const role = Role.safeParse(values.role ?? 'user');
      if (!role.success) throw new UsageError('--role must be admin or user');
      const days = values['expires-in-days'] === undefined ? undefined : Number(values['expires-in-days']);
      if (days !== undefined && (!Number.isInteger(days) || days < 1 || days > 3650)) {
        throw new UsageError('--expires-in-days must be a whole number from 1 to 3650');
      }
      const ensured = await identity.ensureOwner(owner.data, role.data, values.role !== undefined);
      const { token, info } = await identity.createToken(ensured.owner.id, {
        label: values.label,
        expiresAt: days ? new Date(Date.now() + days * 86_400_000) : undefined,
      });
      process.stderr.write(
        `${ensured.created ? 'created' : 'using'} owner ${ensured.owner.name} (${ensured.owner.role}); token ${info.id}` +
          `${info.expiresAt ? ` expires ${info.expiresAt}` : ''}. It is shown once:\n`,
      );
      process.stdout.write(token + '\n');
      return;
    }
    if (sub === 'list') {
      const owner = values.owner ? await identity.findOwnerByName(values.owner) : null;
      if (!owner) throw new UsageError('--owner <name> of an existing owner is required');
      let cursor: string | undefined;
      do {
        const page = await identity.listTokens(owner.id, { limit: 200, cursor });
        for (const t of page.items) {
          process.stdout.write(
            `${t.id}  ${t.prefix}…  ${t.label ?? '-'}  created ${t.createdAt}  ${t.revokedAt ? 'revoked' : t.expiresAt ? `expires ${t.expiresAt}` : 'active'}\n`,
          );
        }
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      return;
    }
    if (sub === 'revoke') {
      if (!arg) throw new UsageError('token revoke <token-id>');
      const { info } = await identity.revokeToken(arg, null);
      process.stdout.write(`revoked ${info.id} of ${info.ownerName}\n`);
      return;
    }
    throw new UsageError(`unknown token command "${sub ?? ''}"`);
  } finally {
    await prisma.$disconnect();
  }
}

/**
 * Before owner areas, every file tool wrote straight under WORKSPACE_DIR. Those files are visible to
 * nobody now; this moves them, as they are, into one owner's area. Nothing is overwritten.
 */
async function adoptLegacyFiles(root: string, ownerId: string, ownerName: string): Promise<void> {
  const area = join(root, 'owners', ownerId);
  await mkdir(area, { recursive: true, mode: 0o700 });
  const entries = (await readdir(root)).filter((e) => e !== 'owners');
  let moved = 0;
  const skipped: string[] = [];
  for (const entry of entries) {
    const exists = await stat(join(area, entry)).then(
      () => true,
      () => false,
    );
    if (exists) {
      skipped.push(entry);
      continue;
    }
    await rename(join(root, entry), join(area, entry));
    moved++;
  }
  process.stdout.write(`moved ${moved} entries from ${root} into ${ownerName}'s area ${area}\n`);
  if (skipped.length)
    process.stdout.write(
      `left ${skipped.length} whose names ${ownerName} already uses: ${skipped.join(', ')}\n`,
    );
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError) process.stderr.write(`switchyard: ${err.message}\n\n${USAGE}\n`);
  else if (err instanceof ConfigError || err instanceof AppError)
    process.stderr.write(`switchyard: ${err.message}\n`);
  else process.stderr.write(`switchyard: ${(err as Error).message ?? String(err)}\n`);
  process.exit(err instanceof UsageError ? 64 : 1);
});
