import {
  AppError,
  Rpc,
  type FlowProposal,
  type FlowSnapshot,
  type ToolDescriptor,
  type Workflow,
} from '@switchyard/contracts';
import { InMemoryBus } from '@switchyard/testing';
import { FlowAssistant } from './flow-assistant';

const WF = '00000000-0000-4000-8000-0000000000f1';
const RUN = '00000000-0000-4000-8000-0000000000f2';
const OWNER = '00000000-0000-4000-8000-0000000000f3';
const ctx = { correlationId: 'test', ownerId: OWNER, role: 'user' as const };

const CATALOG: ToolDescriptor[] = [
  {
    name: 'wait',
    description: 'waits',
    effect: 'read',
    idempotent: true,
    source: 'builtin',
    inputSchema: { type: 'object', properties: { ms: { type: 'integer' }, value: {} }, required: ['ms'] },
  },
];
const start = { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} };
const wait = (id: string, args: Record<string, unknown>) => ({
  id,
  type: 'tool',
  position: { x: 200, y: 0 },
  data: { tool: 'wait', arguments: args },
});

function workflow(revision: number): Workflow {
  return {
    id: WF,
    ownerId: OWNER,
    name: 'mine',
    description: 'kept',
    revision,
    publishedVersion: null,
    tool: null,
    createdAt: '',
    updatedAt: '',
    lastRun: null,
    inputSchema: { type: 'object', properties: {} },
    plan: { steps: [{ id: 'a', tool: 'wait', description: '', arguments: { ms: 0 }, dependsOn: [] }] },
    graph: null,
  };
}

function setup(snapshot: FlowSnapshot) {
  const bus = new InMemoryBus();
  const proposals: FlowProposal[] = [];
  const saved: unknown[] = [];
  const assistant = new FlowAssistant(snapshot, CATALOG, {
    bus,
    ctx,
    permissionMode: 'ask',
    onProposal: (p) => void proposals.push(p),
    onSaved: (s) => void saved.push(s),
  });
  const tools = new Map(assistant.tools().map((t) => [t.descriptor.name, t]));
  const use = (name: string, args: Record<string, unknown> = {}) => {
    const t = tools.get(name);
    if (!t) throw new Error(`no tool ${name}`);
    return t.call(args, 'call-1');
  };
  return { bus, proposals, saved, use, tools };
}

describe('FlowAssistant (request-scoped tools over the canvas a turn carries)', () => {
  it('inspects and diagnoses an unsaved, invalid canvas without touching anything', async () => {
    const { use, bus } = setup({
      graph: { nodes: [start, wait('a', {}), wait('b', { ms: 1, value: '{{node.zz.result}}' })], edges: [] },
      inputSchema: { type: 'object', properties: {} },
    });
    const seen = (await use('inspect_current_flow')) as {
      nodes: unknown[];
      diagnostics: Array<{ kind: string }>;
    };
    expect(seen.nodes).toHaveLength(3);
    expect(seen.diagnostics.map((d) => d.kind).sort()).toEqual(['malformed_reference', 'missing_argument']);
    const diagnosed = (await use('diagnose_current_flow')) as { diagnostics: unknown[] };
    expect(diagnosed.diagnostics).toEqual(seen.diagnostics);
    expect(bus.traffic.requests).toEqual([]);
  });

  it('proposes without writing; later edits build on the pending proposal, which stays made against the canvas', async () => {
    const snapshot: FlowSnapshot = {
      workflowId: WF,
      revision: 4,
      graph: { nodes: [start, wait('a', { ms: 0 })], edges: [{ source: 'start', target: 'a' }] },
      inputSchema: { type: 'object', properties: {} },
    };
    const { use, proposals, bus } = setup(snapshot);
    await use('edit_current_flow', {
      mode: 'edit',
      summary: 'add b',
      ops: [
        { op: 'add_node', node: wait('b', { ms: 1 }) },
        { op: 'add_edge', source: 'a', target: 'b' },
      ],
    });
    const second = (await use('edit_current_flow', {
      mode: 'edit',
      summary: 'describe b',
      ops: [{ op: 'update_node', id: 'b', data: { description: 'second' } }],
    })) as { valid: boolean };
    expect(second.valid).toBe(true);
    expect(proposals).toHaveLength(2);
    const last = proposals[1] as FlowProposal;
    expect(last.baseRevision).toBe(4);
    expect(last.diff).toMatchObject({ addedNodes: ['b'], addedEdges: [{ source: 'a', target: 'b' }] });
    expect(last.request).toMatchObject({
      mode: 'edit',
      ops: [{ op: 'add_node' }, { op: 'add_edge' }, { op: 'update_node' }],
    });
    expect(bus.traffic.requests).toEqual([]);
    // An edit that cannot apply is an error the model reads; the pending proposal stays.
    await expect(
      use('edit_current_flow', { mode: 'edit', summary: 'x', ops: [{ op: 'remove_node', id: 'ghost' }] }),
    ).rejects.toMatchObject({
      code: 'validation_failed',
      message: expect.stringContaining('no node ghost'),
    });
    await expect(use('edit_current_flow', { mode: 'sideways' })).rejects.toBeInstanceOf(AppError);
    expect(proposals).toHaveLength(2);
  });

  it('refuses to run an invalid graph, and saves then runs a valid one through the revision check', async () => {
    const snapshot: FlowSnapshot = {
      workflowId: WF,
      revision: 4,
      graph: { nodes: [start, wait('a', {})], edges: [] },
      inputSchema: { type: 'object', properties: {} },
    };
    const { use, bus, saved } = setup(snapshot);
    await expect(use('run_current_flow')).rejects.toMatchObject({
      code: 'validation_failed',
      message: expect.stringContaining('not valid'),
    });
    expect(bus.traffic.requests).toEqual([]);

    await use('edit_current_flow', {
      mode: 'edit',
      summary: 'fix',
      ops: [{ op: 'update_node', id: 'a', data: { arguments: { ms: 0 } } }],
    });
    const updates: unknown[] = [];
    bus.answer(Rpc.workflows.get, () => workflow(4));
    bus.answer(Rpc.workflows.update, (req) => {
      updates.push(req);
      return workflow(5);
    });
    bus.answer(Rpc.workflows.run, () => ({ runId: RUN }));
    expect(await use('run_current_flow', { inputs: {} })).toEqual({
      workflowId: WF,
      revision: 5,
      runId: RUN,
    });
    expect(updates).toEqual([
      expect.objectContaining({
        id: WF,
        body: expect.objectContaining({
          revision: 4,
          name: 'mine',
          description: 'kept',
          graph: expect.objectContaining({ nodes: expect.any(Array) }),
        }),
      }),
    ]);
    expect(saved).toEqual([{ workflowId: WF, revision: 5, runId: RUN }]);
  });

  it('creates a never-saved flow before running it', async () => {
    const { use, bus } = setup({
      name: 'fresh',
      graph: { nodes: [start, wait('a', { ms: 0 })], edges: [] },
      inputSchema: { type: 'object', properties: {} },
    });
    bus.answer(Rpc.workflows.create, (req) => ({ ...workflow(1), name: req.name }));
    bus.answer(Rpc.workflows.run, () => ({ runId: RUN }));
    expect(await use('run_current_flow')).toEqual({ workflowId: WF, revision: 1, runId: RUN });
  });
});
