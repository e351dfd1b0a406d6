import type { z } from 'zod';
import {
  AppError,
  describeIssues,
  toFieldIssues,
  type EventContract,
  type RpcContract,
  type RpcResponse,
} from '@switchyard/contracts';

/** An event's payload parsed against its contract; one that does not fit is a bug of the sender. */
export function eventPayload<S extends z.ZodType>(contract: EventContract<S>, payload: unknown): z.output<S> {
  const parsed = contract.schema.safeParse(payload);
  if (!parsed.success)
    throw new AppError(
      'internal',
      `${contract.subject}: the payload does not fit its contract: ${describeIssues(toFieldIssues(parsed.error))}`,
    );
  return parsed.data;
}

/** A heard event's payload, or undefined when it does not fit the contract (it is dropped). */
export function heardPayload<S extends z.ZodType>(
  contract: EventContract<S>,
  payload: unknown,
): z.output<S> | undefined {
  const parsed = (contract.heard ?? contract.schema).safeParse(payload);
  return parsed.success ? parsed.data : undefined;
}

/** An RPC reply parsed against the contract's response; one that does not fit is a bug of the answering side. */
export function checkedReply<C extends RpcContract>(contract: C, reply: unknown): RpcResponse<C> {
  const checked = contract.response.safeParse(reply);
  if (!checked.success)
    throw new AppError(
      'internal',
      `the reply to ${contract.subject} does not fit its contract: ${describeIssues(toFieldIssues(checked.error))}`,
    );
  return checked.data as RpcResponse<C>;
}
