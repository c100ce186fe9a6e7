"""`tracelab demo`: the whole path that exists, on a bundled real trace.

Today: profile the trace (analyzer) → derive its workload model (models) →
replay the trace through EFD, ChuTQ and QTL at 10 Gb/s (replay engine) →
HTML report → a TRex STL profile of the model. Each step runs only when its
part is installed, and says so when it is not.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

from .parts import REPO_ROOT, python_entry, run_analyzer

DEMO_TRACE = REPO_ROOT / "datasets" / "real" / "pcapplusplus-example.pcap"
DEMO_LOCAL = "10.0.0.0/8"

EXAMPLE = """example:
  tracelab demo -o out/demo
  tracelab demo --trace my.pcap --local 192.168.0.0/16 -o out/mine"""


def step(title: str) -> None:
    print(f"\n=== {title} ===", flush=True)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="tracelab demo",
        description="Run the whole tracelab path on a bundled real trace "
        f"({DEMO_TRACE.name}, enterprise {DEMO_LOCAL}): profile, model, replay.",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        default=Path("out/demo"),
        metavar="DIR",
        help="where every step writes (default out/demo)",
    )
    p.add_argument("--trace", type=Path, default=DEMO_TRACE, help="another trace instead of the bundled one")
    p.add_argument("--local", default=DEMO_LOCAL, metavar="CIDR[,CIDR...]", help="enterprise networks")
    args = p.parse_args(argv)
    if not args.trace.is_file():
        print(f"tracelab demo: {args.trace}: no such trace", file=sys.stderr)
        return 2
    out: Path = args.output
    out.mkdir(parents=True, exist_ok=True)
    profile_dir = out / "profile"

    step(f"1. profile {args.trace} (tracelab profile)")
    status = run_analyzer([str(args.trace), "--local", args.local, "-o", str(profile_dir), "--no-progress"])
    if status != 0:
        print(f"tracelab demo: the profile step failed (exit {status})", file=sys.stderr)
        return status

    derive = python_entry("tracelab_models.cli", "model_main")
    model_path = out / "trace.model.json"
    if derive is None:
        step("2. workload model: SKIPPED (models package not installed: make setup)")
    else:
        step(f"2. derive the workload model (tracelab model derive) -> {model_path}")
        status = derive(["derive", str(profile_dir), "-o", str(model_path)])
        if status != 0:
            print(f"tracelab demo: the model step failed (exit {status})", file=sys.stderr)
            return status
        model = json.loads(model_path.read_text())
        print(f"model schema {model.get('schema_version', '?')}, sections: {', '.join(sorted(model))}")

    replay = python_entry("tracelab.replay.cli", "main")
    if replay is None or importlib.util.find_spec("tracelab_engine") is None:
        step("3. replay: SKIPPED (replay engine not built: make build)")
    else:
        # The trace time-scaled to 90 % of a 10 Gb/s link; QTL gives every
        # packet a 100 us end-to-end budget, so late packets are dropped early.
        for name, element, extra in (
            ("efd", "efd(capacity=300,th=30000)", []),
            ("chutq", "chutq(policy=dcf)", []),
            ("qtl", "mtqqtl(capacity=300)", ["--class", "all:100us,qtl=100us"]),
        ):
            step(f"3. replay the trace through {element} at 10 Gb/s (tracelab replay run)")
            status = replay(
                [
                    "run",
                    "--pcap",
                    str(args.trace),
                    "--element",
                    element,
                    "--rate",
                    "10G",
                    "--load",
                    "0.9",
                    *extra,
                    "-o",
                    str(out / "replay" / name),
                ]
            )
            if status != 0:
                print(f"tracelab demo: the replay step failed (exit {status})", file=sys.stderr)
                return status

    report = python_entry("tracelab.report.cli", "main")
    if report is not None:
        runs = sorted(str(p) for p in (out / "replay").glob("*") if (p / "metrics.json").exists())
        step(f"4. render the report (tracelab report) -> {out / 'report' / 'index.html'}")
        status = report([str(profile_dir), *runs, "-o", str(out / "report"), "--title", "tracelab demo"])
        if status != 0:
            print(f"tracelab demo: the report step failed (exit {status})", file=sys.stderr)
            return status
    if model_path.exists() and importlib.util.find_spec("tracelab.trex") is not None:
        from .trex.cli import main as trex_main

        step(f"5. TRex profile of the model for a lab (tracelab replay trex stl) -> {out / 'trex'}")
        (out / "trex").mkdir(exist_ok=True)
        status = trex_main(["stl", str(model_path), "-o", str(out / "trex" / "stl_demo.py")])
        if status != 0:
            print(f"tracelab demo: the TRex step failed (exit {status})", file=sys.stderr)
            return status

    step("done")
    print(
        f"outputs under {out}/: profile/ (Parquet, conn.log, summary.json)"
        + (", trace.model.json" if model_path.exists() else "")
        + (", replay/" if (out / "replay").exists() else "")
        + (", report/index.html" if (out / "report" / "index.html").exists() else "")
        + (", trex/" if (out / "trex").exists() else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
