#!/usr/bin/env python3
"""`make bench`: every performance figure beside its reference, in one run.

Runs the benchmarks one after the other on this machine and prints
one table in which each figure stands beside what it is measured against
(the analyzer's read floor, the 10 Gb/s budget per packet, real time) as a
ratio, with the target and whether it is met:

  analyzer  analyzer/bench/run.sh: the full profile (1 tracker thread)
            against examples/floor.rs `count` on the same trace (CPU time),
            its peak RSS, its peak RSS on 8 M against 1 M packets at the
            same connection rate (memory bounded by active connections),
            2 tracker threads against 1 (wall time), and the peers
            (tshark, tcptrace, argus)
  cores     build/click-elements/core_bench: ns per 64-byte packet (one
            enqueue + one dequeue) against each core's budget
  engine    build/engine/engine_bench: real-time factor (CPU) of each
            element on a fully loaded 10 Gb/s link of 64-byte packets; and
            the start-up of `tracelab replay run` (CPU and wall seconds of
            a run of 1 ms of traffic, which is all start-up: imports,
            configuration, metrics.json) against its 0.2 s
  click     click-elements/click/bench.sh, where Click is installed
            ($CLICKPREFIX): ns per packet each tracelab queue element adds
            to a Click pipeline, against stock Queue (TLFifoQueue) or its
            core's cost from the cores part + 10 ns (cores-latest.json),
            and the pipeline's throughput against stock Queue's; without
            Click one SKIPPED line and no rows

The figures and the run's context (machine, load, commit, whether the
tree was clean, tool versions, options) go to build/bench/bench-<stamp>.json
and bench-latest.json. Nothing here asserts a time: a target not met is
printed as such and the exit status stays 0; a benchmark that fails to run
exits 1.

  scripts/bench.py                      # all four, full size
  scripts/bench.py --quick              # small sizes (a smoke run, ~1 min)
  scripts/bench.py --only cores engine  # a subset
  scripts/bench.py --markdown           # the last run's tables, for the READMEs
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "build" / "bench"
CORE_BENCH = ROOT / "build" / "click-elements" / "core_bench"
ENGINE_BENCH = ROOT / "build" / "engine" / "engine_bench"
CLICK_BENCH = ROOT / "click-elements" / "click" / "bench.sh"
TRACELAB = ROOT / ".venv" / "bin" / "tracelab"
PARTS = ("analyzer", "cores", "engine", "click")

# The targets (issue "Performance"; docs/performance-history.md keeps the
# measured history).
ANALYZER_MAX_FLOOR_RATIO = 3.0
ANALYZER_MAX_RSS_MIB = 100.0
# Peak RSS "flat (+-30 %) in packets": the generator keeps its connection
# rate, so a longer trace has more packets, not more active connections.
ANALYZER_MAX_RSS_GROWTH = 1.3
ANALYZER_RSS_PACKETS = (1_000_000, 8_000_000)
ENGINE_MIN_RTF = 1.5
REPLAY_MAX_STARTUP_S = 0.2  # `tracelab replay run` start-up
# A run of 1 ms of 64-byte CBR at 1 Gb/s (~2000 packets) into a FIFO: the
# engine's part is microseconds, so its time is the command's start-up.
REPLAY_STARTUP_ARGS = ("--source", "cbr(rate=1G, size=64, stop=1ms)", "--element", "fifo(capacity=300)", "-q")
REPLAY_STARTUP_RUNS = 5
CLICK_FIFO_MAX_X_QUEUE = 1.5  # TLFifoQueue adds at most 1.5x what stock Queue adds
CLICK_CORE_SLACK_NS = 10.0  # every other element at most its core's cost + 10 ns
CLICK_MIN_THROUGHPUT = 0.9  # FIFO and EFD pipelines at least 0.9x stock's
# Each element's core as core_bench names it.
CLICK_CORES = {
    "TLEfdQueue": "EFD (BEFD)",
    "TLRun2CQueue": "Run2C",
    "TLSiftQueue": "SIFT",
    "TLXProtectQueue": "X-Protect",
    "TLNcqQueue": "NCQ+",
    "TLLasQueue": "LAS",
    "TLLarsQueue": "LARS",
    "TLScfqQueue": "SCFQ",
}


def sh(*cmd: str) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False).stdout.strip()
    except OSError:
        return ""


def machine() -> dict:
    mem_kb = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    except OSError:
        pass
    cpu = next((ln.split(":", 1)[1].strip() for ln in sh("lscpu").splitlines() if ln.startswith("Model name")), "")
    return {
        "cpus": os.cpu_count(),
        "cpu": cpu or platform.processor(),
        "kernel": platform.release(),
        "mem_gib": round(mem_kb / 2**20, 1),
        "loadavg_at_start": list(os.getloadavg()),
    }


def provenance() -> dict:
    return {
        "commit": sh("git", "rev-parse", "HEAD"),
        "tree_clean": sh("git", "status", "--porcelain", "--untracked-files=no") == "",
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "compiler": sh("c++", "--version").splitlines()[0] if sh("c++", "--version") else "",
        "rustc": sh("rustc", "--version"),
        "python": platform.python_version(),
    }


def run(cmd: list[str], env: dict | None = None) -> None:
    print("==>", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, cwd=ROOT, env={**os.environ, **(env or {})}, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"bench: {cmd[0]} failed (exit {proc.returncode})")


def analyzer_rss(packets: int) -> float | None:
    """Peak RSS (MiB) of the full profile, --threads 1, of a tcpmix trace
    of `packets` packets (generated by run.sh and kept), or None."""
    run(
        ["bash", "analyzer/bench/run.sh"],
        {"PACKETS": str(packets), "THREADS": "1", "FLOOR": "", "PEERS": "", "FLOOD": ""},
    )
    doc = json.loads((OUT / "analyzer-latest.json").read_text())
    r = next((r for r in doc["results"] if r["tool"] == "tracelab-t1"), None)
    return r["max_rss_mb"] if r and r["status"] == "ok" else None


def analyzer(quick: bool) -> dict:
    # Runs first: run.sh's analyzer-latest.json is then the main run's.
    small, large = (n // 10 if quick else n for n in ANALYZER_RSS_PACKETS)
    rss = {n: analyzer_rss(n) for n in (small, large)}
    env = {"THREADS": "1 2", "FLOOR": "count", "FLOOD": ""}
    if quick:
        env |= {"PACKETS": "300000", "PEERS": ""}
    run(["bash", "analyzer/bench/run.sh"], env)
    doc = json.loads((OUT / "analyzer-latest.json").read_text())
    doc["rss_by_packets"] = {str(n): v for n, v in rss.items()}
    by_tool = {r["tool"]: r for r in doc["results"]}
    profile, floor = by_tool.get("tracelab-t1"), by_tool.get("floor-count")
    rows = []
    if rss[small] and rss[large]:
        rows.append(
            row(
                f"analyzer peak RSS MiB, {large:,} packets",
                rss[large],
                f"{small:,} pkts",
                rss[small],
                ANALYZER_MAX_RSS_GROWTH,
            )
        )
    two = by_tool.get("tracelab-t2")
    if profile and profile["status"] == "ok" and two and two["status"] == "ok":
        rows.append(row("analyzer wall s, --threads 2", two["wall_s"], "--threads 1", profile["wall_s"], None))
    if profile and profile["status"] == "ok" and floor and floor["status"] == "ok":
        rows.append(
            row(
                "analyzer CPU s (full profile)",
                profile["cpu_s"],
                "floor count",
                floor["cpu_s"],
                ANALYZER_MAX_FLOOR_RATIO,
            )
        )
        rows.append(row("analyzer peak RSS MiB", profile["max_rss_mb"], "limit", ANALYZER_MAX_RSS_MIB, 1.0))
    for peer in ("tshark", "tcptrace", "argus"):
        r = by_tool.get(peer)
        if r and r["status"] == "ok" and profile:
            rows.append(row(f"analyzer CPU s vs {peer}", profile["cpu_s"], peer, r["cpu_s"], None))
    return {"source": doc, "rows": rows}


def cores(quick: bool) -> dict:
    path = OUT / "cores-latest.json"
    run([str(CORE_BENCH), *(["--quick"] if quick else []), "--json", str(path)])
    doc = json.loads(path.read_text())
    rows = [row(f"core {c['core']} ns/64B pkt", c["ns_64B"], "budget", c["budget_ns_64B"], 1.0) for c in doc["cores"]]
    return {"source": doc, "rows": rows}


def engine(quick: bool) -> dict:
    path = OUT / "engine-latest.json"
    run([str(ENGINE_BENCH), "--json", str(path), "0.1" if quick else "1"])
    doc = json.loads(path.read_text())
    # A real-time factor is better when larger: the ratio is target / RTF, so
    # that here too a ratio <= 1 meets the target.
    rows = [
        row(f"engine {e['element']} RTF_cpu", e["rtf_cpu"], "target", ENGINE_MIN_RTF, 1.0, higher_is_better=True)
        for e in doc["elements"]
    ]
    startup = replay_startup()
    doc["replay_startup"] = startup
    # Judged on CPU time, like the rest on this shared machine; the wall
    # time, longer under load, is shown beside it.
    rows.append(row("replay run start-up CPU s", startup["cpu_s"], "limit", REPLAY_MAX_STARTUP_S, 1.0))
    rows.append(row("replay run start-up wall s", startup["wall_s"], "limit", REPLAY_MAX_STARTUP_S, None))
    return {"source": doc, "rows": rows}


def replay_startup() -> dict:
    """Medians over REPLAY_STARTUP_RUNS of the CPU (user + system) and wall
    seconds of `tracelab replay run` on REPLAY_STARTUP_ARGS."""
    cmd = [str(TRACELAB), "replay", "run", *REPLAY_STARTUP_ARGS, "-o", str(OUT / "replay-startup")]
    print("==>", " ".join(cmd), flush=True)
    cpu, wall = [], []
    for _ in range(REPLAY_STARTUP_RUNS):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
        wall.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            raise SystemExit(f"bench: tracelab replay run failed (exit {proc.returncode}): {proc.stderr.strip()}")
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return {"cmd": cmd, "runs": REPLAY_STARTUP_RUNS, "cpu_s": statistics.median(cpu), "wall_s": statistics.median(wall)}


def click(quick: bool) -> dict:
    cores_path = OUT / "cores-latest.json"
    core_ns = {}
    if cores_path.exists():
        by_core = {c["core"]: c["ns_64B"] for c in json.loads(cores_path.read_text())["cores"]}
        core_ns = {e: by_core[c] for e, c in CLICK_CORES.items() if c in by_core}
    env = {"CORE_NS": " ".join(f"{e}={ns}" for e, ns in core_ns.items())}
    if quick:
        env |= {"PACKETS": "300000", "REPS": "3", "CONFIGS": "TLFifoQueue TLEfdQueue"}
    cmd = ["sh", str(CLICK_BENCH)]
    print("==>", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, check=False)
    print(proc.stdout, end="", flush=True)
    if proc.returncode != 0:
        raise SystemExit(f"bench: {CLICK_BENCH} failed (exit {proc.returncode}): {proc.stderr.strip()}")
    if "SKIPPED" in proc.stdout:
        return {"source": {"skipped": proc.stdout.strip()}, "rows": []}
    # bench.sh's table: configuration, CPU s, min-max, +ns/packet, x Queue, tput/Queue, target ns, met.
    lines = proc.stdout.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("configuration")) + 1
    table = {}
    for ln in lines[start:]:
        f = ln.split()
        if len(f) != 8:
            break
        table[f[0]] = {"cpu_s": float(f[1]), "added_ns": float(f[3]), "throughput_vs_queue": float(f[5])}
    stock = table["Queue"]["added_ns"]
    rows = []
    for name, t in table.items():
        if name == "TLFifoQueue":
            rows.append(row("click TLFifoQueue +ns/packet", t["added_ns"], "Queue(300)", stock, CLICK_FIFO_MAX_X_QUEUE))
        elif name in core_ns:
            limit = core_ns[name] + CLICK_CORE_SLACK_NS
            rows.append(row(f"click {name} +ns/packet", t["added_ns"], "core + 10 ns", limit, 1.0))
        if name in ("TLFifoQueue", "TLEfdQueue"):
            rows.append(
                row(
                    f"click {name} throughput",
                    t["throughput_vs_queue"],
                    "0.9 x Queue",
                    CLICK_MIN_THROUGHPUT,
                    1.0,
                    higher_is_better=True,
                )
            )
    return {"source": {"table": table, "core_ns": core_ns, "text": proc.stdout}, "rows": rows}


def row(
    figure: str, value: float, reference: str, ref_value: float, max_ratio: float | None, higher_is_better: bool = False
) -> dict:
    # No ratio against a reference that is not positive (a stock Queue
    # measured as cheaper than the bare pipeline in a short, noisy run):
    # it would judge any figure met.
    ratio = None
    if ref_value > 0 and (value > 0 or not higher_is_better):
        ratio = ref_value / value if higher_is_better else value / ref_value
    met = None if max_ratio is None or ratio is None else ratio <= max_ratio
    return {
        "figure": figure,
        "value": value,
        "reference": reference,
        "reference_value": ref_value,
        "ratio": ratio,
        "max_ratio": max_ratio,
        "met": met,
    }


def print_table(rows: list[dict]) -> None:
    print(f"\n{'figure':44} {'value':>10} {'reference':>14} {'ref':>10} {'ratio':>7} {'target':>7}  met")
    for r in rows:
        ratio = f"{r['ratio']:.2f}" if r["ratio"] is not None else "-"
        target = f"<={r['max_ratio']:g}" if r["max_ratio"] is not None else "-"
        met = {True: "yes", False: "NO", None: "-"}[r["met"]]
        print(
            f"{r['figure']:44} {r['value']:>10.3g} {r['reference']:>14} {r['reference_value']:>10.3g} "
            f"{ratio:>7} {target:>7}  {met}"
        )
    judged = [r for r in rows if r["met"] is not None]
    print(f"\n{sum(r['met'] for r in judged)} of {len(judged)} targets met")


def markdown(doc: dict) -> str:
    """A run's tables in Markdown, one per part, each under the line that
    says when, where and on what it was measured (what the READMEs show)."""
    m, p = doc["machine"], doc["provenance"]
    context = (
        f"`make bench`{' --quick' if doc['options']['quick'] else ''}, {p['date_utc'][:10]}, commit "
        f"{p['commit'][:7]}{'' if p['tree_clean'] else ' (tree not clean)'}, {m['cpus']} x {m['cpu']}, "
        f"load average {m['loadavg_at_start'][0]:.1f} at the start, {m['loadavg_at_end'][0]:.1f} at the end"
    )
    out = []
    for part in doc["options"]["only"]:
        rows = doc[part]["rows"]
        if not rows:
            skipped = doc[part]["source"].get("skipped", "no figures")
            out += [f"{part}: {context}: {skipped}", ""]
            continue
        out += [
            f"{part}: {context}:",
            "",
            "| figure | value | reference | ref | ratio | target | met |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            ratio = f"{r['ratio']:.2f}" if r["ratio"] is not None else "-"
            target = f"<= {r['max_ratio']:g}" if r["max_ratio"] is not None else "-"
            met = {True: "yes", False: "**no**", None: "-"}[r["met"]]
            out.append(
                f"| {r['figure']} | {r['value']:.3g} | {r['reference']} | {r['reference_value']:.3g} | {ratio} "
                f"| {target} | {met} |"
            )
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes: a smoke run, not figures to publish")
    ap.add_argument("--only", nargs="+", choices=PARTS, default=list(PARTS), help="run only these benchmarks")
    ap.add_argument(
        "--markdown",
        nargs="?",
        const=OUT / "bench-latest.json",
        type=Path,
        metavar="JSON",
        help="print a run's tables in Markdown (default: the last run's) and run nothing",
    )
    args = ap.parse_args(argv)
    if args.markdown:
        try:
            print(markdown(json.loads(args.markdown.read_text())))
        except (OSError, ValueError, KeyError) as e:
            raise SystemExit(f"bench: cannot read a bench run from {args.markdown}: {e}") from None
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    doc = {"machine": machine(), "provenance": provenance(), "options": {"quick": args.quick, "only": args.only}}
    parts = {"analyzer": analyzer, "cores": cores, "engine": engine, "click": click}
    rows: list[dict] = []
    for name in args.only:
        doc[name] = parts[name](args.quick)
        rows += doc[name]["rows"]
    doc["machine"]["loadavg_at_end"] = list(os.getloadavg())
    print_table(rows)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    text = json.dumps(doc, indent=2) + "\n"
    for name in (f"bench-{stamp}.json", "bench-latest.json"):
        tmp = OUT / f".{name}.partial"
        tmp.write_text(text)
        tmp.replace(OUT / name)
    print(f"results: {OUT / f'bench-{stamp}.json'} (and bench-latest.json)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
