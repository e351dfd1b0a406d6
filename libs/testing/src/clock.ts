/** A clock a test moves by hand (structurally a scheduler `Clock`). */
export class ManualClock {
  private at: number;

  constructor(start: Date | string = '2026-06-01T00:00:00Z') {
    this.at = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.at);
  }

  set(to: Date | string): void {
    this.at = new Date(to).getTime();
  }

  advance(ms: number): Date {
    this.at += ms;
    return this.now();
  }
}
