/** The flow builder's docked assistant and the proposals it draws on the canvas. */
export const assistantEn = {
  'proposal.title': 'Proposed change',
  'proposal.counts': '{added} added · {changed} changed · {removed} removed',
  'proposal.inputs': 'inputs changed',
  'proposal.apply': 'Apply and save',
  'proposal.dismiss': 'Dismiss',
  'proposal.invalid':
    'This proposal does not make a valid flow yet: review it on the canvas, or ask for a fix.',
  'proposal.stale': 'The canvas changed since this proposal was made, so it was not applied: {reason}',
  'proposal.refused': 'The proposal could not be applied: {reason}',
  'proposal.preview': 'Preview: the canvas shows the proposal; nothing is changed until you apply it.',
  'assistant.open': 'Assistant',
  'assistant.title': 'Flow assistant',
  'assistant.collapse': 'Hide the assistant',
  'assistant.restart': 'New conversation',
  'assistant.intro':
    'Ask about this flow or for a change. Each message carries the canvas as it is now (also unsaved); ' +
    'changes come back as a proposal on the canvas that you apply or dismiss. It can also save and run the flow, ' +
    'under the permission mode you pick.',
  'assistant.sessionTitle': 'Assistant: {name}',
  'assistant.saved': 'The assistant saved this flow (revision {revision}).',
  'assistant.reloadFailed': 'The assistant saved the flow, but reloading it failed: {reason}',
};

export const assistantZh: Record<keyof typeof assistantEn, string> = {
  'proposal.title': '建议的修改',
  'proposal.counts': '新增 {added} · 修改 {changed} · 删除 {removed}',
  'proposal.inputs': '输入已更改',
  'proposal.apply': '应用并保存',
  'proposal.dismiss': '放弃',
  'proposal.invalid': '这个建议还不能构成有效的流程：请在画布上查看，或让助手修正。',
  'proposal.stale': '建议生成后画布已更改，因此未应用：{reason}',
  'proposal.refused': '无法应用该建议：{reason}',
  'proposal.preview': '预览：画布显示的是建议的结果；应用之前不会做任何更改。',
  'assistant.open': '助手',
  'assistant.title': '流程助手',
  'assistant.collapse': '隐藏助手',
  'assistant.restart': '新对话',
  'assistant.intro':
    '询问这个流程，或请助手修改它。每条消息都会附带画布的当前状态（包括未保存的）；修改以建议的形式显示在画布上，由你应用或放弃。' +
    '助手也可以按你选择的权限模式保存并运行流程。',
  'assistant.sessionTitle': '助手：{name}',
  'assistant.saved': '助手已保存此流程（修订 {revision}）。',
  'assistant.reloadFailed': '助手已保存流程，但重新加载失败：{reason}',
};
