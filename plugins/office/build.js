#!/usr/bin/env node
// Bundles the office pack's MCP server into one self-contained file, dist/server.cjs: the plugin
// sandbox shows the server its bundle directory only, so nothing may be left to node_modules.
// `npm run build` runs this; the tests call buildOfficeServer() so they need no prior build.
'use strict';
const { join } = require('node:path');

const ENTRY = join(__dirname, 'src', 'server.ts');
const OUTFILE = join(__dirname, 'dist', 'server.cjs');

async function buildOfficeServer(outfile = OUTFILE) {
  // rolldown (Vite's bundler, also the fixture plugin's): one bundler in the repository.
  const { build } = await import('rolldown');
  await build({
    input: ENTRY,
    platform: 'node',
    logLevel: 'silent',
    output: { file: outfile, format: 'cjs', legalComments: 'inline' },
  });
  return outfile;
}

module.exports = { buildOfficeServer, OFFICE_SERVER_BUNDLE: OUTFILE };

if (require.main === module) {
  buildOfficeServer().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
