#!/usr/bin/env bash
# Builds the ns-3 adapters of the tracelab cores (`make ns3`; scripts/setup.sh
# runs it too). ns-3 comes from PyPI: the pinned wheel ns3==3.44.post0 carries
# the C++ headers and shared libraries, so nothing is installed system-wide.
#
#   click-elements/ns3/build.sh          fetch (once) and build into build/ns3/
#
# build/ns3/dl/     the wheel as downloaded (kept: a rebuild fetches nothing)
# build/ns3/wheel/  its ns3/include and ns3/lib64
# build/ns3/        libtracelab-ns3.so, tl-ns3-decisions, tl-ns3-dumbbell
#
# Exit status 3 (with a message) when the wheel cannot be fetched, so that
# setup.sh can go on without ns-3. Environment: NS3_BUILD (default
# build/ns3), PYTHON (default .venv/bin/python, else python3), JOBS (2).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
NS3_VERSION=3.44.post0
# The wheel's SHA-256, as PyPI lists it (pip checks it: --require-hashes).
NS3_SHA256=2a98479a4a3a1bb819b95ce061871a9d068268b42351b8f0ef598160939ba7ce
OUT="${NS3_BUILD:-$ROOT/build/ns3}"
JOBS="${JOBS:-2}"
PYTHON="${PYTHON:-}"
if [ -z "$PYTHON" ]; then
  if [ -x "$ROOT/.venv/bin/python" ]; then PYTHON="$ROOT/.venv/bin/python"; else PYTHON=python3; fi
fi
say() { printf '==> %s\n' "$*"; }

wheel="$OUT/wheel/ns3"
if [ ! -f "$wheel/include/ns3/queue-disc.h" ] || [ "$(cat "$OUT/wheel/VERSION" 2>/dev/null)" != "$NS3_VERSION" ]; then
  mkdir -p "$OUT/dl"
  whl=$(ls "$OUT"/dl/ns3-"$NS3_VERSION"-*.whl 2>/dev/null | head -n 1 || true)
  if [ -z "$whl" ]; then
    say "downloading ns3==$NS3_VERSION from PyPI (~69 MB)"
    echo "ns3==$NS3_VERSION --hash=sha256:$NS3_SHA256" >"$OUT/dl/requirements.txt"
    # The cp311 manylinux wheel whatever Python runs pip: only its C++ part is used.
    if ! "$PYTHON" -m pip download -q --disable-pip-version-check --no-deps --require-hashes \
      --only-binary=:all: --python-version 3.11 --implementation cp --abi cp311 \
      --platform manylinux_2_28_x86_64 -d "$OUT/dl" -r "$OUT/dl/requirements.txt"; then
      echo "ns3 build: cannot download the ns-3 wheel ns3==$NS3_VERSION from PyPI (offline, or no pip?)." >&2
      echo "  By hand: pip download --no-deps -d $OUT/dl ns3==$NS3_VERSION, then run $0 again." >&2
      exit 3
    fi
    whl=$(ls "$OUT"/dl/ns3-"$NS3_VERSION"-*.whl | head -n 1)
  fi
  say "unpacking $(basename "$whl") (headers and libraries)"
  rm -rf "$OUT/wheel"
  "$PYTHON" - "$whl" "$OUT/wheel" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    names = [n for n in z.namelist() if n.startswith(("ns3/include/", "ns3/lib64/"))]
    z.extractall(sys.argv[2], names)
PY
  echo "$NS3_VERSION" >"$OUT/wheel/VERSION"
fi

say "building the ns-3 adapters (ns-3 $NS3_VERSION) into $OUT"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f "$OUT/CMakeCache.txt" ]; then
  cmake -S "$ROOT/click-elements/ns3" -B "$OUT" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DNS3_ROOT="$wheel" -DNS3_VERSION="$NS3_VERSION" >/dev/null
fi
cmake --build "$OUT" -j "$JOBS"
