#!/bin/sh
# Build the tracelab Click package and run every conf/*.click under
# `click --simtime` on small real traces from datasets/public, printing
# one PASS/FAIL line per check; then the packet-by-packet cross-checks of
# Click elements against their cores (crosscheck.sh).
# Needs a Click installation: CLICKPREFIX=/prefix, or `click` on PATH.
# Without one it prints "SKIPPED (no Click installation)" and exits 0.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
data="$repo/datasets/public/zeek-baselines"
small="$data/wikipedia/wikipedia.pcap"                  # 136 packets, IPv4 + IPv6, many flows
bulk="$data/m57-long-http/m57-long-49583-80.pcap"       # 227 packets, one HTTP download

. "$here/clickenv.sh"
click_prefix_or_skip
for t in "$small" "$bulk"; do
  [ -f "$t" ] || { echo "FAIL: trace not found: $t" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build_click_package "$work"
click="$CLICKPREFIX/bin/click"
fail=0

# field NAME LINE: the value of NAME=... in LINE.
field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
# check DESCRIPTION LEFT RIGHT: PASS when the two integers are equal.
check() {
  if [ "$2" -eq "$3" ] 2>/dev/null; then echo "  PASS $1 ($2)"; else echo "  FAIL $1 ($2 != $3)"; fail=1; fi
}
# positive DESCRIPTION VALUE: PASS when VALUE > 0 (the example exercises the mechanism).
positive() {
  if [ "$2" -gt 0 ] 2>/dev/null; then echo "  PASS $1 ($2)"; else echo "  FAIL $1 (got $2)"; fail=1; fi
}
# run CONF ARGS...: run one example, print and return its last line.
run() {
  out=$("$click" --simtime "$@" 2>"$work/stderr") || { echo "  FAIL click exited non-zero"; cat "$work/stderr"; fail=1; line=""; return; }
  line=$(echo "$out" | tail -1)
  echo "  $line"
}
# Same packets, same bytes: as sequences (order kept), or as multisets.
same_packets() {
  python3 - "$@" <<'PY'
import collections, struct, sys
def bodies(path):
    with open(path, 'rb') as f:
        data = f.read()
    endian = '<' if data[:4] in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
    off, out = 24, []
    while off + 16 <= len(data):
        incl = struct.unpack(endian + 'IIII', data[off:off + 16])[2]
        out.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    return out
mode, a, b = sys.argv[1], bodies(sys.argv[2]), bodies(sys.argv[3])
if mode == 'equal':
    ok = a == b and bool(a)
    print(f"  {'PASS' if ok else 'FAIL'} byte for byte, in order: {len(a)} in, {len(b)} out")
else:  # every packet out is one packet in, unchanged
    ok = not (collections.Counter(b) - collections.Counter(a)) and bool(b)
    print(f"  {'PASS' if ok else 'FAIL'} every packet out equals a packet in: {len(b)} of {len(a)}")
sys.exit(0 if ok else 1)
PY
}

for conf in "$here"/conf/*.click; do
  name=$(basename "$conf" .click)
  echo "== $name"
  case "$name" in
    tlchunkqueue)
      for scheme in basicq chumq chutq; do
        run "$conf" TRACE="$small" IN="$work/in.pcap" OUT="$work/out.pcap" SCHEME=$scheme
        [ -n "$line" ] || continue
        check "$scheme: in = out + drops + held" "$(field in "$line")" \
          "$(( $(field out "$line") + $(field drops "$line") + $(field length "$line") ))"
        same_packets equal "$work/in.pcap" "$work/out.pcap" || fail=1
      done ;;
    tlexactunqueue)
      run "$conf" TRACE="$small"
      [ -n "$line" ] || continue
      bytes=$(field bytes "$line")
      # 10 Gb/s: every byte is exactly 800 ps; one busy period.
      check "exact: span = bytes x 800 ps" "$(field span_ps "$line")" "$((bytes * 800))" ;;
    tljumbogen)
      run "$conf" TRACE="$bulk" IN="$work/in.pcap" OUT="$work/out.pcap"
      [ -n "$line" ] || continue
      check "in = out + encap drops + removed in the core + dropped whole" "$(field in "$line")" \
        "$(( $(field out "$line") + $(field encap_drops "$line") + $(field missing "$line") + $(field lost_packets "$line") + $(field lost_missing "$line") ))"
      check "partial drops = entries found missing" "$(field partial_dropped "$line")" \
        "$(( $(field missing "$line") + $(field lost_missing "$line") ))"
      check "nothing held after the drain" "$(( $(field held "$line") ))" 0
      positive "partial drops exercised" "$(field partial_dropped "$line")"
      same_packets subset "$work/in.pcap" "$work/out.pcap" || fail=1 ;;
    tlmtqqtl)
      for t in "$small" "$bulk"; do
        run "$conf" TRACE="$t"
        [ -n "$line" ] || continue
        check "$(basename "$t"): sent = received + marker errors + drops" "$(field sent "$line")" \
          "$(( $(field received "$line") + $(field mark_errors "$line") + $(field q1_drops "$line") + $(field q2_drops "$line") ))"
        check "$(basename "$t"): every packet marked" "$(field marked "$line")" "$(field sent "$line")"
      done
      positive "MTQ drops exercised (bulk)" "$(field q1_mtq "$line")"
      positive "late packets exercised (bulk)" "$(field late "$line")" ;;
    tlefdqueue)
      # The packet on the wire holds a buffer place until the link pulls the
      # next (the default, algorithms.md §2), which TLExactUnqueue does when
      # the transmission ends: the same decisions as holding it for its
      # transmission time at the link's rate, and a full buffer reads 50.
      run "$conf" TRACE="$bulk"
      [ -n "$line" ] || continue
      spec_drops=$(field drops "$line")
      check "in = out + drops + queued" "$(field in "$line")" \
        "$(( $(field out "$line") + $(field drops "$line") + $(field length "$line") ))"
      check "highwater = CAPACITY" "$(field highwater "$line")" 50
      run "$conf" TRACE="$bulk" IN_SERVICE=300000
      [ -n "$line" ] || continue
      check "IN_SERVICE at the link rate: in = out + drops + queued" "$(field in "$line")" \
        "$(( $(field out "$line") + $(field drops "$line") + $(field length "$line") ))"
      check "IN_SERVICE at the link rate: drops as by default" "$(field drops "$line")" "$spec_drops"
      check "IN_SERVICE at the link rate: highwater = CAPACITY" "$(field highwater "$line")" 50
      # Click's Queue convention: the pulled packet leaves at once, so fewer
      # arrivals find the buffer full.
      run "$conf" TRACE="$bulk" IN_SERVICE=false
      [ -n "$line" ] || continue
      check "IN_SERVICE false: in = out + drops + queued" "$(field in "$line")" \
        "$(( $(field out "$line") + $(field drops "$line") + $(field length "$line") ))"
      positive "IN_SERVICE false: fewer drops than by default" "$(( spec_drops - $(field drops "$line") ))" ;;
    *)
      # The single-queue examples: a bulk download into a 300 kb/s link.
      run "$conf" TRACE="$bulk"
      [ -n "$line" ] || continue
      check "in = out + drops + queued" "$(field in "$line")" \
        "$(( $(field out "$line") + $(field drops "$line") + $(field length "$line") ))"
      positive "drops exercised" "$(field drops "$line")" ;;
  esac
done

# The buffer keywords reach the core: 20 000 as bytes holds ~36 of the bulk
# download's packets and drops, as packets it holds the whole trace.
echo "== buffer keywords (TLFifoQueue, bulk, 300 kb/s)"
for bytes in true false; do
  run -e "require(package \"tracelab\"); FromDump($bulk, STOP true, TIMING true) -> Strip(14) -> CheckIPHeader
    -> q :: TLFifoQueue(CAPACITY 20000, BYTES $bytes) -> TLExactUnqueue(RATE 300000) -> Discard;
    DriverManager(pause, wait 10s, print \"highwater=\$(q.highwater_length) drops=\$(q.drops)\", stop);"
  if [ "$bytes" = true ]; then drops_true=$(field drops "$line"); else drops_false=$(field drops "$line"); fi
done
positive "BYTES true: CAPACITY in bytes, drops" "${drops_true:-0}"
check "BYTES false: CAPACITY in packets, no drops" "${drops_false:-1}" 0

# TABLE_SEED reaches every flow-table element and no decision depends on
# it: the same departures, byte for byte, and the same drops under the
# default seed, a decimal and a hex one, on wikipedia's many flows into a
# 20 kb/s link; a malformed seed is refused at configure time, by name.
echo "== TABLE_SEED (flow-table elements, wikipedia, 20 kb/s)"
for elem in TLEfdQueue TLRun2CQueue TLSiftQueue TLXProtectQueue TLLasQueue TLLarsQueue TLScfqQueue; do
  drops_default="" drops_dec="" drops_hex=""
  # SIFT and X-Protect keep only the flows they sample: sample often.
  case $elem in TLSiftQueue | TLXProtectQueue) sample="PROBABILITY 0.5, " ;; *) sample="" ;; esac
  for seed in default 42 0xfedcba9876543210; do
    kw=""
    [ "$seed" = default ] || kw=", TABLE_SEED $seed"
    run -e "require(package \"tracelab\"); FromDump($small, STOP true, TIMING true) -> Classifier(12/0800) -> Strip(14)
      -> CheckIPHeader -> q :: $elem(${sample}CAPACITY 10$kw) -> TLExactUnqueue(RATE 20000) -> ToDump($work/seed-$seed.pcap);
      DriverManager(pause, wait 100s, print \"drops=\$(q.drops) flows_highwater=\$(q.flows_highwater)\", stop);"
    d=$(field drops "$line")
    case $seed in default) drops_default=$d ;; 42) drops_dec=$d ;; *) drops_hex=$d ;; esac
  done
  positive "$elem: drops exercised" "${drops_default:-0}"
  positive "$elem: flows in the table at once beyond the first" "$(( $(field flows_highwater "$line") - 1 ))"
  check "$elem: TABLE_SEED 42, drops as by default" "${drops_dec:-x}" "${drops_default:-y}"
  check "$elem: TABLE_SEED 0xfedcba9876543210, drops as by default" "${drops_hex:-x}" "${drops_default:-y}"
  same_packets equal "$work/seed-default.pcap" "$work/seed-42.pcap" || fail=1
  same_packets equal "$work/seed-default.pcap" "$work/seed-0xfedcba9876543210.pcap" || fail=1
  if "$click" --simtime -e "require(package \"tracelab\"); Idle -> $elem(TABLE_SEED 0x1g) -> Discard;" \
    >/dev/null 2>"$work/stderr"; then
    echo "  FAIL $elem: TABLE_SEED 0x1g accepted"
    fail=1
  elif grep -q "TABLE_SEED: expected a 64-bit value" "$work/stderr"; then
    echo "  PASS $elem: TABLE_SEED 0x1g refused ($(grep -o "TABLE_SEED: .*" "$work/stderr"))"
  else
    echo "  FAIL $elem: TABLE_SEED 0x1g: $(cat "$work/stderr")"
    fail=1
  fi
done

# TABLE_SEED reaches the core's table: 16 flows whose keys share one bucket
# under seed S (click-elements/tests/colliding_flows.py builds them
# backwards through the hashes), all held in the queue at once: with
# TABLE_SEED S a lookup walks all of them (table_longest_probe), with the
# default seed they spread. An element that ignored TABLE_SEED reads the
# same under both.
echo "== TABLE_SEED in the table (16 flows colliding under seed 0xfedcba9876543210)"
python3 "$repo/click-elements/tests/colliding_flows.py" "$work/colliding.pcap" 0xfedcba9876543210 16
for elem in TLEfdQueue TLRun2CQueue TLSiftQueue TLXProtectQueue TLLasQueue TLLarsQueue TLScfqQueue; do
  case $elem in TLSiftQueue | TLXProtectQueue) sample="PROBABILITY 1, " ;; *) sample="" ;; esac
  for seed in 0xfedcba9876543210 default; do
    kw=""
    [ "$seed" = default ] || kw=", TABLE_SEED $seed"
    run -e "require(package \"tracelab\"); FromDump($work/colliding.pcap, STOP true, TIMING true) -> Strip(14)
      -> MarkIPHeader -> q :: $elem(${sample}CAPACITY 100$kw) -> TLExactUnqueue(RATE 8000) -> Discard;
      DriverManager(pause, print \"flows=\$(q.flows) probe=\$(q.table_longest_probe)\", stop);"
    # (SCFQ's packet in transmission has left its flow's entry: 15 flows.)
    flows=$(field flows "$line") probe=$(field probe "$line")
    positive "$elem: 15 or 16 flows in the table ($seed)" "$(( ${flows:-0} - 14 ))"
    if [ "$seed" = default ]; then
      if [ "${probe:-99}" -le 4 ] 2>/dev/null; then echo "  PASS $elem: spread under the default seed (longest probe $probe)"
      else echo "  FAIL $elem: longest probe ${probe:-?} under the default seed"; fail=1; fi
    else
      check "$elem: one chain of all $flows under TABLE_SEED $seed" "${probe:-x}" "${flows:-y}"
    fi
  done
done

# In real time (no --simtime) the flow-record cores (Run2C, SIFT,
# X-Protect, LAS) read the coarse clock on arrival (tltime.hh
# tl_coarse_now_ps). It must still age their records: 16 UDP flows at
# t = 0 and a 17th at t = 6 s (FromDump TIMING true waits for it), under
# TLRun2CQueue's IDLE_TIMEOUT 1: the idle scan, due every 5 s, removes the
# 16 idle flows before recording the 17th, so one flow is left; a clock
# that stood still (or ran back) would leave 17.
echo "== idle expiry in real time (TLRun2CQueue, IDLE_TIMEOUT 1, flows 6 s apart)"
python3 - "$work/idle.pcap" <<'PY'
import struct, sys
def frame(sport):
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 28, 0, 0, 64, 17, 0, bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
    return b'\0' * 12 + b'\x08\x00' + ip + struct.pack('!HHHH', sport, 9, 8, 0)
with open(sys.argv[1], 'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i, (sec, sport) in enumerate([(0, 1000 + k) for k in range(16)] + [(6, 2000)]):
        b = frame(sport)
        f.write(struct.pack('<IIII', 1000 + sec, i, len(b), len(b)) + b)
PY
out=$("$click" -e "require(package \"tracelab\"); FromDump($work/idle.pcap, STOP true, TIMING true) -> Strip(14)
  -> MarkIPHeader -> q :: TLRun2CQueue(IDLE_TIMEOUT 1, IN_SERVICE false) -> Unqueue -> Discard;
  DriverManager(pause, print \"flows=\$(q.flows) flows_highwater=\$(q.flows_highwater)\", stop);" 2>"$work/stderr") ||
  { echo "  FAIL click exited non-zero"; cat "$work/stderr"; fail=1; out=""; }
echo "  $out"
check "16 flows recorded at t = 0" "$(field flows_highwater "$out")" 16
check "idle flows gone at t = 6 s, the new one recorded" "$(field flows "$out")" 1

[ -x "$here/crosscheck.sh" ] && { "$here/crosscheck.sh" "$CLICKPREFIX" "$work" || fail=1; }
[ $fail = 0 ] && echo "ALL EXAMPLES PASSED" || { echo "SOME EXAMPLES FAILED"; exit 1; }
