import { AppError } from '@switchyard/contracts';
import { modelFailure } from './plan-drafter';

describe('modelFailure', () => {
  it('keeps an AppError as it is', () => {
    const refused = new AppError('model_not_configured', 'no language model is configured');
    expect(modelFailure(refused)).toBe(refused);
  });

  it('turns a client error into unavailable, quoting the root cause', () => {
    const root = new Error('connect ECONNREFUSED 127.0.0.1:9');
    const err = new Error('Connection error.', { cause: new TypeError('fetch failed', { cause: root }) });
    const failure = modelFailure(err);
    expect(failure).toBeInstanceOf(AppError);
    expect(failure.code).toBe('unavailable');
    expect(failure.message).toBe(
      'the language model failed: Connection error. (connect ECONNREFUSED 127.0.0.1:9)',
    );
    expect(failure.cause).toBe(err);
  });

  it('quotes the first line of an HTTP error', () => {
    expect(modelFailure(new Error('500 upstream broke\n\nTroubleshooting URL: …')).message).toBe(
      'the language model failed: 500 upstream broke',
    );
    expect(modelFailure('plain string').message).toBe('the language model failed: plain string');
  });
});
