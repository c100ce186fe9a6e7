"""`tracelab fidelity`: does a synthetic trace profile like the original?

Runs the whole chain on one trace — profile, model derive, synth, profile the
synthetic trace — and compares the two profiles marginal by marginal
(tracelab_models.fidelity; the contract is docs/fidelity.md). Writes DIR whole
or not at all: the stages run in a temporary sibling that is renamed into place
at the end.

With several seeds the original's profile and model are made once and the
synthetic side (synth, profile, compare) runs once per seed; those runs are
independent, so with `--workers`/`--scheduler` each is a Dask task
(tracelab.scale.cluster), and each seed's result is the serial one.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

from . import __version__
from .errors import INPUT, USAGE
from .scale.cluster import ClusterError, add_options, from_options, run_all

# The synthesizer puts local hosts in the model's --local prefixes (those of the
# original profile, summary.json config.local); without any, in this one.
SYNTH_LOCAL_DEFAULT = "10.0.0.0/8"


def synth_local(local: list[str]) -> list[str]:
    return local or [SYNTH_LOCAL_DEFAULT]


EXAMPLES = """examples:
  tracelab fidelity datasets/real/pcapplusplus-example.pcap --local 10.0.0.0/8 -o out/fidelity
  tracelab fidelity capture.pcap --local 147.32.0.0/16 --seed 7 -o out/fid-7
  tracelab fidelity /opt/zeek/logs/2026-11-25/ --local 10.0.0.0/8 -o out/fid-zeek   # rotated conn logs
  tracelab fidelity capture.pcap --local 10.0.0.0/8 --seed 1,2,3,4 --workers 2 -o out/fid-seeds

A Zeek conn.log (TSV or JSON lines, gzipped or not) or a directory of rotated
conn logs stands in for the trace: it is read as the original profile (docs/zeek.md).
It has no packets, so the marginals from RTTs and trains are n/a; the run names them.

DIR holds original/ (the trace's profile), model.json, synthetic.pcap,
synthetic/ (its profile) and fidelity.json (every marginal with the original
and synthetic values, the error, the tolerance and the verdict, and the
Jensen-Shannon divergence and normalised EMD of each distribution). With
several seeds, each seed's synthetic.pcap, synthetic/ and fidelity.json are in
DIR/seed-S/ and DIR/fidelity.json lists the runs. Exit 1 if any marginal
fails, 0 if all pass; another stage's failure exits with its code.
"""


class StageFailed(Exception):
    def __init__(self, stage: str, code: int, detail: str):
        super().__init__(f"{stage} exited {code}: {detail}")
        self.stage, self.code, self.detail = stage, code, detail

    def __reduce__(self):  # raised on a Dask worker, re-raised here
        return StageFailed, (self.stage, self.code, self.detail)


def run_stage(stage: str, args: list[str], cwd: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "tracelab.cli", *args], cwd=cwd, capture_output=True, text=True)
    if run.returncode != 0:
        lines = (run.stderr or run.stdout).strip().splitlines()
        raise StageFailed(stage, run.returncode, lines[-1] if lines else "(no output)")


PCAP_MAGICS = (b"\xa1\xb2\xc3\xd4", b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\x3c\x4d", b"\x4d\x3c\xb2\xa1",
               b"\x0a\x0d\x0d\x0a")  # fmt: skip


PCAP_SUFFIXES = {".pcap", ".pcapng", ".cap"}


def is_pcap(path: Path) -> bool:
    """A capture, gzipped or not (by its name or magic number), goes to the
    analyzer; anything else is read as Zeek conn logs."""
    if not path.is_file():
        return False
    if any(s.lower() in PCAP_SUFFIXES for s in path.suffixes):
        return True
    with path.open("rb") as f:
        head = f.read(4)
    if head[:2] == b"\x1f\x8b":
        try:
            with gzip.open(path, "rb") as f:
                head = f.read(4)
        except (OSError, EOFError):  # not gzip after all: let the Zeek reader say what it is
            return False
    return head in PCAP_MAGICS


# The bar's steps: profile, model derive, then each seed's synth, profile and compare.
STAGES_BEFORE_SEEDS = 2


QUIET = ["--quiet", "--no-progress"]


def original_side(trace: Path, local: list[str], stage_dir: Path, advance=lambda _stage: None) -> None:
    """The trace's profile (`original/`) and model (`model.json`) in `stage_dir`."""
    local_args = [a for prefix in local for a in ("--local", prefix)]
    if is_pcap(trace):
        run_stage("profile", ["profile", str(trace), *local_args, "-o", "original", *QUIET], stage_dir)
    else:
        from tracelab_models import zeeklog

        zeeklog.to_profile(trace, local, stage_dir / "original")
    advance("model derive")
    run_stage("model derive", ["model", "derive", "original", "-o", "model.json"], stage_dir)


def synthetic_side(model: Path, local: list[str], seed: int, run_dir: Path, advance=lambda _stage: None) -> None:
    """The trace synthesized from `model` with `seed` and its profile, in `run_dir`."""
    synth_args = [a for prefix in synth_local(local) for a in ("--local", prefix)]
    run_stage("synth", ["synth", str(model), "-o", "synthetic.pcap", "--seed", str(seed), "--snaplen", "128",
                        *synth_args, "-q"], run_dir)  # fmt: skip
    advance("profile (synthetic)")
    run_stage("profile (synthetic)", ["profile", "synthetic.pcap", *synth_args, "-o", "synthetic", *QUIET],
              run_dir)  # fmt: skip


def chain(trace: Path, local: list[str], seed: int, stage_dir: Path, advance=lambda _stage: None) -> None:
    """The four stages that write into `stage_dir`; `advance(next)` after each."""
    original_side(trace, local, stage_dir, advance)
    advance("synth")
    synthetic_side(Path("model.json"), local, seed, stage_dir, advance)


def seed_run(task: tuple[Path, list[str], int, Path, Path, bool]) -> dict:
    """One seed's synthetic side and comparison, in `run_dir` (a Dask task when
    distributed): its fidelity.json, written there, and its table."""
    from tracelab_models import fidelity as F
    from tracelab_models.zeeklog import ABSENT

    trace, local, seed, stage_dir, run_dir, pcap = task
    run_dir.mkdir(exist_ok=True)
    synthetic_side(Path(os.path.relpath(stage_dir / "model.json", run_dir)), local, seed, run_dir)
    rows, dists = F.compare(stage_dir / "original", run_dir / "synthetic")
    res = result(trace, local, seed, rows, dists, None if pcap else ABSENT["fidelity"])
    (run_dir / "fidelity.json").write_text(json.dumps(res, indent=2, allow_nan=False) + "\n")
    failed = [m.name for m in rows if m.verdict == "fail"]
    na = [m.name for m in rows if m.verdict == "n/a"]
    return {"result": res, "table": F.table(rows), "failed": failed, "na": na}


def seeds_result(trace: Path, local: list[str], seeds: list[int], runs: list[dict], pcap: bool) -> dict:
    """DIR/fidelity.json of a run of several seeds: the runs and their tallies."""
    return {
        "schema": "tracelab.fidelity-seeds",
        "schema_version": 1,
        "tool": {"name": "tracelab", "version": __version__},
        "config": {
            "trace": str(trace),
            "input": "pcap" if pcap else "zeek-conn-log",
            "local": local,
            "seeds": seeds,
            "synthetic_local": synth_local(local),
        },
        "runs": [
            {
                "seed": seed,
                "path": f"{seed_dir(seed)}/fidelity.json",
                **{k: run["result"][k] for k in ("passed", "failed", "not_applicable")},
            }
            for seed, run in zip(seeds, runs, strict=True)
        ],
        "runs_passed": sum(1 for run in runs if not run["result"]["failed"]),
        "runs_failed": sum(1 for run in runs if run["result"]["failed"]),
    }


def seed_dir(seed: int) -> str:
    return f"seed-{seed}"


def seed_list(text: str) -> list[int]:
    """`--seed` value: one integer or several, comma-separated."""
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seeds as integers (1 or 1,2,3), got {text!r}") from None


def result(trace: Path, local: list[str], seed: int, rows, dists, absent: list[str] | None = None) -> dict:
    """fidelity.json; `absent` names the marginals a Zeek conn.log cannot give."""
    verdicts = [m.verdict for m in rows]
    return {
        "schema": "tracelab.fidelity",
        "schema_version": 1,
        "tool": {"name": "tracelab", "version": __version__},
        "config": {
            "trace": str(trace),
            "input": "pcap" if absent is None else "zeek-conn-log",
            "local": local,
            "seed": seed,
            "synthetic_local": synth_local(local),
        },
        **({} if absent is None else {"absent_from_input": absent}),
        "passed": verdicts.count("pass"),
        "failed": verdicts.count("fail"),
        "not_applicable": verdicts.count("n/a"),
        "marginals": [m.to_json() for m in rows],
        "distributions": [d.to_json() for d in dists],
    }


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="tracelab fidelity",
        description="Profile a trace, derive its model, synthesize a trace from it, profile that, and compare "
        "the two profiles marginal by marginal (docs/fidelity.md).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("trace", type=Path, help="pcap/pcapng trace, or Zeek conn log(s): a file or a directory")
    ap.add_argument("--local", action="append", default=[], metavar="PREFIX",
                    help="local network of the original trace (repeatable or comma-separated)")  # fmt: skip
    ap.add_argument("--seed", type=seed_list, action="append", metavar="S[,S...]",
                    help="seed of the synthesizer (default 1); several (comma-separated or repeated) synthesize and "
                    "compare once per seed, from one profile and model of the trace")  # fmt: skip
    ap.add_argument("-o", "--output", type=Path, required=True, metavar="DIR", help="output directory")
    ap.add_argument("-q", "--quiet", action="store_true", help="no table on stdout, no progress bar on stderr")
    add_options(ap)
    args = ap.parse_args(argv)
    seeds = [seed for group in args.seed or [[1]] for seed in group]
    if not seeds or len(set(seeds)) < len(seeds):
        ap.error(f"--seed: {'a seed is given twice' if seeds else 'no seed'} ({','.join(map(str, seeds))})")
    trace = args.trace.resolve()
    if not trace.exists():
        print(f"tracelab: error: fidelity: {args.trace}: no such file", file=sys.stderr)
        return 2
    local = [p for item in args.local for p in item.split(",") if p]
    final = args.output.resolve()
    from tracelab_models import progress
    from tracelab_models.outputs import atomic_dir
    from tracelab_models.profile import ProfileError

    def owns(path: Path) -> bool:  # a previous fidelity output may be replaced
        return (path / "fidelity.json").is_file()

    pcap = is_pcap(trace)
    first = "profile" if pcap else "read Zeek logs"
    several = len(seeds) > 1
    try:
        with (
            atomic_dir(final, "fidelity output", owns) as staged,
            progress.steps("fidelity", STAGES_BEFORE_SEEDS + len(seeds), first, args.quiet) as step,
        ):
            original_side(trace, local, staged, step)
            step("synth" if not several else f"{len(seeds)} seeds")
            tasks = [
                (trace, local, seed, staged, staged / seed_dir(seed) if several else staged, pcap) for seed in seeds
            ]
            # Each seed is one task on --workers/--scheduler; in this process without them.
            runs = run_all(seed_run, tasks, from_options(args), lambda _i, _run: step("seeds"), args.quiet)
            if several:
                res = seeds_result(trace, local, seeds, runs, pcap)
                (staged / "fidelity.json").write_text(json.dumps(res, indent=2, allow_nan=False) + "\n")
    except StageFailed as e:
        print(f"tracelab: error: fidelity ({trace}): {e}", file=sys.stderr)
        return e.code
    except ProfileError as e:  # Zeek logs that cannot be read
        print(f"tracelab: error: fidelity: {e}", file=sys.stderr)
        return INPUT
    except ClusterError as e:
        print(f"tracelab: error: fidelity: {e}", file=sys.stderr)
        return USAGE
    if not args.quiet:
        if several:
            for seed, run in zip(seeds, runs, strict=True):
                r = run["result"]
                failing = f"; failed: {', '.join(run['failed'])}" if run["failed"] else ""
                print(f"seed {seed}: {r['passed']} passed, {r['failed']} failed, {r['not_applicable']} n/a{failing}")
            print(f"\n{res['runs_passed']} of {len(seeds)} seeds pass every marginal; written to {final}")
        else:
            res = runs[0]["result"]
            print(runs[0]["table"])
            if not pcap:
                print(f"\nn/a from a Zeek conn.log (no packets, so no RTTs or trains): {'; '.join(runs[0]['na'])}")
            print(f"\n{res['passed']} passed, {res['failed']} failed, {res['not_applicable']} n/a; written to {final}")
    return 1 if any(run["result"]["failed"] for run in runs) else 0
