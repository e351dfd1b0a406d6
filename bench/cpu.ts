import { readdirSync, readFileSync } from 'node:fs';

/*
 * CPU time from /proc, in clock ticks (1/100 s on Linux): user + system time of a process.
 */

/** Milliseconds per clock tick (USER_HZ is 100 on Linux). */
export const MS_PER_TICK = 10;

/** utime + stime of `pid`; throws when the process is gone. */
export function processTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime, stime
}

/** Read and write system calls, counted by the kernel per process. */
export interface Syscalls {
  reads: number;
  writes: number;
}

/** Read and write system calls `pid` has made (`/proc/<pid>/io`); zeros when it cannot be read. */
export function processSyscalls(pid: number): Syscalls {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(io)?.[1] ?? 0);
    return { reads: field('syscr'), writes: field('syscw') };
  } catch {
    return { reads: 0, writes: 0 };
  }
}

/** Every process whose command name is in `names` (e.g. all Postgres backends), with its ticks. */
export function ticksByCommand(names: ReadonlySet<string>): Map<number, { comm: string; ticks: number }> {
  const out = new Map<number, { comm: string; ticks: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const comm = readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
      if (names.has(comm)) out.set(Number(entry), { comm, ticks: processTicks(Number(entry)) });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Busy ticks of the whole machine (all CPUs, minus idle and iowait). */
export function machineBusyTicks(): number {
  const [, ...ticks] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] as string).trim().split(/\s+/);
  const n = ticks.map(Number);
  const total = n.slice(0, 8).reduce((a, b) => a + b, 0);
  return total - (n[3] ?? 0) - (n[4] ?? 0); // minus idle, iowait
}

function ticksOf(pids: readonly number[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of pids) {
    try {
      out.set(pid, processTicks(pid));
    } catch {
      // gone meanwhile: it counts in no span it was not there for from start to end
    }
  }
  return out;
}

/**
 * CPU used by named groups of processes, summed over the spans measured with `during` (a process
 * must live through a span to count in it: pooled Postgres backends do).
 */
export class CpuTally {
  private readonly ticks = new Map<string, number>();

  async during<T>(groups: Record<string, readonly number[]>, work: () => Promise<T>): Promise<T> {
    const before = Object.entries(groups).map(([name, pids]) => [name, ticksOf(pids)] as const);
    const value = await work();
    for (const [name, start] of before) {
      const end = ticksOf([...start.keys()]);
      let used = 0;
      for (const [pid, t] of end) used += t - (start.get(pid) ?? t);
      this.ticks.set(name, (this.ticks.get(name) ?? 0) + used);
    }
    return value;
  }

  /** Milliseconds of CPU per unit of work (e.g. per step) for each group. */
  msPer(units: number): Record<string, number> {
    return Object.fromEntries(
      [...this.ticks].map(([name, t]) => [name, Math.round(((t * MS_PER_TICK) / units) * 1000) / 1000]),
    );
  }
}

/** The sum of the figures of the named groups (CPU per unit of several processes); a missing group is 0. */
export function sumOf(figures: Readonly<Record<string, number>>, groups: Iterable<string>): number {
  let sum = 0;
  for (const g of groups) sum += figures[g] ?? 0;
  return sum;
}

/** How a warm-up went: the cost of each pass (CPU ms per unit of work) and whether it settled. */
export interface WarmUp {
  passes: number[];
  settled: boolean;
}

/**
 * Repeats a warm-up pass until its cost settles: at least `min` passes, then until two passes in a
 * row cost within `tolerance` of each other, at most `max`. A freshly started service costs several
 * times its steady CPU per unit of work for its first thousands of units (V8 tiering up the hot
 * paths, and every pool, cache and Postgres backend warming), so a fixed short warm-up measures a
 * half-warm stack, and two replicas (each seeing half the work) warm up half as fast as one.
 */
export async function warmUntilSettled(
  pass: () => Promise<number>,
  { min = 3, max = 8, tolerance = 0.1 }: { min?: number; max?: number; tolerance?: number } = {},
): Promise<WarmUp> {
  const passes: number[] = [];
  for (;;) {
    passes.push(Math.round((await pass()) * 1000) / 1000);
    const [prev, last] = passes.slice(-2);
    const settled =
      passes.length >= min &&
      prev !== undefined &&
      last !== undefined &&
      Math.abs(last - prev) <= tolerance * prev;
    if (settled || passes.length >= max) return { passes, settled };
  }
}
