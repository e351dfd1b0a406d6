/**
 * The flow builder's right-hand panel: the canvas mounts `NodePanel` for a tool node and `StartPanel`
 * for the start node, passing what `sourcesFor` finds upstream; the panel never fetches the graph.
 */
export { NodePanel, PinIcon, issueAt, type NodePanelProps, type PanelIssue } from './NodePanel';
export { StartPanel } from './StartPanel';
export { InputField, valueForMode } from './InputField';
export { ReferenceTree, PortDot, REF_MIME } from './ReferenceTree';
export { ExpressionEditor } from './ExpressionEditor';
export { JsonTree } from './JsonTree';
export {
  completionsAt,
  applyCompletion,
  referenceProblems,
  type Completion,
  type CompletionOption,
  type ReferenceProblem,
} from './expression';
export {
  fieldTree,
  fieldAt,
  previewOf,
  previewText,
  sourcesFor,
  nodeSource,
  inputSources,
  upstreamOf,
  portTypeOfValue,
  type GraphLike,
  type SourcesInput,
  type ToolWithOutput,
} from './fields';
export { rowsOf, schemaOf, rowProblems, INPUT_NAME } from './start-schema';
