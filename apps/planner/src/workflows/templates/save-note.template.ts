import type { WorkflowTemplate } from '@switchyard/contracts';
import { column, edge, startNode } from './layout';

export const saveNote: WorkflowTemplate = {
  id: 'save-note',
  name: 'Save a note and read it back',
  description: 'Writes a text note to a file in your workspace, then reads the file back to confirm it.',
  category: 'files',
  inputSchema: {
    type: 'object',
    properties: {
      path: {
        type: 'string',
        title: 'File',
        description: 'where to save the note, relative to your workspace',
        default: 'notes/note.txt',
        examples: ['notes/note.txt'],
      },
      text: {
        type: 'string',
        title: 'Note',
        description: 'what to write',
        examples: ['Buy milk'],
      },
    },
    required: ['path', 'text'],
  },
  graph: {
    nodes: [
      startNode,
      {
        id: 'write',
        type: 'tool',
        position: column(1),
        data: {
          tool: 'write_file',
          label: 'Write the note',
          arguments: { filePath: '{{inputs.path}}', content: '{{inputs.text}}' },
          inputModes: { filePath: 'reference', content: 'reference' },
          description: 'Save the note',
        },
      },
      {
        id: 'read',
        type: 'tool',
        position: column(2),
        data: {
          tool: 'read_file',
          label: 'Read it back',
          arguments: { filePath: '{{inputs.path}}' },
          inputModes: { filePath: 'reference' },
          description: 'Read the saved note',
        },
      },
      {
        id: 'note-1',
        type: 'note',
        position: column(1, 1),
        width: 280,
        height: 120,
        data: {
          text: 'write_file creates missing folders. The read step waits for the write (the edge between them).',
        },
      },
    ],
    edges: [edge('start', 'write'), edge('write', 'read')],
  },
};
