import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import {
  AppError,
  type MarketEntriesQuery,
  type MarketEntry,
  type MarketEntryDetail,
  type MarketEntryList,
  type MarketImportBody,
  type MarketImported,
  type MarketSource,
  type MarketSourceBody,
} from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import { MarketSourceRepository } from '@switchyard/server-db-tools';
import { requireAdmin, type CallContext, type Logger } from '@switchyard/server-observability';
import { AddressPolicy, APP_CONFIG, LOGGER } from '@switchyard/server-runtime';
import { RecordsUseCases } from '../records/records.usecases';
import { importPlan, maskedConfig, recordNameOf } from './market-import';
import {
  entriesOf,
  fetchSource,
  kindsOf,
  marketFile,
  readFileCapped,
  type ReadSource,
  type SourceEntry,
} from './market-source';

const ADMIN_ONLY = 'the MCP market is for admins';

function asEntry(source: string, e: SourceEntry): MarketEntry {
  return {
    source,
    name: e.server.name,
    title: e.server.title ?? null,
    description: e.server.description,
    version: e.server.version,
    kinds: kindsOf(e.server),
  };
}

/**
 * The MCP market: sources in the official registry's server.json format, read on demand (a URL
 * through the address policy web_fetch uses, so a source cannot reach private or link-local
 * addresses unless an admin allowed them; or a file under MARKET_DIR), and entries imported as tool
 * records through the records' own create, so an import is checked, encrypted and untested like any
 * new record.
 */
@Injectable()
export class MarketService {
  constructor(
    private readonly sources: MarketSourceRepository,
    private readonly records: RecordsUseCases,
    private readonly policy: AddressPolicy,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async list(ctx: CallContext): Promise<MarketSource[]> {
    requireAdmin(ctx, ADMIN_ONLY);
    return this.sources.list();
  }

  async add(body: MarketSourceBody, ctx: CallContext): Promise<MarketSource> {
    requireAdmin(ctx, ADMIN_ONLY);
    if (body.url !== undefined) {
      try {
        await this.policy.vet(body.url);
      } catch (err) {
        if (err instanceof AppError)
          throw new AppError(
            err.code === 'tool_failed' ? 'validation_failed' : err.code,
            `url: ${err.message}`,
            {
              issues: [{ path: 'url', message: err.message }],
            },
          );
        throw err;
      }
    } else await marketFile(this.config.market.dir, body.path as string);
    const source = await this.sources.create({
      id: randomUUID(),
      name: body.name,
      url: body.url ?? null,
      path: body.path ?? null,
    });
    this.logger.info({ source: source.name, by: ctx.ownerId }, 'market source added');
    return source;
  }

  async delete(name: string, ctx: CallContext): Promise<MarketSource> {
    requireAdmin(ctx, ADMIN_ONLY);
    return this.sources.delete(name);
  }

  async entries(q: MarketEntriesQuery, ctx: CallContext): Promise<MarketEntryList> {
    requireAdmin(ctx, ADMIN_ONLY);
    const sources = q.source ? [await this.sources.get(q.source)] : await this.sources.list();
    const needle = q.q?.trim().toLowerCase();
    const out: MarketEntryList = { items: [], problems: [] };
    const read = await Promise.all(
      sources.map(async (s) => ({ s, r: await this.read(s).catch((err: Error) => err) })),
    );
    for (const { s, r } of read) {
      if (r instanceof Error) {
        out.problems.push({ source: s.name, path: '', message: r.message });
        continue;
      }
      out.problems.push(...r.problems.map((p) => ({ ...p, source: s.name })));
      for (const e of r.entries) {
        const entry = asEntry(s.name, e);
        const hay = `${entry.name}\n${entry.title ?? ''}\n${entry.description}`.toLowerCase();
        if (!needle || hay.includes(needle)) out.items.push(entry);
      }
    }
    return out;
  }

  async entry(source: string, name: string, ctx: CallContext): Promise<MarketEntryDetail> {
    requireAdmin(ctx, ADMIN_ONLY);
    const e = await this.find(source, name);
    return { ...asEntry(source, e), server: e.raw };
  }

  async import(body: MarketImportBody, ctx: CallContext): Promise<MarketImported> {
    requireAdmin(ctx, ADMIN_ONLY);
    const e = await this.find(body.source, body.name);
    const plan = importPlan(e.server, body.as);
    const record = await this.records.create(ctx, {
      name: body.as.name ?? recordNameOf(e.server.name),
      description: e.server.description || (e.server.title ?? ''),
      type: plan.kind,
      status: 'ENABLED',
      configJson: JSON.stringify(plan.config),
    });
    this.logger.info(
      { source: body.source, entry: e.server.name, record: record.id, kind: plan.kind },
      'market entry imported (untested)',
    );
    return { record, kind: plan.kind, config: maskedConfig(plan) };
  }

  private async find(source: string, name: string): Promise<SourceEntry> {
    const s = await this.sources.get(source);
    const r = await this.read(s);
    const e = r.entries.find((x) => x.server.name === name);
    if (!e) {
      const malformed = r.problems.length ? ` (${r.problems.length} malformed part(s) were left out)` : '';
      throw new AppError('not_found', `source ${source} has no entry named ${name}${malformed}`);
    }
    return e;
  }

  private async read(s: MarketSource): Promise<ReadSource> {
    const text = s.url
      ? await fetchSource(s.url, this.policy, this.config.tools.webFetch.timeoutMs)
      : await readFileCapped(await marketFile(this.config.market.dir, s.path as string));
    return entriesOf(text);
  }
}
