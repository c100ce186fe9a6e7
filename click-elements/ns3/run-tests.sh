#!/usr/bin/env bash
# The ns-3 adapters' tests, run by `make test` (suite "ns3" of
# scripts/run-tests.py) after scripts/setup.sh built them: prints one
# `PASS x` / `FAIL x` line per check, or `SKIPPED (reason)` when ns-3 is not
# built (`make ns3`); exit 1 on any FAIL.
#   same_decisions.py   every core's queue disc against the replay engine,
#                       packet by packet, on real traces
#   tl-ns3-jumbogen-decisions  JumboGen RED's queue disc against its core
#                       driven directly (the engine has no JumboGen RED)
#   spec_cases.tsv      TlParseSpec accepts and rejects the spec texts that
#                       the engine's parser does, with the same messages
#   --p2p-burst         a queue disc built by TypeId on a point-to-point
#                       device counts the packet in transmission (InService
#                       = the device's rate) as the spec-string one does;
#                       TableSeed reaches the flow table of each core
#   tl-ns3-dumbbell     the thesis dumbbell with real TCP, a short overloaded
#                       run per adapter: every flow completes and is in the
#                       CSV, the bottleneck's counts add up, every packet
#                       it took in is in one subflow, the version is
#                       recorded
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

echo "== same decisions: JumboGen RED's queue disc vs its core driven directly (not in the engine)"
"$OUT/tl-ns3-jumbogen-decisions" || status=1

echo "== the spec grammar: TlParseSpec accepts and rejects as the engine (click-elements/tests/spec_cases.tsv)"
"$PY" - "$OUT/tl-ns3-decisions" "$ROOT/click-elements/tests/spec_cases.tsv" <<'PY' || status=1
import subprocess, sys
driver, cases = sys.argv[1], sys.argv[2]
failed = n = 0
for line in open(cases).read().splitlines():
    if not line or line.startswith("#"):
        continue
    kind, text, *rest = line.split("\t")
    n += 1
    # The driver parses the spec before it reads the trace: an accepted spec
    # fails later (unknown element or key, no trace), never on its syntax.
    err = subprocess.run([driver, "/dev/null", "1000000", text, "/dev/null"], capture_output=True, text=True).stderr
    syntax = " at column " in err
    want = f"at column {rest[0]}: {rest[1]}" if kind == "bad" else None
    if (kind == "ok" and syntax) or (kind == "bad" and want not in err):
        failed += 1
        print(f"FAIL spec {kind} {text!r}: {err.strip()}")
print(f"{'FAIL' if failed else 'PASS'} spec grammar: {n - failed} of {n} shared cases parsed as by the engine")
sys.exit(1 if failed else 0)
PY

echo "== parameter ranges: an out-of-range parameter is fatal, named (click-elements/core/param_checks.hh)"
trace="$ROOT/datasets/public/zeek-baselines/wikipedia/wikipedia.pcap"
for c in 'efd(th=0)|th=0 out of range' 'xprotect(p_ins=0)|p_ins=0 out of range' 'ncqplus(alpha=1)|alpha=1 out of range' \
  'lars(tau=0s)|tau=0 out of range' 'jumbogenred(max_p=2)|max_p=2 out of range' \
  'scfq(table_seed=0x1g)|bad value '"'0x1g'"' for TableSeed'; do
  spec=${c%%|*} want=${c#*|}
  err=$("$OUT/tl-ns3-decisions" "$trace" 1000000000 "$spec" /dev/null 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" -ne 0 ] && [[ "$err" == *"$want"* ]]; then
    echo "PASS range $spec: refused ($want)"
  else
    echo "FAIL range $spec: exit $rc, '$(echo "$err" | head -n 2)'"
    status=1
  fi
done

echo "== InService by TypeId: the device's rate, as the spec string's default (algorithms.md §2)"
# 60 packets at once into a 30-packet FIFO on a 10 Mb/s point-to-point
# device: counting the packet in transmission, 30 are served (1 on the wire,
# 29 waiting) and the high-water is the capacity; with InService=0bps given,
# the one on the wire leaves the buffer and 31 are served.
burst() { "$OUT/tl-ns3-decisions" --p2p-burst 10000000 60 "$1" 2>&1; }
by_type=$(burst 'ns3::TlFifoQueueDisc,Capacity=30')
by_spec=$(burst 'spec:fifo(capacity=30)')
zero=$(burst 'ns3::TlFifoQueueDisc,Capacity=30,InService=0bps')
want='InService=10000000bps highwater=30 offered=60 served=30 dropped=30 flows=0 probe=0'
if [ "$by_type" = "$want" ] && [ "$by_spec" = "$want" ] && [[ "$zero" == "InService=0bps "*" served=31 dropped=29 "* ]]; then
  echo "PASS in_service default: by TypeId '$by_type', as the spec's; InService=0bps given: '$zero'"
else
  echo "FAIL in_service default: by TypeId '$by_type', spec '$by_spec' (want '$want'), 0bps '$zero'"
  status=1
fi

echo "== TableSeed reaches the core's table (16 flows colliding under seed 0xfedcba9876543210)"
# The flows' keys share one bucket under the seed (colliding_flows.py builds
# them backwards through the hashes); all are held at once (8 kb/s): with
# TableSeed = that seed a lookup walks every entry (GetTableLongestProbe),
# with the default they spread. A queue disc ignoring TableSeed reads the same.
colliding=$(mktemp)
"$PY" "$ROOT/click-elements/tests/colliding_flows.py" "$colliding" 0xfedcba9876543210 16
for q in TlEfdQueueDisc TlRun2cQueueDisc TlSiftQueueDisc,P=1 TlXProtectQueueDisc,PIns=1 TlLasQueueDisc \
  TlLarsQueueDisc TlScfqQueueDisc; do
  crafted=$("$OUT/tl-ns3-decisions" --p2p-burst 8000 "$colliding" "ns3::$q,Capacity=100,TableSeed=18364758544493064720" 2>&1)
  default=$("$OUT/tl-ns3-decisions" --p2p-burst 8000 "$colliding" "ns3::$q,Capacity=100" 2>&1)
  flows=$(echo "$crafted" | sed -n 's/.* flows=\([0-9]*\) probe=\([0-9]*\)$/\1/p')
  probe=$(echo "$crafted" | sed -n 's/.* probe=\([0-9]*\)$/\1/p')
  spread=$(echo "$default" | sed -n 's/.* probe=\([0-9]*\)$/\1/p')
  # (SCFQ's packet in transmission has left its flow's entry: 15 flows.)
  if [ "${flows:-0}" -ge 15 ] && [ "$probe" = "$flows" ] && [ "${spread:-99}" -le 4 ]; then
    echo "PASS table_seed $q: $flows flows in one chain under TableSeed (longest probe $probe), $spread by default"
  else
    echo "FAIL table_seed $q: TableSeed '$crafted', default '$default'"
    status=1
  fi
done
rm -f "$colliding"

echo "== the dumbbell with real TCP, one short overloaded run per adapter"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for q in fifo 'efd(th=30000)' pefd efdack run2c run2cack sift xprotect las lasack lars scfq ncq ncqplus mtqqtl \
  'basicq(budgets=1ms, capacity=300)' 'chumq(budgets=1ms, capacity=300)' 'chutq(budgets=500us, capacity=300)' \
  'jumbogenred(capacity=300, min_th=30, max_th=90)'; do
  dir="$work/$(echo "$q" | tr -c 'a-z0-9\n' _)"
  if ! "$OUT/tl-ns3-dumbbell" --qdisc="$q" --load=15e6 --duration=4 --drain=16 --subflows=1 --out="$dir" >"$dir.log" 2>&1; then
    echo "FAIL dumbbell $q: exited $? ($(tail -n 1 "$dir.log"))"
    status=1
    continue
  fi
  "$PY" - "$q" "$dir" <<'PY' || status=1
import csv, json, sys
q, d = sys.argv[1], sys.argv[2]
s = json.load(open(f"{d}/summary.json"))
rows = list(csv.DictReader(open(f"{d}/flows.csv")))
b = s["bottleneck"]
problems = []
if not s.get("ns3_version"):
    problems.append("no ns-3 version")
if len(rows) != s["flows"] or s["flows"] == 0:
    problems.append(f"{len(rows)} rows for {s['flows']} flows")
if s["completed"] != s["flows"]:
    problems.append(f"{s['flows'] - s['completed']} flows unfinished")
if b["core_offered"] != b["received"] or b["core_served"] + b["core_dropped"] != b["core_offered"]:
    problems.append(f"bottleneck counts do not add up: {b}")
if sum(int(r["lost_packets"]) for r in rows) != b["dropped"]:
    problems.append("per-flow losses do not sum to the bottleneck's drops")
# Every packet the queue disc took in is in exactly one subflow (pushed-out
# ones too); a chunking disc's chunks are no flow's, so its subflows stay open.
subflow_packets = sum(int(r["packets"]) for r in csv.DictReader(open(f"{d}/subflows.csv")))
if "dechunker" not in s and subflow_packets != b["received"] - b["dropped_before_enqueue"]:
    problems.append(f"subflows hold {subflow_packets} packets of {b['received'] - b['dropped_before_enqueue']} enqueued")
if "dechunker" in s and s["dechunker"]["packets"] != b["sent"]:
    problems.append(f"the de-chunker forwarded {s['dechunker']['packets']} of {b['sent']} packets")
what = f"{s['flows']} flows, {b['dropped']} of {b['received']} packets dropped, flow table max {s['flow_table']['max']}"
if "dechunker" in s:
    what += f", {s['dechunker']['chunks']} chunks split"
print(f"{'FAIL' if problems else 'PASS'} dumbbell {q} (ns-3 {s['ns3_version']}): {what}" + "; ".join([""] + problems))
sys.exit(1 if problems else 0)
PY
done
exit $status
