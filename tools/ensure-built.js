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
  'package-lock.json',
  'tsconfig.base.json',
  'tsconfig.build.json',
];
const SKIP = new Set(['node_modules', 'dist', 'web', 'results', 'migrations']);

function newest(path) {
  let st;
  try {
    st = statSync(path);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return /\.(ts|prisma|json|js|lua)$/.test(path) ? st.mtimeMs : 0;
  let max = 0;
  for (const entry of readdirSync(path)) {
    if (SKIP.has(entry)) continue;
    max = Math.max(max, newest(join(path, entry)));
  }
  return max;
}

function run(cmd) {
  execSync(cmd, { cwd: root, stdio: 'inherit' });
}

function writeStamp() {
  mkdirSync(join(root, 'dist'), { recursive: true });
  writeFileSync(stamp, new Date().toISOString() + '\n');
}

// `npm run build` ends with `ensure-built.js --stamp`: record that dist/ is fresh.
if (process.argv.includes('--stamp')) {
  writeStamp();
  process.exit(0);
}

if (!existsSync(join(root, 'node_modules', '.package-lock.json'))) {
  console.log('> installing dependencies (npm ci)');
  run('npm ci --no-audit --no-fund');
}
const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
const sources = Math.max(
  ...SOURCES.map((s) => newest(join(root, s))),
  newest(join(root, 'libs/server/db/prisma/schema.prisma')),
);
if (process.env.SWITCHYARD_FORCE_BUILD === '1' || built < sources) {
  console.log('> building (prisma generate, tsc)');
  run('npm run -s build');
}
