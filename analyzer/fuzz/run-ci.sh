#!/usr/bin/env bash
# The bounded fuzz run of CI (the `fuzz` suite of scripts/run-tests.py): each
# cargo-fuzz target for FUZZ_SECONDS (45) over its checked-in seed corpus
# (corpus/<target>/, read only: new inputs go to a scratch directory), then
# one line per target:
#   PASS fuzz <target>: <runs> runs in <s> s, cov <cov> ft <ft>
#   FAIL fuzz <target>: <reason>; input in <artifact path>
#   SKIPPED (<reason>)          when the pinned nightly or cargo-fuzz is absent
# The toolchain and cargo-fuzz are installed by scripts/setup.sh --test, at the
# versions pinned in pins.env.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE"
# shellcheck source=pins.env
. ./pins.env
TOOLCHAIN="${FUZZ_TOOLCHAIN:-$FUZZ_TOOLCHAIN_PIN}"
SECONDS_PER_TARGET="${FUZZ_SECONDS:-45}"
TARGETS=(decode readers service)

if ! rustup run "$TOOLCHAIN" rustc --version >/dev/null 2>&1; then
  echo "SKIPPED (fuzz: toolchain $TOOLCHAIN not installed; scripts/setup.sh --test installs it)"
  exit 0
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "SKIPPED (fuzz: cargo-fuzz not installed; scripts/setup.sh --test installs $CARGO_FUZZ_VERSION)"
  exit 0
fi

started=$(date +%s)
if ! nice cargo "+$TOOLCHAIN" fuzz build; then
  echo "FAIL fuzz build: cargo +$TOOLCHAIN fuzz build failed"
  exit 1
fi
echo "fuzz: targets built with $TOOLCHAIN in $(($(date +%s) - started)) s"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
status=0
for target in "${TARGETS[@]}"; do
  mkdir -p "$scratch/$target" "artifacts/$target"
  log="$scratch/$target.log"
  # -rss_limit_mb: a leak or a blow-up is a failure, not a swap storm on a
  # shared runner. -timeout: one input slower than 10 s is a hang.
  nice cargo "+$TOOLCHAIN" fuzz run "$target" "$scratch/$target" "corpus/$target" -- \
    -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=1024 -timeout=10 -seed=1 \
    -artifact_prefix="artifacts/$target/" -print_final_stats=1 >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  secs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
  if [ "$rc" = 0 ]; then
    echo "PASS fuzz $target: ${runs:-?} runs in ${SECONDS_PER_TARGET} s (${secs:-?}/s), ${cov:-no coverage line}, $(ls "corpus/$target" | wc -l) seeds"
  else
    status=1
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    reason=$(grep -m1 -oE 'ERROR: libFuzzer: [a-z-]+|panicked at [^:]+:[0-9]+|ERROR: AddressSanitizer: [a-z-]+' "$log")
    tail -40 "$log"
    echo "FAIL fuzz $target: ${reason:-exit $rc}; input in analyzer/fuzz/${artifact:-artifacts/$target/ (none written)}"
  fi
done
echo "fuzz: ${#TARGETS[@]} targets in $(($(date +%s) - started)) s"
exit "$status"
