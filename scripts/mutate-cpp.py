#!/usr/bin/env python3
"""Mutation testing of the C++ cores and engine: apply one standard operator
mutation at a time to one function, rebuild the tests that include the file,
run them, and count the mutant killed (a test fails), survived (all pass),
timeout, or unviable (does not compile).

Operators: `<`<->`<=`, `>`<->`>=`, `==`<->`!=`, binary `+`<->`-`, `&&`<->`||`,
an integer constant n -> n+1 (0 <-> 1), and removing one expression
statement. Only operators written with blanks around them are mutated, so a
template's `<...>` is never touched.

The sources are exported from a commit (`git archive`, HEAD by default) into
a scratch directory and built there: the checkout and its build/ are never
modified, so other work in the same tree is unaffected. Mutants are sampled
with a fixed seed, in order, until the count or the time budget is spent.

  scripts/mutate-cpp.py                          the default files, 60 mutants, 25 min
  scripts/mutate-cpp.py --max 20 --minutes 10 click-elements/core/fifo.hh
  scripts/mutate-cpp.py --json build/mutants/cpp.json

Exit status 0 when it ran (survivors are a result, listed with their diff),
2 on a usage or build-setup error.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_FILES = [
    "click-elements/core/fifo.hh",
    "click-elements/core/fifo_buffer.hh",
    "click-elements/core/efd.hh",
    "click-elements/core/las_sorted_queue.hh",
    "click-elements/core/link.hh",
    "replay/engine/src/engine.cc",
]
TEST_TIMEOUT_S = 120
BUILD_TIMEOUT_S = 600

OPERATORS = [
    (" <= ", " < "),
    (" < ", " <= "),
    (" >= ", " > "),
    (" > ", " >= "),
    (" == ", " != "),
    (" != ", " == "),
    (" + ", " - "),
    (" - ", " + "),
    (" && ", " || "),
    (" || ", " && "),
]
CONTROL = re.compile(r"^\s*(if|for|while|switch|else|do|return|case|default|try|catch)\b")
SIGNATURE = re.compile(r"^\s*[\w:<>,&*~\s]*[\w~]+\s*\([^;]*\)\s*(const)?\s*(noexcept)?\s*(override)?\s*\{\s*$")
STATEMENT = re.compile(r"^\s*[\w.\->\[\]()]+\s*(\+\+|--|[-+*/|&]?=|\()[^;]*;\s*(//.*)?$")
INTEGER = re.compile(r"(?<![\w.])(\d+)(?![\w.])")


@dataclass
class Mutant:
    file: str
    line: int
    function: str
    original: str
    mutated: str
    outcome: str = ""
    seconds: float = 0.0


def functions(lines: list[str]) -> list[tuple[str, int, int]]:
    """(name, first body line, last body line) of each function defined in the file."""
    found = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if SIGNATURE.match(line) and not CONTROL.match(line) and "=" not in line.split("(")[0]:
            name = re.search(r"([\w~]+)\s*\(", line)[1]
            depth, j = 0, i
            while j < len(lines):
                depth += lines[j].count("{") - lines[j].count("}")
                if depth == 0:
                    break
                j += 1
            found.append((name, i + 1, j - 1))
            i = j
        i += 1
    return found


def code_part(line: str) -> str:
    """The line without its // comment and string literals (never mutated)."""
    return re.sub(r'"[^"]*"', lambda m: " " * len(m[0]), line.split("//")[0])


def mutants_of(path: str, lines: list[str]) -> list[Mutant]:
    out = []
    for name, first, last in functions(lines):
        for n in range(first, last + 1):
            line = lines[n]
            code = code_part(line)
            if code.lstrip().startswith(("#", "static_assert", "template")):
                continue
            for old, new in OPERATORS:
                for m in re.finditer(re.escape(old), code):
                    mutated = line[: m.start()] + new + line[m.end() :]
                    out.append(Mutant(path, n + 1, name, line.rstrip("\n"), mutated.rstrip("\n")))
            for m in INTEGER.finditer(code):
                value = int(m[1])
                repl = {0: "1", 1: "0"}.get(value, str(value + 1))
                mutated = line[: m.start()] + repl + line[m.end() :]
                out.append(Mutant(path, n + 1, name, line.rstrip("\n"), mutated.rstrip("\n")))
            if STATEMENT.match(code) and not CONTROL.match(code) and "return" not in code:
                indent = line[: len(line) - len(line.lstrip())]
                out.append(Mutant(path, n + 1, name, line.rstrip("\n"), indent + ";  // statement removed"))
    return out


def export(commit: str, dest: Path) -> None:
    archive = dest / "src.tar"
    subprocess.run(
        ["git", "archive", "--format=tar", "-o", str(archive), commit, "click-elements", "replay/engine"],
        cwd=ROOT,
        check=True,
    )
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    archive.unlink()


def includes(path: Path, search: list[Path], seen: set[Path]) -> set[Path]:
    """Every quoted #include reachable from `path`: beside the includer, else on `search`."""
    for name in re.findall(r'^\s*#include\s+"([^"]+)"', path.read_text(), re.M):
        found = [d / name for d in [path.parent, *search] if (d / name).is_file()]
        dep = found[0].resolve() if found else None
        if dep is not None and dep not in seen:
            seen.add(dep)
            includes(dep, search, seen)
    return seen


def tests_including(src: Path, part_tests: Path, rel: str) -> list[str]:
    """Test targets of a part whose source includes the mutated file, directly or not."""
    target = (src / rel).resolve()
    search = [src / "click-elements" / "core", src / "replay" / "engine" / "src"]
    return [t.stem for t in sorted(part_tests.glob("*_test.cc")) if target in includes(t, search, set())]


def configure(src: Path) -> dict[str, Path]:
    builds = {"cores": src / "build-cores", "engine": src / "build-engine"}
    common = ["-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release"]
    subprocess.run(
        ["cmake", "-S", str(src / "click-elements"), "-B", str(builds["cores"]), *common],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    pybind = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "python"), "-m", "pybind11", "--cmakedir"],
        text=True,
        capture_output=True,
        check=True,
    ).stdout.strip()
    subprocess.run(
        [
            "cmake",
            "-S",
            str(src / "replay" / "engine"),
            "-B",
            str(builds["engine"]),
            *common,
            f"-DPython_EXECUTABLE={ROOT / '.venv' / 'bin' / 'python'}",
            f"-Dpybind11_DIR={pybind}",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return builds


def part_of(rel: str) -> str:
    return "engine" if rel.startswith("replay/engine/") else "cores"


def targets_for(src: Path, rel: str) -> list[tuple[str, Path]]:
    """(build dir, test target) pairs that a change to `rel` must pass."""
    pairs = []
    cores_tests = tests_including(src, src / "click-elements" / "tests", rel) if part_of(rel) == "cores" else []
    pairs += [("cores", t) for t in cores_tests]
    # Every engine test links the cores: an engine file, or a core the engine uses.
    engine_tests = [t.stem for t in sorted((src / "replay" / "engine" / "tests").glob("*_test.cc"))]
    if part_of(rel) == "engine":
        pairs += [("engine", t) for t in engine_tests]
    return pairs


def build_and_test(builds: dict[str, Path], pairs, deadline: float) -> str:
    if not pairs:
        return "no test"
    for part in sorted({p for p, _ in pairs}):
        names = [t for p, t in pairs if p == part]
        proc = subprocess.run(
            ["nice", "ninja", "-C", str(builds[part]), *names],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=BUILD_TIMEOUT_S,
        )
        if proc.returncode != 0:
            return "unviable"
    for part, name in pairs:
        budget = max(5.0, min(TEST_TIMEOUT_S, deadline - time.monotonic()))
        try:
            proc = subprocess.run(
                ["nice", str(builds[part] / name), "--gtest_brief=1"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=budget,
                cwd=builds[part],
            )
        except subprocess.TimeoutExpired:
            return "timeout"
        if proc.returncode != 0:
            return "killed"
    return "survived"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", default=DEFAULT_FILES, help="files to mutate (repo-relative)")
    ap.add_argument("--max", type=int, default=60, help="mutants to run at most (default 60)")
    ap.add_argument("--minutes", type=float, default=25, help="time budget (default 25)")
    ap.add_argument("--seed", type=int, default=1, help="sampling seed (default 1)")
    ap.add_argument("--commit", default="HEAD", help="commit to export and mutate (default HEAD)")
    ap.add_argument("--json", type=Path, help="write every mutant and its outcome here")
    args = ap.parse_args(argv)

    commit = subprocess.run(
        ["git", "rev-parse", "--short", args.commit], cwd=ROOT, text=True, capture_output=True
    ).stdout.strip()
    if not commit:
        print(f"mutate-cpp: error: {args.commit} is not a commit", file=sys.stderr)
        return 2
    started = time.monotonic()
    deadline = started + args.minutes * 60
    with tempfile.TemporaryDirectory(prefix="mutate-cpp-") as scratch:
        src = Path(scratch)
        export(commit, src)
        candidates: list[Mutant] = []
        for rel in args.files:
            path = src / rel
            if not path.is_file():
                print(f"mutate-cpp: error: {rel} is not in {commit}", file=sys.stderr)
                return 2
            candidates += mutants_of(rel, path.read_text().splitlines(keepends=True))
        rng = random.Random(args.seed)
        rng.shuffle(candidates)
        print(
            f"mutate-cpp: {len(candidates)} candidate mutants in {len(args.files)} files at {commit}; "
            f"running at most {args.max} in {args.minutes:g} min",
            flush=True,
        )
        try:
            builds = configure(src)
            pairs_all = sorted({pair for rel in args.files for pair in targets_for(src, rel)})
            print(f"mutate-cpp: baseline build of {len(pairs_all)} test targets", flush=True)
            baseline = build_and_test(builds, pairs_all, deadline + 3600)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
            print(f"mutate-cpp: error: the unmutated sources do not build ({e})", file=sys.stderr)
            return 2
        if baseline != "survived":
            print(f"mutate-cpp: error: the unmutated tests do not pass ({baseline})", file=sys.stderr)
            return 2
        done: list[Mutant] = []
        for m in candidates[: args.max]:
            if time.monotonic() > deadline:
                break
            path = src / m.file
            text = path.read_text().splitlines(keepends=True)
            original = "".join(text)
            text[m.line - 1] = m.mutated + "\n"
            path.write_text("".join(text))
            t0 = time.monotonic()
            try:
                m.outcome = build_and_test(builds, targets_for(src, m.file), deadline + TEST_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                m.outcome = "timeout"
            finally:
                path.write_text(original)
                # The restored file must rebuild: its timestamp moves past the mutant's objects.
                os.utime(path)
            m.seconds = round(time.monotonic() - t0, 1)
            done.append(m)
            print(
                f"{m.outcome:<9} {m.file}:{m.line} in {m.function}(): {m.original.strip()}  ->  "
                f"{m.mutated.strip()}  ({m.seconds} s)",
                flush=True,
            )
    summary: dict[str, dict[str, int]] = {}
    for m in done:
        part = summary.setdefault(
            part_of(m.file), {"killed": 0, "survived": 0, "timeout": 0, "unviable": 0, "no test": 0}
        )
        part[m.outcome] += 1
    print(f"\nmutate-cpp at {commit}: {len(done)} mutants in {round((time.monotonic() - started) / 60, 1)} min")
    for part, counts in sorted(summary.items()):
        print(f"  {part:<7} " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps(
                {
                    "commit": commit,
                    "seed": args.seed,
                    "candidates": len(candidates),
                    "summary": summary,
                    "mutants": [asdict(m) for m in done],
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
