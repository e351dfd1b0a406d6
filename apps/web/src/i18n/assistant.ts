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
};
