/**
 * A failure the caller can act on (a bad path, an unknown account): the tool answers with isError and
 * this sentence. Anything else is a bug and is reported as one, still without crashing the server.
 */
export class ToolError extends Error {
  override readonly name = 'ToolError';
}
