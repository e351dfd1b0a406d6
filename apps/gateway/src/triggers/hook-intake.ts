import { createHmac, timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { json } from 'express';
import {
  AppError,
  WEBHOOK_BODY_LIMIT_BYTES,
  WEBHOOK_EVENT_ID_MAX,
  WebhookHeaders,
} from '@switchyard/contracts';
import type { DeliverRequest } from '@switchyard/contracts';
import type { GatewayRequest } from '../http/endpoint';

export const HOOK_PATH = '/api/workflow-hooks';

/** A delivery request: its body as parsed JSON and as the bytes that were signed. */
export interface HookRequest extends GatewayRequest {
  rawBody?: Buffer;
}

/**
 * Deliveries parse their own body before the general JSON parser: at most 256 KiB (413 beyond),
 * whatever the content type, keeping the raw bytes for the signature.
 */
export function installHookBodyParser(app: NestExpressApplication): void {
  app.use(
    HOOK_PATH,
    json({
      limit: WEBHOOK_BODY_LIMIT_BYTES,
      type: () => true,
      verify: (req, _res, buf) => {
        (req as HookRequest).rawBody = buf;
      },
    }),
  );
}

/** The configured source ranges as a block list (v4 and v6; v4-mapped v6 addresses are judged as v4). */
export function sourceList(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [net, bits] = cidr.split('/');
    const type = isIP(net ?? '') === 6 ? 'ipv6' : 'ipv4';
    list.addSubnet(net ?? '', Number(bits), type);
  }
  return list;
}

export function sourceAllowed(list: BlockList, ip: string | undefined): boolean {
  if (!ip) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  const v4 = mapped?.[1] ?? (isIP(ip) === 4 ? ip : undefined);
  return v4 ? list.check(v4, 'ipv4') : isIP(ip) === 6 && list.check(ip, 'ipv6');
}

function header(req: HookRequest, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
}

/**
 * `X-Switchyard-Signature: t=<unix seconds>,v1=<hex>`: HMAC-SHA256 keyed by the presented secret over
 * "<t>.<raw body>". Checked here against the bytes received; the scheduler decides whether the
 * trigger needs it, whether the secret is right and whether t is recent.
 */
export function readSignature(req: HookRequest, secret: string): DeliverRequest['signature'] {
  const value = header(req, WebhookHeaders.signature);
  if (value === undefined) return undefined;
  const parts = new Map(
    value.split(',').map((p) => {
      const i = p.indexOf('=');
      return [p.slice(0, i).trim(), p.slice(i + 1).trim()] as const;
    }),
  );
  const t = Number(parts.get('t'));
  const v1 = parts.get('v1') ?? '';
  if (!Number.isInteger(t) || !/^[0-9a-f]{64}$/i.test(v1)) return { timestamp: 0, valid: false };
  const expected = createHmac('sha256', secret)
    .update(`${t}.`)
    .update(req.rawBody ?? Buffer.alloc(0))
    .digest();
  return { timestamp: t, valid: timingSafeEqual(expected, Buffer.from(v1, 'hex')) };
}

/** What the gateway relays to the scheduler for one delivery (the body was validated already). */
export function deliveryOf(
  req: HookRequest,
  triggerId: string,
  body: Record<string, unknown>,
): DeliverRequest {
  const secret = header(req, WebhookHeaders.secret);
  if (!secret || secret.length > 512)
    throw new AppError('unauthenticated', 'send the trigger secret in X-Switchyard-Webhook-Secret');
  const eventId = header(req, WebhookHeaders.eventId);
  if (eventId !== undefined && (eventId.length === 0 || eventId.length > WEBHOOK_EVENT_ID_MAX))
    throw new AppError(
      'validation_failed',
      `X-Switchyard-Event-Id must be 1–${WEBHOOK_EVENT_ID_MAX} characters`,
      {
        issues: [{ path: 'headers.x-switchyard-event-id', message: `1–${WEBHOOK_EVENT_ID_MAX} characters` }],
      },
    );
  const signature = readSignature(req, secret);
  return {
    triggerId,
    secret,
    body,
    ...(eventId !== undefined ? { eventId } : {}),
    ...(signature ? { signature } : {}),
  };
}
