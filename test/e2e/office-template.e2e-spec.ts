import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Platform, waitFor } from '@switchyard/testing';
import {
  installOfficePlugin,
  OFFICE_CC,
  OFFICE_RECIPIENTS,
  OFFICE_ROWS,
  regionWorkbook,
  SmtpSink,
  workbookRows,
} from '@switchyard/testing/office';

interface Execution {
  stepId: string;
  status: string;
  result?: unknown;
  error: string | null;
}
interface Staged {
  confirmation: { confirmationId: string; status: string; messages: unknown[] };
}

const REGIONS = Object.keys(OFFICE_RECIPIENTS) as Array<keyof typeof OFFICE_RECIPIENTS>;

// Five services, a sandboxed plugin server and an SMTP exchange per message on a busy machine:
// bounds that only guard a hang.
jest.setTimeout(240_000);

/**
 * The office pack's flagship template through the whole platform: the pack installed from its built
 * bundle and configured by an admin (an SMTP account on a real relay on loopback, a recipient group),
 * an ordinary user instantiating "Excel split → batch e-mail" from the gallery, uploading a workbook
 * and running it. The send waits for approval in every mode but full access; what the relay receives
 * is read back (recipients, and the attached parts parsed as workbooks).
 */
describe('the "Excel split → batch e-mail" template end to end', () => {
  let platform: Platform;
  let smtp: SmtpSink;
  let alice: string;
  let workflowId: string;
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'sy-office-e2e-')));

  const call = (method: string, path: string, body?: unknown) => platform.call(method, path, alice, body);
  const detail = async (runId: string) => (await call('GET', `/api/agent/runs/${runId}`)).json;
  const executions = (d: Record<string, unknown>) => d['executions'] as Execution[];
  const execOf = (d: Record<string, unknown>, stepId: string) =>
    executions(d).find((e) => e.stepId === stepId) as Execution;

  const uploadWorkbook = async (): Promise<string> => {
    const res = await fetch(`${platform.url}/api/files?name=sales.xlsx`, {
      method: 'POST',
      headers: {
        'x-switchyard-token': alice,
        'content-type': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      },
      body: await regionWorkbook(),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };

  const startTemplate = async (permissionMode: string): Promise<string> => {
    const res = await call('POST', `/api/workflows/${workflowId}/run`, {
      permissionMode,
      planApproval: false,
      inputs: {
        splitColumn: 'Region',
        account: 'reports',
        group: 'regional-managers',
        subject: '{value}: your figures',
        body: 'Hello,\n\nattached are the {rows} rows for {value}.',
      },
      files: [{ name: 'workbook', refs: [await uploadWorkbook()] }],
    });
    if (res.status !== 200) throw new Error(`the start answered ${res.status}: ${res.text}`);
    return res.json['runId'] as string;
  };

  /** Waits until the run pauses at a step gate or ends; answers the run and the step waiting. */
  const nextStop = async (runId: string) => {
    let d: Record<string, unknown> = {};
    await waitFor(async () => {
      d = await detail(runId);
      return ['awaiting_step_approval', 'completed', 'failed', 'cancelled'].includes(String(d['status']));
    }, 120_000).catch((err: Error) => {
      throw new Error(`${err.message}; the run: ${JSON.stringify(d).slice(0, 3_000)}`);
    });
    const waiting = executions(d).find((e) => e.status === 'awaiting_approval')?.stepId;
    return { d, waiting };
  };

  /** Runs until `send` asks, approving every other gate on the way; answers the steps that asked. */
  const runToSendGate = async (runId: string): Promise<string[]> => {
    const asked: string[] = [];
    for (;;) {
      const { d, waiting } = await nextStop(runId);
      if (waiting === undefined) throw new Error(`the run ended without asking: ${JSON.stringify(d)}`);
      asked.push(waiting);
      if (waiting === 'send') return asked;
      const ok = await call('POST', `/api/agent/${runId}/approve?stepId=${waiting}`);
      expect(ok.status).toBe(200);
      // The released step must have moved on before the next look, or the same gate is seen again.
      await waitFor(async () => execOf(await detail(runId), waiting).status !== 'awaiting_approval', 60_000);
    }
  };

  /** Waits for the run's end (an approval answered a moment ago may not have moved the run yet). */
  const toEnd = async (runId: string) => {
    let d: Record<string, unknown> = {};
    await waitFor(async () => {
      d = await detail(runId);
      return ['completed', 'failed', 'cancelled'].includes(String(d['status']));
    }, 120_000).catch((err: Error) => {
      throw new Error(`${err.message}; the run: ${JSON.stringify(d).slice(0, 3_000)}`);
    });
    return d;
  };

  /** The three messages of one send, checked: recipients, subject and the attached region's rows. */
  const expectRegionMessages = async (mails: SmtpSink['received']) => {
    expect(mails).toHaveLength(3);
    const byRegion = new Map(mails.map((m) => [/^(\w+):/.exec(m.mail.subject ?? '')?.[1], m]));
    expect([...byRegion.keys()].sort()).toEqual([...REGIONS].sort());
    for (const region of REGIONS) {
      const m = byRegion.get(region) as SmtpSink['received'][number];
      expect(m.rcptTo.sort()).toEqual([...OFFICE_RECIPIENTS[region], OFFICE_CC].sort());
      expect(m.mail.from?.value).toEqual([{ name: 'Reports', address: 'reports@example.com' }]);
      const rows = OFFICE_ROWS.filter((r) => r[0] === region);
      expect(m.mail.text).toContain(`attached are the ${rows.length} rows for ${region}`);
      expect(m.mail.attachments.map((a) => a.filename)).toEqual([`sales-${region}.xlsx`]);
      const part = await workbookRows(m.mail.attachments[0]?.content as Buffer);
      expect(part.header).toEqual(['Region', 'Product', 'Amount']);
      expect(part.rows).toEqual(rows.map((r) => [...r]));
    }
  };

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    platform = await Platform.start('office', {
      WORKSPACE_DIR: join(root, 'workspace'),
      FILES_DIR: join(root, 'files'),
      MCP_HANDSHAKE_TIMEOUT_MS: '15000',
    });
    alice = await platform.token('alice');
    const plugin = await installOfficePlugin(
      (method, path, body) => platform.call(method, path, platform.admin, body),
      smtp.port,
    );
    expect(plugin.json).toMatchObject({
      id: 'office',
      enabled: true,
      grants: { network: true, files: true },
      sandbox: { posture: 'sandboxed' },
      server: { state: 'running', missingTools: [] },
    });
  }, 240_000);

  afterAll(async () => {
    await platform?.stop();
    await smtp?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('gives an ordinary user the template from the gallery, and its dropdowns from the list tools', async () => {
    const templates = await call('GET', '/api/workflows/templates');
    const template = (templates.json['items'] as Array<{ id: string; requires?: string[] }>).find(
      (t) => t.id === 'excel-split-email',
    );
    expect(template).toMatchObject({ requires: ['office'] });
    const made = await call('POST', '/api/workflows/templates/excel-split-email/instantiate', {});
    expect(made.status).toBe(201);
    workflowId = made.json['id'] as string;

    const accounts = await call('GET', `/api/workflows/${workflowId}/inputs/account/options`);
    expect(accounts.json).toEqual({ items: [{ value: 'reports', label: 'Reports <reports@example.com>' }] });
    const groups = await call('GET', `/api/workflows/${workflowId}/inputs/group/options`);
    expect(groups.json).toEqual({ items: [{ value: 'regional-managers', label: 'Regional managers' }] });
  });

  it('in ask mode pauses at each write and at the send; three messages go out only after the send is approved, once', async () => {
    const runId = await startTemplate('ask');
    expect(await runToSendGate(runId)).toEqual(['split', 'stage', 'send']);
    const paused = await detail(runId);
    expect(execOf(paused, 'analyse').status).toBe('completed');
    const staged = execOf(paused, 'stage').result as Staged;
    expect(staged.confirmation).toMatchObject({ status: 'staged' });
    expect(staged.confirmation.messages).toHaveLength(3);
    // Staged, split, analysed: and still nothing has reached the relay.
    expect(smtp.received).toHaveLength(0);
    const files = paused['files'] as Array<{ name: string; kind: string; files: string[] }>;
    expect(files.map((f) => [f.name, f.kind])).toEqual([
      ['workbook', 'refs'],
      ['outputDir', 'shared'],
    ]);

    expect((await call('POST', `/api/agent/${runId}/approve?stepId=send`)).status).toBe(200);
    const done = await toEnd(runId);
    expect([done['status'], execOf(done, 'send').error]).toEqual(['completed', null]);
    expect(execOf(done, 'send').result).toMatchObject({ status: 'sent', sent: 3, alreadySent: 0 });
    await expectRegionMessages(smtp.received);

    // confirm_send again with the same confirmation id (a retried step, a second run): nothing twice.
    const again = await platform.startRun(
      {
        goal: 'send the batch again',
        workflow: {
          steps: [
            {
              id: 'again',
              tool: 'confirm_send',
              arguments: { confirmationId: staged.confirmation.confirmationId },
            },
          ],
        },
        config: { permissionMode: 'full-access', planApproval: false },
      },
      alice,
    );
    const repeated = await toEnd(again);
    expect(repeated['status']).toBe('completed');
    expect(execOf(repeated, 'again').result).toMatchObject({
      status: 'already_sent',
      sent: 0,
      alreadySent: 3,
    });
    expect(smtp.received).toHaveLength(3);
  });

  it('in approve-for-me mode pauses only at the send; cancelled there, nothing is sent', async () => {
    const before = smtp.received.length;
    const runId = await startTemplate('approve-for-me');
    expect(await runToSendGate(runId)).toEqual(['send']);
    expect(smtp.received).toHaveLength(before);
    expect((await call('POST', `/api/agent/${runId}/cancel`)).status).toBe(200);
    await waitFor(async () => (await detail(runId))['status'] === 'cancelled', 60_000);
    expect(execOf(await detail(runId), 'send').status).not.toBe('completed');
    expect(smtp.received).toHaveLength(before);
  });

  it('in full access runs straight through and sends', async () => {
    const before = smtp.received.length;
    const runId = await startTemplate('full-access');
    const done = await toEnd(runId);
    expect([done['status'], executions(done).map((e) => [e.stepId, e.status])]).toEqual([
      'completed',
      ['analyse', 'split', 'stage', 'send'].map((s) => [s, 'completed']),
    ]);
    const events = done['events'] as Array<{ type: string }>;
    expect(events.some((e) => e.type === 'step_approval_requested')).toBe(false);
    await expectRegionMessages(smtp.received.slice(before));
  });
});
