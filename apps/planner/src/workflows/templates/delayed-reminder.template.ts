import type { WorkflowTemplate } from '@switchyard/contracts';
import { column, edge, startNode } from './layout';

export const delayedReminder: WorkflowTemplate = {
  id: 'delayed-reminder',
  name: 'Wait, then write a reminder',
  description:
    'Waits two seconds, then writes your message to a reminder file: a delay step feeding the next one.',
  category: 'basics',
  inputSchema: {
    type: 'object',
    properties: {
      message: {
        type: 'string',
        title: 'Message',
        description: 'the reminder text',
        examples: ['Stand up and stretch'],
      },
      path: {
        type: 'string',
        title: 'File',
        description: 'where to write the reminder, relative to your workspace',
        default: 'reminders/reminder.txt',
        examples: ['reminders/reminder.txt'],
      },
    },
    required: ['message', 'path'],
  },
  graph: {
    nodes: [
      startNode,
      {
        id: 'pause',
        type: 'tool',
        position: column(1),
        data: {
          tool: 'wait',
          label: 'Wait 2 s',
          arguments: { ms: 2_000, value: '{{inputs.message}}' },
          inputModes: { ms: 'manual', value: 'reference' },
          description: 'Wait, then pass the message on',
        },
      },
      {
        id: 'write',
        type: 'tool',
        position: column(2),
        data: {
          tool: 'write_file',
          label: 'Write the reminder',
          arguments: { filePath: '{{inputs.path}}', content: 'Reminder: {{node.pause.result}}\n' },
          inputModes: { filePath: 'reference', content: 'expression' },
          description: 'Write the reminder file',
        },
      },
      {
        id: 'note-1',
        type: 'note',
        position: column(1, 1),
        width: 260,
        height: 100,
        data: {
          text: 'wait returns its `value` unchanged: the next step reads it as {{node.pause.result}}.',
        },
      },
    ],
    edges: [edge('start', 'pause'), edge('pause', 'write')],
  },
};
