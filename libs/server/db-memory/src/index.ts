// The planner's memory tables (experimental): facts per owner and whether memory is on.
export * from './memory.repository';
export * from './ranking';
