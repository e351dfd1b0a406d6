import { useEffect, useId, useRef, useState } from 'react';
import { useI18n } from '../../i18n/i18n';
import type { PanelIssue } from './NodePanel';
import { INPUT_KINDS, newRow, rowProblems, rowsOf, schemaOf, type InputRow } from './start-schema';
import { IssueList } from './IssueList';

interface Props {
  /** The workflow's input schema (`{ type: 'object', properties, required }`). */
  readonly inputSchema: Record<string, unknown>;
  readonly onChange: (schema: Record<string, unknown>) => void;
  /** Messages about the inputs (paths like `inputSchema.properties.x` or `inputs.x`). */
  readonly issues?: readonly PanelIssue[];
  readonly onClose?: () => void;
}

type Tab = 'table' | 'json';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function pretty(schema: unknown): string {
  return JSON.stringify(schema, null, 2);
}

function concerns(path: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|\\.)(properties|inputs)\\.${escaped}($|[.[])`).test(path);
}

/**
 * The start node's editor of the workflow inputs: a table (name, label, type, required, options,
 * example) that writes the input schema, and the schema itself as JSON. A table with a bad or repeated
 * name, or JSON that does not parse, is shown with the reason and not applied.
 */
export function StartPanel({ inputSchema, onChange, issues = [], onClose }: Props) {
  const { t } = useI18n();
  const id = useId();
  const [tab, setTab] = useState<Tab>('table');
  const [rows, setRows] = useState<InputRow[]>(() => rowsOf(inputSchema));
  const [json, setJson] = useState(() => pretty(inputSchema));
  const [jsonError, setJsonError] = useState<string>();
  const emitted = useRef(JSON.stringify(inputSchema));

  // A schema from outside (undo, the JSON tab, a reload) replaces the table; our own echo does not.
  useEffect(() => {
    const text = JSON.stringify(inputSchema);
    if (text === emitted.current) return;
    emitted.current = text;
    setRows(rowsOf(inputSchema));
    setJson(pretty(inputSchema));
    setJsonError(undefined);
  }, [inputSchema]);

  const problems = rowProblems(rows);
  const emit = (schema: Record<string, unknown>) => {
    emitted.current = JSON.stringify(schema);
    onChange(schema);
  };
  const edit = (next: InputRow[]) => {
    setRows(next);
    if (rowProblems(next).size) return;
    const schema = schemaOf(next, inputSchema);
    setJson(pretty(schema));
    setJsonError(undefined);
    emit(schema);
  };
  const patch = (key: string, change: Partial<InputRow>) =>
    edit(rows.map((r) => (r.key === key ? { ...r, ...change } : r)));

  const placed = (path: string) => rows.some((r) => r.name && concerns(path, r.name));
  const general = issues.filter((i) => !placed(i.path));

  return (
    <aside className="node-panel start-panel" aria-labelledby={`${id}-title`}>
      <header className="node-panel-head">
        <h2 id={`${id}-title`}>{t('flow.start.title')}</h2>
        {onClose ? (
          <button type="button" className="link" aria-label={t('common.close')} onClick={onClose}>
            ×
          </button>
        ) : null}
      </header>
      <div className="node-panel-body">
        <p className="hint">{t('flow.start.hint')}</p>
        <div className="tabs" role="tablist" aria-label={t('flow.start.view')}>
          {(['table', 'json'] as const).map((v) => (
            <button
              key={v}
              type="button"
              role="tab"
              aria-selected={tab === v}
              aria-controls={`${id}-${v}`}
              onClick={() => setTab(v)}
            >
              {t(`flow.start.tab.${v}`)}
            </button>
          ))}
        </div>
        <IssueList issues={general} />
        {tab === 'table' ? (
          <div id={`${id}-table`} role="tabpanel">
            {rows.length ? (
              <table className="start-inputs">
                <thead>
                  <tr>
                    <th>{t('flow.start.name')}</th>
                    <th>{t('flow.start.label')}</th>
                    <th>{t('flow.start.type')}</th>
                    <th>{t('flow.start.required')}</th>
                    <th>{t('flow.start.options')}</th>
                    <th>{t('flow.start.example')}</th>
                    <th>
                      <span className="visually-hidden">{t('common.actions')}</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((row) => {
                    const bad = problems.get(row.key) ?? [];
                    const badName = bad.find((p) => p.startsWith('name_'));
                    const rowIssues = issues.filter((i) => row.name && concerns(i.path, row.name));
                    const optionsApply = row.kind === 'text' || row.kind === 'number';
                    return (
                      <tr key={row.key} data-input={row.name}>
                        <td>
                          <input
                            type="text"
                            aria-label={t('flow.start.name')}
                            value={row.name}
                            aria-invalid={badName || rowIssues.length ? true : undefined}
                            onChange={(e) => patch(row.key, { name: e.target.value })}
                          />
                          {badName ? (
                            <div className="field-error" role="alert">
                              {t(`flow.start.problem.${badName}`, { name: row.name })}
                            </div>
                          ) : null}
                          {rowIssues.map((i, k) => (
                            <div key={k} className="field-error" role="alert">
                              {i.message}
                            </div>
                          ))}
                        </td>
                        <td>
                          <input
                            type="text"
                            aria-label={t('flow.start.label')}
                            value={row.title}
                            placeholder={row.name}
                            onChange={(e) => patch(row.key, { title: e.target.value })}
                          />
                        </td>
                        <td>
                          <select
                            aria-label={t('flow.start.type')}
                            value={row.kind}
                            onChange={(e) => patch(row.key, { kind: e.target.value as InputRow['kind'] })}
                          >
                            {(row.kind === 'any' ? [...INPUT_KINDS, 'any' as const] : INPUT_KINDS).map(
                              (k) => (
                                <option key={k} value={k}>
                                  {t(`flow.type.${k}`)}
                                </option>
                              ),
                            )}
                          </select>
                        </td>
                        <td>
                          <input
                            type="checkbox"
                            aria-label={t('flow.start.required')}
                            checked={row.required}
                            onChange={(e) => patch(row.key, { required: e.target.checked })}
                          />
                        </td>
                        <td>
                          <input
                            type="text"
                            aria-label={t('flow.start.options')}
                            value={row.options}
                            disabled={!optionsApply}
                            placeholder={optionsApply ? t('flow.start.optionsHint') : ''}
                            aria-invalid={bad.includes('options_invalid') ? true : undefined}
                            onChange={(e) => patch(row.key, { options: e.target.value })}
                          />
                          {bad.includes('options_invalid') ? (
                            <div className="field-error" role="alert">
                              {t('flow.start.problem.options_invalid')}
                            </div>
                          ) : null}
                        </td>
                        <td>
                          <input
                            type="text"
                            aria-label={t('flow.start.example')}
                            value={row.example}
                            aria-invalid={bad.includes('example_invalid') ? true : undefined}
                            onChange={(e) => patch(row.key, { example: e.target.value })}
                          />
                          {bad.includes('example_invalid') ? (
                            <div className="field-error" role="alert">
                              {t('flow.start.problem.example_invalid', { type: t(`flow.type.${row.kind}`) })}
                            </div>
                          ) : null}
                        </td>
                        <td>
                          <button
                            type="button"
                            className="link"
                            aria-label={t('flow.start.remove', { name: row.name })}
                            onClick={() => edit(rows.filter((r) => r.key !== row.key))}
                          >
                            ×
                          </button>
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            ) : (
              <p className="hint">{t('flow.start.empty')}</p>
            )}
            <div className="actions">
              <button type="button" onClick={() => edit([...rows, newRow(rows)])}>
                {t('flow.start.add')}
              </button>
            </div>
            {problems.size ? <p className="hint">{t('flow.start.notApplied')}</p> : null}
          </div>
        ) : (
          <div id={`${id}-json`} role="tabpanel">
            <label htmlFor={`${id}-schema`}>{t('flow.start.schema')}</label>
            <textarea
              id={`${id}-schema`}
              rows={14}
              value={json}
              spellCheck={false}
              aria-invalid={jsonError ? true : undefined}
              onChange={(e) => {
                const text = e.target.value;
                setJson(text);
                let parsed: unknown;
                try {
                  parsed = JSON.parse(text);
                } catch (err) {
                  setJsonError(t('flow.input.badJson', { message: (err as Error).message }));
                  return;
                }
                if (
                  !isRecord(parsed) ||
                  parsed['type'] !== 'object' ||
                  ('properties' in parsed && !isRecord(parsed['properties']))
                ) {
                  setJsonError(t('flow.start.schemaShape'));
                  return;
                }
                setJsonError(undefined);
                setRows(rowsOf(parsed));
                emit(parsed);
              }}
            />
            {jsonError ? (
              <div className="field-error" role="alert">
                {jsonError} {t('flow.start.notApplied')}
              </div>
            ) : null}
          </div>
        )}
      </div>
    </aside>
  );
}
