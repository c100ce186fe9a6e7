"""`tracelab fidelity`: does a synthetic trace profile like the original?

Runs the whole chain on one trace — profile, model derive, synth, profile the
synthetic trace — and compares the two profiles marginal by marginal
(tracelab_models.fidelity; the contract is docs/fidelity.md). Writes DIR whole
or not at all: the stages run in a temporary sibling that is renamed into place
at the end.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
from pathlib import Path

from . import __version__
from .errors import INPUT

# The synthesizer puts local hosts in the model's --local prefixes (those of the
# original profile, summary.json config.local); without any, in this one.
SYNTH_LOCAL_DEFAULT = "10.0.0.0/8"


def synth_local(local: list[str]) -> list[str]:
    return local or [SYNTH_LOCAL_DEFAULT]


EXAMPLES = """examples:
  tracelab fidelity datasets/real/pcapplusplus-example.pcap --local 10.0.0.0/8 -o out/fidelity
  tracelab fidelity capture.pcap --local 147.32.0.0/16 --seed 7 -o out/fid-7
  tracelab fidelity /opt/zeek/logs/2026-11-25/ --local 10.0.0.0/8 -o out/fid-zeek   # rotated conn logs

A Zeek conn.log (TSV or JSON lines, gzipped or not) or a directory of rotated
conn logs stands in for the trace: it is read as the original profile (docs/zeek.md).
It has no packets, so the marginals from RTTs and trains are n/a; the run names them.

DIR holds original/ (the trace's profile), model.json, synthetic.pcap,
synthetic/ (its profile) and fidelity.json (every marginal with the original
and synthetic values, the error, the tolerance and the verdict, and the
Jensen-Shannon divergence and normalised EMD of each distribution). Exit 1 if
any marginal fails, 0 if all pass; another stage's failure exits with its code.
"""


class StageFailed(Exception):
    def __init__(self, stage: str, code: int, detail: str):
        super().__init__(f"{stage} exited {code}: {detail}")
        self.code = code


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


STAGES = 5  # profile, model derive, synth, profile (synthetic), compare


def chain(trace: Path, local: list[str], seed: int, stage_dir: Path, advance=lambda _stage: None) -> None:
    """The four stages that write into `stage_dir`; `advance(next)` after each."""
    local_args = [a for prefix in local for a in ("--local", prefix)]
    quiet = ["--quiet", "--no-progress"]
    if is_pcap(trace):
        run_stage("profile", ["profile", str(trace), *local_args, "-o", "original", *quiet], stage_dir)
    else:
        from tracelab_models import zeeklog

        zeeklog.to_profile(trace, local, stage_dir / "original")
    advance("model derive")
    run_stage("model derive", ["model", "derive", "original", "-o", "model.json"], stage_dir)
    advance("synth")
    synth_args = [a for prefix in synth_local(local) for a in ("--local", prefix)]
    run_stage("synth", ["synth", "model.json", "-o", "synthetic.pcap", "--seed", str(seed), "--snaplen", "128",
                        *synth_args, "-q"], stage_dir)  # fmt: skip
    advance("profile (synthetic)")
    run_stage("profile (synthetic)", ["profile", "synthetic.pcap", *synth_args, "-o", "synthetic", *quiet],
              stage_dir)  # fmt: skip


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
    ap.add_argument("--seed", type=int, default=1, help="seed of the synthesizer (default 1)")
    ap.add_argument("-o", "--output", type=Path, required=True, metavar="DIR", help="output directory")
    ap.add_argument("-q", "--quiet", action="store_true", help="no table on stdout, no progress bar on stderr")
    args = ap.parse_args(argv)
    trace = args.trace.resolve()
    if not trace.exists():
        print(f"tracelab: error: fidelity: {args.trace}: no such file", file=sys.stderr)
        return 2
    local = [p for item in args.local for p in item.split(",") if p]
    final = args.output.resolve()
    from tracelab_models import fidelity as F
    from tracelab_models import progress
    from tracelab_models.outputs import atomic_dir
    from tracelab_models.profile import ProfileError
    from tracelab_models.zeeklog import ABSENT

    def owns(path: Path) -> bool:  # a previous fidelity output may be replaced
        return (path / "fidelity.json").is_file()

    first = "profile" if is_pcap(trace) else "read Zeek logs"
    try:
        with (
            atomic_dir(final, "fidelity output", owns) as staged,
            progress.steps("fidelity", STAGES, first, args.quiet) as step,
        ):
            chain(trace, local, args.seed, staged, step)
            step("compare")
            rows, dists = F.compare(staged / "original", staged / "synthetic")
            absent = None if is_pcap(trace) else ABSENT["fidelity"]
            res = result(trace, local, args.seed, rows, dists, absent)
            (staged / "fidelity.json").write_text(json.dumps(res, indent=2, allow_nan=False) + "\n")
    except StageFailed as e:
        print(f"tracelab: error: fidelity ({trace}): {e}", file=sys.stderr)
        return e.code
    except ProfileError as e:  # Zeek logs that cannot be read
        print(f"tracelab: error: fidelity: {e}", file=sys.stderr)
        return INPUT
    if not args.quiet:
        print(F.table(rows))
        if absent is not None:
            na = [m.name for m in rows if m.verdict == "n/a"]
            print(f"\nn/a from a Zeek conn.log (no packets, so no RTTs or trains): {'; '.join(na)}")
        print(f"\n{res['passed']} passed, {res['failed']} failed, {res['not_applicable']} n/a; written to {final}")
    return 1 if res["failed"] else 0
