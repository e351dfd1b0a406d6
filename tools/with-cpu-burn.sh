#!/usr/bin/env bash
# Runs a command with N processes beside it that keep a core busy each, and stops them after, however
# the command ends: `tools/with-cpu-burn.sh 2 npx jest test/e2e/tasks.e2e-spec.ts`.
# Tests must pass like this (no assertion may depend on how fast the machine is); .ci/run --cpu-burn
# runs npm test so.
set -euo pipefail
n=${1:?usage: with-cpu-burn.sh <processes> <command...>}
shift
[[ $n =~ ^[0-9]+$ ]] || { echo "with-cpu-burn: '$n' is not a number of processes" >&2; exit 2; }
burners=()
stop() { [ ${#burners[@]} -eq 0 ] || kill "${burners[@]}" 2>/dev/null || true; }
trap stop EXIT
trap 'exit 130' INT TERM
for _ in $(seq 1 "$n"); do
  node -e 'for (;;) {}' &
  burners+=($!)
done
echo "with-cpu-burn: $n burning processes (${burners[*]}) beside: $*" >&2
status=0
"$@" || status=$?
exit $status
