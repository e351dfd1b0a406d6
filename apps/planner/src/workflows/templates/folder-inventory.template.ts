import type { WorkflowTemplate } from '@switchyard/contracts';
import { column, edge, startNode } from './layout';

export const folderInventory: WorkflowTemplate = {
  id: 'folder-inventory',
  name: 'Folder inventory report',
  description: 'Lists a workspace folder (two levels deep) and saves the listing as a text report.',
  category: 'files',
  inputSchema: {
    type: 'object',
    properties: {
      folder: {
        type: 'string',
        title: 'Folder',
        description: 'the folder to list, relative to your workspace ("." is the workspace itself)',
        default: '.',
        examples: ['.', 'projects'],
      },
      reportPath: {
        type: 'string',
        title: 'Report file',
        description: 'where to save the report',
        default: 'reports/inventory.txt',
        examples: ['reports/inventory.txt'],
      },
    },
    required: ['folder', 'reportPath'],
  },
  graph: {
    nodes: [
      startNode,
      {
        id: 'list',
        type: 'tool',
        position: column(1),
        data: {
          tool: 'list_directory',
          label: 'List the folder',
          arguments: { filePath: '{{inputs.folder}}', recursive: true, maxDepth: 2 },
          inputModes: { filePath: 'reference', recursive: 'manual', maxDepth: 'manual' },
          description: 'List files and folders',
        },
      },
      {
        id: 'save',
        type: 'tool',
        position: column(2),
        data: {
          tool: 'write_file',
          label: 'Save the report',
          arguments: {
            filePath: '{{inputs.reportPath}}',
            content: 'Inventory of {{inputs.folder}}\n\n{{node.list.result}}\n',
          },
          inputModes: { filePath: 'reference', content: 'expression' },
          description: 'Write the listing to the report file',
        },
      },
    ],
    edges: [edge('start', 'list'), edge('list', 'save')],
  },
};
