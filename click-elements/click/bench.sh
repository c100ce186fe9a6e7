#!/bin/sh
# What a tracelab queue element costs in a Click pipeline, next to Click's
# own Queue. Every configuration runs
#   FromDump(TRACE, STOP true) -> Strip(14) -> MarkIPHeader [-> QUEUE -> Unqueue] -> Counter -> Discard
# in real time (no --simtime) on a large synthetic trace; QUEUE is nothing
# (bare), Queue(300), or a tracelab single-packet queue with CAPACITY 300.
# Prints per configuration the CPU seconds of the whole click process (user
# + system: median, min-max over REPS runs), the nanoseconds per packet it
# adds over the bare pipeline, that cost as a multiple of stock Queue's, and
# the pipeline's throughput relative to stock Queue's (stock CPU / its CPU),
# and whether it meets issue #19's target: TLFifoQueue at most 1.5x what
# stock Queue adds, every other element at most its core's core_bench cost
# + 10 ns (given in CORE_NS), FIFO and EFD at least 0.9x stock's throughput.
#
#   CLICKPREFIX=/click/prefix ./bench.sh [TRACE.pcap]
#
# Without TRACE it generates tcpmix (datasets/generate, cargo) with PACKETS
# packets (default 6000000, about 550 MB) and seed 1 into
# build/click-bench/, reused by later runs. Environment:
#   REPS=5        runs per configuration, interleaved (round r runs every
#                 configuration once) so a slow spell of a shared machine
#                 spreads over all of them
#   CONFIGS=...   space-separated subset of: bare Queue TLFifoQueue
#                 TLFifoQueue-false TLEfdQueue TLRun2CQueue TLSiftQueue
#                 TLXProtectQueue TLNcqQueue TLLasQueue TLLarsQueue
#                 TLScfqQueue (default all; bare and Queue are always run:
#                 the others are relative). TLFifoQueue-false is TLFifoQueue
#                 with IN_SERVICE false, stock Queue's convention (the pulled
#                 packet leaves the buffer), so the two do the same work.
#   CORE_NS="TLEfdQueue=25.0 ..."  each element's core_bench ns/packet
#                 (make bench-cores), for its target; without it "-"
#   WORKDIR=dir   build the package there (kept, rebuilt incrementally)
#                 instead of a temporary directory
#   BASELINE=dir  a directory holding another build of the package
#                 (tracelab.uo, e.g. an earlier WORKDIR): each round also
#                 runs every configuration with it, right after this
#                 build's, and a second table gives its figures, so a
#                 change is measured before and after in one run
# Without a Click installation it prints "SKIPPED (no Click installation)"
# and exits 0.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

. "$here/clickenv.sh"
click_prefix_or_skip

if [ -n "${BASELINE:-}" ] && [ ! -f "$BASELINE/tracelab.uo" ]; then
  echo "FAIL: no tracelab.uo in BASELINE $BASELINE" >&2
  exit 1
fi
reps=${REPS:-5}
packets=${PACKETS:-6000000}
all="TLFifoQueue TLFifoQueue-false TLEfdQueue TLRun2CQueue TLSiftQueue TLXProtectQueue TLNcqQueue TLLasQueue TLLarsQueue TLScfqQueue"
configs="bare Queue"
for c in ${CONFIGS:-$all}; do
  case " bare Queue " in *" $c "*) ;; *) configs="$configs $c" ;; esac
done

if [ $# -ge 1 ]; then
  trace=$1
  [ -f "$trace" ] || { echo "FAIL: trace not found: $trace" >&2; exit 1; }
else
  trace="$repo/build/click-bench/tcpmix-$packets-1.pcap"
  if [ ! -f "$trace" ]; then
    mkdir -p "$repo/build/click-bench"
    echo "generating $trace ($packets packets)"
    cargo build --release --quiet --manifest-path "$repo/datasets/generate/Cargo.toml" \
      --target-dir "$repo/build/generate/target"
    "$repo/build/generate/target/release/tcpmix" --packets "$packets" --seed 1 "$trace.tmp" >/dev/null
    mv "$trace.tmp" "$trace"
  fi
fi

if [ -n "${WORKDIR:-}" ]; then
  work=$WORKDIR
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
build_click_package "$work"
click="$CLICKPREFIX/bin/click"

# The element and its arguments for each configuration (the examples'
# mechanism keywords where an element needs some).
queue_of() {
  case "$1" in
    bare) echo "" ;;
    Queue) echo "Queue(300)" ;;
    TLFifoQueue-false) echo "TLFifoQueue(CAPACITY 300, IN_SERVICE false)" ;;
    TLEfdQueue) echo "TLEfdQueue(CAPACITY 300, VARIANT befd, THRESHOLD 30000)" ;;
    TLRun2CQueue) echo "TLRun2CQueue(CAPACITY 300, THRESHOLD 30000)" ;;
    TLSiftQueue) echo "TLSiftQueue(CAPACITY 300, PROBABILITY 0.01, SAMPLES 1, SEED 1)" ;;
    TLXProtectQueue) echo "TLXProtectQueue(CAPACITY 300, PROBABILITY 0.01, THRESHOLD 30000, SEED 1)" ;;
    TLNcqQueue) echo "TLNcqQueue(CAPACITY 300, VARIANT ncqplus, THRESH1 0.05, ALPHA 0.1)" ;;
    TLLarsQueue) echo "TLLarsQueue(CAPACITY 300, BETA 0.5, TAU 1)" ;;
    *) echo "$1(CAPACITY 300)" ;;
  esac
}
for c in $configs; do
  q=$(queue_of "$c")
  [ -n "$q" ] && q="-> $q -> Unqueue"
  cat >"$work/$c.click" <<EOF
require(package "tracelab");
FromDump($trace, STOP true) -> Strip(14) -> MarkIPHeader $q -> c :: Counter -> Discard;
DriverManager(pause, print c.count, stop);
EOF
done

builds="this"
[ -n "${BASELINE:-}" ] && builds="this base"
path_this=$CLICKPATH
path_base="${BASELINE:-}:$CLICKPREFIX/lib:$CLICKPREFIX/share/click"

# One run: "<cpu seconds> <packets counted>". CPU time of the click child
# from getrusage (microseconds) via Python, else from /usr/bin/time (10 ms).
run() {
  if command -v python3 >/dev/null 2>&1; then
    cpu=$(python3 - "$click" "$work/$1.click" "$work/count" "$work/stderr" <<'PY'
import resource, subprocess, sys
with open(sys.argv[3], 'w') as out, open(sys.argv[4], 'w') as err:
    subprocess.run([sys.argv[1], sys.argv[2]], stdout=out, stderr=err, check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{r.ru_utime + r.ru_stime:.4f}")
PY
) || { cat "$work/stderr" >&2; return 1; }
  else
    /usr/bin/time -f '%U %S' -o "$work/time" "$click" "$work/$1.click" >"$work/count" 2>"$work/stderr" ||
      { cat "$work/stderr" >&2; return 1; }
    cpu=$(awk '{ printf "%.3f", $1 + $2 }' "$work/time")
  fi
  echo "$cpu $(tail -1 "$work/count")"
}

echo "== Click pipeline cost: $(basename "$trace"), $reps interleaved runs per configuration"
: >"$work/results-this"
: >"$work/results-base"
r=1
while [ "$r" -le "$reps" ]; do
  for c in $configs; do
    for b in $builds; do
      eval "CLICKPATH=\$path_$b"
      export CLICKPATH
      out=$(run "$c") || { echo "FAIL: $c did not run ($b build)" >&2; exit 1; }
      echo "$c $out" >>"$work/results-$b"
    done
  done
  r=$((r + 1))
done

# Medians; added cost = (median - bare median) / packets.
summarize() {
awk -v order="$configs" -v core_ns="${CORE_NS:-}" '
  { cpu[$1, ++n[$1]] = $2; if ($1 == "bare") pkts = $3 }
  function median(c,   k, i, j, t, a) {
    k = n[c]
    for (i = 1; i <= k; ++i) a[i] = cpu[c, i]
    for (i = 2; i <= k; ++i) for (j = i; j > 1 && a[j - 1] > a[j]; --j) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    lo[c] = a[1]; hi[c] = a[k]
    return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
  }
  END {
    split(order, cs, " ")
    for (i = 1; i in cs; ++i) med[cs[i]] = median(cs[i])
    stock = (med["Queue"] - med["bare"]) * 1e9 / pkts
    n_core = split(core_ns, pairs, " ")
    for (i = 1; i <= n_core; ++i) { split(pairs[i], kv, "="); core[kv[1]] = kv[2] }
    printf "%-18s %8s %15s %12s %10s %10s %10s %5s\n", "configuration", "CPU s", "min-max", "+ns/packet", "x Queue", "tput/Queue", "target ns", "met"
    for (i = 1; i in cs; ++i) {
      c = cs[i]; add = (med[c] - med["bare"]) * 1e9 / pkts; tput = med["Queue"] / med[c]
      # The target: 1.5x stock for the FIFO, the core cost + 10 ns for the others.
      limit = ""
      if (c ~ /^TLFifoQueue/) limit = 1.5 * stock
      else if (c in core) limit = core[c] + 10
      met = "-"
      if (limit != "") met = add <= limit && (c !~ /^TL(Fifo|Efd)Queue/ || tput >= 0.9) ? "yes" : "NO"
      printf "%-18s %8.3f %7.3f-%-7.3f %12.1f %10s %10.2f %10s %5s\n", c, med[c], lo[c], hi[c], add,
        c == "bare" || stock <= 0 ? "-" : sprintf("%.2f", add / stock), tput,
        limit == "" ? "-" : sprintf("%.1f", limit), met
    }
    printf "%d packets; +ns/packet over the bare pipeline; x Queue: that over stock Queue(300) -> Unqueue\n", pkts
    printf "target: TLFifoQueue <= 1.5x Queue, others <= CORE_NS + 10; FIFO and EFD also tput/Queue >= 0.9\n"
  }' "$1"
}
summarize "$work/results-this"
if [ -n "${BASELINE:-}" ]; then
  echo "== the same runs with the BASELINE build ($BASELINE), alternated with the above"
  summarize "$work/results-base"
fi
