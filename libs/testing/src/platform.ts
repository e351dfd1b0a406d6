import { randomBytes } from 'node:crypto';
import { api, type ApiResponse } from './http';
import { createTestDatabase, uniquePrefix, type TestDatabase } from './database';
import { Stack } from './stack';

/**
 * The whole platform for an end-to-end suite: a fresh database, all five services as processes
 * with their own NATS subject prefix, and an admin token; tokens for other owners on demand.
 */
export class Platform {
  private constructor(
    readonly db: TestDatabase,
    readonly stack: Stack,
    /** The bootstrap admin's token. */
    readonly admin: string,
  ) {}

  static async start(label: string, env: Record<string, string> = {}): Promise<Platform> {
    const db = await createTestDatabase();
    const admin = `e2e_${randomBytes(24).toString('base64url')}`;
    try {
      const stack = await Stack.start({
        DATABASE_URL: db.url,
        NATS_SUBJECT_PREFIX: uniquePrefix(label),
        SWITCHYARD_ADMIN_TOKEN: admin,
        LOG_LEVEL: 'warn',
        SHUTDOWN_GRACE_MS: '3000',
        // Set here so a developer's .env (npm start writes one) never decides what a test sees.
        TOOL_CONFIG_KEY: randomBytes(32).toString('base64'),
        ...env,
      });
      return new Platform(db, stack, admin);
    } catch (err) {
      await db.drop();
      throw err;
    }
  }

  get url(): string {
    return this.stack.gatewayUrl;
  }

  call(method: string, path: string, token: string, body?: unknown): Promise<ApiResponse> {
    return api(this.url, method, path, { token, ...(body !== undefined ? { body } : {}) });
  }

  /** A new token of `owner` (created with `role` when missing), made by the admin. */
  async token(owner: string, role: 'user' | 'admin' = 'user'): Promise<string> {
    const res = await this.call('POST', '/api/tokens', this.admin, { owner, role });
    if (res.status !== 201) throw new Error(`token for ${owner} answered ${res.status}: ${res.text}`);
    return res.json['token'] as string;
  }

  /** Starts a run and answers its id; anything but 200 throws with the answer. */
  async startRun(body: Record<string, unknown>, token: string): Promise<string> {
    const res = await this.call('POST', '/api/agent/run', token, body);
    if (res.status !== 200) throw new Error(`start answered ${res.status}: ${res.text}`);
    return res.json['runId'] as string;
  }

  async stop(): Promise<void> {
    await this.stack.stop();
    await this.db.drop();
  }
}
