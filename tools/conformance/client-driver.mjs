// The MCP conformance suite's client, played by Switchyard: the scenario's server becomes a REMOTE
// record of a running platform, which connects (OAuth through the gateway's callback, the
// authorization URL followed as a browser would), tests it and calls its tools through the
// registry (as a one-step run whose input requests it answers like the web form, for the
// elicitation scenarios). The suite runs it as `node client-driver.mjs <server-url>`, with the scenario in
// MCP_CONFORMANCE_SCENARIO and its data in MCP_CONFORMANCE_CONTEXT; SY_GATEWAY and SY_TOKEN (an
// admin's) name the platform. See tools/conformance/run.sh.
import { randomBytes } from 'node:crypto';

const serverUrl = process.argv[2];
const gateway = process.env.SY_GATEWAY ?? 'http://127.0.0.1:3940';
const token = process.env.SY_TOKEN;
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}');

async function call(method, path, body) {
  const res = await fetch(`${gateway}${path}`, {
    method,
    headers: { 'x-switchyard-token': token, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = { text };
  }
  console.log(method, path, res.status, text.slice(0, 400));
  return { status: res.status, json };
}

const oauth = scenario.startsWith('auth/')
  ? scenario.includes('client-credentials')
    ? { grant: 'client_credentials', clientId: context.client_id, clientSecret: context.client_secret }
    : context.client_id
      ? {
          clientId: context.client_id,
          ...(context.client_secret ? { clientSecret: context.client_secret } : {}),
        }
      : scenario === 'auth/basic-cimd'
        ? { clientMetadataUrl: 'https://conformance-test.local/client-metadata.json' }
        : {}
  : undefined;

const name = `conf-${scenario.replace(/[^A-Za-z0-9]/g, '-')}-${randomBytes(3).toString('hex')}`;
const created = await call('POST', '/mcp/tool', {
  name,
  type: 'REMOTE',
  configJson: JSON.stringify({ baseUrl: serverUrl, ...(oauth ? { oauth } : {}) }),
});
if (created.status !== 201) process.exit(1);
const id = created.json.id;

async function connect() {
  const connect = await call('POST', `/mcp/tool/${id}/connect`);
  if (connect.json.authorizationUrl) {
    // The person's browser: follow the provider's redirects until they come back to the gateway.
    let url = connect.json.authorizationUrl;
    for (let hop = 0; hop < 10 && !url.startsWith(gateway); hop++) {
      const res = await fetch(url, { redirect: 'manual' });
      const next = res.headers.get('location');
      console.log('authorize hop', res.status, next);
      if (!next) process.exit(1);
      url = new URL(next, url).href;
    }
    const back = await fetch(url);
    console.log('callback', back.status, (await back.text()).slice(0, 400));
  }
}
if (oauth) await connect();

/** Arguments that satisfy a tool's required properties: the schema's default or a plain example. */
function exampleArguments(schema) {
  const args = {};
  for (const key of schema?.required ?? []) {
    const prop = schema.properties?.[key] ?? {};
    args[key] =
      prop.default ??
      prop.enum?.[0] ??
      { number: 1, integer: 1, boolean: true, array: [], object: {} }[prop.type] ??
      'conformance';
  }
  return args;
}

/** What the web form sends when the person submits it untouched: every field's default. */
function formDefaults(schema) {
  const content = {};
  for (const [key, prop] of Object.entries(schema?.properties ?? {}))
    if (prop.default !== undefined) content[key] = prop.default;
  return content;
}

/**
 * A call whose server asks the person for input: made as a one-step run (a direct call has nobody to
 * ask), its input requests answered over the API as the web form does (defaults pre-filled, accept).
 */
async function runAndAnswer(tool, args) {
  const started = await call('POST', '/api/agent/run', {
    goal: `conformance: ${tool}`,
    workflow: { steps: [{ id: 'call', tool, arguments: args }] },
    config: { planApproval: false, permissionMode: 'full-access' },
  });
  if (started.status !== 200) return;
  const runId = started.json.runId;
  const answered = new Set();
  for (let i = 0; i < 600; i++) {
    const run = (await call('GET', `/api/agent/runs/${runId}`)).json;
    if (['completed', 'failed', 'cancelled', 'interrupted'].includes(run.status)) return;
    for (const req of run.inputRequests ?? []) {
      if (answered.has(req.id)) continue;
      answered.add(req.id);
      await call(
        'POST',
        `/api/elicitations/${req.id}`,
        req.mode === 'form'
          ? { action: 'accept', content: formDefaults(req.requestedSchema) }
          : { action: 'accept' },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const test = await call('POST', `/mcp/tool/${id}/test`);
const prefix = `mcp__${name.replace(/[^A-Za-z0-9_-]/g, '_')}__`;
const catalog = test.json.success ? (await call('GET', '/api/agent/tools')).json : [];
for (const tool of Array.isArray(catalog) ? catalog.filter((t) => t.name.startsWith(prefix)) : []) {
  if (scenario.startsWith('elicitation')) {
    await runAndAnswer(tool.name, exampleArguments(tool.inputSchema));
    continue;
  }
  const body = { tool: tool.name, arguments: exampleArguments(tool.inputSchema) };
  const r = await call('POST', '/api/agent/tools/invoke', body);
  // What the person does when a record asks for Reconnect (step-up): Connect again, then retry.
  if (r.status === 409 && String(r.json.detail).includes('needs Reconnect')) {
    await connect();
    await call('POST', '/api/agent/tools/invoke', body);
  }
}
await call('DELETE', `/mcp/tool/${id}`);
