import type { WorkflowTemplate } from '@switchyard/contracts';
import { column, edge, startNode } from './layout';

/**
 * The office pack's flagship: split a workbook by a column and e-mail each part to the people of its
 * value. Every reference is pre-wired (the sheet and header row the analysis found, the parts the
 * split wrote, the staged batch's `confirmation.confirmationId`); the run form asks for a workbook
 * (a file picker), the column, the account and the group (dropdowns fed by the plugin's list tools);
 * the output folder is a shared directory the run creates. The send pauses for approval in every
 * permission mode but full access.
 */
export const excelSplitEmail: WorkflowTemplate = {
  id: 'excel-split-email',
  name: 'Excel split → batch e-mail',
  description:
    'Splits a workbook by a column (one file per value, header and styles kept) and e-mails each part to the recipients of its value; the batch is sent once, after your approval.',
  category: 'office',
  requires: ['office'],
  inputSchema: {
    type: 'object',
    properties: {
      workbook: {
        type: 'string',
        format: 'switchyard-file',
        title: 'Workbook',
        description: 'the .xlsx workbook to split',
      },
      outputDir: {
        type: 'string',
        title: 'Output folder',
        'x-switchyard-auto': 'shared-directory',
        description: 'a scratch folder the run creates for the parts; nothing to fill in',
      },
      splitColumn: {
        type: 'string',
        title: 'Split by column',
        description: 'the header of the column whose values decide who gets which rows',
        default: 'Region',
        examples: ['Region', 'Department'],
      },
      account: {
        type: 'string',
        title: 'Send from',
        description: 'the account the e-mails are sent from',
        'x-switchyard-enum': { tool: 'email_accounts_list' },
      },
      group: {
        type: 'string',
        title: 'Recipients',
        description: 'the recipient group: it says who gets the part of each value',
        'x-switchyard-enum': { tool: 'email_tags_list' },
      },
      subject: {
        type: 'string',
        title: 'Subject',
        description: 'placeholders: {value}, {rows}, {file}, {date}',
        default: '{value}: your figures of {date}',
      },
      body: {
        type: 'string',
        title: 'Message',
        description: 'plain text; placeholders: {value}, {rows}, {file}, {date}',
        default: 'Hello,\n\nattached are the {rows} rows for {value} ({file}).\n\nBest regards',
      },
    },
    required: ['workbook', 'splitColumn', 'account', 'group', 'subject', 'body'],
  },
  graph: {
    nodes: [
      startNode,
      {
        id: 'analyse',
        type: 'tool',
        position: column(1),
        data: {
          tool: 'excel_complex_config',
          label: 'Analyse the workbook',
          arguments: { file: '{{inputs.workbook}}' },
          inputModes: { file: 'reference' },
          description: 'Find the sheet, its header row and its columns',
        },
      },
      {
        id: 'split',
        type: 'tool',
        position: column(2),
        data: {
          tool: 'excel_execute',
          label: 'Split by the column',
          arguments: {
            file: '{{inputs.workbook}}',
            sheet: '{{node.analyse.result.selected.name}}',
            headerRow: '{{node.analyse.result.selected.headerRow}}',
            splitColumn: '{{inputs.splitColumn}}',
            outputDir: '{{inputs.outputDir}}',
          },
          inputModes: {
            file: 'reference',
            sheet: 'reference',
            headerRow: 'reference',
            splitColumn: 'reference',
            outputDir: 'reference',
          },
          description: 'Write one workbook per value into the shared folder',
        },
      },
      {
        id: 'stage',
        type: 'tool',
        position: column(3),
        data: {
          tool: 'email_send_batch',
          label: 'Stage the e-mails',
          arguments: {
            account: '{{inputs.account}}',
            group: '{{inputs.group}}',
            parts: '{{node.split.result.files}}',
            subject: '{{inputs.subject}}',
            body: '{{inputs.body}}',
          },
          inputModes: {
            account: 'reference',
            group: 'reference',
            parts: 'reference',
            subject: 'reference',
            body: 'reference',
          },
          description: 'One message per part; nothing is sent yet',
        },
      },
      {
        id: 'send',
        type: 'tool',
        position: column(4),
        data: {
          tool: 'confirm_send',
          label: 'Send after approval',
          arguments: { confirmationId: '{{node.stage.result.confirmation.confirmationId}}' },
          inputModes: { confirmationId: 'reference' },
          requiresApproval: true,
          description: 'Send the staged batch once',
        },
      },
      {
        id: 'note-1',
        type: 'note',
        position: column(3, 1),
        width: 300,
        height: 120,
        data: {
          text: 'Needs the office plugin. The send pauses for your approval; sending again with the same confirmation id sends nothing twice.',
        },
      },
    ],
    edges: [
      edge('start', 'analyse'),
      edge('analyse', 'split'),
      edge('split', 'stage'),
      edge('stage', 'send'),
    ],
  },
};
