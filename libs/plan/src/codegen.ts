/**
 * Whether compiling a JSON Schema failed because the page forbids generating code from strings (a
 * strict Content-Security-Policy without 'unsafe-eval', as the console is served): Ajv cannot work
 * there, and checks that need it are left to the server.
 */
export function forbidsCodegen(err: unknown): boolean {
  return (
    err instanceof EvalError ||
    /unsafe-eval|Content Security Policy|code generation from strings/i.test(String((err as Error)?.message))
  );
}
