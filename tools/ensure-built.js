#!/usr/bin/env node
// Builds (prisma generate + tsc) when dist/ is missing or older than any source file, and installs
// dependencies first when node_modules is missing. Used by `npm test`, `npm start` and the CLI so a
// fresh checkout needs no separate build step. Plain JS: it must run before anything is installed.
'use strict';
const { execSync } = require('node:child_process');
const { existsSync, readdirSync, statSync, writeFileSync, mkdirSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const stamp = join(root, 'dist', '.build-stamp');
const SOURCES = [
  'apps',
  'libs',
  'tools',
  'bench',
  'plugins',
  'package-lock.json',
  'tsconfig.base.json',
  'tsconfig.build.json',
];
const SKIP = new Set(['node_modules', 'dist', 'web', 'results', 'migrations']);
// The web client (apps/web, built by Vite into dist/web) has a stamp of its own: a change to it
// does not rebuild the services, and a change to the libraries it imports rebuilds it.
const webStamp = join(root, 'dist', 'web', '.build-stamp');
const WEB_SOURCES = ['apps/web', 'libs/contracts', 'libs/plan', 'package-lock.json'];
const SERVER_FILES = /\.(ts|prisma|json|js|lua)$/;
const WEB_FILES = /\.(ts|tsx|mts|css|html|svg|json)$/;

function newest(path, files = SERVER_FILES, skip = SKIP) {
  let st;
  try {
    st = statSync(path);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return files.test(path) ? st.mtimeMs : 0;
  let max = 0;
  for (const entry of readdirSync(path)) {
    if (skip.has(entry) || entry.endsWith('.spec.ts') || entry.endsWith('.spec.tsx')) continue;
    max = Math.max(max, newest(join(path, entry), files, skip));
  }
  return max;
}

function stampTime(file) {
  return existsSync(file) ? statSync(file).mtimeMs : 0;
}

function run(cmd) {
  execSync(cmd, { cwd: root, stdio: 'inherit' });
}

function writeStamp(file) {
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, new Date().toISOString() + '\n');
}

// `npm run build` ends with `ensure-built.js --stamp`: record that dist/ is fresh.
if (process.argv.includes('--stamp')) {
  writeStamp(stamp);
  writeStamp(webStamp);
  process.exit(0);
}

if (!existsSync(join(root, 'node_modules', '.package-lock.json'))) {
  console.log('> installing dependencies (npm ci)');
  run('npm ci --no-audit --no-fund');
}
const built = stampTime(stamp);
const sources = Math.max(
  ...SOURCES.map((s) => newest(join(root, s))),
  newest(join(root, 'libs/server/db/prisma/schema.prisma')),
);
// The plugin bundles shipped in the repository (plugins/*/dist) are built by `npm run build` too.
const pluginBundles = ['plugins/office/dist/server.cjs'];
if (process.env.SWITCHYARD_FORCE_BUILD === '1' || built < sources) {
  console.log('> building (prisma generate, tsc, web client)');
  run('npm run -s build');
} else if (pluginBundles.some((b) => !existsSync(join(root, b)))) {
  console.log('> bundling the plugins (rolldown)');
  run('npm run -s build:plugins');
} else if (
  stampTime(webStamp) <
  Math.max(...WEB_SOURCES.map((s) => newest(join(root, s), WEB_FILES, new Set(['node_modules', 'dist']))))
) {
  console.log('> building the web client (vite)');
  run('npm run -s build:web');
  writeStamp(webStamp);
}
