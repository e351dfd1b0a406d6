import pino, { type Logger } from 'pino';
import type { LoggerService } from '@nestjs/common';
import type { ContextStore } from './context';

export type { Logger } from 'pino';

export interface LoggerOptions {
  readonly service: string;
  readonly level: string;
  readonly instanceId: string;
  readonly context?: ContextStore;
  /** Where lines go; stdout by default. Tests pass a stream to read them back. */
  readonly destination?: pino.DestinationStream;
}

/** JSON lines with service, instance and the current correlation id on each line. */
export function createLogger(opts: LoggerOptions): Logger {
  const context = opts.context;
  return pino(
    {
      level: opts.level,
      base: { service: opts.service, instance: opts.instanceId },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      ...(context
        ? {
            mixin: () => {
              const ctx = context.current();
              return ctx
                ? { correlationId: ctx.correlationId, ...(ctx.ownerId ? { ownerId: ctx.ownerId } : {}) }
                : {};
            },
          }
        : {}),
      redact: {
        paths: [
          'token',
          '*.token',
          'headers.authorization',
          'headers["x-switchyard-token"]',
          'password',
          '*.password',
        ],
        censor: '[redacted]',
      },
    },
    opts.destination ?? pino.destination({ sync: false }),
  );
}

/** Lets Nest's own messages (module init, route mapping, errors) go through pino too. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  // Nest's own chatter (modules loaded, routes mapped) is debug detail; warnings and errors are not.
  log(message: unknown, context?: string): void {
    this.logger.debug({ nest: context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ nest: context, stack: trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ nest: context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ nest: context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ nest: context }, String(message));
  }
}
