import { useState, type FormEvent } from 'react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ModelSettings, type Agent } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { useAuth } from '../api/auth';
import { call } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { ListTable } from '../ui/ListTable';
import { Badge, EmptyState, ErrorNote, FieldErrors, Loading, formatTime, PageHeader } from '../ui/bits';
import { ConfirmButton } from '../ui/Confirm';
import { invalidAt } from '../ui/forms';
import { Modal } from '../ui/Modal';
import { useCatalog } from '../runs/catalog';

const agentsKey = ['settings', 'agents'] as const;
const PAGE_SIZE = 20;
const PROVIDERS = ModelSettings.shape.provider.unwrap().options;
type Provider = (typeof PROVIDERS)[number];

interface AgentForm {
  name: string;
  description: string;
  systemPrompt: string;
  provider: Provider | '';
  model: string;
  temperature: string;
  maxTokens: string;
  mcpToolIds: number[];
  pluginIds: string[];
}

function formOf(a?: Agent): AgentForm {
  const m = a?.modelSettings ?? {};
  return {
    name: a?.name ?? '',
    description: a?.description ?? '',
    systemPrompt: a?.systemPrompt ?? '',
    provider: m.provider ?? '',
    model: m.model ?? '',
    temperature: m.temperature === undefined ? '' : String(m.temperature),
    maxTokens: m.maxTokens === undefined ? '' : String(m.maxTokens),
    mcpToolIds: a?.mcpToolIds ?? [],
    pluginIds: a?.pluginIds ?? [],
  };
}

function modelSettingsOf(f: AgentForm): Record<string, unknown> {
  return {
    ...(f.provider ? { provider: f.provider } : {}),
    ...(f.model.trim() ? { model: f.model.trim() } : {}),
    ...(f.temperature.trim() ? { temperature: Number(f.temperature) } : {}),
    ...(f.maxTokens.trim() ? { maxTokens: Number(f.maxTokens) } : {}),
  };
}

function AgentDialog({
  agent,
  onClose,
  onSaved,
}: {
  agent?: Agent;
  onClose: () => void;
  onSaved: () => void;
}) {
  const { t } = useI18n();
  const [f, setF] = useState<AgentForm>(() => formOf(agent));
  const set = <K extends keyof AgentForm>(k: K, v: AgentForm[K]) => setF((old) => ({ ...old, [k]: v }));
  const options = useQuery({
    queryKey: ['mcp-records', 'options'],
    queryFn: ({ signal }) => call(Routes.mcpToolOptions, { signal }),
  });
  // Plugins come from the catalog (any user may read it): the plugin of each plugin tool, with its tools.
  const catalog = useCatalog();
  const plugins = new Map<string, string[]>();
  for (const tool of catalog.data ?? [])
    if (tool.plugin) plugins.set(tool.plugin, [...(plugins.get(tool.plugin) ?? []), tool.name]);
  const save = useMutation({
    mutationFn: () => {
      const body = {
        name: f.name,
        description: f.description,
        systemPrompt: f.systemPrompt,
        modelSettings: modelSettingsOf(f),
        mcpToolIds: f.mcpToolIds,
        pluginIds: f.pluginIds,
      };
      return agent
        ? call(Routes.agentUpdate, { params: { id: agent.id }, body })
        : call(Routes.agentCreate, { body });
    },
    onSuccess: onSaved,
  });
  const err = save.error;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  const known = new Set(options.data?.items.map((o) => o.id) ?? []);
  const unknown = f.mcpToolIds.filter((id) => !known.has(id));
  return (
    <Modal
      title={agent ? t('settings.agents.edit', { name: agent.name }) : t('settings.agents.new')}
      onClose={onClose}
      wide
    >
      <form onSubmit={submit} noValidate className="stack">
        <label htmlFor="agent-name">{t('tools.form.name')}</label>
        <input
          id="agent-name"
          value={f.name}
          onChange={(e) => set('name', e.target.value)}
          aria-invalid={invalidAt(err, 'name')}
        />
        <FieldErrors error={err} path="name" />
        <label htmlFor="agent-desc">{t('tools.form.description')}</label>
        <input id="agent-desc" value={f.description} onChange={(e) => set('description', e.target.value)} />
        <FieldErrors error={err} path="description" />
        <label htmlFor="agent-prompt">{t('settings.agents.prompt')}</label>
        <textarea
          id="agent-prompt"
          rows={6}
          value={f.systemPrompt}
          onChange={(e) => set('systemPrompt', e.target.value)}
          aria-invalid={invalidAt(err, 'systemPrompt')}
        />
        <FieldErrors error={err} path="systemPrompt" />
        <fieldset>
          <legend>{t('settings.agents.model')}</legend>
          <div className="row">
            <div>
              <label htmlFor="agent-provider">{t('settings.agents.provider')}</label>
              <select
                id="agent-provider"
                value={f.provider}
                onChange={(e) => set('provider', e.target.value as AgentForm['provider'])}
              >
                <option value="">{t('settings.agents.default')}</option>
                {PROVIDERS.map((p) => (
                  <option key={p} value={p}>
                    {p}
                  </option>
                ))}
              </select>
            </div>
            <div className="grow">
              <label htmlFor="agent-model">{t('settings.agents.modelName')}</label>
              <input
                id="agent-model"
                value={f.model}
                onChange={(e) => set('model', e.target.value)}
                aria-invalid={invalidAt(err, 'modelSettings.model')}
              />
              <FieldErrors error={err} path="modelSettings.model" />
            </div>
            <div>
              <label htmlFor="agent-temp">{t('settings.agents.temperature')}</label>
              <input
                id="agent-temp"
                type="number"
                min={0}
                max={2}
                step={0.1}
                value={f.temperature}
                onChange={(e) => set('temperature', e.target.value)}
                aria-invalid={invalidAt(err, 'modelSettings.temperature')}
              />
              <FieldErrors error={err} path="modelSettings.temperature" />
            </div>
            <div>
              <label htmlFor="agent-max">{t('settings.agents.maxTokens')}</label>
              <input
                id="agent-max"
                type="number"
                min={1}
                value={f.maxTokens}
                onChange={(e) => set('maxTokens', e.target.value)}
                aria-invalid={invalidAt(err, 'modelSettings.maxTokens')}
              />
              <FieldErrors error={err} path="modelSettings.maxTokens" />
            </div>
          </div>
        </fieldset>
        <fieldset>
          <legend>{t('settings.agents.tools')}</legend>
          {options.isPending ? <Loading /> : null}
          <ErrorNote error={options.error} />
          {options.data && !options.data.items.length ? (
            <p className="sub">{t('settings.agents.noTools')}</p>
          ) : null}
          <div className="check-grid">
            {options.data?.items.map((o) => (
              <label key={o.id} className="check" title={o.description}>
                <input
                  type="checkbox"
                  checked={f.mcpToolIds.includes(o.id)}
                  onChange={(e) =>
                    set(
                      'mcpToolIds',
                      e.target.checked ? [...f.mcpToolIds, o.id] : f.mcpToolIds.filter((x) => x !== o.id),
                    )
                  }
                />
                {o.name} <span className="sub">{o.type}</span>
              </label>
            ))}
          </div>
          {unknown.length && options.data ? (
            <p className="sub">{t('settings.agents.unavailable', { ids: unknown.join(', ') })}</p>
          ) : null}
          <FieldErrors error={err} path="mcpToolIds" />
        </fieldset>
        <fieldset>
          <legend>{t('settings.agents.plugins')}</legend>
          {catalog.isPending ? <Loading /> : null}
          <ErrorNote error={catalog.error} />
          {catalog.data && !plugins.size && !f.pluginIds.length ? (
            <p className="sub">{t('settings.agents.noPlugins')}</p>
          ) : null}
          <div className="check-grid">
            {[...new Set([...plugins.keys(), ...f.pluginIds])].map((id) => (
              <label key={id} className="check" title={plugins.get(id)?.join(', ')}>
                <input
                  type="checkbox"
                  checked={f.pluginIds.includes(id)}
                  onChange={(e) =>
                    set(
                      'pluginIds',
                      e.target.checked ? [...f.pluginIds, id] : f.pluginIds.filter((x) => x !== id),
                    )
                  }
                />
                {id}{' '}
                <span className="sub">
                  {plugins.has(id)
                    ? t('settings.agents.pluginTools', { n: plugins.get(id)?.length ?? 0 })
                    : t('settings.agents.pluginOff')}
                </span>
              </label>
            ))}
          </div>
          <FieldErrors error={err} path="pluginIds" />
        </fieldset>
        <ErrorNote error={err} />
        <div className="actions">
          <button type="button" onClick={onClose}>
            {t('common.cancel')}
          </button>
          <button type="submit" className="primary" disabled={save.isPending}>
            {t('common.save')}
          </button>
        </div>
      </form>
    </Modal>
  );
}

/** The caller's agents: name, system prompt, model settings and tool records. */
export function Agents() {
  const { t, lang } = useI18n();
  const { can } = useAuth();
  const queries = useQueryClient();
  const [pageNum, setPageNum] = useState(1);
  const [editing, setEditing] = useState<Agent | 'new' | null>(null);
  const list = useQuery({
    queryKey: [...agentsKey, pageNum],
    queryFn: ({ signal }) => call(Routes.agentList, { query: { pageNum, pageSize: PAGE_SIZE }, signal }),
    placeholderData: keepPreviousData,
  });
  const items = list.data?.items ?? [];
  const pages = list.data ? Math.max(1, Math.ceil(list.data.total / list.data.pageSize)) : 1;
  const refresh = () => queries.invalidateQueries({ queryKey: agentsKey });
  const newButton = can('agent:agent:add') ? (
    <button type="button" className="primary" onClick={() => setEditing('new')}>
      {t('settings.agents.new')}
    </button>
  ) : null;
  return (
    <section aria-label={t('settings.agents')}>
      <PageHeader level={2} title={t('settings.agents')} actions={newButton} />
      <ListTable
        label={t('settings.agents')}
        query={list}
        count={items.length}
        empty={<EmptyState action={newButton}>{t('settings.agents.empty')}</EmptyState>}
        columns={[
          t('tools.form.name'),
          t('settings.agents.model'),
          t('settings.agents.tools'),
          t('runs.updated'),
        ]}
        actions
      >
        {items.map((a) => (
          <tr key={a.id} data-agent-id={a.id}>
            <td className="goal">
              <strong>{a.name}</strong>
              {a.description ? <div className="sub">{a.description}</div> : null}
            </td>
            <td>
              {a.modelSettings.provider || a.modelSettings.model ? (
                <code>{[a.modelSettings.provider, a.modelSettings.model].filter(Boolean).join(' / ')}</code>
              ) : (
                <span className="sub">{t('settings.agents.default')}</span>
              )}
            </td>
            <td>
              <Badge tone="muted">{t('settings.agents.toolCount', { n: a.mcpToolIds.length })}</Badge>
              {a.pluginIds.length ? (
                <Badge tone="muted">{t('settings.agents.pluginCount', { n: a.pluginIds.length })}</Badge>
              ) : null}
            </td>
            <td>{formatTime(a.updatedAt, lang)}</td>
            <td>
              <div className="row-actions">
                {can('agent:agent:edit') ? (
                  <button type="button" onClick={() => setEditing(a)}>
                    {t('common.edit')}
                  </button>
                ) : null}
                {can('agent:agent:remove') ? (
                  <ConfirmButton
                    label={t('common.delete')}
                    title={t('settings.agents.deleteTitle')}
                    body={<p>{t('settings.agents.deleteBody', { name: a.name })}</p>}
                    confirmLabel={t('common.delete')}
                    onConfirm={async () => {
                      await call(Routes.agentDelete, { params: { id: a.id } });
                      await refresh();
                    }}
                  />
                ) : null}
              </div>
            </td>
          </tr>
        ))}
      </ListTable>
      {list.data && list.data.total > list.data.pageSize ? (
        <nav className="pager" aria-label={t('tools.pages')}>
          <button type="button" disabled={pageNum <= 1} onClick={() => setPageNum(pageNum - 1)}>
            ‹ {t('tools.prev')}
          </button>
          <span>{t('tools.pageOf', { n: pageNum, of: pages, total: list.data.total })}</span>
          <button type="button" disabled={pageNum >= pages} onClick={() => setPageNum(pageNum + 1)}>
            {t('tools.next')} ›
          </button>
        </nav>
      ) : null}
      {editing ? (
        <AgentDialog
          {...(editing === 'new' ? {} : { agent: editing })}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            void refresh();
          }}
        />
      ) : null}
    </section>
  );
}
