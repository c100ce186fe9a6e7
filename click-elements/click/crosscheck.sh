#!/bin/sh
# Packet-by-packet cross-check of Click elements against their cores: the
# same real trace goes through the element under `click --simtime`
# (crosscheck/*.click) and through the core driven directly by
# ../tests/click_crosscheck.cc (libpcap in, the exact link, Click's event
# order); departures and drops must be identical: same packets, same bytes,
# same order, and the same times (relative to the first arrival) up to
# Click's simulated clock, which advances 1 ns at every Timestamp::now()
# call (lib/timestamp.cc, Timestamp::warp): a few ns per event that do not
# accumulate (every timer expiry resets the clock). The bound is TOL_NS
# (default 20); the largest difference is printed.
#   crosscheck.sh [CLICKPREFIX [WORKDIR]]    (run-examples.sh calls it)
# Prints SKIPPED (reason) for what cannot run; exit 1 on any FAIL.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
elements=$(cd "$here/.." && pwd)
repo=$(cd "$here/../.." && pwd)
data="$repo/datasets/public/zeek-baselines"
small="$data/wikipedia/wikipedia.pcap"
bulk="$data/m57-long-http/m57-long-49583-80.pcap"
. "$here/clickenv.sh"
click_prefix_or_skip "${1:-}"

if [ -n "${2:-}" ]; then
  work=$2
  export CLICKPATH="$work:$CLICKPREFIX/lib:$CLICKPREFIX/share/click"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  build_click_package "$work"
fi
echo "== cross-check: Click elements vs cores"
if ! ${CXX:-c++} -std=c++17 -O2 -I"$elements/core" "$elements/tests/click_crosscheck.cc" -lpcap \
      -o "$work/click_crosscheck" 2>"$work/driver.log"; then
  echo "  SKIPPED (the reference driver does not build; libpcap-dev missing?)"
  sed 's/^/    /' "$work/driver.log" | head -5
  exit 0
fi
fail=0

# compare NAME: Click's $work/c_{arr,dep,drops}.pcap against the driver's
# $work/r_{dep,drops}.pcap (times relative to Click's first arrival).
compare() {
  python3 - "$1" "$work" "${TOL_NS:-20}" <<'PY'
import struct, sys
name, w = sys.argv[1], sys.argv[2]
def records(path):
    with open(path, 'rb') as f:
        d = f.read()
    if len(d) < 24:
        return []
    magic = d[:4]
    e = '<' if magic in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
    nano = magic in (b'\x4d\x3c\xb2\xa1', b'\xa1\xb2\x3c\x4d')
    off, out = 24, []
    while off + 16 <= len(d):
        s, sub, incl, _ = struct.unpack(e + 'IIII', d[off:off + 16])
        out.append((s * 10**9 + sub * (1 if nano else 1000), d[off + 16:off + 16 + incl]))
        off += 16 + incl
    return out
arr = records(f'{w}/c_arr.pcap')
if not arr:
    print(f'  FAIL {name}: Click saw no arrivals'); sys.exit(1)
t0 = arr[0][0]
tol = int(sys.argv[3])
ok = True
for kind in ('dep', 'drops'):
    c = [(t - t0, b) for t, b in records(f'{w}/c_{kind}.pcap')]
    r = records(f'{w}/r_{kind}.pcap')
    same = len(c) == len(r) and all(x[1] == y[1] and 0 <= x[0] - y[0] <= tol for x, y in zip(c, r))
    if same:
        dt = [x[0] - y[0] for x, y in zip(c, r)]
        exact = sum(1 for d in dt if d == 0)
        span = f', last at {r[-1][0] / 1e6:.3f} ms' if r else ''
        print(f'  PASS {name} {kind}: {len(r)} records, same order and bytes; times: {exact} equal, '
              f'Click later by at most {max(dt, default=0)} ns{span}')
        continue
    ok = False
    i = next((i for i, (x, y) in enumerate(zip(c, r)) if x[1] != y[1] or not 0 <= x[0] - y[0] <= tol),
             min(len(c), len(r)))
    what = ''
    if i < min(len(c), len(r)):
        what = f'; record {i}: click t={c[i][0]} len={len(c[i][1])}, core t={r[i][0]} len={len(r[i][1])}'
    print(f'  FAIL {name} {kind}: click {len(c)} records, core {len(r)}{what}')
sys.exit(0 if ok else 1)
PY
}

# one NAME CONF TRACE CORE RATE [DRIVER KEY=VALUE...] -- [CLICK ARGS...]
one() {
  name=$1 conf=$2 trace=$3 core=$4 rate=$5
  shift 5
  dargs=""
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do dargs="$dargs $1"; shift; done
  [ $# -gt 0 ] && shift
  rm -f "$work"/c_*.pcap "$work"/r_*.pcap
  if ! "$CLICKPREFIX/bin/click" --simtime "$here/crosscheck/$conf.click" TRACE="$trace" RATE="$rate" \
       ARR="$work/c_arr.pcap" DEP="$work/c_dep.pcap" DROPS="$work/c_drops.pcap" "$@" 2>"$work/click.log"; then
    echo "  FAIL $name: click failed"; sed 's/^/    /' "$work/click.log" | head -5; fail=1; return
  fi
  # shellcheck disable=SC2086
  if ! summary=$("$work/click_crosscheck" "$core" "$trace" "$rate" "$work/r_dep.pcap" "$work/r_drops.pcap" $dargs); then
    echo "  FAIL $name: driver failed"; fail=1; return
  fi
  echo "  $name: core $summary"
  compare "$name" || fail=1
}

one "fifo (bulk, 300 kb/s, 50 packets)" fifo "$bulk" fifo 300000 capacity=50 -- CAPACITY=50
one "efd (bulk, 300 kb/s, 50 packets, th 30000 B)" efd "$bulk" efd 300000 capacity=50 threshold=30000 -- CAPACITY=50 THRESHOLD=30000
one "efd (many flows, 20 kb/s, 10 packets, th 1500 B)" efd "$small" efd 20000 capacity=10 threshold=1500 -- CAPACITY=10 THRESHOLD=1500
one "chutq (many flows, 10 Gb/s, CEA)" chutq "$small" chutq 10000000000 --
one "mtqqtl (bulk, 3 Mb/s, MTQ 8 ms, QTL 10 ms)" mtqqtl "$bulk" mtqqtl 3000000 capacity=50 mtq=8000 qtl=10000 -- CAPACITY=50 MTQ=8000 QTL=10000
[ $fail = 0 ] || exit 1
