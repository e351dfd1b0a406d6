// jsdom lacks what react-router expects of a browser; Node has it.
const { TextEncoder, TextDecoder } = require('node:util');

Object.assign(globalThis, { TextEncoder, TextDecoder });
