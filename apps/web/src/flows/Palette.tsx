import { memo, useMemo, useState, type DragEvent } from 'react';
import type { ToolDescriptor } from '@switchyard/contracts';
import { useI18n } from '../i18n/i18n';
import { TOOL_DRAG_TYPE } from './canvas/FlowCanvas';
import { Icon } from './icons';
import { kindOfTool, NODE_COLORS, type NodeKind } from './tokens';

/** A tool that says what it returns is a declared node: typed ports, examples, help. */
export function isDeclared(tool: ToolDescriptor): boolean {
  return (tool as { outputSchema?: unknown }).outputSchema !== undefined;
}

const ORDER: NodeKind[] = ['files', 'web', 'sql', 'command', 'flow', 'tasks', 'workflow', 'mcp', 'tool'];

/**
 * The node palette: the caller's catalog grouped by kind, searchable, groups collapsible. Declared
 * nodes come first; "show all tools" adds every other callable tool, its inputs derived from its
 * JSON Schema. Drag an item onto the canvas, or press it to add it in the middle of the view.
 */
export const Palette = memo(function Palette({
  tools,
  onAdd,
  onAddNote,
}: {
  tools: readonly ToolDescriptor[];
  onAdd(tool: string): void;
  onAddNote(): void;
}) {
  const { t } = useI18n();
  const [q, setQ] = useState('');
  const [all, setAll] = useState(false);
  const [closed, setClosed] = useState<ReadonlySet<NodeKind>>(new Set());
  const hidden = useMemo(() => tools.filter((x) => !isDeclared(x)).length, [tools]);
  const groups = useMemo(() => {
    const needle = q.trim().toLowerCase();
    const shown = tools.filter(
      (x) =>
        (all || isDeclared(x) || needle !== '') &&
        (needle === '' ||
          x.name.toLowerCase().includes(needle) ||
          x.description.toLowerCase().includes(needle)),
    );
    const byKind = new Map<NodeKind, ToolDescriptor[]>();
    for (const tool of shown) {
      const kind = kindOfTool(tool.name, tool.source);
      byKind.set(kind, [...(byKind.get(kind) ?? []), tool]);
    }
    return ORDER.filter((k) => byKind.has(k)).map((k) => ({
      kind: k,
      tools: (byKind.get(k) ?? []).sort(
        (a, b) => Number(isDeclared(b)) - Number(isDeclared(a)) || a.name.localeCompare(b.name),
      ),
    }));
  }, [tools, q, all]);

  const toggle = (kind: NodeKind) =>
    setClosed((s) => {
      const next = new Set(s);
      if (!next.delete(kind)) next.add(kind);
      return next;
    });
  const onDragStart = (e: DragEvent, tool: string) => {
    e.dataTransfer.setData(TOOL_DRAG_TYPE, tool);
    e.dataTransfer.effectAllowed = 'copy';
  };

  return (
    <aside className="flow-palette" aria-label={t('flow.palette')}>
      <input
        type="search"
        value={q}
        placeholder={t('flow.palette.search')}
        aria-label={t('flow.palette.search')}
        onChange={(e) => setQ(e.target.value)}
      />
      <button type="button" className="flow-palette-note" onClick={onAddNote}>
        <Icon name="note" /> {t('flow.note.add')}
      </button>
      {groups.length === 0 ? <p className="muted">{t('flow.palette.none')}</p> : null}
      {groups.map((g) => (
        <section key={g.kind} className="flow-palette-group">
          <button
            type="button"
            className="flow-palette-head"
            aria-expanded={!closed.has(g.kind)}
            onClick={() => toggle(g.kind)}
          >
            <i style={{ background: NODE_COLORS[g.kind] }} />
            {t(`flow.kind.${g.kind}`)} <span className="muted">{g.tools.length}</span>
          </button>
          {closed.has(g.kind) ? null : (
            <ul>
              {g.tools.map((tool) => (
                <li key={tool.name}>
                  <button
                    type="button"
                    draggable
                    className="flow-palette-item"
                    title={tool.description}
                    data-tool={tool.name}
                    onDragStart={(e) => onDragStart(e, tool.name)}
                    onClick={() => onAdd(tool.name)}
                  >
                    <span
                      className="flow-badge small"
                      style={{ background: NODE_COLORS[g.kind] }}
                      aria-hidden="true"
                    >
                      <Icon name={g.kind} size={13} />
                    </span>
                    <span className="name">{tool.name}</span>
                    {isDeclared(tool) ? null : (
                      <span className="muted small">{t('flow.palette.schema')}</span>
                    )}
                  </button>
                </li>
              ))}
            </ul>
          )}
        </section>
      ))}
      <label className="flow-palette-all">
        <input type="checkbox" checked={all} onChange={(e) => setAll(e.target.checked)} />
        {t('flow.palette.all', { n: hidden })}
      </label>
    </aside>
  );
});
