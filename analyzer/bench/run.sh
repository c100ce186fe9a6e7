#!/usr/bin/env bash
# The analyzer benchmark (`make bench-analyzer`): builds a large TCP-rich trace
# with datasets/generate (tcpmix) if it is missing, then times, one after the
# other in one run, tracelab's full profile (1 and 2 tracker threads) and the
# peers that do TCP analysis on the same file:
#   tshark   -r T -q -z conv,tcp -o tcp.analyze_sequence_numbers:TRUE
#   tcptrace -n -lr T              (long per-connection output incl. RTT; -n
#                                  because name lookups would time out offline)
#   argus    -r T -w x.argus && ra -r x.argus
# Beside them, the floor (crates/tracelab-analyzer/examples/floor.rs): the
# analyzer's own reader, decoder and hash doing only what any per-connection
# profile must (read; decode; count packets per 5-tuple), each stage timed,
# so the full profile's rate can be read against this machine's ceiling.
# For each: wall time, CPU time (user + sys), peak RSS, packets per wall
# second and per CPU second, and tracelab's speed relative to it. Results go to
# build/bench/analyzer-<stamp>.{json,txt} (and analyzer-latest.*).
#
# Environment: PACKETS (6000000), SEED (1), TRACE (a pcap to use instead of
# the generated one), TIMEOUT per run in seconds (900), PEERS (space-separated
# subset of "tshark tcptrace argus"; empty string = none), THREADS ("1 2"),
# FLOOR ("read decode count"; empty string = none), FLOOD (SYNs per flood
# for examples/flood.rs, 300000; empty string = none).
# A peer that is not installed or times out is reported SKIPPED/TIMEOUT with
# the reason; a skip is never a pass.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
PACKETS="${PACKETS:-6000000}"
SEED="${SEED:-1}"
TIMEOUT="${TIMEOUT:-900}"
PEERS="${PEERS-tshark tcptrace argus}"
THREADS="${THREADS:-1 2}"
FLOOR="${FLOOR-read decode count}"
FLOOD="${FLOOD-300000}"
OUT=build/bench
mkdir -p "$OUT"

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# --- the trace ----------------------------------------------------------------
GEN_JSON=""
if [ -n "${TRACE:-}" ]; then
  [ -r "$TRACE" ] || { echo "run.sh: TRACE=$TRACE is not readable" >&2; exit 2; }
else
  TRACE="$OUT/tcpmix-$PACKETS-s$SEED.pcap"
  GEN_JSON="$TRACE.json"
  if [ ! -s "$TRACE" ] || [ ! -s "$GEN_JSON" ]; then
    say "building the generator (datasets/generate)"
    cargo build --release --quiet --manifest-path datasets/generate/Cargo.toml --target-dir build/generate/target
    say "writing $TRACE ($PACKETS packets, seed $SEED)"
    build/generate/target/release/tcpmix --packets "$PACKETS" --seed "$SEED" "$TRACE.tmp" >"$GEN_JSON.tmp"
    mv "$TRACE.tmp" "$TRACE"
    mv "$GEN_JSON.tmp" "$GEN_JSON"
  fi
fi
ANALYZER=analyzer/target/release/tracelab-analyzer
if [ ! -x "$ANALYZER" ]; then
  say "building the analyzer"
  cargo build --release --locked --quiet --manifest-path analyzer/Cargo.toml
fi
FLOOR_BIN=analyzer/target/release/examples/floor
if [ -n "$FLOOR" ]; then
  say "building the floor (examples/floor.rs)"
  cargo build --release --locked --quiet --manifest-path analyzer/Cargo.toml --example floor
fi
# Warm the page cache so the first timed run does not pay for the disk.
cat "$TRACE" >/dev/null

STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
WORK="$OUT/work"
rm -rf "$WORK"
mkdir -p "$WORK"
RESULTS="$WORK/results.tsv" # name, status, wall_s, cpu_s, max_rss_kb, note
: >"$RESULTS"

# timed NAME NOTE CMD... : runs CMD under `timeout`, records wall and CPU
# time of the whole process tree (GNU time), peak RSS, status.
timed() {
  local name="$1" note="$2"
  shift 2
  say "$name: $*"
  local tf="$WORK/$name.time" rc=0
  /usr/bin/time -f '%e %U %S %M' -o "$tf" timeout "$TIMEOUT" "$@" </dev/null >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
  local wall user sys rss
  read -r wall user sys rss <"$tf" 2>/dev/null || { wall=0 user=0 sys=0 rss=0; }
  local cpu
  cpu="$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')"
  if [ "$rc" = 124 ]; then
    printf '%s\tTIMEOUT\t%s\t%s\t%s\tstopped after %ss (TIMEOUT)\n' "$name" "$wall" "$cpu" "$rss" "$TIMEOUT" >>"$RESULTS"
  elif [ "$rc" != 0 ]; then
    printf '%s\tFAILED\t%s\t%s\t%s\texit %s: %s\n' "$name" "$wall" "$cpu" "$rss" "$rc" \
      "$(tail -n 1 "$WORK/$name.err" | tr '\t' ' ')" >>"$RESULTS"
  else
    printf '%s\tok\t%s\t%s\t%s\t%s\n' "$name" "$wall" "$cpu" "$rss" "$note" >>"$RESULTS"
  fi
}

skip() {
  say "$1: SKIPPED ($2)"
  printf '%s\tSKIPPED\t0\t0\t0\t%s\n' "$1" "$2" >>"$RESULTS"
}

have() { command -v "$1" >/dev/null 2>&1; }

for t in $THREADS; do
  timed "tracelab-t$t" "full profile: Parquet tables, conn.log, samples, summary" \
    "$ANALYZER" "$TRACE" --local 10.0.0.0/8 -o "$WORK/tracelab-t$t" --threads "$t"
done

for stage in $FLOOR; do
  case "$stage" in
    read) note="floor: read every frame" ;;
    decode) note="floor: read + decode to 5-tuple and lengths" ;;
    count) note="floor: read + decode + packets and bytes per 5-tuple (5 s idle), nothing else" ;;
    *) echo "run.sh: unknown floor stage $stage (read, decode, count)" >&2; exit 2 ;;
  esac
  timed "floor-$stage" "$note" "$FLOOR_BIN" "$TRACE" "$stage"
done

for peer in $PEERS; do
  case "$peer" in
    tshark)
      if have tshark; then
        timed tshark "TCP conversations with sequence analysis" \
          tshark -r "$TRACE" -q -z conv,tcp -o tcp.analyze_sequence_numbers:TRUE
      else skip tshark "tshark not installed (Debian: tshark)"; fi ;;
    tcptrace)
      if have tcptrace; then
        timed tcptrace "long output per connection (RTT, retransmissions); -n: no DNS lookups" tcptrace -n -lr "$TRACE"
      else skip tcptrace "tcptrace not installed (Debian: tcptrace)"; fi ;;
    argus)
      if have argus && have ra; then
        timed argus "flow records (argus -r ... -w)" argus -r "$TRACE" -w "$WORK/x.argus"
        if [ -s "$WORK/x.argus" ]; then
          timed ra "print the flow records (ra -r)" ra -r "$WORK/x.argus"
        else
          skip ra "argus wrote no records"
        fi
      else skip argus "argus/ra not installed (Debian: argus-server, argus-client)"; fi ;;
    *) echo "run.sh: unknown peer $peer (tshark, tcptrace, argus)" >&2; exit 2 ;;
  esac
done

# Cross-check: tracelab's conn_state counts against the endings the generator
# wrote (each ending maps to one Zeek state; see datasets/generate/README.md).
CHECK="not run (no generator summary: TRACE was given)"
if [ -n "$GEN_JSON" ] && [ -s "$WORK/tracelab-t1/conn.log" ]; then
  CHECK="$(python3 - "$GEN_JSON" "$WORK/tracelab-t1/conn.log" <<'PY'
import collections, json, sys
gen = json.load(open(sys.argv[1]))
e = gen["by_end"]
want = collections.Counter({
    ("tcp", "S0"): e["Unanswered"], ("tcp", "REJ"): e["Rejected"],
    ("tcp", "SF"): e["ClientFin"] + e["ServerFin"],
    ("tcp", "RSTO"): e["ClientRst"], ("tcp", "RSTR"): e["ServerRst"],
})
got = collections.Counter()
udp = 0
for line in open(sys.argv[2]):
    if line.startswith("#"):
        continue
    f = line.rstrip("\n").split("\t")
    if f[6] == "tcp":
        got[(f[6], f[11])] += 1
    elif f[6] == "udp":
        udp += 1
diff = {f"{p}/{s}": (want[(p, s)], got[(p, s)]) for p, s in set(want) | set(got) if want[(p, s)] != got[(p, s)]}
if udp != e["Datagram"]:
    diff["udp"] = (e["Datagram"], udp)
print("OK: conn_state counts equal the generator's endings" if not diff else f"MISMATCH (want, got): {diff}")
PY
)"
fi

# The floor's own check: every decoded packet was counted in some flow.
FLOOR_CHECK="not run"
if [ -s "$WORK/floor-count.out" ]; then
  FLOOR_CHECK="$(awk '{for (i = 1; i < NF; i += 2) v[$i] = $(i + 1)}
    END {print (v["decoded"] == v["flow_packets"] ? "OK" : "MISMATCH") ": " v["flow_packets"] " of " v["decoded"] " decoded packets counted in " v["flows"] " flows"}' "$WORK/floor-count.out")"
fi

# --- report ---------------------------------------------------------------------
python3 - "$RESULTS" "$TRACE" "$GEN_JSON" "$OUT" "$STAMP" "$CHECK" "$TIMEOUT" "$FLOOR_CHECK" <<'PY'
import json, os, platform, subprocess, sys
results, trace, gen_json, out, stamp, check, timeout, floor_check = sys.argv[1:]

def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception as e:  # a version string is informative only
        return f"unknown ({e})"

packets = int(sh(f"capinfos -M -c '{trace}' | awk -F': *' '/Number of packets/ {{print $2}}'") or 0) if not gen_json else json.load(open(gen_json))["packets"]
rows = []
for line in open(results):
    name, status, wall, cpu, rss, note = line.rstrip("\n").split("\t")
    wall, cpu, rss = float(wall), float(cpu), int(rss)
    rows.append({
        "tool": name, "status": status, "wall_s": wall, "cpu_s": cpu, "max_rss_mb": round(rss / 1024, 1),
        "pkts_per_s": round(packets / wall) if status == "ok" and wall > 0 else None,
        "pkts_per_cpu_s": round(packets / cpu) if status == "ok" and cpu > 0 else None,
        "note": note,
    })
# argus's rate is for argus + ra together, as the peer is "argus -r && ra -r".
by = {r["tool"]: r for r in rows}
if by.get("argus", {}).get("status") == "ok" and by.get("ra", {}).get("status") == "ok":
    a, r = by["argus"], by["ra"]
    wall, cpu = a["wall_s"] + r["wall_s"], a["cpu_s"] + r["cpu_s"]
    rows.append({"tool": "argus+ra", "status": "ok", "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                 "max_rss_mb": max(a["max_rss_mb"], r["max_rss_mb"]),
                 "pkts_per_s": round(packets / wall), "pkts_per_cpu_s": round(packets / cpu),
                 "note": "the argus peer as a whole"})
ref = by.get("tracelab-t1")
for r in rows:
    ok = ref and ref["status"] == "ok" and r["status"] == "ok"
    r["tracelab_t1_speedup_wall"] = round(r["wall_s"] / ref["wall_s"], 2) if ok else None
    r["tracelab_t1_speedup_cpu"] = round(r["cpu_s"] / ref["cpu_s"], 2) if ok and ref["cpu_s"] > 0 else None

config = {
    "stamp": stamp, "trace": trace, "packets": packets, "trace_bytes": os.path.getsize(trace),
    "generator": json.load(open(gen_json)) if gen_json else None, "timeout_s": int(timeout),
    "machine": {"cpus": os.cpu_count(), "cpu": sh("lscpu | sed -n 's/^Model name: *//p'"),
                "kernel": platform.release(), "mem": sh("free -g | awk '/Mem:/ {print $2 \" GiB\"}'"),
                "loadavg_at_end": open("/proc/loadavg").read().split()[:3]},
    "versions": {"tracelab": sh("git rev-parse --short HEAD"), "tshark": sh("tshark --version 2>/dev/null | head -1"),
                 "tcptrace": sh("tcptrace -v 2>&1 | sed -n 's/^Version: //p'"),
                 "argus": sh("argus -h 2>&1 | sed -n 's/^Argus Version //p'")},
    "conn_state_check": check,
    "floor_check": floor_check,
}
doc = {"config": config, "results": rows}
lines = [
    f"analyzer benchmark {stamp}: {trace} ({packets:,} packets, {os.path.getsize(trace) / 1e6:.0f} MB)",
    f"machine: {config['machine']['cpus']} CPUs ({config['machine']['cpu']}), {config['machine']['mem']}, load at end {' '.join(config['machine']['loadavg_at_end'])}",
    "",
    f"{'tool':<12} {'status':<8} {'wall s':>8} {'cpu s':>8} {'RSS MB':>8} {'pkt/s':>11} {'pkt/cpu-s':>11} {'x wall':>7} {'x cpu':>7}  note",
]
for r in rows:
    fmt = lambda v: f"{v:,}" if v is not None else "-"
    x = lambda v: f"{v}" if v is not None else "-"
    lines.append(f"{r['tool']:<12} {r['status']:<8} {r['wall_s']:>8.2f} {r['cpu_s']:>8.2f} {r['max_rss_mb']:>8.1f} "
                 f"{fmt(r['pkts_per_s']):>11} {fmt(r['pkts_per_cpu_s']):>11} "
                 f"{x(r['tracelab_t1_speedup_wall']):>7} {x(r['tracelab_t1_speedup_cpu']):>7}  {r['note']}")
floor = by.get("floor-count")
target = 10_000_000
if ref and ref["status"] == "ok" and ref["cpu_s"] > 0:
    lines += ["", f"target {target / 1e6:.0f} M pkt/cpu-s: tracelab --threads 1 {packets / ref['cpu_s'] / 1e6:.2f} M"
              + (f"; the floor (count) {packets / floor['cpu_s'] / 1e6:.2f} M, tracelab uses {ref['cpu_s'] / floor['cpu_s']:.1f}x its CPU"
                 if floor and floor["status"] == "ok" and floor["cpu_s"] > 0 else "")]
    config["target_pkts_per_cpu_s"] = target
lines += ["",
          "x wall / x cpu: the tool's wall / CPU time over tracelab --threads 1's (how many times faster tracelab is;",
          "  below 1 for the floor stages, which do a part of the work).",
          "CPU time (user + sys, whole process tree) is the robust figure on a shared machine.",
          f"conn_state check: {check}",
          f"floor check: {floor_check}"]
text = "\n".join(lines) + "\n"
for name in (f"analyzer-{stamp}", "analyzer-latest"):
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(doc, f, indent=2)
    with open(os.path.join(out, name + ".txt"), "w") as f:
        f.write(text)
sys.stdout.write(text)
print(f"results: {out}/analyzer-{stamp}.json and .txt")
PY

# --- the flow table under a SYN flood (issue 17) ------------------------------
# examples/flood.rs: the profile of N SYNs on one address pair with varying
# ports against N SYNs over distinct pairs; a hash whose table index ignores
# the ports makes the first many times slower. Target: ratio <= 2.
if [ -n "$FLOOD" ]; then
  say "building and running the flood benchmark (examples/flood.rs, $FLOOD SYNs)"
  cargo build --release --locked --quiet --manifest-path analyzer/Cargo.toml --example flood
  analyzer/target/release/examples/flood --packets "$FLOOD" --analyzer "$ANALYZER" \
    | tee -a "$OUT/analyzer-$STAMP.txt" "$OUT/analyzer-latest.txt"
fi
