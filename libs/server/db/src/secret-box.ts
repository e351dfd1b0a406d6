import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { AppError } from '@switchyard/contracts';

const VERSION = 'v1';

/**
 * Encrypts small secrets (MCP connection settings) at rest with AES-256-GCM. Format:
 * `v1:<iv>:<tag>:<ciphertext>`, each base64. Without a key, nothing can be stored or read, and the
 * error says how to configure one.
 */
export class SecretBox {
  private readonly key: Buffer | undefined;

  constructor(base64Key: string | undefined) {
    this.key = base64Key ? Buffer.from(base64Key, 'base64') : undefined;
    if (this.key && this.key.length !== 32) throw new Error('TOOL_CONFIG_KEY must be 32 bytes in base64');
  }

  private requireKey(): Buffer {
    if (!this.key) {
      throw new AppError(
        'validation_failed',
        'connection settings cannot be stored: TOOL_CONFIG_KEY is not configured (generate one with `openssl rand -base64 32`)',
      );
    }
    return this.key;
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.requireKey(), iv);
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [
      VERSION,
      iv.toString('base64'),
      cipher.getAuthTag().toString('base64'),
      data.toString('base64'),
    ].join(':');
  }

  open(sealed: string): string {
    const [version, iv, tag, data] = sealed.split(':');
    if (version !== VERSION || !iv || !tag || data === undefined) throw new Error('unknown sealed format');
    const decipher = createDecipheriv('aes-256-gcm', this.requireKey(), Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    try {
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw new AppError(
        'internal',
        'stored connection settings cannot be decrypted: was TOOL_CONFIG_KEY changed?',
      );
    }
  }
}
