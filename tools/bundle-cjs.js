#!/usr/bin/env node
// Bundles a TypeScript entry into one self-contained CommonJS file with rolldown (Vite's bundler):
// plugin servers run in a sandbox that shows them their bundle directory only, so nothing may be
// left to node_modules. Used by the office pack's build and the fixture plugin of the tests.
//   node tools/bundle-cjs.js <entry.ts> <out.cjs>
'use strict';
const { execFile } = require('node:child_process');

/**
 * Through rolldown's CLI in a child process: its API is ESM only, which jest's CommonJS runtime
 * cannot import.
 */
function bundleCjs(entry, outfile) {
  const cli = require.resolve('rolldown/package.json').replace(/package\.json$/, 'bin/cli.mjs');
  const args = [
    cli,
    entry,
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
      if (err) reject(new Error(`bundling ${entry} failed: ${String(stderr).trim() || err.message}`));
      else resolve(outfile);
    });
  });
}

module.exports = { bundleCjs };

if (require.main === module) {
  const [entry, outfile] = process.argv.slice(2);
  if (!entry || !outfile) {
    console.error('usage: node tools/bundle-cjs.js <entry.ts> <out.cjs>');
    process.exit(2);
  }
  bundleCjs(entry, outfile).catch((err) => {
    console.error(err.message);
    process.exit(1);
  });
}
