#!/usr/bin/env python3
"""Golden baselines, Zeek btest style: tracelab's outputs on small real and
generated traces, rendered to text and checked in under tests/baselines/<case>/.
tests/test_baselines.py reruns every case and diffs the result against the
checked-in files; a change to any output column, count, model parameter or
replay metric shows up as a diff a reviewer can read.

  tests/golden.py --update           rerun every case and rewrite its baseline
  tests/golden.py --update example   only the named cases
  tests/golden.py --list             the cases and what they run

`make baselines` runs the first. Normalisation (tests/baselines/README.md):
absolute paths become $ROOT (the checkout) and $OUT (the run's directory);
Zeek's #open/#close dates are dropped; wall-clock figures are replaced by
`<wall>`; floats are written with a fixed number of significant digits
(analyzer tables: shortest round-trip repr, exact; JSON of the engine and the
models: 10 and 6 digits, so libm or BLAS noise in the last bits of a fit does
not count as a change).
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import math
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
from support import LINK_10G_LOAD_90, ROOT, run_tracelab, tcpmix

BASELINES = ROOT / "tests" / "baselines"
REAL = ROOT / "datasets" / "real"

WALL = "<wall>"
# JSON keys whose values are wall-clock measurements of the run, not results.
WALL_KEY = re.compile(r"wall|elapsed", re.IGNORECASE)
# The "wall s" column of the experiments report.
WALL_CELL = re.compile(r"^(\| E-[A-Z]+-\d+ \| \d+/\d+ \| )[\d.]+( \|)$", re.MULTILINE)


class CommandFailed(Exception):
    pass


def tracelab(*args: str, cwd: Path) -> None:
    run = run_tracelab(*args, cwd=cwd)
    if run.returncode != 0:
        raise CommandFailed(f"tracelab {' '.join(args)} exited {run.returncode}\n{run.stdout}\n{run.stderr}")


# --- rendering ------------------------------------------------------------------


def paths_normalised(text: str, out: Path) -> str:
    return text.replace(str(out), "$OUT").replace(str(ROOT), "$ROOT")


def float_text(x: float, digits: int | None) -> str:
    if math.isnan(x) or math.isinf(x):
        return repr(x)
    return repr(x) if digits is None else f"{x:.{digits}g}"


def json_normalised(value, digits: int | None, out: Path):
    """The JSON value with wall-clock fields masked, floats at `digits`
    significant digits (as strings, so the rendering is the rounding) and
    paths made relative to $ROOT/$OUT."""
    if isinstance(value, dict):
        return {
            k: WALL if WALL_KEY.search(k) and not isinstance(v, dict | list) else json_normalised(v, digits, out)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [json_normalised(v, digits, out) for v in value]
    if isinstance(value, float):
        return float_text(value, digits)
    if isinstance(value, str):
        return paths_normalised(value, out)
    return value


def render_json(path: Path, digits: int | None, out: Path) -> str:
    data = json_normalised(json.loads(path.read_text()), digits, out)
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render_zeek_log(path: Path, out: Path) -> str:
    """A Zeek TSV log without the #open/#close lines (the run's date)."""
    lines = [line for line in path.read_text().splitlines(keepends=True) if not line.startswith(("#open", "#close"))]
    return paths_normalised("".join(lines), out)


def render_parquet(path: Path, digits: int | None = None) -> str:
    """A Parquet table as TSV: a header of name:type, then every row; floats
    exact (shortest round-trip) unless `digits` is given, nulls as `-`."""
    table = pq.read_table(path)
    header = "\t".join(f"{f.name}:{f.type}" for f in table.schema)
    columns = [table.column(i).to_pylist() for i in range(table.num_columns)]

    def cell(v) -> str:
        if v is None:
            return "-"
        if isinstance(v, bool):
            return "T" if v else "F"
        if isinstance(v, float):
            return float_text(v, digits)
        return str(v)

    rows = ("\t".join(cell(c[i]) for c in columns) for i in range(table.num_rows))
    return "\n".join([header, *rows]) + "\n"


def render_profile(src: Path, dst: dict[str, str], prefix: str, out: Path) -> None:
    """Every output of `tracelab profile`: conn.log, summary.json and each
    Parquet table (samples/ included) as TSV."""
    dst[f"{prefix}conn.log"] = render_zeek_log(src / "conn.log", out)
    dst[f"{prefix}summary.json"] = render_json(src / "summary.json", None, out)
    for table in sorted(src.rglob("*.parquet")):
        rel = table.relative_to(src).with_suffix(".tsv")
        dst[f"{prefix}{rel.as_posix()}"] = render_parquet(table)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- cases -----------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    name: str
    about: str
    run: Callable[[Path], dict[str, str]]


def case_profile(trace: Path, *local: str) -> Callable[[Path], dict[str, str]]:
    def run(out: Path) -> dict[str, str]:
        tracelab("profile", str(trace), *local, "-o", "p", "--quiet", "--no-progress", cwd=out)
        files: dict[str, str] = {}
        render_profile(out / "p", files, "profile/", out)
        return files

    return run


def case_chain(out: Path) -> dict[str, str]:
    """The demo trace through every stage that writes a result: profile,
    roles, model, synth (and the synthetic trace's profile), replay of the
    model."""
    trace = REAL / "pcapplusplus-example.pcap"
    files: dict[str, str] = {}
    tracelab("profile", str(trace), "--local", "10.0.0.0/8", "-o", "p", "--quiet", "--no-progress", cwd=out)
    render_profile(out / "p", files, "profile/", out)
    tracelab("roles", "train", "p", "--all-hosts", "-o", "roles.json", cwd=out)
    files["roles.json"] = render_json(out / "roles.json", 6, out)
    tracelab("roles", "apply", "roles.json", "p", "--all-hosts", "--min-connections", "0", "-o", "roles.csv", cwd=out)
    files["roles.csv"] = (out / "roles.csv").read_text()
    tracelab("model", "derive", "p", "-o", "m.model.json", cwd=out)
    files["model.json"] = render_json(out / "m.model.json", 6, out)
    tracelab("synth", "m.model.json", "-o", "s.pcap", "--seed", "1", cwd=out)
    files["synth/pcap.sha256"] = f"{sha256(out / 's.pcap')}  s.pcap\n"
    tracelab("profile", "s.pcap", "--local", "10.0.0.0/8", "-o", "sp", "--quiet", "--no-progress", cwd=out)
    files["synth/profile/conn.log"] = render_zeek_log(out / "sp" / "conn.log", out)
    files["synth/profile/summary.json"] = render_json(out / "sp" / "summary.json", None, out)
    tracelab(
        "replay",
        "run",
        "--model",
        "m.model.json",
        "--element",
        "efd(capacity=300,th=30000)",
        "--rate",
        "1G",
        "--load",
        "0.9",
        "--duration",
        "0.5s",
        "--seed",
        "1",
        "-o",
        "rm",
        "-q",
        cwd=out,
    )
    files["replay-model/metrics.json"] = render_json(out / "rm" / "metrics.json", 10, out)
    return files


REPLAY_ELEMENTS = {
    "fifo": "fifo(capacity=300)",
    "efd": "efd(capacity=300,th=30000)",
    "las": "las(capacity=300)",
    "sift": "sift(p=0.01,seed=1,capacity=300)",
    "ncqplus": "ncqplus(capacity=100)",
    "chutq": "chutq(policy=dcf)",
}


def case_replay(out: Path) -> dict[str, str]:
    """A recorded trace through several elements on an exact 10 Gb/s link."""
    trace = REAL / "zeek-bro.org.pcap"
    files: dict[str, str] = {}
    for name, spec in REPLAY_ELEMENTS.items():
        tracelab(
            "replay",
            "run",
            "--pcap",
            str(trace),
            "--element",
            spec,
            *LINK_10G_LOAD_90,
            "--seed",
            "1",
            "-o",
            name,
            "-q",
            cwd=out,
        )
        files[f"{name}/metrics.json"] = render_json(out / name / "metrics.json", 10, out)
    return files


def case_tcpmix(out: Path) -> dict[str, str]:
    """A generated enterprise-edge trace (datasets/generate), 20,000 packets."""
    trace = tcpmix(out / "tcpmix.pcap", packets=20000, seed=1)
    files = {"tcpmix.pcap.sha256": f"{sha256(trace)}  tcpmix.pcap\n"}
    tracelab("profile", str(trace), "--local", "10.0.0.0/8", "-o", "p", "--quiet", "--no-progress", cwd=out)
    render_profile(out / "p", files, "profile/", out)
    return files


# The open-loop experiments (the closed-loop ones depend on the ns-3 build and run in test_experiments.py).
ENGINE_EXPERIMENTS = ["E-CHK-1", "E-CHK-2", "E-CHK-3", "E-CHK-4", "E-MTQ-4", "E-THS-1", "E-THS-3"]


def case_experiments(out: Path) -> dict[str, str]:
    """The seed experiments reproduced in the engine, at --quick scale."""
    run = subprocess.run(
        [sys.executable, "-m", "tracelab.replay.experiments", "run", *ENGINE_EXPERIMENTS, "--quick", "-o", "."],
        cwd=out,
        capture_output=True,
        text=True,
    )
    # 1: the report has failed checks (reported in it, and part of the baseline).
    if run.returncode not in (0, 1):
        raise CommandFailed(f"experiments run --quick exited {run.returncode}\n{run.stderr}")
    report = (out / "REPORT.md").read_text()
    report = re.sub(r"python [\d.]+", "python <version>", report)
    return {"REPORT.md": WALL_CELL.sub(rf"\g<1>{WALL}\g<2>", report)}


CASES = [
    Case("example", "pcapplusplus-example.pcap: profile, roles, model, synth, model replay", case_chain),
    Case("wikipedia", "zeek-wikipedia.pcap: profile", case_profile(REAL / "zeek-wikipedia.pcap")),
    Case(
        "bro-org", "zeek-bro.org.pcap: profile", case_profile(REAL / "zeek-bro.org.pcap", "--local", "192.150.0.0/16")
    ),
    Case("replay-bro-org", "zeek-bro.org.pcap replayed through fifo, efd, las, sift, ncqplus, chutq", case_replay),
    Case("tcpmix", "generated tcpmix trace (20,000 packets): profile", case_tcpmix),
    Case("experiments", "seed experiments in the engine, --quick", case_experiments),
]


def run_case(case: Case) -> dict[str, str]:
    with tempfile.TemporaryDirectory(prefix=f"golden-{case.name}-") as tmp:
        return case.run(Path(tmp).resolve())


def read_baseline(name: str) -> dict[str, str]:
    base = BASELINES / name
    return {p.relative_to(base).as_posix(): p.read_text() for p in sorted(base.rglob("*")) if p.is_file()}


def differences(name: str, got: dict[str, str], max_lines: int = 200) -> str:
    """A unified diff of the baseline against this run's outputs ('' if equal)."""
    want = read_baseline(name)
    lines: list[str] = []
    for rel in sorted(set(want) | set(got)):
        a, b = want.get(rel), got.get(rel)
        if a == b:
            continue
        if a is None:
            lines.append(f"+++ new output file {rel} (not in the baseline)")
        elif b is None:
            lines.append(f"--- missing output file {rel} (in the baseline)")
        else:
            lines.extend(
                difflib.unified_diff(
                    a.splitlines(), b.splitlines(), f"baselines/{name}/{rel}", f"this run/{rel}", lineterm="", n=1
                )
            )
    if len(lines) > max_lines:
        lines = [*lines[:max_lines], f"... {len(lines) - max_lines} more diff lines"]
    return "\n".join(lines)


def write_baseline(name: str, files: dict[str, str]) -> None:
    base = BASELINES / name
    if base.exists():
        shutil.rmtree(base)
    for rel, text in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="example: tests/golden.py --update")
    ap.add_argument("--update", action="store_true", help="rerun the cases and rewrite their baselines")
    ap.add_argument("--list", action="store_true", help="list the cases")
    ap.add_argument("cases", nargs="*", help="case names (default: all)")
    args = ap.parse_args(argv)
    by_name = {c.name: c for c in CASES}
    unknown = [n for n in args.cases if n not in by_name]
    if unknown:
        ap.error(f"unknown case(s) {', '.join(unknown)}; cases: {', '.join(by_name)}")
    chosen = [by_name[n] for n in args.cases] if args.cases else CASES
    if args.list or not args.update:
        for c in chosen:
            print(f"{c.name:16} {c.about}")
        return 0
    for c in chosen:
        files = run_case(c)
        changed = differences(c.name, files)
        write_baseline(c.name, files)
        print(f"{c.name:16} {len(files)} files, {'changed' if changed else 'unchanged'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
