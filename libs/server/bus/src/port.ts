import type { z } from 'zod';
import {
  AppError,
  type EventContract,
  type RpcContract,
  type RpcRequest,
  type RpcResponse,
} from '@switchyard/contracts';
import type { CallContext } from '@switchyard/server-observability';

export interface RequestOptions {
  readonly timeoutMs?: number;
  /** Who is asking; carried in headers. Omitted for service-internal calls without an owner. */
  readonly ctx?: CallContext;
}

/**
 * What code that talks over the bus depends on. `Bus` drives it over NATS; `InMemoryBus`
 * (`@switchyard/testing`) drives it in one process, so an engine is unit-tested without a server.
 * Failures are AppErrors either way: nobody answering is `unavailable`.
 */
export interface BusPort {
  /** A request of the RPC catalog (`Rpc`), its reply typed by the contract. */
  call<C extends RpcContract>(
    contract: C,
    payload: RpcRequest<C>,
    opts?: RequestOptions,
  ): Promise<RpcResponse<C>>;
  request(subject: string, payload: unknown, opts?: RequestOptions): Promise<unknown>;
  /** Answers requests on one subject from this process only. Returns the unsubscribe function. */
  respond(subject: string, handler: (payload: unknown) => Promise<unknown>): Promise<() => void>;
  /**
   * Sends an event of the catalog (`Events`), its payload parsed against the contract first (the
   * NATS bus skips the parse in production: `BusOptions.validateEvents`).
   */
  emit<S extends z.ZodType>(contract: EventContract<S>, payload: z.input<S>): void;
  /** Hears an event of the catalog, typed; a message that does not fit the contract is dropped. */
  on<S extends z.ZodType>(contract: EventContract<S>, handler: (payload: z.output<S>) => void): () => void;
  publish(subject: string, payload: unknown): void;
  /**
   * Publishes `json`, text that is JSON already (a sender that had to serialise parts of it anyway,
   * to size its messages); receivers hear it as they hear `publish`.
   */
  publishJson(subject: string, json: string): void;
  subscribe(subject: string, handler: (payload: unknown) => void): () => void;
}

/**
 * Whether a request failed because nobody answers its subject (the bus's `unavailable` with reason
 * `no_responders`): for a per-run or per-session subject, the replica that held it is gone.
 */
export function isNoResponders(err: unknown): boolean {
  return err instanceof AppError && err.code === 'unavailable' && err.details?.['reason'] === 'no_responders';
}
