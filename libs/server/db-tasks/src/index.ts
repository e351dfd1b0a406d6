// The scheduler's tables: background tasks, schedules and their claims, webhook triggers and deliveries.
export * from './tasks.repository';
export * from './schedules.repository';
export * from './webhooks.repository';
export * from './tasks-pool';
