import type { WorkflowTemplate } from '@switchyard/contracts';
import { commandLog } from './command-log.template';
import { delayedReminder } from './delayed-reminder.template';
import { excelSplitEmail } from './excel-split-email.template';
import { folderInventory } from './folder-inventory.template';
import { saveNote } from './save-note.template';

/**
 * The workflow templates shipped with the platform: canvas graphs in the same format as saved
 * workflows (a start node, tool nodes with positions, edges, notes). Most use built-in tools only, so
 * every owner's catalog has what they need; one that uses a plugin's tools says so in `requires`.
 * Instantiating one saves it through the normal checks.
 */
export const WORKFLOW_TEMPLATES: readonly WorkflowTemplate[] = [
  saveNote,
  folderInventory,
  delayedReminder,
  commandLog,
  excelSplitEmail,
];
