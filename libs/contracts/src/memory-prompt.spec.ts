import { memoryPrompt } from './memory';

describe('memoryPrompt', () => {
  it('lists each memory on one line under its heading, whitespace folded', () => {
    expect(
      memoryPrompt([{ text: 'Anvil is the build server' }, { text: '  I prefer\n\nmetric units ' }]),
    ).toBe(
      'Things the user asked you to remember (from earlier; use them where they bear on the request):\n' +
        '- Anvil is the build server\n' +
        '- I prefer metric units',
    );
  });
});
