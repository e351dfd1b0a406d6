import { DBOS } from '@dbos-inc/dbos-sdk';
import { servePeer } from './peer-process';

/*
 * DBOS Transact in process, default settings: each `DBOS.runStep` records its output in the system
 * database (committed) before the workflow goes on; the workflow's status row is written at its start
 * and end. A fan starts its steps together in one workflow (DBOS gives concurrent steps their ids in
 * the order they are started, so they replay deterministically).
 */

const noop = async (): Promise<void> => undefined;

const chain = DBOS.registerWorkflow(
  async (steps: number) => {
    for (let i = 0; i < steps; i++) await DBOS.runStep(noop, { name: `s${i}` });
  },
  { name: 'chain' },
);

const fan = DBOS.registerWorkflow(
  async (steps: number) => {
    await Promise.all(Array.from({ length: steps }, (_, i) => DBOS.runStep(noop, { name: `p${i}` })));
  },
  { name: 'fan' },
);

servePeer(async (databaseUrl) => {
  // Only the log level differs from the defaults (launch banners would interleave with the bench's output).
  DBOS.setConfig({ name: 'switchyard-bench', systemDatabaseUrl: databaseUrl, logLevel: 'warn' });
  await DBOS.launch();
  // Called bare: a registered workflow invoked as a method checks `this` for a configured instance.
  return { chain: (steps) => chain(steps), fan: (steps) => fan(steps), close: () => DBOS.shutdown() };
});
