import { useMemo } from 'react';
import type { ToolDescriptor } from '@switchyard/contracts';
import type { RunView } from '../runs/model';
import type { NodeIssue } from './check';
import type { EditorNode, FlowDoc } from './doc';
import { NodePanel } from './panel/NodePanel';
import { sourcesFor } from './panel/fields';
import { StartPanel } from './panel/StartPanel';
import type { ToolNodeData } from './types';

/** The right-hand panel for the one selected node: a tool node's inputs, or the start node's inputs. */
export function FlowSidePanel({
  node,
  doc,
  tools,
  issues,
  run,
  onChange,
  onInputs,
  onReferenceNode,
  onClose,
}: {
  node: EditorNode;
  doc: FlowDoc;
  tools: readonly ToolDescriptor[];
  issues: readonly NodeIssue[];
  run: RunView | undefined;
  onChange(data: ToolNodeData): void;
  onInputs(schema: Record<string, unknown>): void;
  onReferenceNode(source: string): void;
  onClose(): void;
}) {
  const results = useMemo(() => {
    const out: Record<string, unknown> = {};
    for (const [id, s] of run?.steps ?? []) if (s.hasResult && !s.truncated) out[id] = s.result;
    return out;
  }, [run]);
  const sources = useMemo(
    () =>
      node.type === 'tool'
        ? sourcesFor({ nodeId: node.id, graph: doc, inputSchema: doc.inputSchema, tools, results })
        : [],
    [node.id, node.type, doc, tools, results],
  );
  const panelIssues = issues.map((i) => ({ path: i.field, message: i.message }));
  if (node.type === 'start')
    return (
      <aside className="flow-side" aria-label={node.id}>
        <StartPanel
          inputSchema={doc.inputSchema}
          onChange={onInputs}
          issues={panelIssues}
          onClose={onClose}
        />
      </aside>
    );
  if (node.type !== 'tool') return null;
  const data = node.data as ToolNodeData;
  return (
    <aside className="flow-side" aria-label={node.id}>
      <NodePanel
        node={{ id: node.id, data }}
        tool={tools.find((x) => x.name === data.tool)}
        sources={sources}
        issues={panelIssues}
        {...(Object.hasOwn(results, node.id) ? { lastResult: results[node.id] } : {})}
        onChange={onChange}
        onReferenceNode={onReferenceNode}
        onClose={onClose}
      />
    </aside>
  );
}
