import { AppError } from '@switchyard/contracts';
import { checkUnattendedInputs } from './unattended-check';

const schema = {
  type: 'object',
  properties: {
    book: { type: 'string', format: 'switchyard-file' },
    out: { type: 'string', 'x-switchyard-auto': 'shared-directory' },
    region: { type: 'string' },
  },
  required: ['out', 'region'],
};

const issuesOf = (inputs: Record<string, unknown>, complete = true) => {
  try {
    checkUnattendedInputs(schema, inputs, { complete });
    return [];
  } catch (err) {
    return ((err as AppError).issues ?? []).map((i) => i.path);
  }
};

describe('checkUnattendedInputs (schedules and webhook triggers)', () => {
  it('accepts a shared-directory input left to each run, even when required', () => {
    expect(issuesOf({ region: 'north' })).toEqual([]);
  });

  it('refuses a picked file: its grant cannot outlive the session', () => {
    expect(issuesOf({ region: 'north', book: 'f.xlsx' })).toEqual(['inputs.book']);
  });

  it('refuses a value bound to a shared-directory input: the run decides it', () => {
    expect(issuesOf({ region: 'north', out: '/etc' })).toEqual(['inputs.out']);
  });

  it('still reports the other required inputs', () => {
    expect(issuesOf({})).toEqual(['inputs.region']);
  });
});
