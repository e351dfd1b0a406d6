import type { WorkflowTemplate } from '@switchyard/contracts';
import { column, edge, startNode } from './layout';

export const commandLog: WorkflowTemplate = {
  id: 'command-log',
  name: 'Run a command and keep its output',
  description:
    'Runs one allowlisted program in your workspace sandbox (no shell) and saves its exit code and output to a log file.',
  category: 'automation',
  inputSchema: {
    type: 'object',
    properties: {
      command: {
        type: 'string',
        title: 'Command',
        description: 'an allowlisted program and its arguments; no pipes, redirection or variables',
        default: 'ls -la',
        examples: ['ls -la', 'git status'],
      },
      logPath: {
        type: 'string',
        title: 'Log file',
        description: 'where to save the output, relative to your workspace',
        default: 'logs/command.log',
        examples: ['logs/command.log'],
      },
    },
    required: ['command', 'logPath'],
  },
  graph: {
    nodes: [
      startNode,
      {
        id: 'run',
        type: 'tool',
        position: column(1),
        data: {
          tool: 'execute_command',
          label: 'Run the command',
          arguments: { command: '{{inputs.command}}' },
          inputModes: { command: 'reference' },
          description: 'Run the program',
        },
      },
      {
        id: 'save',
        type: 'tool',
        position: column(2),
        data: {
          tool: 'write_file',
          label: 'Save the output',
          arguments: {
            filePath: '{{inputs.logPath}}',
            content: '$ {{inputs.command}}\n{{node.run.result}}\n',
          },
          inputModes: { filePath: 'reference', content: 'expression' },
          description: 'Write the output to the log file',
        },
      },
    ],
    edges: [edge('start', 'run'), edge('run', 'save')],
  },
};
