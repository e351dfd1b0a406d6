import { Injectable } from '@nestjs/common';
import {
  AppError,
  checkElicitationContent,
  describeIssues,
  type ElicitationReply,
  type InputAnswerBody,
  type InputAnswerReply,
  type InputRequest,
  type InputRequestList,
  type InputRequestListQuery,
} from '@switchyard/contracts';
import { isNoResponders } from '@switchyard/server-bus';
import { InputRequestsRepository } from '@switchyard/server-db-runs';
import { requireOwner, type CallContext } from '@switchyard/server-observability';
import { ActiveChats } from '../chat/active-chats';
import { ActiveRuns } from '../runs/active-runs';

/**
 * The person's side of MCP servers' input requests (any replica answers): list the caller's waiting
 * ones, read one, answer one. An answer is checked here (owner, state, content against the
 * requested schema) and handed to the replica holding the wait, over the run's or chat's control
 * subject. Visibility follows the run and chat rules: an owner sees their own; an admin also every
 * run's (as they see every run), never another owner's chat. Anything else is not found.
 */
@Injectable()
export class InputRequests {
  constructor(
    private readonly repo: InputRequestsRepository,
    private readonly runs: ActiveRuns,
    private readonly chats: ActiveChats,
  ) {}

  async list(q: InputRequestListQuery, ctx: CallContext): Promise<InputRequestList> {
    const ownerId = requireOwner(ctx, 'input requests');
    return { items: await this.repo.pendingOf(ownerId, q) };
  }

  async get(id: string, ctx: CallContext): Promise<InputRequest> {
    return this.visible(id, ctx);
  }

  async answer(id: string, body: InputAnswerBody, ctx: CallContext): Promise<InputAnswerReply> {
    const req = await this.visible(id, ctx);
    if (req.status !== 'pending')
      throw new AppError('conflict', `input request ${id} is ${req.status} already`, {
        details: { status: req.status },
      });
    if (Date.parse(req.expiresAt) <= Date.now())
      throw new AppError('conflict', `input request ${id} timed out at ${req.expiresAt}`, {
        details: { status: 'cancelled' },
      });
    const reply = this.replyOf(req, body);
    const msg = {
      action: 'input' as const,
      elicitationId: id,
      reply,
      ...(ctx.ownerId ? { answeredBy: ctx.ownerId } : {}),
    };
    try {
      if (req.runId) return await this.runs.control(req.runId, msg);
      if (req.sessionId) return await this.chats.control(req.sessionId, msg);
    } catch (err) {
      if (!isNoResponders(err)) throw err;
      // The replica that waited is gone, and its call with it.
      await this.repo.settle(id, {
        status: 'cancelled',
        answeredBy: 'platform',
        reason: 'the executor replica waiting for it stopped',
      });
      throw new AppError(
        'conflict',
        `input request ${id} is not waiting any more: the ${req.runId ? 'run' : 'chat'} it belongs to stopped`,
        { details: { status: 'cancelled' } },
      );
    }
    throw new AppError('internal', `input request ${id} belongs to neither a run nor a chat`);
  }

  private async visible(id: string, ctx: CallContext): Promise<InputRequest> {
    const ownerId = requireOwner(ctx, 'input requests');
    const req = await this.repo.findForCaller(id, ownerId, ctx.role === 'admin');
    if (!req) throw new AppError('not_found', `no input request ${id}`);
    return req;
  }

  /** The reply to send: an accepted form's content checked against its schema, defaults filled in. */
  private replyOf(req: InputRequest, body: InputAnswerBody): ElicitationReply {
    if (body.action !== 'accept') return { action: body.action };
    if (req.mode === 'url') {
      if (body.content !== undefined)
        throw new AppError('validation_failed', 'a URL request is accepted without content', {
          issues: [{ path: 'content', message: 'goes only with a form request' }],
        });
      return { action: 'accept' };
    }
    if (!req.requestedSchema)
      throw new AppError('internal', `input request ${req.id} has no form to check the answer against`);
    const { content, issues } = checkElicitationContent(req.requestedSchema, body.content);
    if (issues.length)
      throw new AppError('validation_failed', `the answer does not fit the form: ${describeIssues(issues)}`, {
        issues,
      });
    return { action: 'accept', content };
  }
}
