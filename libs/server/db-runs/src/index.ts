// The executor's tables: runs, their event log, permission rules and hooks.
export * from './runs-pool';
export * from './runs.repository';
export * from './run-events.repository';
export * from './permissions.repository';
export * from './chat.repository';
export * from './plugin-hooks.repository';
export * from './foreground-limits';
export * from './input-requests.repository';
