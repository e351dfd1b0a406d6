export * from './references';
export * from './resolve';
export * from './validate';
export * from './compile';
export * from './inputs';
export * from './refusal';
export * from './result-value';
export * from './flow-assistant';
