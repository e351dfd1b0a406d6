// The MCP conformance suite's client, played by Switchyard: the scenario's server becomes a REMOTE
// record of a running platform, which connects (OAuth through the gateway's callback, the
// authorization URL followed as a browser would), tests it and calls its tools through the
// registry. The suite runs it as `node client-driver.mjs <server-url>`, with the scenario in
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

const test = await call('POST', `/mcp/tool/${id}/test`);
const prefix = `mcp__${name.replace(/[^A-Za-z0-9_-]/g, '_')}__`;
const catalog = test.json.success ? (await call('GET', '/api/agent/tools')).json : [];
for (const tool of Array.isArray(catalog) ? catalog.filter((t) => t.name.startsWith(prefix)) : []) {
  const body = { tool: tool.name, arguments: exampleArguments(tool.inputSchema) };
  const r = await call('POST', '/api/agent/tools/invoke', body);
  // What the person does when a record asks for Reconnect (step-up): Connect again, then retry.
  if (r.status === 409 && String(r.json.detail).includes('needs Reconnect')) {
    await connect();
    await call('POST', '/api/agent/tools/invoke', body);
  }
}
await call('DELETE', `/mcp/tool/${id}`);
