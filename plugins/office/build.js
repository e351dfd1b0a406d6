#!/usr/bin/env node
// Bundles the office pack's MCP server into one self-contained file, dist/server.cjs (the plugin
// sandbox shows the server its bundle directory only). `npm run build` runs this; the tests call
// buildOfficeServer() so they need no prior build.
'use strict';
const { join } = require('node:path');
const { bundleCjs } = require('../../tools/bundle-cjs');

const ENTRY = join(__dirname, 'src', 'server.ts');
const OUTFILE = join(__dirname, 'dist', 'server.cjs');

function buildOfficeServer(outfile = OUTFILE) {
  return bundleCjs(ENTRY, outfile);
}

module.exports = { buildOfficeServer };

if (require.main === module) {
  buildOfficeServer().catch((err) => {
    console.error(err.message);
    process.exit(1);
  });
}
