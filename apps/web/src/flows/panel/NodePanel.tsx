import { useId, type KeyboardEvent } from 'react';
import type { ToolDescriptor } from '@switchyard/contracts';
import { retrySafe } from '@switchyard/plan';
import { useI18n } from '../../i18n/i18n';
import type { InputMode, RefSource, ToolNodeData } from '../types';
import { nodeSource, type ToolWithOutput } from './fields';
import { InputField } from './InputField';
import { JsonTree } from './JsonTree';
import { ReferenceTree } from './ReferenceTree';
import { IssueList } from './IssueList';

export interface PanelIssue {
  /** Relative to the node's data: `arguments.x`, `arguments.x.y`, `retry`, `tool`… */
  readonly path: string;
  readonly message: string;
}

export interface NodePanelProps {
  readonly node: { readonly id: string; readonly data: ToolNodeData };
  readonly tool: ToolDescriptor | undefined;
  /** What this node's inputs may reference (`sourcesFor`). */
  readonly sources: readonly RefSource[];
  readonly issues: readonly PanelIssue[];
  /** This node's result in the last run, when there was one. */
  readonly lastResult?: unknown;
  readonly onChange: (data: ToolNodeData) => void;
  /** An upstream node's output was chosen: the canvas adds the edge if it is not drawn yet. */
  readonly onReferenceNode: (nodeId: string) => void;
  readonly onClose: () => void;
}

const DEFAULT_RETRY = { attempts: 3, backoffMs: 1_000 };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether an issue path concerns the argument `name` (itself or a part of it). */
export function issueAt(path: string, name: string): boolean {
  const base = `arguments.${name}`;
  return path === base || path.startsWith(`${base}.`) || path.startsWith(`${base}[`);
}

/** A push pin (an emoji is not in every font). */
export function PinIcon() {
  return (
    <svg className="pin-icon" width="14" height="14" viewBox="0 0 16 16" aria-hidden="true">
      <path
        d="M10.5 1.5 14.5 5.5 13 6.3 11.2 8.1 11.6 11.6 10.5 12.7 7.6 9.8 3 14.4 1.6 13 6.2 8.4 3.3 5.5 4.4 4.4 7.9 4.8 9.7 3Z"
        fill="currentColor"
      />
    </svg>
  );
}

function clamp(n: number, min: number, max: number): number {
  return Number.isFinite(n) ? Math.min(max, Math.max(min, Math.round(n))) : min;
}

/** The editor of one tool node: its arguments, behaviour on failure and approval, pin and output. */
export function NodePanel({
  node,
  tool,
  sources,
  issues,
  lastResult,
  onChange,
  onReferenceNode,
  onClose,
}: NodePanelProps) {
  const { t } = useI18n();
  const id = useId();
  const data = node.data;
  const schema = tool?.inputSchema ?? {};
  const props = isRecord(schema['properties']) ? schema['properties'] : {};
  const required = new Set(
    Array.isArray(schema['required']) ? (schema['required'] as unknown[]).map(String) : [],
  );
  const args = data.arguments ?? {};
  const names = [...Object.keys(props), ...Object.keys(args).filter((k) => !Object.hasOwn(props, k))];
  const update = (patch: Partial<ToolNodeData>) => {
    const next: ToolNodeData = { ...data, ...patch };
    for (const k of Object.keys(patch)) if (patch[k] === undefined) delete next[k];
    onChange(next);
  };
  const setArgument = (name: string, value: unknown, mode: InputMode) => {
    const nextArgs = { ...args };
    if (value === undefined) delete nextArgs[name];
    else nextArgs[name] = value;
    update({ arguments: nextArgs, inputModes: { ...data.inputModes, [name]: mode } });
  };
  const placed = (path: string) =>
    names.some((n) => issueAt(path, n)) || path === 'retry' || path.startsWith('retry.');
  const general = issues.filter((i) => !placed(i.path));
  const retryIssues = issues.filter((i) => i.path === 'retry' || i.path.startsWith('retry.'));
  const canRetry = tool !== undefined && retrySafe(tool);
  const pinned = isRecord(data.pinned) && 'result' in data.pinned;
  const output = pinned ? data.pinned?.result : lastResult;
  const hasOutput = pinned || lastResult !== undefined;
  const self = nodeSource(
    node,
    tool as ToolWithOutput | undefined,
    hasOutput ? { value: output } : undefined,
  );

  const onKeyDown = (e: KeyboardEvent<HTMLElement>) => {
    if (e.key === 'Escape' && !e.defaultPrevented) onClose();
  };

  return (
    <aside
      className="node-panel"
      aria-labelledby={`${id}-title`}
      onKeyDown={onKeyDown}
      data-node-id={node.id}
    >
      <header className="node-panel-head">
        <h2 id={`${id}-title`}>
          {pinned ? (
            <span className="pin" title={t('flow.node.pinnedTitle')}>
              <PinIcon />
              <span className="visually-hidden">{t('flow.node.pinned')}</span>
            </span>
          ) : null}
          {data.label || data.tool}
        </h2>
        <button type="button" className="link" aria-label={t('common.close')} onClick={onClose}>
          ×
        </button>
      </header>
      <div className="node-panel-body">
        <p className="node-panel-tool">
          <code>{data.tool}</code> <span className="hint">· {node.id}</span>
        </p>
        {tool ? (
          <p className="hint">{tool.description}</p>
        ) : (
          <div className="notice" role="alert">
            {t('flow.node.unknownTool', { tool: data.tool })}
          </div>
        )}
        <IssueList issues={general} />

        <label htmlFor={`${id}-label`}>{t('flow.node.label')}</label>
        <input
          id={`${id}-label`}
          type="text"
          value={data.label ?? ''}
          placeholder={data.tool}
          onChange={(e) => update({ label: e.target.value || undefined })}
        />
        <label htmlFor={`${id}-description`}>{t('flow.node.description')}</label>
        <textarea
          id={`${id}-description`}
          className="plain"
          rows={2}
          value={data.description ?? ''}
          onChange={(e) => update({ description: e.target.value || undefined })}
        />

        <section aria-labelledby={`${id}-args`}>
          <h3 id={`${id}-args`}>{t('flow.node.arguments')}</h3>
          {names.length ? null : <p className="hint">{t('flow.node.noArguments')}</p>}
          {names.map((name) => (
            <InputField
              key={name}
              name={name}
              schema={props[name]}
              required={required.has(name)}
              value={args[name]}
              mode={data.inputModes?.[name]}
              sources={sources}
              issues={issues.filter((i) => issueAt(i.path, name)).map((i) => i.message)}
              onChange={(value, mode) => setArgument(name, value, mode)}
              onReferenceNode={onReferenceNode}
            />
          ))}
        </section>

        <section aria-labelledby={`${id}-behaviour`}>
          <h3 id={`${id}-behaviour`}>{t('flow.node.behaviour')}</h3>
          <label className="check">
            <input
              type="checkbox"
              checked={data.requiresApproval === true}
              onChange={(e) => update({ requiresApproval: e.target.checked || undefined })}
            />
            {t('flow.node.requiresApproval')}
          </label>
          {canRetry ? (
            <div className="retry">
              <label className="check">
                <input
                  type="checkbox"
                  checked={data.retry !== undefined}
                  onChange={(e) => update({ retry: e.target.checked ? DEFAULT_RETRY : undefined })}
                />
                {t('flow.node.retry')}
              </label>
              {data.retry ? (
                <div className="row">
                  <div>
                    <label htmlFor={`${id}-attempts`}>{t('flow.node.attempts')}</label>
                    <input
                      id={`${id}-attempts`}
                      type="number"
                      min={1}
                      max={5}
                      step={1}
                      value={data.retry.attempts}
                      onChange={(e) =>
                        update({
                          retry: {
                            ...DEFAULT_RETRY,
                            ...data.retry,
                            attempts: clamp(Number(e.target.value), 1, 5),
                          },
                        })
                      }
                    />
                  </div>
                  <div>
                    <label htmlFor={`${id}-backoff`}>{t('flow.node.backoff')}</label>
                    <input
                      id={`${id}-backoff`}
                      type="number"
                      min={0}
                      max={600_000}
                      step={100}
                      value={data.retry.backoffMs ?? DEFAULT_RETRY.backoffMs}
                      onChange={(e) =>
                        update({
                          retry: {
                            ...DEFAULT_RETRY,
                            ...data.retry,
                            backoffMs: clamp(Number(e.target.value), 0, 600_000),
                          },
                        })
                      }
                    />
                  </div>
                </div>
              ) : null}
            </div>
          ) : (
            <p className="hint">{t('flow.node.noRetry')}</p>
          )}
          {!canRetry && data.retry ? (
            <div className="notice">
              {t('flow.node.retryRefused')}{' '}
              <button type="button" onClick={() => update({ retry: undefined })}>
                {t('flow.node.retryRemove')}
              </button>
            </div>
          ) : null}
          {retryIssues.map((i, k) => (
            <div key={k} className="field-error" role="alert">
              {i.message}
            </div>
          ))}
        </section>

        <section aria-labelledby={`${id}-output`}>
          <h3 id={`${id}-output`}>{t('flow.node.output')}</h3>
          {pinned ? (
            <div className="notice pinned-note">
              <span>
                <PinIcon /> {t('flow.node.pinnedTitle')}
              </span>
              <button type="button" onClick={() => update({ pinned: undefined })}>
                {t('flow.node.unpin')}
              </button>
            </div>
          ) : lastResult !== undefined ? (
            <button type="button" onClick={() => update({ pinned: { result: lastResult } })}>
              <PinIcon /> {t('flow.node.pin')}
            </button>
          ) : null}
          {self.root.children.length || self.root.type !== 'any' ? (
            <ReferenceTree sources={[self]} label={t('flow.node.outputFields')} />
          ) : null}
          {hasOutput ? (
            <>
              <h3>{pinned ? t('flow.node.pinnedValue') : t('flow.node.lastRun')}</h3>
              <JsonTree value={output} label={t('flow.node.outputValue')} />
            </>
          ) : (
            <p className="hint">{t('flow.node.noOutput')}</p>
          )}
        </section>
      </div>
    </aside>
  );
}
