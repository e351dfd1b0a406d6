import { useMemo, useState } from 'react';
import { useSearchParams } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { ToolEffect, ToolSource, type ToolDescriptor } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { call } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { Badge, EmptyState, ErrorNote, JsonView, Loading } from '../ui/bits';

function ToolItem({ tool }: { tool: ToolDescriptor }) {
  const { t } = useI18n();
  const [open, setOpen] = useState(false);
  return (
    <li className="card tool-item" data-tool={tool.name}>
      <div className="card-head">
        <div>
          <code className="tool-name">{tool.name}</code>{' '}
          <span className={`badge effect-${tool.effect}`}>{tool.effect}</span>{' '}
          <Badge tone="muted">{t(`tools.source.${tool.source}`)}</Badge>{' '}
          {tool.idempotent ? <Badge tone="info">{t('tools.idempotent')}</Badge> : null}
          {tool.description ? <div className="sub">{tool.description}</div> : null}
        </div>
        <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? t('tools.hideSchema') : t('tools.schema')}
        </button>
      </div>
      {open ? <JsonView value={tool.inputSchema} label={`${tool.name} schema`} /> : null}
    </li>
  );
}

/** Every tool the caller may orchestrate: name, description, JSON schema, effect and source. */
export function Catalog() {
  const { t } = useI18n();
  const [params, setParams] = useSearchParams();
  const q = params.get('q') ?? '';
  const sourceParam = params.get('source');
  const source = ToolSource.safeParse(sourceParam).success ? (sourceParam as ToolSource) : undefined;
  const effectParam = params.get('effect');
  const effect = ToolEffect.safeParse(effectParam).success ? (effectParam as ToolEffect) : undefined;
  const catalog = useQuery({
    queryKey: ['tool-catalog'],
    queryFn: ({ signal }) => call(Routes.toolCatalog, { signal }),
  });
  const setParam = (key: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    setParams(next, { replace: true });
  };
  const shown = useMemo(() => {
    const needle = q.trim().toLowerCase();
    return (catalog.data ?? []).filter(
      (tool) =>
        (!source || tool.source === source) &&
        (!effect || tool.effect === effect) &&
        (!needle ||
          tool.name.toLowerCase().includes(needle) ||
          tool.description.toLowerCase().includes(needle)),
    );
  }, [catalog.data, q, source, effect]);

  return (
    <section aria-label={t('tools.catalog')}>
      <div className="filters" role="search">
        <input
          type="search"
          aria-label={t('tools.catalogSearch')}
          placeholder={t('tools.catalogSearch')}
          value={q}
          onChange={(e) => setParam('q', e.target.value)}
        />
        <select
          aria-label={t('tools.sourceFilter')}
          value={source ?? ''}
          onChange={(e) => setParam('source', e.target.value)}
        >
          <option value="">{t('tools.allSources')}</option>
          {ToolSource.options.map((s) => (
            <option key={s} value={s}>
              {t(`tools.source.${s}`)}
            </option>
          ))}
        </select>
        <select
          aria-label={t('tools.form.effect')}
          value={effect ?? ''}
          onChange={(e) => setParam('effect', e.target.value)}
        >
          <option value="">{t('tools.allEffects')}</option>
          {ToolEffect.options.map((x) => (
            <option key={x} value={x}>
              {x}
            </option>
          ))}
        </select>
      </div>
      {catalog.isPending ? <Loading /> : null}
      <ErrorNote error={catalog.error} />
      {catalog.data ? (
        <p className="sub" aria-live="polite">
          {t('tools.catalogCount', { n: shown.length, of: catalog.data.length })}
        </p>
      ) : null}
      {catalog.isSuccess && !shown.length ? (
        <EmptyState>{catalog.data.length ? t('tools.catalogNoMatch') : t('tools.catalogEmpty')}</EmptyState>
      ) : null}
      <ul className="cards">
        {shown.map((tool) => (
          <ToolItem key={tool.name} tool={tool} />
        ))}
      </ul>
    </section>
  );
}
