import { z } from 'zod';
import { AppError, ErrorCode, httpStatusFor, isTransient, parseOrThrow } from './errors';

describe('error codes', () => {
  it('maps every code to exactly one HTTP status in the 4xx/5xx range', () => {
    for (const code of ErrorCode.options) {
      const status = httpStatusFor(code);
      expect(status).toBeGreaterThanOrEqual(400);
      expect(status).toBeLessThan(600);
    }
  });

  it.each([
    ['validation_failed', 400],
    ['unauthenticated', 401],
    ['forbidden', 403],
    ['not_found', 404],
    ['conflict', 409],
    ['capacity_exceeded', 429],
    ['model_not_configured', 400],
    ['unavailable', 503],
    ['internal', 500],
  ] as const)('%s → %i', (code, status) => {
    expect(httpStatusFor(code)).toBe(status);
  });

  it('treats only passing conditions as transient', () => {
    expect(ErrorCode.options.filter(isTransient).sort()).toEqual([
      'capacity_exceeded',
      'timeout',
      'unavailable',
    ]);
  });

  it('round-trips an AppError through its wire body', () => {
    const err = new AppError('conflict', 'revision 7 is stale; current is 8', { details: { current: 8 } });
    const back = AppError.fromBody(JSON.parse(JSON.stringify(err.toBody('c-1'))));
    expect(back).toBeInstanceOf(AppError);
    expect(back.code).toBe('conflict');
    expect(back.message).toBe('revision 7 is stale; current is 8');
    expect(back.details).toEqual({ current: 8 });
  });
});

describe('parseOrThrow', () => {
  const Body = z.object({ owner: z.string(), nested: z.object({ n: z.number().int() }) });

  it('returns the parsed value', () => {
    expect(parseOrThrow(Body, { owner: 'a', nested: { n: 1 } })).toEqual({ owner: 'a', nested: { n: 1 } });
  });

  it('names every bad field with its path', () => {
    let caught: unknown;
    try {
      parseOrThrow(Body, { nested: { n: 1.5 } }, 'body');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(AppError);
    const e = caught as AppError;
    expect(e.code).toBe('validation_failed');
    expect(e.issues?.map((i) => i.path).sort()).toEqual(['nested.n', 'owner']);
    expect(e.message).toMatch(/^invalid body: /);
    expect(e.message).toContain('owner');
  });
});
