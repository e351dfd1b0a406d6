import { Injectable } from '@nestjs/common';
import type { ToolDescriptor, ToolSet, ToolSetRequest } from '@switchyard/contracts';
import { McpToolRepository, type McpToolRow } from '@switchyard/server-db-tools';
import { McpToolsService } from '../mcp/mcp-tools.service';
import { PluginToolsService } from '../plugins/plugin-tools.service';
import { BuiltinRegistry } from '../tools/builtin-registry';

/**
 * Assembles the tools an agent may use, the three ways the seed describes: by record ids (null ids,
 * duplicates and disabled records dropped; empty in, empty out), by record names (enabled only), or
 * every enabled record. A BUILTIN record contributes its built-in; an MCP record its tools, when it
 * is tested, unchanged and reachable. By record ids, the named plugins add their tools too (enabled
 * ones whose server answers).
 */
@Injectable()
export class ToolSetService {
  constructor(
    private readonly records: McpToolRepository,
    private readonly builtins: BuiltinRegistry,
    private readonly mcp: McpToolsService,
    private readonly plugins: PluginToolsService,
  ) {}

  async assemble(req: ToolSetRequest): Promise<ToolSet> {
    let rows: McpToolRow[];
    if ('recordIds' in req) {
      const ids = [...new Set(req.recordIds.filter((id): id is number => id !== null))];
      rows = ids.length ? await this.records.findByIds(ids) : [];
      // Keep the caller's order.
      rows.sort((a, b) => ids.indexOf(a.id) - ids.indexOf(b.id));
    } else if ('recordNames' in req) {
      const names = new Set(req.recordNames);
      rows = names.size
        ? (await this.records.all({ status: 'ENABLED' })).filter((r) => names.has(r.name))
        : [];
    } else {
      rows = await this.records.all({ status: 'ENABLED' });
    }
    rows = rows.filter((r) => r.status === 'ENABLED');

    const tools: ToolDescriptor[] = [];
    const contributed: number[] = [];
    const mcp = new Map((await this.mcp.descriptorsOf(rows)).map((d) => [d.recordId, d.tools]));
    for (const row of rows) {
      if (row.type === 'BUILTIN') {
        const builtin = this.builtins.get(row.name);
        if (!builtin) continue;
        tools.push(builtin.descriptor);
        contributed.push(row.id);
      } else {
        const list = mcp.get(row.id);
        if (!list) continue;
        tools.push(...list);
        contributed.push(row.id);
      }
    }
    const plugins =
      'recordIds' in req && req.pluginIds?.length ? await this.plugins.descriptorsOf(req.pluginIds) : [];
    for (const p of plugins) tools.push(...p.tools);
    return { tools, recordIds: contributed, pluginIds: plugins.map((p) => p.pluginId) };
  }
}
