import {
  AppError,
  boundPathOf,
  MAX_INPUTS_PER_CALL,
  Rpc,
  type ElicitationAsk,
  type ElicitationReply,
  type InputRequest,
  sandboxMountOf,
  type FileAccess,
  type InvocationFile,
  type ResolvedGrant,
  type ErrorCode,
  type PermissionDecision,
  type PlanStep,
  type RunConfig,
  type ToolDescriptor,
  type ToolResult,
} from '@switchyard/contracts';
import {
  bindFilePlaceholders,
  fileNamesIn,
  ReferenceError,
  resolveArguments,
  retrySafe,
} from '@switchyard/plan';
import type { BusPort } from '@switchyard/server-bus';
import { storableText } from '@switchyard/server-db';
import type { CallContext, Logger } from '@switchyard/server-observability';
import {
  expiringDeadline,
  localTool,
  parseToolArguments,
  toolTimedOut,
  type LocalTool,
  type PausableDeadline,
} from '@switchyard/server-runtime';
import { shownRequest, type InputPort } from '../../inputs/input-waits';
import { mayRetry } from '../retry-policy';
import type { RunWriter } from './run-writer';
import { capResult, resultText, resultValue } from '../step-result';

/** How one step ended on this replica. */
export type StepOutcome =
  | { readonly kind: 'completed'; readonly value: unknown }
  | {
      readonly kind: 'failed';
      readonly code: ErrorCode;
      readonly message: string;
      /** Whether another try could have fixed it (the retry policy); false once attempts ran out too. */
      readonly retryable: boolean;
    }
  | { readonly kind: 'cancelled'; readonly reason: string };

export interface StepSettings {
  readonly resultLimitBytes: number;
  /** A step's timeout when the run sets none (the registry's TOOL_TIMEOUT_MS). */
  readonly defaultStepTimeoutMs: number;
  /** Extra time over the step timeout before the executor stops waiting for the registry. */
  readonly invokeGraceMs: number;
  /** Local built-ins (`localTool`) run here rather than in the registry (RUN_LOCAL_TOOLS). */
  readonly localTools: boolean;
}

/** What a step needs from the run that drives it. */
export interface StepHost {
  readonly runId: string;
  /** What the inbox calls the run (its goal). */
  readonly goal: string;
  readonly ctx: CallContext;
  readonly config: RunConfig;
  readonly inputs: Record<string, unknown>;
  /** The run's file grants (see `bindFiles`). */
  readonly grants: readonly ResolvedGrant[];
  readonly writer: RunWriter;
  readonly bus: BusPort;
  readonly logger: Logger;
  readonly settings: StepSettings;
  /** Aborted when the run is cancelled or stops. */
  readonly signal: AbortSignal;
  readonly cancelReason: () => string | undefined;
  /** True once the run's end is recorded (or given up): a step writes nothing more. */
  readonly closed: () => boolean;
  /**
   * Asked before each tool call (every attempt): false when the run's budget has no call left, and
   * the run is stopping for it.
   */
  readonly admitCall: () => boolean;
  /** The in-flight tool call of each step (a cancel tells the registry to stop them). */
  readonly invocations: Map<string, string>;
  readonly gate: (
    step: PlanStep,
    tool: ToolDescriptor,
    args: Record<string, unknown>,
  ) => PermissionDecision | Promise<PermissionDecision>;
  /** Parks the step at its approval gate (recording the request); resolves once approved. */
  readonly awaitApproval: (
    step: PlanStep,
    tool: ToolDescriptor,
    args: Record<string, unknown>,
    decision: PermissionDecision,
  ) => Promise<void>;
  readonly observe: (event: 'post_tool_use' | 'post_tool_use_failure', data: Record<string, unknown>) => void;
  /** MCP servers' input requests: recorded, shown and waited on (see `StepRunner.input`). */
  readonly inputWaits: InputPort;
  /** A step starts or stops waiting for a person's input (the run's wall clock stands still meanwhile). */
  readonly waitingForInput: (stepId: string, waiting: boolean) => void;
  /**
   * Told the outcome the moment it is known, before `run` resolves: the steps a completion unblocks
   * start in the same turn, so their starts are written in one batch with it.
   */
  readonly ended: (step: PlanStep, outcome: StepOutcome) => void;
}

/** How one tool call ended. `sandboxed`: the tool said whether it ran inside the command sandbox. */
type CallOutcome =
  | {
      readonly ok: true;
      readonly value: unknown;
      readonly truncated: boolean;
      readonly durationMs: number;
      readonly sandboxed?: boolean;
      readonly sampling?: ToolResult['sampling'];
    }
  | {
      readonly ok: false;
      readonly code: ErrorCode;
      readonly error: string;
      readonly durationMs: number;
      readonly sandboxed?: boolean;
    };

/**
 * How a tool sees the run's file grants: built-ins through the owner's workspace (where the grants
 * are materialised), plugins eligible for files (manifest `permissions.files` and an admin's grant,
 * told by the catalog's `fileAccess`) in their sandbox or, unsandboxed, on the host. Others: not at all.
 */
function fileAccessOf(tool: ToolDescriptor): FileAccess | undefined {
  if (tool.source === 'builtin') return 'workspace';
  return tool.fileAccess;
}

/** A step's arguments as the tool gets them, and the grants its invocation carries. */
export interface BoundCall {
  readonly args: Record<string, unknown>;
  readonly files?: InvocationFile[];
}

/**
 * Binds `@file:<name>` placeholders for this tool. A tool that cannot see grants is refused
 * (`file_not_granted`) rather than handed a path it cannot open, and so is a name the run was not
 * granted. Eligible plugins get every grant of the run with the call (granted live, as the sandbox
 * binds them), whether or not this step names one.
 */
export function bindFiles(
  tool: ToolDescriptor,
  args: Record<string, unknown>,
  grants: readonly ResolvedGrant[],
): BoundCall {
  const access = fileAccessOf(tool);
  const names = fileNamesIn(args);
  const byName = new Map(grants.map((g) => [g.name, g]));
  if (names.size && !access)
    throw new StepError(
      'forbidden',
      `file_not_granted: ${tool.name} cannot see the run's files (only built-in tools and plugins an admin granted files to can); it was given ${[...names].map((n) => `@file:${n}`).join(', ')}`,
    );
  const missing = [...names].filter((n) => !byName.has(n));
  if (missing.length)
    throw new StepError(
      'forbidden',
      `file_not_granted: this run has no file grant named ${missing.map((n) => JSON.stringify(n)).join(', ')}` +
        (grants.length
          ? ` (it has ${grants.map((g) => JSON.stringify(g.name)).join(', ')})`
          : ' (it has none)'),
    );
  const bound = names.size
    ? (bindFilePlaceholders(args, (n) =>
        boundPathOf(byName.get(n) as ResolvedGrant, access as FileAccess),
      ) as Record<string, unknown>)
    : args;
  if ((access === 'sandbox' || access === 'host') && grants.length)
    return {
      args: bound,
      files: grants.map((g) => ({
        name: g.name,
        hostPath: g.hostPath,
        sandboxPath: sandboxMountOf(g),
        writable: g.writable,
      })),
    };
  return { args: bound };
}

const sandboxFlag = (sandboxed: boolean | undefined) => (sandboxed === undefined ? {} : { sandboxed });

/** The run was cancelled or stopped while a step was in flight or waiting. */
export class Cancelled extends Error {
  override readonly name = 'Cancelled';
}

/** A step failed for a reason the run reports as is, with its code (not a bug). */
class StepError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly retryable = false,
    readonly permission?: PermissionDecision,
    readonly sandboxed?: boolean,
  ) {
    super(message);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Cancelled('cancelled'));
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(new Cancelled('cancelled'));
      },
      { once: true },
    );
  });
}

/**
 * One step's life: resolve its arguments, ask the gate (and wait at it), record its start durably,
 * call the tool, retry what the retry policy allows, record how it ended. Every step event is written
 * here; the run only learns the typed outcome.
 */
export class StepRunner {
  /** Each step's tool call in flight: its invocation, its deadline, the input requests it made. */
  private readonly calls = new Map<
    string,
    { readonly invocationId: string; readonly deadline: PausableDeadline; asked: number }
  >();

  constructor(private readonly host: StepHost) {}

  /**
   * A server's input request during a step's call (relayed by the registry): recorded in the log,
   * then declined at once when nobody can answer (an unattended run, too many requests in one call),
   * else waited on until the person answers, ELICITATION_TIMEOUT_MS passes (cancel) or the run stops
   * (cancel). The call's deadline and the run's wall clock stand still while it waits.
   */
  async input(ask: ElicitationAsk): Promise<ElicitationReply> {
    const { host } = this;
    const stepId = ask.asker.kind === 'run' ? ask.asker.stepId : undefined;
    const call = stepId === undefined ? undefined : this.calls.get(stepId);
    if (
      stepId === undefined ||
      !call ||
      call.invocationId !== ask.invocationId ||
      ask.ownerId !== host.ctx.ownerId ||
      host.closed()
    )
      throw new AppError(
        'conflict',
        `run ${host.runId} has no call ${ask.invocationId} in flight${stepId ? ` for step ${stepId}` : ''}`,
      );
    const { writer } = host;
    const ref = { stepId, tool: ask.tool };
    const what = {
      ownerId: host.ctx.ownerId ?? '',
      target: { runId: host.runId, stepId },
      label: host.goal,
      invocationId: ask.invocationId,
      tool: ask.tool,
      server: ask.server,
      request: ask.request,
    };
    const shown = (r: InputRequest) => ({
      ...ref,
      ...shownRequest(ask, r),
    });
    call.asked++;
    const refusal = host.config.unattended
      ? 'nobody can answer during an unattended run (a schedule, webhook, background task or MCP client started it); declined'
      : call.asked > MAX_INPUTS_PER_CALL
        ? `this call already asked for input ${MAX_INPUTS_PER_CALL} times; declined`
        : undefined;
    if (refusal) {
      const r = await host.inputWaits.declined(what, refusal);
      await writer.emit('step_input_requested', shown(r));
      await writer.emit('step_input_answered', {
        ...ref,
        elicitationId: r.id,
        action: 'decline',
        by: 'platform',
        reason: refusal,
      });
      return { action: 'decline' };
    }
    const resume = call.deadline.pause();
    host.waitingForInput(stepId, true);
    try {
      const { request, settled } = await host.inputWaits.ask(what, {
        signal: host.signal,
        stopReason: () => `the run stopped: ${host.cancelReason() ?? 'cancelled'}`,
        announce: (r) => writer.emit('step_input_requested', shown(r)),
      });
      if (!host.closed())
        await writer
          .emit('step_input_answered', {
            ...ref,
            elicitationId: request.id,
            action: settled.reply.action,
            ...(settled.reply.content ? { content: settled.reply.content } : {}),
            by: settled.by,
            ...(settled.reason ? { reason: settled.reason } : {}),
          })
          .catch(() => undefined);
      return settled.reply;
    } finally {
      host.waitingForInput(stepId, false);
      resume();
    }
  }

  /** `stepIds`: the plan's step ids in order (a reference may only point backwards). */
  async run(
    step: PlanStep,
    index: number,
    stepIds: readonly string[],
    tool: ToolDescriptor | undefined,
    results: ReadonlyMap<string, unknown>,
  ): Promise<StepOutcome> {
    const { host } = this;
    let attempt = 0;
    let args: Record<string, unknown> | undefined;
    try {
      if (!tool) throw new StepError('not_found', `no tool named ${step.tool} in the catalog any more`);
      try {
        args = resolveArguments(step.arguments, {
          stepIds,
          currentIndex: index,
          results,
          inputs: host.inputs,
        }) as Record<string, unknown>;
      } catch (err) {
        if (err instanceof ReferenceError) throw new StepError('validation_failed', err.message);
        throw err;
      }
      // The gate and the log see the placeholders; only the tool gets the paths it can open.
      const call = bindFiles(tool, args, host.grants);
      const verdict = host.gate(step, tool, args);
      const decision = verdict instanceof Promise ? await verdict : verdict;
      this.throwIfCancelled();
      if (decision.decision === 'deny')
        throw new StepError('forbidden', `refused: ${decision.reason}`, false, decision);
      if (decision.decision === 'ask') await host.awaitApproval(step, tool, args, decision);
      const attempts = step.retry && retrySafe(tool) ? step.retry.attempts : 1;
      for (;;) {
        attempt++;
        const outcome = await this.invoke(step, tool, args, call, attempt, decision);
        if (outcome.ok) return this.completed(step, tool, args, attempt, outcome);
        const retryable = mayRetry(tool, outcome.code);
        if (attempt >= attempts || host.signal.aborted || !retryable)
          throw new StepError(outcome.code, outcome.error, retryable, undefined, outcome.sandboxed);
        const delayMs = (step.retry?.backoffMs ?? 1_000) * 2 ** (attempt - 1);
        await host.writer.emit('step_retry', {
          stepId: step.id,
          tool: step.tool,
          attempt,
          code: outcome.code,
          error: outcome.error,
          delayMs,
        });
        await sleep(delayMs, host.signal);
      }
    } catch (err) {
      return this.stopped(step, tool, attempt, err);
    }
  }

  /** Records the completion without waiting for it: dependents start now (see `StepHost.ended`). */
  private completed(
    step: PlanStep,
    tool: ToolDescriptor,
    args: Record<string, unknown>,
    attempt: number,
    call: Extract<CallOutcome, { ok: true }>,
  ): StepOutcome {
    const { host } = this;
    const kept = capResult(call.value, host.settings.resultLimitBytes);
    // Each dependent waits for its own (later) step_start to be durable before calling its tool, so
    // one write carries this completion and their starts.
    host.writer
      .emit('step_complete', {
        stepId: step.id,
        tool: step.tool,
        attempt,
        result: kept.value,
        truncated: kept.truncated || call.truncated,
        ...(kept.encoded ? { encoded: kept.encoded } : {}),
        durationMs: call.durationMs,
        ...sandboxFlag(call.sandboxed),
        ...(call.sampling?.length ? { sampling: call.sampling } : {}),
      })
      .catch(() => undefined);
    const outcome: StepOutcome = { kind: 'completed', value: call.value };
    host.ended(step, outcome);
    host.observe('post_tool_use', {
      runId: host.runId,
      stepId: step.id,
      call: { tool: step.tool, effect: tool.effect, arguments: args },
      result: kept.value,
      truncated: kept.truncated,
    });
    return outcome;
  }

  private async stopped(
    step: PlanStep,
    tool: ToolDescriptor | undefined,
    attempt: number,
    err: unknown,
  ): Promise<StepOutcome> {
    const { host } = this;
    const cancelled = err instanceof Cancelled || host.signal.aborted;
    const failure =
      err instanceof StepError
        ? err
        : new StepError('internal', storableText(err instanceof Error ? err.message : String(err)));
    if (!cancelled && !(err instanceof StepError))
      host.logger.error(
        { runId: host.runId, stepId: step.id, err: (err as Error).message, stack: (err as Error).stack },
        'step failed with an unexpected error',
      );
    const reason = host.cancelReason() ?? failure.message;
    if (!host.closed()) {
      await host.writer
        .emit(
          'step_failed',
          cancelled
            ? { stepId: step.id, tool: step.tool, attempt, error: `cancelled: ${reason}`, cancelled: true }
            : {
                stepId: step.id,
                tool: step.tool,
                attempt,
                cancelled: false,
                code: failure.code,
                error: failure.message,
                ...(failure.permission ? { permission: failure.permission } : {}),
                ...sandboxFlag(failure.sandboxed),
              },
        )
        .catch(() => undefined);
    }
    if (!cancelled && tool)
      host.observe('post_tool_use_failure', {
        runId: host.runId,
        stepId: step.id,
        call: { tool: step.tool, effect: tool.effect, arguments: step.arguments },
        error: failure.message,
      });
    const outcome: StepOutcome = cancelled
      ? { kind: 'cancelled', reason }
      : { kind: 'failed', code: failure.code, message: failure.message, retryable: failure.retryable };
    host.ended(step, outcome);
    return outcome;
  }

  private throwIfCancelled(): void {
    if (this.host.signal.aborted) throw new Cancelled(this.host.cancelReason() ?? 'cancelled');
  }

  private async invoke(
    step: PlanStep,
    tool: ToolDescriptor,
    args: Record<string, unknown>,
    call: BoundCall,
    attempt: number,
    decision: PermissionDecision,
  ): Promise<CallOutcome> {
    const { host } = this;
    const { writer, bus, ctx, config } = host;
    this.throwIfCancelled();
    if (!host.admitCall()) throw new Cancelled(host.cancelReason() ?? 'the run budget has no tool call left');
    const invocationId = `${host.runId}:${step.id}:${attempt}`;
    const local = tool.source === 'builtin' && host.settings.localTools ? localTool(step.tool) : undefined;
    // The tool runs only once its start is durable, and with it (the log is written in order) the
    // completion of every step it depends on: a crash never leaves a call the history does not show.
    // The call leaves in the same turn (and socket write) as the events of that write.
    const shown = capResult(args, host.settings.resultLimitBytes);
    const timeoutMs = config.limits.stepTimeoutMs ?? host.settings.defaultStepTimeoutMs;
    const sent = await writer.emitThen(
      'step_start',
      {
        stepId: step.id,
        tool: step.tool,
        effect: tool.effect,
        attempt,
        description: step.description,
        arguments: shown.value,
        ...(shown.truncated ? { argumentsTruncated: true } : {}),
        ...(shown.encoded ? { argumentsEncoded: shown.encoded } : {}),
        permission: decision,
      },
      () => {
        // Cancelled while the start was being written (a cancel aborts once its own event is stored,
        // which may be after this start's write): the tool is not called.
        if (host.signal.aborted || host.cancelReason() !== undefined) return undefined;
        if (local) return this.runLocal(local, call.args, timeoutMs);
        // A cancel of the run tells the registry to stop the calls in flight.
        host.invocations.set(step.id, invocationId);
        // Time spent waiting for a person's input does not count against the step: the registry must
        // answer within the step's timeout plus grace of working time, kept here; the request's own
        // (NATS) timeout below only backs it up, long enough for every input request one call may make.
        const waitMs = timeoutMs + host.settings.invokeGraceMs;
        const { deadline, expired: silent } = expiringDeadline(
          waitMs,
          () =>
            new AppError(
              'unavailable',
              `service tool-registry did not answer ${Rpc.registry.invoke.subject} within ${waitMs} ms`,
              { details: { service: 'tool-registry', reason: 'timeout', timeoutMs: waitMs } },
            ),
        );
        this.calls.set(step.id, { invocationId, deadline, asked: 0 });
        const started = performance.now();
        const reply = bus.call(
          Rpc.registry.invoke,
          {
            tool: step.tool,
            arguments: call.args,
            invocationId,
            runId: host.runId,
            ...(call.files ? { files: call.files } : {}),
            timeoutMs,
            // A workflow tool's nested run cannot ask anyone: it runs with this run's mode.
            ...(tool.source === 'workflow' ? { permissionMode: config.permissionMode } : {}),
            asker: { kind: 'run', runId: host.runId, stepId: step.id },
          },
          {
            ctx,
            timeoutMs:
              timeoutMs +
              host.settings.invokeGraceMs +
              (config.unattended ? 0 : MAX_INPUTS_PER_CALL * host.inputWaits.timeoutMs),
          },
        );
        // Awaited below, a microtask later: not an unhandled rejection meanwhile.
        reply.catch(() => undefined);
        return { reply: Promise.race([reply, silent]), started, deadline };
      },
    );
    if (!sent) {
      host.invocations.delete(step.id);
      throw new Cancelled(host.cancelReason() ?? 'cancelled');
    }
    const { started } = sent;
    try {
      const result: ToolResult = await sent.reply;
      const durationMs = Math.round((performance.now() - started) * 100) / 100;
      this.throwIfCancelled();
      const sandbox = sandboxFlag(result.sandboxed);
      if (result.isError)
        return { ok: false, code: 'tool_failed', error: resultText(result), durationMs, ...sandbox };
      return {
        ok: true,
        value: resultValue(result),
        truncated: result.truncated,
        durationMs,
        ...sandbox,
        ...(result.sampling?.length ? { sampling: result.sampling } : {}),
      };
    } catch (err) {
      if (err instanceof Cancelled || host.signal.aborted)
        throw new Cancelled(host.cancelReason() ?? 'cancelled');
      const durationMs = Math.round((performance.now() - started) * 100) / 100;
      const code = err instanceof AppError ? err.code : 'internal';
      return {
        ok: false,
        code,
        error: storableText(err instanceof Error ? err.message : String(err)),
        durationMs,
      };
    } finally {
      sent.deadline.clear();
      this.calls.delete(step.id);
      host.invocations.delete(step.id);
    }
  }

  /**
   * A local built-in's call, in this process: its arguments checked as the registry checks them, under
   * the step's deadline, stopped by the run's cancel. Answers like the registry's reply would.
   */
  private runLocal(
    tool: LocalTool,
    args: Record<string, unknown>,
    timeoutMs: number,
  ): { reply: Promise<ToolResult>; started: number; deadline: PausableDeadline } {
    const { host } = this;
    const controller = new AbortController();
    const cancel = () => controller.abort(host.signal.reason);
    host.signal.addEventListener('abort', cancel, { once: true });
    const { deadline, expired } = expiringDeadline(
      timeoutMs,
      () => toolTimedOut(tool.name, timeoutMs),
      () => controller.abort('timeout'),
    );
    const started = performance.now();
    const work = (async () =>
      tool.run(parseToolArguments(tool.name, tool.params, args), controller.signal))();
    const reply = Promise.race([work, expired]).finally(() =>
      host.signal.removeEventListener('abort', cancel),
    );
    reply.catch(() => undefined);
    return { reply, started, deadline };
  }
}
