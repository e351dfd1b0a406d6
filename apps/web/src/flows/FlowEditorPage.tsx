import {
  useCallback,
  useDeferredValue,
  useEffect,
  useId,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
} from 'react';
import { Link, useLocation, useNavigate, useParams } from 'react-router';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { ReactFlowProvider, useReactFlow } from '@xyflow/react';
import type { ChatEvent, FlowProposal, ToolDescriptor, Workflow } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { useAuth } from '../api/auth';
import { ApiError, call } from '../api/client';
import type { MessageKey } from '../i18n/en';
import { useI18n } from '../i18n/i18n';
import { useCatalog } from '../runs/catalog';
import type { NodeStatus } from '../runs/model';
import { ErrorNote, Loading } from '../ui/bits';
import { AssistantPanel } from './assistant/AssistantPanel';
import { snapshotOf } from './assistant/snapshot';
import { CanvasInfo, CanvasInfoContext } from './canvas/store';
import { FlowCanvas } from './canvas/FlowCanvas';
import { checkFlow, fromFieldIssue, issuesByNode, type FlowIssue } from './check';
import { readClip, writeClip } from './clipboard';
import { ConflictDialog } from './ConflictDialog';
import {
  addNote,
  addToolNode,
  autoLayout,
  connect,
  copyOf,
  docFromGraph,
  emptyDoc,
  freeSpot,
  graphOf,
  graphOfPlan,
  NOTE_H,
  NOTE_W,
  paste,
  removeElements,
  TOOL_H,
  TOOL_W,
  updateNodeData,
  type FlowDoc,
} from './doc';
import { FlowSidePanel } from './FlowSidePanel';
import { Icon } from './icons';
import { Palette } from './Palette';
import { applyToDoc, previewOf } from './proposal';
import { ProposalBar } from './ProposalBar';
import { RunFlowDialog } from './RunFlowDialog';
import { RunDock } from './RunDock';
import { useFlowEditor } from './useFlowEditor';
import { useLeaveGuard } from './useLeaveGuard';
import { useLiveRun } from './useLiveRun';
import { VersionsDrawer } from './VersionsDrawer';

const PASTE_OFFSET = { x: 40, y: 40 };

/** `/flows/:flowId` (and `/flows/new`): the flow builder. */
export default function FlowEditorPage() {
  const { flowId = 'new' } = useParams();
  const isNew = flowId === 'new';
  const workflow = useQuery({
    queryKey: ['workflow', flowId],
    queryFn: () => call(Routes.workflowGet, { params: { id: flowId } }),
    enabled: !isNew,
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  });
  const catalog = useCatalog();
  if (!isNew && workflow.isPending) return <Loading />;
  if (workflow.error) return <ErrorNote error={workflow.error} />;
  if (catalog.isPending) return <Loading />;
  return (
    <ReactFlowProvider>
      <FlowEditor key={flowId} workflow={isNew ? null : (workflow.data ?? null)} tools={catalog.data ?? []} />
    </ReactFlowProvider>
  );
}

/** The doc a stored workflow opens as: its graph, or its plan drawn (laid out) when it has none. */
function docOf(w: Workflow | null): FlowDoc {
  if (!w) return emptyDoc();
  return docFromGraph(w.graph ?? graphOfPlan(w.plan as never), w.inputSchema).doc;
}

interface Meta {
  readonly id: string | null;
  readonly name: string;
  readonly description: string;
  readonly revision: number;
  readonly publishedVersion: number | null;
}

function metaOf(w: Workflow | null, untitled: string): Meta {
  return w
    ? {
        id: w.id,
        name: w.name,
        description: w.description,
        revision: w.revision,
        publishedVersion: w.publishedVersion,
      }
    : { id: null, name: untitled, description: '', revision: 0, publishedVersion: null };
}

/** What only edits to the flow's meaning change (not positions or selection): checks rerun on it. */
function meaningKey(doc: FlowDoc): string {
  return JSON.stringify([
    doc.nodes.map((n) => [n.id, n.type, n.data]),
    doc.edges.map((e) => [e.source, e.target]),
    doc.inputSchema,
  ]);
}

/** What a page carries to the next when the assistant's first save of a new flow moves it to `/flows/{id}`. */
interface CarriedOver {
  readonly runId?: string;
  readonly assistantSession?: string;
}

function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName));
}

function FlowEditor({ workflow, tools }: { workflow: Workflow | null; tools: readonly ToolDescriptor[] }) {
  const { t } = useI18n();
  const { me } = useAuth();
  const navigate = useNavigate();
  const carried = (useLocation().state ?? {}) as CarriedOver;
  const queries = useQueryClient();
  const flow = useReactFlow();
  const initial = useMemo(() => docOf(workflow), [workflow]);
  const editor = useFlowEditor(initial);
  const { doc, edit, live } = editor;
  const [meta, setMeta] = useState<Meta>(() => metaOf(workflow, t('flow.untitled')));
  const [savedMeta, setSavedMeta] = useState(meta);
  /** Edits the server does not have yet (the leave guard asks about these). */
  const changed = editor.dirty || meta.name !== savedMeta.name || meta.description !== savedMeta.description;
  const dirty = changed || meta.id === null;
  const { prompt: leavePrompt, release } = useLeaveGuard(changed);
  // Navigating once the saved state has rendered, so the leave guard sees nothing unsaved.
  const [goTo, setGoTo] = useState<{ to: string; replace: boolean; state?: CarriedOver } | undefined>();
  useEffect(() => {
    if (!goTo || changed) return;
    release();
    setGoTo(undefined);
    navigate(goTo.to, { replace: goTo.replace, state: goTo.state });
  }, [changed, goTo, release, navigate]);

  // The builder takes the whole window under the top bar (a class, not a :has() selector, which
  // would make every change inside the canvas re-check the page's style).
  // Before the first paint: the canvas must have its full size when xyflow first fits the view.
  useLayoutEffect(() => {
    document.body.classList.add('full-workspace');
    return () => document.body.classList.remove('full-workspace');
  }, []);
  const info = useMemo(() => new CanvasInfo(), []);
  useEffect(() => info.setTools(tools), [info, tools]);
  useEffect(() => info.setInputSchema(doc.inputSchema), [info, doc.inputSchema]);

  // What is derived from the whole document (problems, what a node can reference) follows it at
  // React's pace: a drag re-renders the canvas every frame, these catch up when it pauses.
  const settled = useDeferredValue(doc);
  // Problems: the browser's own check on every change of meaning, the server's until the next one.
  const meaning = useMemo(() => meaningKey(settled), [settled]);
  const settledRef = useRef(settled);
  settledRef.current = settled;
  /** The document as it is now (saves and copies take this one). */
  const docRef = useRef(doc);
  docRef.current = doc;
  const localIssues = useMemo(() => {
    // Timed as a user-timing measure: the web bench reads it.
    const t0 = performance.now();
    const found = checkFlow(settledRef.current, tools);
    performance.measure('switchyard:flow-check', { start: t0, end: performance.now() });
    return found;
  }, [meaning, tools]); // eslint-disable-line react-hooks/exhaustive-deps
  const [serverIssues, setServerIssues] = useState<{ key: string; issues: FlowIssue[] }>({
    key: '',
    issues: [],
  });
  const issues = serverIssues.key === meaning ? serverIssues.issues : localIssues;
  // Each problem named in the page's language, the checker's own sentence after it.
  const byNode = useMemo(() => {
    const named = issues.map((i) => {
      const key = `flow.issue.${i.code}` as MessageKey;
      const label = t(key);
      return label === key ? i : { ...i, message: `${label}: ${i.message}` };
    });
    return issuesByNode(named, settledRef.current);
  }, [issues, t]);
  useEffect(() => {
    info.setIssues(new Map([...byNode].map(([id, list]) => [id, list.map((i) => i.message)])));
  }, [info, byNode]);

  // A run shown on the canvas: its steps' statuses on the cards.
  const [runId, setRunId] = useState<string | undefined>(carried.runId);
  const run = useLiveRun(runId);
  useEffect(() => {
    const statuses = new Map<string, NodeStatus>();
    for (const [id, s] of run?.steps ?? []) statuses.set(id, s.status);
    info.setStatuses(statuses);
  }, [info, run]);

  const [busy, setBusy] = useState<'save' | 'publish' | undefined>();
  const [error, setError] = useState<unknown>();
  const [conflict, setConflict] = useState(false);
  const [running, setRunning] = useState(false);
  const [drawer, setDrawer] = useState(false);

  const adopt = useCallback(
    (w: Workflow, sent?: FlowDoc) => {
      const next = metaOf(w, '');
      setMeta((m) => ({
        ...next,
        name: sent ? m.name : next.name,
        description: sent ? m.description : next.description,
      }));
      setSavedMeta(next);
      queries.setQueryData(['workflow', w.id], w);
      void queries.invalidateQueries({ queryKey: ['workflows'] });
      if (sent) editor.markSaved(sent);
      else editor.reset(docOf(w));
    },
    [editor, queries],
  );

  /** Saves the flow; resolves to the saved workflow, or undefined when the save was refused. */
  const save = useCallback(
    async (asCopy = false, doc?: FlowDoc): Promise<Workflow | undefined> => {
      const sent = doc ?? docRef.current;
      const body = {
        name: asCopy ? t('flow.copyName', { name: meta.name }) : meta.name,
        description: meta.description,
        inputSchema: sent.inputSchema,
        graph: graphOf(sent),
      };
      setBusy('save');
      setError(undefined);
      try {
        const saved =
          meta.id === null || asCopy
            ? await call(Routes.workflowCreate, { body })
            : await call(Routes.workflowUpdate, {
                params: { id: meta.id },
                body: { ...body, revision: meta.revision },
              });
        if (asCopy || meta.id === null) {
          queries.setQueryData(['workflow', saved.id], saved);
          void queries.invalidateQueries({ queryKey: ['workflows'] });
          editor.markSaved(sent);
          setMeta(metaOf(saved, ''));
          setSavedMeta(metaOf(saved, ''));
          setGoTo({ to: `/flows/${saved.id}`, replace: meta.id === null });
          return saved;
        }
        adopt(saved, sent);
        return saved;
      } catch (err) {
        if (err instanceof ApiError && err.status === 409 && err.code === 'conflict') setConflict(true);
        else if (err instanceof ApiError && err.errors.length)
          setServerIssues({ key: meaningKey(sent), issues: err.errors.map(fromFieldIssue) });
        setError(err);
        return undefined;
      } finally {
        setBusy(undefined);
      }
    },
    [adopt, editor, meta, queries, t],
  );

  // A proposal under review (from the assistant): drawn on the canvas until applied or dismissed.
  const [proposal, setProposal] = useState<{ proposal: FlowProposal; problem?: string }>();
  const preview = useMemo(() => (proposal ? previewOf(doc, proposal.proposal) : undefined), [doc, proposal]);
  const applyProposal = useCallback(async () => {
    if (!proposal) return;
    const out = applyToDoc(docRef.current, meta.id ? meta.revision : undefined, proposal.proposal);
    if (!out.ok) {
      const problem = out.stale
        ? t('proposal.stale', { reason: out.reason })
        : t('proposal.refused', { reason: out.reason });
      setProposal({ ...proposal, problem });
      return;
    }
    // Checked as any edit is before it is saved; a proposal that does not pass stays under review.
    const found = checkFlow(out.doc, tools);
    if (found.length) {
      setProposal({ ...proposal, problem: t('proposal.refused', { reason: found[0]?.message ?? '' }) });
      return;
    }
    edit(() => out.doc);
    const saved = await save(false, out.doc);
    if (saved) setProposal(undefined);
    else setProposal({ ...proposal, problem: t('proposal.refused', { reason: t('proposal.invalid') }) });
  }, [edit, meta.id, meta.revision, proposal, save, t, tools]);

  // The docked assistant: its turns see the canvas as it is when each message is sent.
  const assistantId = useId();
  const assistantButton = useRef<HTMLButtonElement>(null);
  const [assistantOpen, setAssistantOpen] = useState(carried.assistantSession !== undefined);
  const assistantSession = useRef(carried.assistantSession);
  const flowSnapshot = useCallback(() => snapshotOf(docRef.current, meta, run), [meta, run]);
  /** The assistant saved the pending edits (and maybe started a run): the page takes the saved flow. */
  const assistantSaved = useCallback(
    async (workflowId: string, savedRunId: string | undefined) => {
      setProposal(undefined);
      setError(undefined);
      try {
        const w = await call(Routes.workflowGet, { params: { id: workflowId } });
        adopt(w);
        if (meta.id !== w.id) {
          // A flow never saved before now has its page, as after its first save.
          setGoTo({
            to: `/flows/${w.id}`,
            replace: meta.id === null,
            state: { runId: savedRunId, assistantSession: assistantSession.current },
          });
        } else if (savedRunId) {
          setRunId(savedRunId);
        }
      } catch (err) {
        setError(err);
      }
    },
    [adopt, meta.id],
  );
  // A new proposal comes into view, clear of the docked assistant (which covers the canvas's right side).
  const shownProposal = proposal?.proposal;
  useEffect(() => {
    if (!shownProposal) return;
    const wide = window.innerWidth > 720;
    const frame = requestAnimationFrame(
      () =>
        void flow.fitView({
          padding: {
            top: '40px',
            bottom: '70px',
            left: '40px',
            right: assistantOpen && wide ? '460px' : '40px',
          },
          maxZoom: 1,
        }),
    );
    return () => cancelAnimationFrame(frame);
  }, [shownProposal]); // eslint-disable-line react-hooks/exhaustive-deps
  const onAssistantEvent = useCallback(
    (e: ChatEvent) => {
      if (e.type === 'flow_proposal') setProposal({ proposal: e.data.proposal });
      else if (e.type === 'flow_saved') void assistantSaved(e.data.workflowId, e.data.runId);
    },
    [assistantSaved],
  );

  const saveIfNeeded = useCallback(
    async () => (dirty || meta.id === null ? save() : (workflow ?? undefined)),
    [dirty, meta.id, save, workflow],
  );

  const publish = useCallback(async () => {
    const saved = dirty ? await save() : undefined;
    const id = saved?.id ?? meta.id;
    const revision = saved?.revision ?? meta.revision;
    if (!id) return;
    setBusy('publish');
    setError(undefined);
    try {
      adopt(await call(Routes.workflowPublish, { params: { id }, body: { revision } }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(undefined);
    }
  }, [adopt, dirty, meta.id, meta.revision, save]);

  const reload = useCallback(async () => {
    if (!meta.id) return;
    setConflict(false);
    setError(undefined);
    const w = await call(Routes.workflowGet, { params: { id: meta.id } });
    adopt(w);
  }, [adopt, meta.id]);

  // Adding, copying, pasting, deleting, undoing: toolbar buttons and the usual keys.
  /** Where a node of `size` added by a click goes: the middle of the view, or the free place in view nearest it. */
  const spotFor = useCallback(
    (d: FlowDoc, size: { width: number; height: number }) => {
      const box = document.querySelector('.flow-canvas')?.getBoundingClientRect() ?? {
        x: 0,
        y: 0,
        width: 800,
        height: 600,
      };
      const from = flow.screenToFlowPosition({ x: box.x, y: box.y });
      const to = flow.screenToFlowPosition({ x: box.x + box.width, y: box.y + box.height });
      const mid = { x: (from.x + to.x) / 2, y: (from.y + to.y) / 2 };
      const at = { x: Math.round(mid.x - size.width / 2), y: Math.round(mid.y - size.height / 2) };
      return freeSpot(d, at, size, { x: from.x, y: from.y, width: to.x - from.x, height: to.y - from.y });
    },
    [flow],
  );
  const addTool = useCallback(
    (tool: string) => edit((d) => addToolNode(d, tool, spotFor(d, { width: TOOL_W, height: TOOL_H })).doc),
    [spotFor, edit],
  );
  const addNoteHere = useCallback(
    () => edit((d) => addNote(d, spotFor(d, { width: NOTE_W, height: NOTE_H })).doc),
    [spotFor, edit],
  );
  const selectedIds = useMemo(
    () => new Set(doc.nodes.filter((n) => n.selected).map((n) => n.id)),
    [doc.nodes],
  );
  const owner = me?.owner.id ?? '';
  const copy = useCallback(() => {
    const clip = copyOf(
      docRef.current,
      new Set(docRef.current.nodes.filter((n) => n.selected).map((n) => n.id)),
    );
    if (clip) writeClip(owner, clip);
  }, [owner]);
  const pasteClip = useCallback(() => {
    const clip = readClip(owner);
    if (clip) edit((d) => paste(d, clip, PASTE_OFFSET).doc);
  }, [edit, owner]);
  const removeSelected = useCallback(
    () =>
      edit((d) =>
        removeElements(
          d,
          d.nodes.filter((n) => n.selected).map((n) => n.id),
          d.edges.filter((e) => e.selected).map((e) => e.id),
        ),
      ),
    [edit],
  );
  const layout = useCallback(() => {
    edit(autoLayout);
    requestAnimationFrame(() => void flow.fitView({ padding: 0.2, maxZoom: 1 }));
  }, [edit, flow]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (isTyping(e.target)) return;
      const mod = e.metaKey || e.ctrlKey;
      if (!mod) return;
      const key = e.key.toLowerCase();
      if (key === 'z' && !e.shiftKey) editor.undo();
      else if ((key === 'z' && e.shiftKey) || key === 'y') editor.redo();
      else if (key === 'c') copy();
      else if (key === 'v') pasteClip();
      else if (key === 's') void save();
      else return;
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [copy, editor, pasteClip, save]);

  info.actions = {
    noteText: (id, text) =>
      edit((d) => updateNodeData(d, id, { ...d.nodes.find((n) => n.id === id)?.data, text }), `note:${id}`),
    deleteEdge: (id) => edit((d) => removeElements(d, [], [id])),
    beginGesture: editor.beginGesture,
    endGesture: editor.endGesture,
  };

  const selectedNode = selectedIds.size === 1 ? doc.nodes.find((n) => selectedIds.has(n.id)) : undefined;
  const flowIssues = byNode.get('') ?? [];

  return (
    <CanvasInfoContext.Provider value={info}>
      <div className="flow-editor">
        <div className="flow-toolbar" role="toolbar" aria-label={t('flow.toolbar')}>
          <Link to="/flows" className="flow-back" aria-label={t('flow.back')}>
            ←
          </Link>
          <input
            className="flow-name"
            aria-label={t('flow.name')}
            value={meta.name}
            maxLength={200}
            onChange={(e) => setMeta((m) => ({ ...m, name: e.target.value }))}
          />
          <span className={`flow-state ${dirty ? 'dirty' : ''}`} data-testid="save-state">
            {dirty ? t('flow.unsaved') : t('flow.saved', { n: meta.revision })}
            {meta.publishedVersion ? ` · ${t('flows.published', { n: meta.publishedVersion })}` : ''}
          </span>
          <div className="group">
            <button
              type="button"
              onClick={editor.undo}
              disabled={!editor.canUndo}
              aria-label={t('flow.undo')}
              title={`${t('flow.undo')} (Ctrl+Z)`}
            >
              ↶
            </button>
            <button
              type="button"
              onClick={editor.redo}
              disabled={!editor.canRedo}
              aria-label={t('flow.redo')}
              title={`${t('flow.redo')} (Ctrl+Shift+Z)`}
            >
              ↷
            </button>
            <button
              type="button"
              onClick={copy}
              disabled={selectedIds.size === 0}
              aria-label={t('flow.copy')}
              title={`${t('flow.copy')} (Ctrl+C)`}
            >
              <Icon name="copy" />
            </button>
            <button
              type="button"
              onClick={pasteClip}
              aria-label={t('flow.paste')}
              title={`${t('flow.paste')} (Ctrl+V)`}
            >
              <Icon name="paste" />
            </button>
            <button
              type="button"
              onClick={removeSelected}
              disabled={selectedIds.size === 0 && !doc.edges.some((e) => e.selected)}
              aria-label={t('flow.delete')}
              title={`${t('flow.delete')} (Delete)`}
            >
              <Icon name="trash" />
            </button>
            <button type="button" onClick={layout} aria-label={t('flow.layout')} title={t('flow.layout')}>
              ⇶
            </button>
            <button
              type="button"
              onClick={() => void flow.fitView({ padding: 0.2, maxZoom: 1 })}
              aria-label={t('flow.fit')}
              title={t('flow.fit')}
            >
              ⤢
            </button>
          </div>
          <div className="group end">
            <span
              className={`flow-issues ${issues.length ? 'bad' : 'ok'}`}
              data-testid="flow-issues"
              title={issues.map((i) => i.message).join('\n')}
            >
              {issues.length === 0
                ? t('flow.valid')
                : issues.length === 1
                  ? t('flow.issues.one')
                  : t('flow.issues', { n: issues.length })}
            </span>
            <button
              type="button"
              ref={assistantButton}
              className={assistantOpen ? 'assistant-toggle active' : 'assistant-toggle'}
              aria-expanded={assistantOpen}
              aria-controls={assistantId}
              onClick={() => setAssistantOpen((o) => !o)}
            >
              <span aria-hidden="true">✦</span> {t('assistant.open')}
            </button>
            <button type="button" onClick={() => setDrawer(true)} disabled={meta.id === null}>
              {t('flow.settings')}
            </button>
            <button type="button" onClick={() => void save()} disabled={busy !== undefined || !dirty}>
              {busy === 'save' ? t('flow.saving') : t('common.save')}
            </button>
            <button
              type="button"
              onClick={() => void publish()}
              disabled={busy !== undefined || issues.length > 0}
            >
              {t('flow.publish')}
            </button>
            <button
              type="button"
              className="primary"
              onClick={() => void saveIfNeeded().then((w) => w && setRunning(true))}
              disabled={busy !== undefined || issues.length > 0}
            >
              ▶ {t('flow.run')}
            </button>
          </div>
        </div>
        {error && !conflict ? (
          <div className="flow-error">
            <ErrorNote error={error} />
          </div>
        ) : null}
        {flowIssues.length ? (
          <ul className="flow-error flow-issue-list" aria-label={t('flow.issuesTitle')}>
            {flowIssues.map((i) => (
              <li key={`${i.path}:${i.message}`}>{i.message}</li>
            ))}
          </ul>
        ) : null}
        <div className="flow-body">
          <Palette tools={tools} onAdd={addTool} onAddNote={addNoteHere} />
          <div className="flow-stage">
            {proposal ? (
              <ProposalBar
                proposal={proposal.proposal}
                problem={proposal.problem}
                busy={busy !== undefined}
                onApply={() => void applyProposal()}
                onDismiss={() => setProposal(undefined)}
              />
            ) : null}
            <FlowCanvas editor={editor} preview={preview} />
            <AssistantPanel
              id={assistantId}
              open={assistantOpen}
              onClose={() => {
                setAssistantOpen(false);
                assistantButton.current?.focus();
              }}
              flowName={meta.name}
              flow={flowSnapshot}
              onEvent={onAssistantEvent}
              sessionId={carried.assistantSession}
              onSession={(id) => (assistantSession.current = id)}
            />
          </div>
          {selectedNode ? (
            <FlowSidePanel
              key={selectedNode.id}
              node={selectedNode}
              doc={settled}
              tools={tools}
              issues={byNode.get(selectedNode.id) ?? []}
              run={run}
              onChange={(data) =>
                edit((d) => updateNodeData(d, selectedNode.id, data), `data:${selectedNode.id}`)
              }
              onInputs={(schema) => edit((d) => ({ ...d, inputSchema: schema }), 'inputs')}
              onReferenceNode={(source) => edit((d) => connect(d, source, selectedNode.id))}
              onClose={() =>
                live((d) => ({
                  ...d,
                  nodes: d.nodes.map((n) => (n.selected ? { ...n, selected: false } : n)),
                }))
              }
            />
          ) : null}
        </div>
        {run ? (
          <RunDock
            run={run}
            doc={doc}
            onPin={(id, result) =>
              edit((d) =>
                updateNodeData(d, id, { ...d.nodes.find((n) => n.id === id)?.data, pinned: { result } }),
              )
            }
            onClose={() => setRunId(undefined)}
          />
        ) : null}
        {leavePrompt}
        {conflict ? (
          <ConflictDialog
            onReload={() => void reload()}
            onSaveCopy={() => {
              setConflict(false);
              void save(true);
            }}
            onClose={() => setConflict(false)}
          />
        ) : null}
        {running && meta.id ? (
          <RunFlowDialog
            workflow={{ id: meta.id, inputSchema: doc.inputSchema }}
            onStarted={(id) => {
              setRunning(false);
              setRunId(id);
            }}
            onClose={() => setRunning(false)}
          />
        ) : null}
        {drawer && workflow ? (
          <VersionsDrawer
            title={t('flow.settings')}
            workflow={{ ...workflow, ...meta, id: meta.id as string }}
            dirty={dirty}
            onRestored={(w) => adopt(w)}
            onClose={() => setDrawer(false)}
          >
            <label className="flow-description">
              {t('flow.description')}
              <textarea
                rows={3}
                maxLength={10_000}
                value={meta.description}
                onChange={(e) => setMeta((m) => ({ ...m, description: e.target.value }))}
              />
            </label>
            <h3>{t('flows.versions.title')}</h3>
          </VersionsDrawer>
        ) : null}
      </div>
    </CanvasInfoContext.Provider>
  );
}
