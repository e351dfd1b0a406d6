import { databaseUnavailable } from './unavailable';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('databaseUnavailable', () => {
  it.each([
    ['a refused connection', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['an admin shutdown', withCode('terminating connection due to administrator command', '57P01')],
    ['the server starting up', withCode('the database system is starting up', '57P03')],
    ['a connection exception', withCode('connection failure', '08006')],
    ['a dropped connection', new Error('Connection terminated unexpectedly')],
    ['Prisma unable to reach it', withCode("Can't reach database server at 127.0.0.1:5432", 'P1001')],
    [
      'a wrapped cause',
      new Error('query failed', { cause: withCode('connect ECONNREFUSED', 'ECONNREFUSED') }),
    ],
  ])('says %s is unavailable (503, retryable)', (_what, err) => {
    expect(databaseUnavailable(err)).toMatchObject({ code: 'unavailable', details: { retryable: true } });
  });

  it.each([
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'x')")],
    ['a unique violation', withCode('duplicate key value violates unique constraint', '23505')],
    ['a syntax error', withCode('syntax error at or near "SELEC"', '42601')],
    ['nothing', undefined],
  ])('leaves %s alone', (_what, err) => {
    expect(databaseUnavailable(err)).toBeUndefined();
  });
});
