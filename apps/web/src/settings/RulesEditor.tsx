import { useRef, useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { PermissionSettings } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { useAuth } from '../api/auth';
import { ApiError, call } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { ErrorNote, Loading, formatTime } from '../ui/bits';
import { RULE_LISTS, linesOf, ruleIssues, type RuleIssue, type RuleListName } from './rule-issues';
import { WhyTester } from './WhyTester';

type Scope = 'owner' | 'global';
const rulesKey = (scope: Scope) => ['settings', 'permissions', scope] as const;

/** One list's text area with a line-number gutter; lines the server refused are marked there and listed under it. */
function RuleList({
  list,
  value,
  onChange,
  issues,
  readOnly,
}: {
  list: RuleListName;
  value: string;
  onChange: (text: string) => void;
  issues: readonly RuleIssue[];
  readOnly: boolean;
}) {
  const { t } = useI18n();
  const gutter = useRef<HTMLOListElement>(null);
  const lineCount = Math.max(value.split('\n').length, 1);
  const bad = new Map<number, string[]>();
  for (const i of issues) if (i.index !== null) bad.set(i.index, [...(bad.get(i.index) ?? []), i.message]);
  const whole = issues.filter((i) => i.index === null);
  const id = `rules-${list}`;
  const help = `${id}-issues`;
  return (
    <div className={`rule-list rule-${list}`}>
      <label htmlFor={id}>
        {t(`settings.rules.${list}`)} <span className="sub">{t(`settings.rules.${list}Hint`)}</span>
      </label>
      <div className="gutter-wrap">
        <ol className="gutter" aria-hidden="true" ref={gutter}>
          {Array.from({ length: lineCount }, (_, i) => (
            <li key={i} className={bad.has(i) ? 'bad' : ''} title={bad.get(i)?.join('; ')}>
              {i + 1}
            </li>
          ))}
        </ol>
        <textarea
          id={id}
          rows={Math.min(Math.max(lineCount + 1, 5), 16)}
          value={value}
          wrap="off"
          spellCheck={false}
          readOnly={readOnly}
          onChange={(e) => onChange(e.target.value)}
          onScroll={(e) => {
            if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
          }}
          aria-invalid={issues.length > 0}
          aria-describedby={issues.length ? help : undefined}
        />
      </div>
      {issues.length ? (
        <ul className="rule-issues" id={help} role="alert">
          {[...bad.entries()]
            .sort(([a], [b]) => a - b)
            .map(([index, messages]) => (
              <li key={index} data-testid={`${list}-line-${index + 1}`} data-line={index + 1}>
                <strong>{t('settings.rules.line', { n: index + 1 })}</strong>{' '}
                <code>{value.split('\n')[index] ?? ''}</code> — {messages.join('; ')}
              </li>
            ))}
          {whole.map((i, k) => (
            <li key={`w${k}`}>{i.message}</li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

function RulesForm({
  settings,
  scope,
  editable,
}: {
  settings: PermissionSettings;
  scope: Scope;
  editable: boolean;
}) {
  const { t, lang } = useI18n();
  const queries = useQueryClient();
  const [texts, setTexts] = useState<Record<RuleListName, string>>(() => ({
    allow: settings.allow.join('\n'),
    ask: settings.ask.join('\n'),
    deny: settings.deny.join('\n'),
  }));
  const save = useMutation({
    mutationFn: () =>
      call(Routes.permissionsPut, {
        query: { scope },
        body: { allow: linesOf(texts.allow), ask: linesOf(texts.ask), deny: linesOf(texts.deny) },
      }),
    onSuccess: (saved) => queries.setQueryData(rulesKey(scope), saved),
  });
  const issues = ruleIssues(save.error);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  return (
    <form onSubmit={submit} noValidate aria-label={t('settings.rules')}>
      <p className="hint">{t('settings.rules.help')}</p>
      <div className="rule-grid">
        {RULE_LISTS.map((list) => (
          <RuleList
            key={list}
            list={list}
            value={texts[list]}
            readOnly={!editable}
            issues={issues.filter((i) => i.list === list)}
            onChange={(text) => {
              setTexts((old) => ({ ...old, [list]: text }));
              if (save.isSuccess) save.reset();
            }}
          />
        ))}
      </div>
      {save.isError && issues.length && save.error instanceof ApiError ? (
        <div className="error-note" role="alert" data-code={save.error.code}>
          <strong>
            {t('settings.rules.notSaved')}
            <code className="code-tag">{save.error.code}</code>
          </strong>
          <div>{save.error.message}</div>
        </div>
      ) : save.isError ? (
        <ErrorNote error={save.error} />
      ) : null}
      {save.isSuccess ? (
        <p className="ok-text" role="status">
          {t('settings.rules.saved')}
        </p>
      ) : null}
      <div className="actions">
        {editable ? (
          <button type="submit" className="primary" disabled={save.isPending}>
            {t('common.save')}
          </button>
        ) : null}
        {settings.updatedAt ? (
          <span className="sub">
            {t('settings.rules.updated', { at: formatTime(settings.updatedAt, lang) })}
          </span>
        ) : null}
      </div>
    </form>
  );
}

/** Permission rules (allow, ask, deny; one per line) with the server's reasons per bad line, and the "why" tester. */
export function RulesEditor() {
  const { t } = useI18n();
  const { can, me } = useAuth();
  const admin = me?.owner.role === 'admin';
  const [scope, setScope] = useState<Scope>('owner');
  const rules = useQuery({
    queryKey: rulesKey(scope),
    queryFn: ({ signal }) => call(Routes.permissionsGet, { query: { scope }, signal }),
    staleTime: Infinity,
  });
  const g = rules.data?.global;
  return (
    <section aria-label={t('settings.rules')}>
      <div className="page-header">
        <h2>{t('settings.rules')}</h2>
        {admin ? (
          <div className="tabs" role="tablist" aria-label={t('settings.rules.scope')}>
            {(['owner', 'global'] as const).map((s) => (
              <button
                key={s}
                type="button"
                role="tab"
                aria-selected={scope === s}
                onClick={() => setScope(s)}
              >
                {t(`settings.rules.scope.${s}`)}
              </button>
            ))}
          </div>
        ) : null}
      </div>
      {rules.isPending ? <Loading /> : null}
      <ErrorNote error={rules.error} />
      {rules.data ? (
        <div className="card">
          <RulesForm
            key={scope}
            settings={rules.data}
            scope={scope}
            editable={can('settings:permissions:edit')}
          />
        </div>
      ) : null}
      {scope === 'owner' && g && (g.allow.length || g.ask.length || g.deny.length) ? (
        <details className="card">
          <summary>{t('settings.rules.globalOnTop')}</summary>
          {RULE_LISTS.map((list) =>
            g[list].length ? (
              <div key={list}>
                <h3>{t(`settings.rules.${list}`)}</h3>
                <pre className="json-inline">{g[list].join('\n')}</pre>
              </div>
            ) : null,
          )}
        </details>
      ) : null}
      <WhyTester />
    </section>
  );
}
