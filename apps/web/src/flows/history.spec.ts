import { canRedo, canUndo, historyOf, record, recordFrom, redo, replace, undo, UNDO_LIMIT } from './history';

describe('undo history', () => {
  it('undoes the last 50 edits back to where they started, and the 51st undo does nothing', () => {
    let h = historyOf(0);
    for (let i = 1; i <= UNDO_LIMIT; i++) h = record(h, i);
    for (let i = 0; i < UNDO_LIMIT; i++) h = undo(h);
    expect(h.present).toBe(0);
    expect(canUndo(h)).toBe(false);
    expect(undo(h)).toBe(h);
    for (let i = 0; i < UNDO_LIMIT; i++) h = redo(h);
    expect(h.present).toBe(UNDO_LIMIT);
    expect(canRedo(h)).toBe(false);
  });

  it('keeps only the newest 50 steps', () => {
    let h = historyOf(0);
    for (let i = 1; i <= 60; i++) h = record(h, i);
    expect(h.past).toHaveLength(UNDO_LIMIT);
    while (canUndo(h)) h = undo(h);
    expect(h.present).toBe(10);
  });

  it('folds edits with the same key into one step, and a new edit drops the redo branch', () => {
    let h = historyOf('');
    for (const text of ['h', 'he', 'hel']) h = record(h, text, 'node-a.label');
    h = record(h, 'hel!', 'node-b.label');
    expect(h.past).toEqual(['', 'hel']);
    h = undo(h);
    expect(h.present).toBe('hel');
    h = record(h, 'other');
    expect(canRedo(h)).toBe(false);
    expect(undo(h).present).toBe('hel');
  });

  it('a drag is one step from where it began; replace never adds a step', () => {
    let h = historyOf({ x: 0 });
    const base = h.present;
    h = replace(h, { x: 5 });
    h = replace(h, { x: 9 });
    expect(h.past).toHaveLength(0);
    h = recordFrom(h, base, h.present);
    expect(h.past).toEqual([{ x: 0 }]);
    expect(undo(h).present).toEqual({ x: 0 });
    expect(redo(undo(h)).present).toEqual({ x: 9 });
  });
});
