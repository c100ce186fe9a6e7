#!/usr/bin/env bash
# The ns-3 adapters' tests, run by `make test` (suite "ns3" of
# scripts/run-tests.py) after scripts/setup.sh built them: prints one
# `PASS x` / `FAIL x` line per check, or `SKIPPED (reason)` when ns-3 is not
# built (`make ns3`); exit 1 on any FAIL.
#   same_decisions.py   every core's queue disc against the replay engine,
#                       packet by packet, on real traces
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
OUT="${NS3_BUILD:-$ROOT/build/ns3}"
PY="$ROOT/.venv/bin/python"
[ -x "$PY" ] || PY=python3
if [ ! -x "$OUT/tl-ns3-decisions" ]; then
  echo "SKIPPED (ns-3 adapters not built: run \`make ns3\`)"
  exit 0
fi
echo "== same decisions: ns-3 queue discs vs the replay engine ($(cat "$OUT/wheel/VERSION" 2>/dev/null || echo '?'))"
"$PY" "$here/same_decisions.py" --driver "$OUT/tl-ns3-decisions"
status=$?
exit $status
