import { randomBytes } from 'node:crypto';
import { SecretBox } from './secret-box';

describe('SecretBox', () => {
  const key = randomBytes(32).toString('base64');

  it('round-trips, with a fresh IV each time and no plaintext in the output', () => {
    const box = new SecretBox(key);
    const a = box.seal('{"command":"npx","env":{"TOKEN":"s3cret"}}');
    const b = box.seal('{"command":"npx","env":{"TOKEN":"s3cret"}}');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^v1:/);
    expect(a).not.toContain('s3cret');
    expect(box.open(a)).toBe('{"command":"npx","env":{"TOKEN":"s3cret"}}');
  });

  it('detects tampering and a wrong key', () => {
    const sealed = new SecretBox(key).seal('secret');
    const parts = sealed.split(':');
    const data = Buffer.from(parts[3] as string, 'base64');
    data[0] = (data[0] as number) ^ 1;
    const tampered = [...parts.slice(0, 3), data.toString('base64')].join(':');
    expect(() => new SecretBox(key).open(tampered)).toThrow(/cannot be decrypted/);
    expect(() => new SecretBox(randomBytes(32).toString('base64')).open(sealed)).toThrow(
      /cannot be decrypted/,
    );
  });

  it('explains how to configure a missing key', () => {
    expect(() => new SecretBox(undefined).seal('x')).toThrow(
      /TOOL_CONFIG_KEY is not configured.*openssl rand -base64 32/,
    );
  });
});
