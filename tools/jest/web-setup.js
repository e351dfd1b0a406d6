// jsdom lacks what react-router expects of a browser; Node has it.
const { TextEncoder, TextDecoder } = require('node:util');

Object.assign(globalThis, { TextEncoder, TextDecoder });

// …nor structuredClone (the DAG layout, dagre, uses it); Node's serializer does the same job.
const v8 = require('node:v8');
globalThis.structuredClone ??= (value) => v8.deserialize(v8.serialize(value));
