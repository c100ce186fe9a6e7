#!/usr/bin/env python3
"""`make bench-scale`: the parallel profile's scaling figures (issue #20,
item 6; docs/scale.md keeps the figures and the projection made from them).

A tcpmix trace (datasets/generate, seed 1) of --packets packets is split
into rotated files of --file-packets packets each with `editcap -c`
(Wireshark's; ~100 MB files at tcpmix's 96-byte snaplen, as `tcpdump -C 100`
would cut them), then profiled as one capture:

  serial      tracelab-analyzer DIR --threads 1
  N workers   for N in --workers: a distributed.LocalCluster of N single-
              threaded workers; N shard tasks (`--shard I/N`, each reading
              the whole capture), then the merge (`--merge`) in this process

Reported per run: wall and CPU seconds, peak RSS of the analyzer
processes (the serial one's, the merge's, and a shard's: shard 0 run again
alone under time(1)), packets per second (end to end, and per worker: the
packets a worker tracked per CPU second of its shard), and the overhead
of sharding and merging as a fraction of the serial analyzer's CPU time:
(sum of the shards' CPU + the merge's CPU - serial CPU) / serial CPU. Each parallel profile is checked byte-equal to
the serial one. JSON with machine and commit in
build/bench/scale-<stamp>.json and scale-latest.json.

  scripts/bench_scale.py                     # 20 M packets, 1 and 2 workers
  scripts/bench_scale.py --packets 2000000   # smaller (a smoke run)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import OUT, ROOT, machine, provenance

ANALYZER = ROOT / "analyzer" / "target" / "release" / "tracelab-analyzer"
TCPMIX = ROOT / "build" / "generate" / "target" / "release" / "tcpmix"
LOCAL = ["--local", "10.0.0.0/8"]
OPTIONS = [*LOCAL, "--quiet", "--no-progress"]
COMPARED = ("conn.log", "connections.parquet", "hosts.parquet", "load.parquet", "summary.json")


def timed(cmd: list[str]) -> dict:
    """Runs `cmd` under /usr/bin/time; its wall and CPU seconds and peak
    RSS (MiB). Through time(1), not this process's wait4: Linux counts in
    a child's ru_maxrss the RSS of its parent at the fork (Python's, here),
    and time(1)'s own is small."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        proc = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", "-o", out.name, *cmd], stdout=subprocess.DEVNULL)
        if proc.returncode != 0:
            raise SystemExit(f"bench-scale: {' '.join(cmd)} failed (status {proc.returncode})")
        wall, user, system, rss_kib = out.read().split()[-4:]
    return {"wall_s": float(wall), "cpu_s": float(user) + float(system), "max_rss_mib": int(rss_kib) / 1024}


def capture(packets: int, file_packets: int) -> tuple[Path, int]:
    """The rotated files (made once, kept in build/bench/scale/) and their
    bytes."""
    base = OUT / "scale" / f"tcpmix-{packets}-s1"
    files = base / "captures"
    if not (base / "done").is_file():
        shutil.rmtree(base, ignore_errors=True)
        base.mkdir(parents=True)
        if not TCPMIX.is_file():
            subprocess.run(
                ["cargo", "build", "--release", "--locked", "--quiet", "--manifest-path",
                 str(ROOT / "datasets" / "generate" / "Cargo.toml"), "--target-dir", str(TCPMIX.parents[2])],
                check=True,
            )  # fmt: skip
        whole = base / "whole.pcap"
        subprocess.run(
            [str(TCPMIX), "--packets", str(packets), "--seed", "1", str(whole)], check=True, stdout=subprocess.DEVNULL
        )
        files.mkdir()
        subprocess.run(
            ["editcap", "-F", "pcap", "-c", str(file_packets), str(whole), str(files / "cap.pcap")], check=True
        )
        whole.unlink()
        (base / "done").write_text("")
    return files, sum(p.stat().st_size for p in files.iterdir())


def same_outputs(a: Path, b: Path) -> bool:
    return all((a / f).read_bytes() == (b / f).read_bytes() for f in COMPARED)


def parallel(files: Path, workers: int, work: Path, serial_out: Path) -> dict:
    """The profile on a LocalCluster of `workers` workers, phase by phase."""
    from tracelab.scale.cluster import Cluster, connect
    from tracelab.scale.parallel import run_shards

    shard_dir = work / f"shards-{workers}"
    shard_dir.mkdir()
    started = time.monotonic()
    with connect(Cluster(workers=workers), quiet=True) as client:
        client.wait_for_workers(workers)
        cluster_start_s = time.monotonic() - started
        t = time.monotonic()
        shards = run_shards(client, workers, [str(files), *LOCAL], "1", shard_dir, quiet=True)
        shards_wall_s = time.monotonic() - t
    if any(s["status"] != 0 for s in shards):
        raise SystemExit(f"bench-scale: a shard failed: {shards}")
    # A shard's peak RSS: shard 0 again, alone, under time(1) (a task's
    # rusage counts its Dask worker's RSS too).
    shard_rss = timed([str(ANALYZER), str(files), *OPTIONS, "--shard", f"0/{workers}", "-o", str(work / "rss")])
    shutil.rmtree(work / "rss")
    out = work / f"workers-{workers}"
    merge_dirs = [a for i in range(workers) for a in ("--merge", str(shard_dir / f"shard-{i}"))]
    merge = timed([str(ANALYZER), str(files), *OPTIONS, *merge_dirs, "-o", str(out)])
    shutil.rmtree(shard_dir)
    return {
        "workers": workers,
        "cluster_start_s": cluster_start_s,
        "shards_wall_s": shards_wall_s,
        "shards": [{k: s[k] for k in ("wall_s", "cpu_s")} for s in shards],
        "shard_0_alone": shard_rss,
        "merge": merge,
        "wall_s_without_cluster_start": shards_wall_s + merge["wall_s"],
        "equal_to_serial": same_outputs(out, serial_out),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--packets", type=int, default=20_000_000, help="packets of the generated trace [20000000]")
    ap.add_argument("--file-packets", type=int, default=1_000_000, help="packets per rotated file [1000000]")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="local worker counts [1 2]")
    args = ap.parse_args(argv)
    files, size = capture(args.packets, args.file_packets)
    work = OUT / "scale" / f"run-{os.getpid()}"
    work.mkdir(parents=True)
    try:
        serial_out = work / "serial"
        serial = timed([str(ANALYZER), str(files), *OPTIONS, "--threads", "1", "-o", str(serial_out)])
        summary = json.loads((serial_out / "summary.json").read_text())
        packets, connections = summary["packets"]["read"], summary["connections"]["total"]
        runs = [parallel(files, n, work, serial_out) for n in args.workers]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for r in runs:
        n = r["workers"]
        shard_cpu = sum(s["cpu_s"] for s in r["shards"])
        r["packets_per_s"] = packets / r["wall_s_without_cluster_start"]
        # A worker's own rate: the packets its shard tracked (1/N of the
        # capture's) per CPU second of its shard (which read them all).
        r["tracked_packets_per_cpu_s_per_worker"] = packets / n / (shard_cpu / n)
        r["overhead_fraction_of_serial_cpu"] = (shard_cpu + r["merge"]["cpu_s"] - serial["cpu_s"]) / serial["cpu_s"]
        r["merge_fraction_of_serial_cpu"] = r["merge"]["cpu_s"] / serial["cpu_s"]
        r["max_rss_mib_per_worker"] = r["shard_0_alone"]["max_rss_mib"]
    serial["packets_per_s"] = packets / serial["wall_s"]
    serial["packets_per_cpu_s"] = packets / serial["cpu_s"]
    doc = {
        "machine": {**machine(), "loadavg_at_end": list(os.getloadavg())},
        "provenance": provenance(),
        "options": vars(args),
        "capture": {
            "packets": packets,
            "connections": connections,
            "bytes": size,
            "files": len(list(files.iterdir())),
        },
        "serial": serial,
        "parallel": runs,
    }
    print(f"\n{packets:,} packets, {connections:,} connections, {doc['capture']['files']} files ({size / 1e6:.0f} MB)")
    print(f"serial: {serial['wall_s']:.1f} s wall, {serial['cpu_s']:.1f} s CPU, {serial['max_rss_mib']:.0f} MiB")
    for r in runs:
        print(
            f"{r['workers']} worker(s): shards {r['shards_wall_s']:.1f} s + merge {r['merge']['wall_s']:.1f} s wall "
            f"(+ cluster start {r['cluster_start_s']:.1f} s); {r['packets_per_s'] / 1e6:.2f} M pkt/s; "
            f"{r['tracked_packets_per_cpu_s_per_worker'] / 1e6:.2f} M tracked pkt/CPU-s per worker; overhead "
            f"{100 * r['overhead_fraction_of_serial_cpu']:.0f} % of serial CPU (merge "
            f"{100 * r['merge_fraction_of_serial_cpu']:.0f} %); "
            f"peak RSS per worker {r['max_rss_mib_per_worker']:.0f} MiB, merge {r['merge']['max_rss_mib']:.0f} MiB; "
            f"equal to serial: {r['equal_to_serial']}"
        )
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    text = json.dumps(doc, indent=2) + "\n"
    for name in (f"scale-{stamp}.json", "scale-latest.json"):
        tmp = OUT / f".{name}.partial"
        tmp.write_text(text)
        tmp.replace(OUT / name)
    print(f"results: {OUT / f'scale-{stamp}.json'} (and scale-latest.json)")
    return 0 if all(r["equal_to_serial"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
