import { RunEventsReader } from './run-events.reader';

describe('RunEventsReader', () => {
  it('only reads: its whole surface is visibility and replay (the gateway gets no writer)', () => {
    const methods = Object.getOwnPropertyNames(RunEventsReader.prototype).filter((n) => n !== 'constructor');
    expect(methods.sort()).toEqual(['assertVisible', 'readAfter']);
  });
});
