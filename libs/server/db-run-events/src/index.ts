// Read-only access to the executor's run log, for the gateway's stream. Writers: libs/server/db-runs.
export * from './run-events.reader';
export * from './chat-events.reader';
export * from './run-events-pool';
