import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * A Lua script run by its SHA; the source is sent only when Redis does not have it cached (first use,
 * a restart, `SCRIPT FLUSH`). Keys are built inside the scripts from a prefix passed as the first
 * argument, which a standalone Redis allows; every key a script touches shares that prefix.
 */
export class LuaScript {
  private readonly sha: string;

  constructor(
    readonly name: string,
    private readonly source: string,
  ) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(redis: Redis, args: ReadonlyArray<string | number>): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, 0, ...args);
    } catch (err) {
      if (err instanceof Error && err.message.startsWith('NOSCRIPT')) {
        return redis.eval(this.source, 0, ...args);
      }
      throw err;
    }
  }
}
