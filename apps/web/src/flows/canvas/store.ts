import { createContext, useContext, useSyncExternalStore } from 'react';
import type { ToolDescriptor } from '@switchyard/contracts';
import type { NodeStatus } from '../../runs/model';

/**
 * What the canvas's cards show beside their own data: the catalog (colour, ports), a live run's
 * status per node, and problems per node. Cards subscribe to their own slice, so a status change
 * re-renders one card, not two hundred.
 */
/** What a card can ask of the editor. */
export interface CanvasActions {
  noteText(id: string, text: string): void;
  deleteEdge(id: string): void;
  /** A resize (or drag) begins: the undo step it makes starts here… */
  beginGesture(): void;
  /** …and ends here. */
  endGesture(): void;
}

const NO_ACTIONS: CanvasActions = {
  noteText: () => undefined,
  deleteEdge: () => undefined,
  beginGesture: () => undefined,
  endGesture: () => undefined,
};

export class CanvasInfo {
  actions: CanvasActions = NO_ACTIONS;
  private tools = new Map<string, ToolDescriptor>();
  private statuses = new Map<string, NodeStatus>();
  private issues = new Map<string, readonly string[]>();
  private inputSchema: Record<string, unknown> = {};
  private listeners = new Set<() => void>();

  readonly subscribe = (fn: () => void) => {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  };

  private emit() {
    for (const fn of this.listeners) fn();
  }

  tool(name: string | undefined): ToolDescriptor | undefined {
    return name ? this.tools.get(name) : undefined;
  }
  status(id: string): NodeStatus | undefined {
    return this.statuses.get(id);
  }
  issuesOf(id: string): readonly string[] | undefined {
    return this.issues.get(id);
  }
  inputs(): Record<string, unknown> {
    return this.inputSchema;
  }

  setTools(tools: readonly ToolDescriptor[]) {
    this.tools = new Map(tools.map((t) => [t.name, t]));
    this.emit();
  }
  setStatuses(statuses: ReadonlyMap<string, NodeStatus>) {
    this.statuses = new Map(statuses);
    this.emit();
  }
  setIssues(issues: ReadonlyMap<string, readonly string[]>) {
    // Keep each node's array when its messages did not change: its card does not re-render.
    const next = new Map<string, readonly string[]>();
    for (const [id, list] of issues) {
      const old = this.issues.get(id);
      next.set(id, old && old.length === list.length && old.every((m, i) => m === list[i]) ? old : list);
    }
    this.issues = next;
    this.emit();
  }
  setInputSchema(schema: Record<string, unknown>) {
    if (schema === this.inputSchema) return;
    this.inputSchema = schema;
    this.emit();
  }
}

export const CanvasInfoContext = createContext<CanvasInfo>(new CanvasInfo());

export function useCanvasInfo<T>(select: (info: CanvasInfo) => T): T {
  const info = useContext(CanvasInfoContext);
  return useSyncExternalStore(info.subscribe, () => select(info));
}
