import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createTestDatabase, uniquePrefix, type TestDatabase } from './database';
import { waitFor } from './wait';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * A stack's services do not outlive the process that started them: a test run killed outright (a
 * SIGKILLed jest worker, ^C twice) left a whole stack running for the rest of the session, loading
 * every later test and benchmark. Each service holds an IPC channel to its parent and closes when it
 * disconnects.
 */
describe('Stack services and their parent', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('a service closes when the process that started it is SIGKILLed', async () => {
    const testing = join(__dirname, '..', '..', '..', 'dist', 'libs', 'testing', 'src', 'index.js');
    const env = {
      DATABASE_URL: db.url,
      NATS_SUBJECT_PREFIX: uniquePrefix('orphan'),
      SWITCHYARD_ADMIN_TOKEN: `t_${randomBytes(24).toString('base64url')}`,
      LOG_LEVEL: 'warn',
    };
    const parent = spawn(
      process.execPath,
      [
        '-e',
        `const { Stack } = require(${JSON.stringify(testing)});
         Stack.start(${JSON.stringify(env)}, ['planner']).then(
           (s) => console.log(String(s.services.get('planner').child.pid)),
           (err) => { console.error(err); process.exit(1); },
         );
         setInterval(() => undefined, 60_000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const lines = createInterface({ input: parent.stdout });
    const pid = await new Promise<number>((resolve, reject) => {
      lines.once('line', (line) => resolve(Number(line)));
      parent.once('exit', (code) =>
        reject(new Error(`the parent exited with ${code} before the stack started`)),
      );
    });
    expect(Number.isInteger(pid) && pid > 0).toBe(true);
    expect(alive(pid)).toBe(true);

    parent.kill('SIGKILL');
    await waitFor(async () => (alive(pid) ? undefined : true), 60_000);
    expect(alive(pid)).toBe(false);
  });
});
