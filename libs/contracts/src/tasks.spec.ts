import { ClaimTasks } from './tasks';

const A = '00000000-0000-4000-8000-0000000000a1';
const B = '00000000-0000-4000-8000-0000000000a2';
const RUN = '00000000-0000-4000-8000-0000000000f1';

describe('ClaimTasks: the runs a batch of claims names', () => {
  it('takes one run id per task, in order, or none (an executor of the previous version)', () => {
    expect(ClaimTasks.safeParse({ ids: [A, B], runIds: [RUN, RUN.replace('f1', 'f2')] }).success).toBe(true);
    expect(ClaimTasks.safeParse({ ids: [A] }).success).toBe(true);
  });

  it('refuses run ids that do not pair with the tasks, or are not ids', () => {
    const short = ClaimTasks.safeParse({ ids: [A, B], runIds: [RUN] });
    expect(short.success).toBe(false);
    expect(short.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['runIds', 'runIds must name one run per id, in the same order'],
    ]);
    expect(ClaimTasks.safeParse({ ids: [A], runIds: ['../../etc'] }).success).toBe(false);
  });
});
