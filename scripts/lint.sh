#!/usr/bin/env bash
# The style and structure gates, run by `make lint` and by `make test` (as the
# suite "lint" of scripts/run-tests.py). Each gate prints `PASS <gate>` or
# `FAIL <gate>` after its own output; the exit status is 1 if any failed.
#
#   scripts/lint.sh            every gate
#   scripts/lint.sh GATE...    only those (rustfmt clippy ruff-check
#                              ruff-format clang-format import-contracts
#                              rust-cycles)
#
# Tools: cargo fmt/clippy from the pinned toolchain (rust-toolchain.toml);
# ruff, clang-format and import-linter from requirements.lock (.venv).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="$ROOT/.venv/bin"
CRATES=(analyzer/Cargo.toml datasets/generate/Cargo.toml)

gate_rustfmt() {
  local m ok=0
  for m in "${CRATES[@]}"; do cargo fmt --manifest-path "$m" --all --check || ok=1; done
  return $ok
}
gate_clippy() {
  local m ok=0
  for m in "${CRATES[@]}"; do
    cargo clippy --quiet --locked --manifest-path "$m" --workspace --all-targets -- -D warnings || ok=1
  done
  return $ok
}
gate_ruff-check() { "$VENV/ruff" check .; }
gate_ruff-format() { "$VENV/ruff" format --check .; }
gate_clang-format() { git ls-files -z '*.cc' '*.hh' '*.cpp' '*.h' | xargs -0 "$VENV/clang-format" --dry-run -Werror; }
gate_import-contracts() { (cd "$ROOT" && "$VENV/lint-imports" --no-cache); }
gate_rust-cycles() { "$VENV/python" scripts/check-rust-cycles.py; }

GATES=(rustfmt clippy ruff-check ruff-format clang-format import-contracts rust-cycles)
case "${1:-}" in -h|--help) sed -n '2,12p' "$0"; exit 0 ;; esac
chosen=("${@:-${GATES[@]}}")
[ $# -gt 0 ] || chosen=("${GATES[@]}")
failed=0
for gate in "${chosen[@]}"; do
  if ! declare -F "gate_$gate" >/dev/null; then
    echo "lint.sh: unknown gate $gate (gates: ${GATES[*]})" >&2; exit 2
  fi
  echo "--- $gate"
  if "gate_$gate"; then echo "PASS $gate"; else echo "FAIL $gate"; failed=1; fi
done
exit $failed
