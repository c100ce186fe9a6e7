#!/usr/bin/env bash
# Sets up and builds every part of tracelab. Used by `make setup`, `make demo`,
# `make test` and .ci/run, so they all install the same way. (`pip install .`
# and the Dockerfile build the wheel of pyproject.toml instead: docs/install.md.)
#
#   scripts/setup.sh            system packages, .venv, build everything
#   scripts/setup.sh --test     also the oracles the tests compare against
#                               (tshark, tcptrace, argus) and test-only tools
#   scripts/setup.sh --no-build only packages and the virtualenv
#   scripts/setup.sh --mutants  also cargo-mutants, for `make mutants`
#
# System packages come from Debian (apt-get, as root); Python packages from
# PyPI, pinned in requirements.lock; Rust crates from crates.io, locked in
# analyzer/Cargo.lock; with --test also the ns-3 wheel from PyPI, pinned in
# click-elements/ns3/build.sh, and the fuzzing tools (a dated nightly from
# rustup, cargo-fuzz and cargo-mutants from crates.io) pinned in
# analyzer/fuzz/pins.env. Nothing else is downloaded.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

WITH_TEST=0
WITH_MUTANTS=0
BUILD=1
for arg in "$@"; do
  case "$arg" in
    --test) WITH_TEST=1 ;;
    --mutants) WITH_MUTANTS=1 ;;
    --no-build) BUILD=0 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option $arg (see --help)" >&2; exit 2 ;;
  esac
done

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

# --- system packages (Debian) -------------------------------------------------
APT_BUILD=(build-essential pkg-config cmake ninja-build libpcap-dev libgtest-dev pybind11-dev)
APT_TEST=(tshark tcptrace argus-client argus-server tcpreplay default-jdk-headless maven chromium)
want=("${APT_BUILD[@]}")
[ "$WITH_TEST" = 1 ] && want+=("${APT_TEST[@]}")
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# A JDK and Maven may come from elsewhere than Debian (the project machines
# carry Temurin): accept any working java + mvn.
if command -v java >/dev/null && command -v mvn >/dev/null; then
  missing=("${missing[@]/default-jdk-headless}"); missing=("${missing[@]/maven}")
fi
read -r -a missing <<<"${missing[*]:-}"
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    say "installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup.sh: missing Debian packages. Install them with:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

# --- toolchains ---------------------------------------------------------------
if ! command -v cargo >/dev/null; then
  echo "setup.sh: Rust is missing. Install rustup (https://rustup.rs), then the toolchain" >&2
  echo "  pinned in rust-toolchain.toml: rustup toolchain install $(sed -n 's/^channel = \"\(.*\)\"/\1/p' rust-toolchain.toml)" >&2
  exit 1
fi
PYTHON="${PYTHON:-}"
if [ -z "$PYTHON" ]; then
  for cand in python3.11 python3; do
    if command -v "$cand" >/dev/null && "$cand" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
      PYTHON="$cand"; break
    fi
  done
fi
if [ -z "$PYTHON" ]; then
  echo "setup.sh: Python 3.11 is required (apt-get install python3.11 python3.11-venv, or set PYTHON=...)" >&2
  exit 1
fi

# --- Python virtualenv ----------------------------------------------------------
if [ ! -x .venv/bin/python ]; then
  say "creating .venv with $($PYTHON --version)"
  "$PYTHON" -m venv .venv
fi
if ! cmp -s requirements.lock .venv/.requirements.lock 2>/dev/null; then
  say "installing pinned Python packages (requirements.lock)"
  .venv/bin/pip install -q --disable-pip-version-check -r requirements.lock
  cp requirements.lock .venv/.requirements.lock
fi
say "installing tracelab's Python packages (editable)"
for pkg in models replay; do
  if [ -f "$pkg/pyproject.toml" ]; then
    .venv/bin/pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e "$pkg"
  fi
done

[ "$BUILD" = 1 ] || exit 0

# --- build ----------------------------------------------------------------------
JOBS="${JOBS:-$(nproc)}"
say "building the analyzer (Rust, release)"
cargo build --release --locked -j "$JOBS" --manifest-path analyzer/Cargo.toml
ln -sf "$ROOT/analyzer/target/release/tracelab-analyzer" .venv/bin/tracelab-analyzer

say "building the queueing cores and their tests (C++)"
cmake -S click-elements -B build/click-elements -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/click-elements -j "$JOBS"

if [ -f replay/engine/CMakeLists.txt ]; then
  say "building the replay engine (C++) and its Python module"
  cmake -S replay/engine -B build/engine -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DPython_EXECUTABLE="$ROOT/.venv/bin/python" \
    -Dpybind11_DIR="$(.venv/bin/python -m pybind11 --cmakedir)" >/dev/null
  cmake --build build/engine -j "$JOBS"
  cmake --install build/engine >/dev/null
fi
# The ns-3 adapters (click-elements/ns3/): with --test, or when built before.
# They need the ns-3 wheel from PyPI; without it (build.sh exits 3) the rest
# still builds and their tests report SKIPPED; a build error stops setup.
if [ "$WITH_TEST" = 1 ] || [ -f build/ns3/CMakeCache.txt ]; then
  say "building the ns-3 adapters (click-elements/ns3, ns-3 from PyPI)"
  ns3_status=0
  JOBS="$JOBS" bash click-elements/ns3/build.sh || ns3_status=$?
  if [ "$ns3_status" = 3 ]; then
    echo "setup.sh: no ns-3 wheel, the ns-3 adapters are not built; their tests will be SKIPPED" >&2
  elif [ "$ns3_status" != 0 ]; then
    exit "$ns3_status"
  fi
fi
# The fuzz suite's tools (analyzer/fuzz/pins.env). A failed install is not
# fatal: the fuzz suite then reports SKIPPED with the reason.
if [ "$WITH_TEST" = 1 ] || [ "$WITH_MUTANTS" = 1 ]; then
  # shellcheck source=../analyzer/fuzz/pins.env
  . analyzer/fuzz/pins.env
fi
if [ "$WITH_TEST" = 1 ]; then
  say "fuzzing tools: $FUZZ_TOOLCHAIN_PIN (rustup), cargo-fuzz $CARGO_FUZZ_VERSION (crates.io)"
  if ! rustup run "$FUZZ_TOOLCHAIN_PIN" rustc --version >/dev/null 2>&1; then
    rustup toolchain install "$FUZZ_TOOLCHAIN_PIN" --profile minimal ||
      echo "setup.sh: $FUZZ_TOOLCHAIN_PIN not installed; the fuzz suite will be SKIPPED" >&2
  fi
  if [ "$(cargo fuzz --version 2>/dev/null)" != "cargo-fuzz $CARGO_FUZZ_VERSION" ]; then
    cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked ||
      echo "setup.sh: cargo-fuzz not installed; the fuzz suite will be SKIPPED" >&2
  fi
fi
if [ "$WITH_MUTANTS" = 1 ] && [ "$(cargo mutants --version 2>/dev/null)" != "cargo-mutants $CARGO_MUTANTS_VERSION" ]; then
  say "cargo-mutants $CARGO_MUTANTS_VERSION (crates.io)"
  cargo install cargo-mutants --version "$CARGO_MUTANTS_VERSION" --locked
fi
say "setup done: activate with \`. .venv/bin/activate\`, then run \`tracelab --help\`"
