import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv';
import { PLUGIN_MANIFEST_FILE, PluginManifest, type ToolDescriptor } from '@switchyard/contracts';
import { resolveArguments } from '@switchyard/plan';
// The template is checked against the argument schemas the office server publishes (its
// office.int-spec proves tools/list gives exactly these); the plugin is a bundle, not a library.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { inputJsonSchemaOf, type OfficeToolName } from '../../../../../plugins/office/src/schemas';
import { checkDefinition } from '../check-definition';
import { excelSplitEmail } from './excel-split-email.template';

const manifest = PluginManifest.parse(
  JSON.parse(readFileSync(join(__dirname, '../../../../../plugins/office', PLUGIN_MANIFEST_FILE), 'utf8')),
);

/** The catalog an owner sees once the office plugin is enabled: its flow nodes as descriptors. */
const officeCatalog: ToolDescriptor[] = manifest.flowNodes.map((node) => ({
  name: node.tool,
  description: node.help,
  inputSchema: inputJsonSchemaOf(node.tool as OfficeToolName),
  effect: manifest.tools[node.tool]?.effect ?? 'external',
  idempotent: manifest.tools[node.tool]?.idempotent ?? false,
  source: 'mcp',
  outputSchema: node.outputs,
}));

const toolNodes = excelSplitEmail.graph.nodes.filter((n) => n.type === 'tool');

describe('the "Excel split → batch e-mail" template', () => {
  it('compiles and validates against the office tools, in order, with the send approval-gated', async () => {
    const checked = await checkDefinition(
      { inputSchema: excelSplitEmail.inputSchema, graph: excelSplitEmail.graph },
      async () => officeCatalog,
    );
    if (!checked.ok) throw new Error(JSON.stringify(checked.issues));
    expect(checked.plan.steps.map((s) => [s.tool, s.dependsOn, s.requiresApproval ?? false])).toEqual([
      ['excel_complex_config', [], false],
      ['excel_execute', ['analyse'], false],
      ['email_send_batch', ['split'], false],
      ['confirm_send', ['stage'], true],
    ]);
    expect(excelSplitEmail.requires).toEqual([manifest.id]);
    expect(manifest.tools['confirm_send']).toMatchObject({ effect: 'external', requiresApproval: true });
  });

  it('is refused against a catalog without the plugin (what `requires` warns about)', async () => {
    const checked = await checkDefinition(
      { inputSchema: excelSplitEmail.inputSchema, graph: excelSplitEmail.graph },
      async () => officeCatalog.filter((t) => t.name !== 'confirm_send'),
    );
    expect(checked.ok ? [] : checked.issues.map((i) => i.code)).toEqual(['unknown_tool']);
  });

  it('wires every reference to a field the flow nodes declare: on their examples each step gets valid arguments', () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    const example = (tool: string) => manifest.flowNodes.find((n) => n.tool === tool)?.examples[0];
    const results = new Map(toolNodes.map((n) => [n.id, example(n.data.tool as string)]));
    const inputs = {
      workbook: '/files/workbook/sales.xlsx',
      outputDir: '/files/outputDir',
      splitColumn: 'Region',
      account: 'reports',
      group: 'regional-managers',
      subject: '{value}',
      body: 'b',
    };
    const stepIds = toolNodes.map((n) => n.id);
    toolNodes.forEach((node, i) => {
      const args = resolveArguments(node.data.arguments, { stepIds, currentIndex: i, results, inputs });
      const validate = ajv.compile(inputJsonSchemaOf(node.data.tool as OfficeToolName));
      expect([node.id, validate(args), validate.errors ?? null]).toEqual([node.id, true, null]);
    });
    // The nested confirmation id, the parts and the detected sheet are what they should be.
    const at = (id: string) =>
      resolveArguments(toolNodes.find((n) => n.id === id)?.data.arguments, {
        stepIds,
        currentIndex: stepIds.indexOf(id),
        results,
        inputs,
      }) as Record<string, unknown>;
    expect(at('send')['confirmationId']).toBe('cnf_0f8fad5bd9cb469fa16570867728950e');
    expect(at('split')).toMatchObject({ sheet: 'Sales', headerRow: 2 });
    expect(at('stage')['parts']).toHaveLength(3);
  });

  it('asks for a picked workbook, a shared output folder and dropdowns fed by the list tools', () => {
    const props = excelSplitEmail.inputSchema['properties'] as Record<string, Record<string, unknown>>;
    expect(props['workbook']?.['format']).toBe('switchyard-file');
    expect(props['outputDir']?.['x-switchyard-auto']).toBe('shared-directory');
    expect(props['account']?.['x-switchyard-enum']).toEqual({ tool: 'email_accounts_list' });
    expect(props['group']?.['x-switchyard-enum']).toEqual({ tool: 'email_tags_list' });
    for (const list of ['email_accounts_list', 'email_tags_list'])
      expect(manifest.tools[list]).toMatchObject({ effect: 'read' });
    // The run fills the folder; the user fills everything else.
    expect(excelSplitEmail.inputSchema['required']).not.toContain('outputDir');
  });
});
