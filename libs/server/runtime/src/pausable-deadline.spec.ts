import { PausableDeadline } from './pausable-deadline';

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
