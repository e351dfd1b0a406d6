import { ErrorCode } from '@switchyard/contracts';
import { mayRetry } from './retry-policy';

const read = { effect: 'read', idempotent: false } as const;
const idempotentWrite = { effect: 'write', idempotent: true } as const;
const write = { effect: 'write', idempotent: false } as const;
const external = { effect: 'external', idempotent: false } as const;

describe('retry policy', () => {
  it('retries a retry-safe tool on tool-reported and transient failures only', () => {
    const retried = (tool: typeof read | typeof idempotentWrite) =>
      ErrorCode.options.filter((code) => mayRetry(tool, code)).sort();
    const expected = ['capacity_exceeded', 'timeout', 'tool_failed', 'unavailable'];
    expect(retried(read)).toEqual(expected);
    expect(retried(idempotentWrite)).toEqual(expected);
  });

  it.each([
    'validation_failed',
    'not_found',
    'forbidden',
    'unauthenticated',
    'conflict',
    'payload_too_large',
    'model_not_configured',
    'internal',
  ] as const)('never retries %s', (code) => {
    expect(mayRetry(read, code)).toBe(false);
  });

  it('never retries a tool whose effect could repeat', () => {
    for (const code of ErrorCode.options) {
      expect(mayRetry(write, code)).toBe(false);
      expect(mayRetry(external, code)).toBe(false);
    }
  });
});
