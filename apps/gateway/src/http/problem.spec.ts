import { NotFoundException } from '@nestjs/common';
import { AppError } from '@switchyard/contracts';
import { toProblem } from './problem';

describe('toProblem', () => {
  it('keeps an AppError code, message and field issues', () => {
    const { problem, bug } = toProblem(
      new AppError('validation_failed', 'invalid request: body.owner: Required', {
        issues: [{ path: 'body.owner', message: 'Required' }],
      }),
      'cid-1',
      '/api/tokens',
    );
    expect(bug).toBe(false);
    expect(problem).toMatchObject({
      status: 400,
      code: 'validation_failed',
      title: 'Validation failed',
      detail: 'invalid request: body.owner: Required',
      correlationId: 'cid-1',
      instance: '/api/tokens',
      errors: [{ path: 'body.owner', message: 'Required' }],
    });
  });

  it('turns an unknown error into a 500 naming only the correlation id', () => {
    const err = new TypeError("Cannot read properties of undefined (reading 'secret')");
    const { problem, bug } = toProblem(err, 'cid-2');
    expect(bug).toBe(true);
    expect(problem.status).toBe(500);
    expect(problem.code).toBe('internal');
    expect(problem.detail).toContain('cid-2');
    expect(JSON.stringify(problem)).not.toContain('secret');
    expect(JSON.stringify(problem)).not.toContain('at ');
  });

  it('maps body-parser failures to client errors', () => {
    expect(
      toProblem(Object.assign(new SyntaxError('Unexpected token'), { type: 'entity.parse.failed' }), 'c')
        .problem,
    ).toMatchObject({
      status: 400,
      code: 'validation_failed',
    });
    expect(
      toProblem(Object.assign(new Error('too large'), { type: 'entity.too.large', limit: 1024 }), 'c')
        .problem,
    ).toMatchObject({
      status: 413,
      code: 'payload_too_large',
    });
  });

  it('maps an unknown route to not_found', () => {
    expect(toProblem(new NotFoundException(), 'c').problem).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('hides the message of an internal AppError from a service', () => {
    const { problem } = toProblem(new AppError('internal', 'pool exhausted at db-7 password=x'), 'cid-3');
    expect(problem.detail).not.toContain('password');
  });
});
