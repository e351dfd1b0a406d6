// The planner's tables: workflow definitions and their published versions.
export * from './workflows.repository';
