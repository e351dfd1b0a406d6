import { parseArgs } from 'node:util';
import { AppError, OwnerName, Role } from '@switchyard/contracts';
import { ConfigError, environment, loadConfig } from '@switchyard/server-config';
import { createPrisma, ensureDatabase, IdentityRepository, migrate } from '@switchyard/server-db';

const USAGE = `usage: npm run switchyard -- <command>

commands:
  migrate                                   create the database if missing and apply migrations
  token create --owner <name> [--role admin|user] [--label <text>] [--expires-in-days <n>]
                                            create the owner if missing, print a new token once
  token list --owner <name>                 list an owner's tokens (never the secrets)
  token revoke <token-id>                   revoke a token

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
    const created = await ensureDatabase(config.database.url);
    if (created) process.stdout.write(`created database ${new URL(config.database.url).pathname.slice(1)}\n`);
    const result = await migrate(config.database.url, { log: (l) => process.stdout.write(l + '\n') });
    process.stdout.write(
      `migrations: ${result.applied.length} applied, ${result.alreadyApplied.length} already applied\n`,
    );
    return;
  }
  if (command !== 'token') throw new UsageError(`unknown command "${command}"`);
  const prisma = createPrisma({ url: config.database.url, poolSize: 2, applicationName: 'switchyard-cli' });
  const identity = new IdentityRepository(prisma);
  try {
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

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError) process.stderr.write(`switchyard: ${err.message}\n\n${USAGE}\n`);
  else if (err instanceof ConfigError || err instanceof AppError)
    process.stderr.write(`switchyard: ${err.message}\n`);
  else process.stderr.write(`switchyard: ${(err as Error).message ?? String(err)}\n`);
  process.exit(err instanceof UsageError ? 64 : 1);
});
