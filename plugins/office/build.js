#!/usr/bin/env node
// Bundles the office pack's MCP server into one self-contained file, dist/server.cjs: the plugin
// sandbox shows the server its bundle directory only, so nothing may be left to node_modules.
// `npm run build` runs this; the tests call buildOfficeServer() so they need no prior build.
'use strict';
const { execFile } = require('node:child_process');
const { join } = require('node:path');

const ENTRY = join(__dirname, 'src', 'server.ts');
const OUTFILE = join(__dirname, 'dist', 'server.cjs');

/**
 * rolldown (Vite's bundler, and the fixture plugin's: one bundler in the repository), through its
 * CLI in a child process: its API is ESM only, which jest's CommonJS runtime cannot import.
 */
function buildOfficeServer(outfile = OUTFILE) {
  const cli = join(require.resolve('rolldown/package.json'), '..', 'bin', 'cli.mjs');
  const args = [
    cli,
    ENTRY,
    '--file',
    outfile,
    '--format',
    'cjs',
    '--platform',
    'node',
    '--log-level',
    'warn',
  ];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { maxBuffer: 10 * 1024 * 1024 }, (err, _out, stderr) => {
      if (err)
        reject(new Error(`bundling the office server failed: ${String(stderr).trim() || err.message}`));
      else resolve(outfile);
    });
  });
}

module.exports = { buildOfficeServer };

if (require.main === module) {
  buildOfficeServer().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
