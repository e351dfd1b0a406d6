import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { PermissionMode } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { useAuth } from '../api/auth';
import { call } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { Badge, ErrorNote, FieldErrors } from '../ui/bits';
import { parseJsonObject } from '../ui/forms';

const TONE = { allow: 'ok', ask: 'wait', deny: 'bad' } as const;

/** "Why?": what the gate would decide for one tool call by you, and which rule, hook or floor decided. */
export function WhyTester() {
  const { t } = useI18n();
  const { can } = useAuth();
  const [tool, setTool] = useState('');
  const [args, setArgs] = useState('{}');
  const [mode, setMode] = useState<PermissionMode>('ask');
  const [unattended, setUnattended] = useState(false);
  const parsed = parseJsonObject(args);
  const catalog = useQuery({
    queryKey: ['tool-catalog'],
    queryFn: ({ signal }) => call(Routes.toolCatalog, { signal }),
    enabled: can('mcp:tool:list'),
    staleTime: 60_000,
  });
  const evaluate = useMutation({
    mutationFn: () =>
      call(Routes.permissionsEvaluate, {
        body: {
          tool: tool.trim(),
          arguments: parsed.ok ? parsed.value : {},
          permissionMode: mode,
          unattended,
        },
      }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (parsed.ok && tool.trim()) evaluate.mutate();
  };
  const d = evaluate.data;
  return (
    <div className="card why" data-testid="why-tester">
      <h2>{t('settings.rules.why')}</h2>
      <form onSubmit={submit} noValidate className="stack">
        <div className="row">
          <div className="grow">
            <label htmlFor="why-tool">{t('settings.why.tool')}</label>
            <input
              id="why-tool"
              list="why-tools"
              value={tool}
              placeholder="run_command"
              onChange={(e) => setTool(e.target.value)}
            />
            <datalist id="why-tools">
              {(catalog.data ?? []).map((x) => (
                <option key={x.name} value={x.name} />
              ))}
            </datalist>
            <FieldErrors error={evaluate.error} path="tool" />
          </div>
          <div>
            <label htmlFor="why-mode">{t('runs.start.mode')}</label>
            <select id="why-mode" value={mode} onChange={(e) => setMode(e.target.value as PermissionMode)}>
              {PermissionMode.options.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          </div>
          <label className="check">
            <input type="checkbox" checked={unattended} onChange={(e) => setUnattended(e.target.checked)} />
            {t('settings.why.unattended')}
          </label>
        </div>
        <label htmlFor="why-args">{t('settings.why.arguments')}</label>
        <textarea
          id="why-args"
          rows={3}
          value={args}
          spellCheck={false}
          onChange={(e) => setArgs(e.target.value)}
          aria-invalid={!parsed.ok}
        />
        {!parsed.ok ? <div className="field-error">{parsed.message}</div> : null}
        <FieldErrors error={evaluate.error} path="arguments" />
        <div className="actions">
          <button type="submit" disabled={!parsed.ok || !tool.trim() || evaluate.isPending}>
            {t('settings.why.ask')}
          </button>
        </div>
      </form>
      <ErrorNote error={evaluate.error} />
      {d ? (
        <dl className="decision" aria-live="polite" data-testid="why-decision">
          <dt>{t('settings.why.decision')}</dt>
          <dd>
            <Badge tone={TONE[d.decision]}>{d.decision}</Badge>
          </dd>
          <dt>{t('settings.why.reason')}</dt>
          <dd>{d.reason}</dd>
          {d.rule ? (
            <>
              <dt>{t('settings.why.rule')}</dt>
              <dd>
                <code>{d.rule}</code>
              </dd>
            </>
          ) : null}
          {d.hook ? (
            <>
              <dt>{t('settings.why.hook')}</dt>
              <dd>
                <code>{d.hook}</code>
              </dd>
            </>
          ) : null}
          {d.floor ? (
            <>
              <dt>{t('settings.why.floor')}</dt>
              <dd>
                <code>{d.floor}</code>
              </dd>
            </>
          ) : null}
        </dl>
      ) : null}
    </div>
  );
}
