import { expiringDeadline, PausableDeadline } from './pausable-deadline';

describe('PausableDeadline', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  const clock = () => {
    let t = 0;
    return { now: () => t, advance: (ms: number) => ((t += ms), jest.advanceTimersByTime(ms)) };
  };

  it('expires once after its time when never paused', () => {
    const c = clock();
    const expired = jest.fn();
    new PausableDeadline(1_000, expired, c.now);
    c.advance(999);
    expect(expired).not.toHaveBeenCalled();
    c.advance(1);
    expect(expired).toHaveBeenCalledTimes(1);
    c.advance(5_000);
    expect(expired).toHaveBeenCalledTimes(1);
  });

  it('does not count paused time, nested pauses included', () => {
    const c = clock();
    const expired = jest.fn();
    const d = new PausableDeadline(1_000, expired, c.now);
    c.advance(600);
    const resumeA = d.pause();
    const resumeB = d.pause();
    c.advance(10_000);
    resumeA();
    resumeA();
    c.advance(10_000);
    expect(expired).not.toHaveBeenCalled();
    resumeB();
    c.advance(399);
    expect(expired).not.toHaveBeenCalled();
    c.advance(1);
    expect(expired).toHaveBeenCalledTimes(1);
  });

  it('never expires once cleared, even when resumed after', () => {
    const c = clock();
    const expired = jest.fn();
    const d = new PausableDeadline(100, expired, c.now);
    const resume = d.pause();
    d.clear();
    resume();
    c.advance(1_000);
    expect(expired).not.toHaveBeenCalled();
  });
});

describe('expiringDeadline', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('stops the work, then rejects with its reason when the time is up', async () => {
    const stop = jest.fn();
    const { expired } = expiringDeadline(100, () => new Error('too slow'), stop);
    jest.advanceTimersByTime(100);
    expect(stop).toHaveBeenCalledTimes(1);
    await expect(expired).rejects.toThrow('too slow');
  });

  it('never settles once cleared', async () => {
    const { deadline, expired } = expiringDeadline(100, () => new Error('too slow'));
    deadline.clear();
    jest.advanceTimersByTime(1_000);
    const settled = jest.fn();
    expired.then(settled, settled);
    await Promise.resolve();
    expect(settled).not.toHaveBeenCalled();
  });
});
