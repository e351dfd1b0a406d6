#!/usr/bin/env node
// `npm start`: install and build if needed, make sure NATS, Postgres and Redis answer (starting the
// locally installed servers when they do not), apply migrations, then run all five services with
// prefixed logs until Ctrl-C, which stops them all gracefully. Plain JS: runs before any install.
'use strict';
const { execFileSync, execSync, spawn } = require('node:child_process');
const { existsSync, readFileSync } = require('node:fs');
const net = require('node:net');
const { join } = require('node:path');
// Node's flags for each service's process, as the image and the manifests give them (docs/deployment.md).
const SERVICE_NODE_FLAGS = require('./service-node-flags.json');

const root = join(__dirname, '..');
const SERVICES = [['gateway'], ['planner'], ['executor'], ['tool-registry'], ['scheduler']];
const COLORS = [36, 35, 33, 32, 34];
const tty = process.stdout.isTTY;

function say(line) {
  process.stdout.write(`${tty ? '\x1b[1m' : ''}switchyard${tty ? '\x1b[0m' : ''} ${line}\n`);
}

/** KEY=VALUE lines from .env; the real environment wins. */
function loadDotEnv() {
  const file = join(root, '.env');
  const env = {};
  if (!existsSync(file)) return env;
  for (const raw of readFileSync(file, 'utf8').split(/\r?\n/)) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)\s*$/.exec(raw);
    if (!m || raw.trim().startsWith('#')) continue;
    env[m[1]] = m[2].replace(/^(['"])(.*)\1$/, '$2');
  }
  return env;
}

function answers(host, port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

function has(binary) {
  try {
    execSync(`command -v ${binary}`, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const DEPENDENCIES = (env) => [
  {
    name: 'NATS',
    url: new URL((env.NATS_URL || 'nats://127.0.0.1:4222').split(',')[0]),
    defaultPort: 4222,
    binary: 'nats-server',
    start:
      'start-stop-daemon --start --oknodo --background --exec "$(command -v nats-server)" -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log',
  },
  {
    name: 'PostgreSQL',
    url: new URL(env.DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/switchyard'),
    defaultPort: 5432,
    binary: 'pg_ctlcluster',
    start: 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql | sort -V | tail -1) main start',
  },
  {
    name: 'Redis',
    url: new URL(env.REDIS_URL || 'redis://127.0.0.1:6379'),
    defaultPort: 6379,
    binary: 'redis-server',
    start:
      'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /tmp --logfile /tmp/switchyard-redis.log',
  },
];

async function ensureDependencies(env) {
  const missing = [];
  for (const dep of DEPENDENCIES(env)) {
    const host = dep.url.hostname || '127.0.0.1';
    const port = Number(dep.url.port || dep.defaultPort);
    if (await answers(host, port)) continue;
    const local = host === '127.0.0.1' || host === 'localhost';
    if (local && port === dep.defaultPort && has(dep.binary)) {
      say(`${dep.name} does not answer on ${host}:${port}; starting the local server`);
      try {
        execSync(dep.start, { stdio: 'inherit', shell: '/bin/bash' });
      } catch {
        // reported below if it still does not answer
      }
      for (let i = 0; i < 40 && !(await answers(host, port)); i++)
        await new Promise((r) => setTimeout(r, 250));
      if (await answers(host, port)) continue;
    }
    missing.push({ ...dep, host, port });
  }
  if (missing.length) {
    for (const dep of missing) {
      say(`${dep.name} does not answer on ${dep.host}:${dep.port}.`);
      if (has(dep.binary)) say(`  start it with: ${dep.start}`);
    }
    say('With Docker: docker compose up -d nats postgres redis');
    say('Or point NATS_URL, DATABASE_URL and REDIS_URL (in .env) at running servers.');
    process.exit(1);
  }
}

function prefixLines(stream, label, color, out) {
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    buf += chunk;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      out.write(`${tty ? `\x1b[${color}m` : ''}${label}${tty ? '\x1b[0m' : ''} ${format(buf.slice(0, i))}\n`);
      buf = buf.slice(i + 1);
    }
  });
}

/** On a terminal, JSON log lines become `12:00:01 info message {rest}`; elsewhere they pass through. */
function format(line) {
  if (!tty || !line.startsWith('{')) return line;
  try {
    const rest = JSON.parse(line);
    const { level, time, msg } = rest;
    for (const key of ['level', 'time', 'msg', 'service', 'instance']) delete rest[key];
    const extra = Object.keys(rest).length ? ' ' + JSON.stringify(rest) : '';
    return `${String(time).slice(11, 19)} ${level} ${msg}${extra}`;
  } catch {
    return line;
  }
}

async function waitHealthy(url, children, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (children.some((c) => c.exitCode !== null)) return false;
    try {
      const res = await fetch(`${url}/api/health`);
      last = await res.text();
      if (res.ok) return true;
    } catch (err) {
      last = err.message;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  say(`platform did not become healthy in ${timeoutMs / 1000}s: ${last}`);
  return false;
}

/** A local setup needs a key for MCP connection settings: make one, once, and keep it in .env. */
function ensureToolConfigKey(env) {
  if (env.TOOL_CONFIG_KEY) return env;
  const key = require('node:crypto').randomBytes(32).toString('base64');
  const file = join(root, '.env');
  const existing = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const line = `${existing && !existing.endsWith('\n') ? '\n' : ''}# generated by npm start: encrypts MCP connection settings; keep it\nTOOL_CONFIG_KEY=${key}\n`;
  require('node:fs').appendFileSync(file, line, { mode: 0o600 });
  say('generated TOOL_CONFIG_KEY into .env (it encrypts MCP connection settings; keep it)');
  return { ...env, TOOL_CONFIG_KEY: key };
}

async function main() {
  execFileSync(process.execPath, [join(__dirname, 'ensure-built.js')], { cwd: root, stdio: 'inherit' });
  const env = ensureToolConfigKey({ ...loadDotEnv(), ...process.env });
  await ensureDependencies(env);
  execFileSync(process.execPath, [join(root, 'dist/tools/cli/switchyard.js'), 'migrate'], {
    cwd: root,
    stdio: 'inherit',
    env,
  });

  const children = [];
  let stopping = false;
  const stopAll = (code) => {
    if (stopping) return;
    stopping = true;
    say('stopping all services…');
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
    Promise.all(
      children.map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once('exit', r)))),
    ).then(() => {
      say('all services stopped');
      process.exit(code);
    });
  };
  process.on('SIGINT', () => stopAll(0));
  process.on('SIGTERM', () => stopAll(0));

  const width = Math.max(...SERVICES.map(([n]) => n.length));
  // The gateway gets PORT (default 3000); the others the next four ports (probes and metrics only).
  const gatewayPort = Number(env.PORT || 3000);
  SERVICES.forEach(([name], i) => {
    const port = String(gatewayPort + i);
    const child = spawn(
      process.execPath,
      [...SERVICE_NODE_FLAGS[name], join(root, `dist/apps/${name}/src/main.js`)],
      {
        cwd: root,
        env: { ...env, PORT: port },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const label = name.padEnd(width);
    prefixLines(child.stdout, label, COLORS[i], process.stdout);
    prefixLines(child.stderr, label, COLORS[i], process.stderr);
    child.on('exit', (code, signal) => {
      if (stopping) return;
      say(`${name} exited (${signal || `code ${code}`}); stopping the others`);
      stopAll(1);
    });
    children.push(child);
  });

  const url = `http://127.0.0.1:${env.PORT || 3000}`;
  if (await waitHealthy(url, children, 60_000)) {
    say(`all five services are up: ${url}  (health ${url}/api/health, API docs ${url}/api/docs)`);
    if (env.COMMAND_SANDBOX !== 'none' && !env.COMMAND_SANDBOX_BIN && !has('bwrap')) {
      say(
        'note: bubblewrap is not installed, so execute_command is refused to non-admins ' +
          '(install it with: sudo apt-get install bubblewrap, then restart)',
      );
    }
    if (!env.SWITCHYARD_ADMIN_TOKEN) {
      say('create an API token with: npm run switchyard -- token create --owner you --role admin');
    }
    say('Ctrl-C stops everything.');
  } else if (!stopping) {
    stopAll(1);
  }
}

main().catch((err) => {
  say(`failed: ${err.message}`);
  process.exit(1);
});
