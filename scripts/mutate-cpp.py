#!/usr/bin/env python3
"""Mutation testing of the C++ cores and engine: apply one standard operator
mutation at a time to one function, rebuild the tests that include the file,
run them, and count the mutant killed (a test fails), survived (all pass),
timeout, or unviable (does not compile).

Operators: `<`<->`<=`, `>`<->`>=`, `==`<->`!=`, binary `+`<->`-`, `&&`<->`||`,
an integer constant n -> n+1 (0 <-> 1), and removing one expression
statement. Only operators written with blanks around them are mutated, so a
template's `<...>` is never touched. Each mutant has an id, file:line:n (its
n-th mutation of that line), stable while the file is unchanged.

The sources are exported from a commit (`git archive`, HEAD by default) into
a scratch directory and built there: the checkout and its build/ are never
modified, so other work in the same tree is unaffected. Mutants are sampled
with a fixed seed, in order, until the count or the time budget is spent.

Speed: the scratch tree is built once at -O1 (tests run in well under a
second there; compiling is the cost), and each mutant rebuilds only the
mutated translation unit and the test binaries of its file, one binary at a
time in the order most likely to kill it, stopping at the first that fails:
a core's own test (fifo.hh -> fifo_test) first, then the other tests that
include it; for an engine source, engine_test, the other engine tests, then
(only if those pass) the pybind11 module relinked and the Python tests that
drive it (replay/tests: golden replays, spec grammar, model sources,
table_seed). A survivor has passed every test of its file. --workdir keeps
the scratch tree and its builds between runs, so a re-run (--only) rebuilds
only what changed.

  scripts/mutate-cpp.py                          the default files, 60 mutants, 25 min
  scripts/mutate-cpp.py --max 20 --minutes 10 click-elements/core/fifo.hh
  scripts/mutate-cpp.py --json build/mutants/cpp.json --workdir build/mutants/cpp-work
  scripts/mutate-cpp.py --only click-elements/core/efd.hh:122:0 --workdir build/mutants/cpp-work

Builds and tests run at the script's own priority: start it under `nice`
(as `make mutants` does), not nice inside nice, which starves it on a busy
machine.

Exit status 0 when it ran (survivors are a result, listed with their diff),
2 on a usage or build-setup error.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = ROOT / ".venv" / "bin" / "python"
DEFAULT_FILES = [
    "click-elements/core/fifo.hh",
    "click-elements/core/fifo_buffer.hh",
    "click-elements/core/efd.hh",
    "click-elements/core/las_sorted_queue.hh",
    "click-elements/core/link.hh",
    "replay/engine/src/engine.cc",
]
# What the scratch tree needs: the C++ parts, and for the engine's Python
# tests the packages they import (tracelab, tracelab_models; tracelab reads
# its version from analyzer/Cargo.toml) and the tests.
EXPORTED = [
    "click-elements",
    "replay/engine",
    "replay/tracelab",
    "replay/tests",
    "models/tracelab_models",
    "analyzer/Cargo.toml",
]
# The Python tests of the engine: each drives the pybind11 module on real or
# built traces against an independent expectation. Not test_engine_flood.py:
# a CPU-time ratio, meaningless at -O1 on a shared machine.
ENGINE_PYTESTS = [
    "replay/tests/test_golden.py",
    "replay/tests/test_spec_grammar.py",
    "replay/tests/test_model_source.py",
    "replay/tests/test_engine_table_seed.py",
]
PYTEST_TARGET = "pytest"
# Compiling is the cost of a mutant, and the optimiser most of it: CPU
# seconds to compile engine.cc at -O3 / -O1 / -O0: 36 / 31 / 2.9, and
# fifo_test.cc 4.3 / 2.0 / 1.8. The cores' tests build at -O1 (some run
# seconds of simulated traffic), the engine at -O0. NDEBUG as in the
# release build, so the code under test decides the same things.
OPT_FLAGS = {"cores": "-O1 -DNDEBUG", "engine": "-O0 -DNDEBUG"}
BUILD_TIMEOUT_S = 900
# A test may take this many times its unmutated duration (plus a margin for
# the load) before its mutant counts as a timeout: mutants that loop forever.
TIMEOUT_FACTOR = 5
TIMEOUT_MARGIN_S = 20

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
SIGNATURE = re.compile(
    r"^\s*(\[\[[\w:]+\]\]\s*)*[\w:<>,&*~\s]*[\w~]+\s*\([^;]*\)\s*(const)?\s*(noexcept)?\s*(override)?\s*\{\s*$"
)
STATEMENT = re.compile(r"^\s*[\w.\->\[\]()]+\s*(\+\+|--|[-+*/|&]?=|\()[^;]*;\s*(//.*)?$")
INTEGER = re.compile(r"(?<![\w.])(\d+)(?![\w.])")


class SetupError(Exception):
    """The unmutated sources do not build or their tests do not pass."""


@dataclass
class Mutant:
    id: str
    file: str
    line: int
    function: str
    original: str
    mutated: str
    outcome: str = ""
    seconds: float = 0.0
    decided_by: str = ""


def functions(lines: list[str]) -> list[tuple[str, int, int]]:
    """(name, first body line, last body line) of each function defined in the file."""
    found = []
    i = 0
    while i < len(lines):
        line = lines[i]
        head = re.sub(r"\[\[[\w:]+\]\]", "", line)
        if SIGNATURE.match(line) and not CONTROL.match(head) and "=" not in head.split("(")[0]:
            name = re.search(r"([\w~]+)\s*\(", head)[1]
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
            variants = []
            for old, new in OPERATORS:
                for m in re.finditer(re.escape(old), code):
                    variants.append(line[: m.start()] + new + line[m.end() :])
            for m in INTEGER.finditer(code):
                value = int(m[1])
                repl = {0: "1", 1: "0"}.get(value, str(value + 1))
                variants.append(line[: m.start()] + repl + line[m.end() :])
            if STATEMENT.match(code) and not CONTROL.match(code) and "return" not in code:
                indent = line[: len(line) - len(line.lstrip())]
                variants.append(indent + ";  // statement removed")
            for k, mutated in enumerate(variants):
                out.append(Mutant(f"{path}:{n + 1}:{k}", path, n + 1, name, line.rstrip("\n"), mutated.rstrip("\n")))
    return out


def export(commit: str, dest: Path) -> None:
    """The commit's sources into `dest`. A file whose content is unchanged
    keeps its timestamp, so a kept work directory rebuilds only what differs."""
    with tempfile.TemporaryDirectory(prefix="export-", dir=dest.parent) as tmp:
        archive = Path(tmp) / "src.tar"
        subprocess.run(["git", "archive", "--format=tar", "-o", str(archive), commit, *EXPORTED], cwd=ROOT, check=True)
        fresh = Path(tmp) / "src"
        with tarfile.open(archive) as tar:
            tar.extractall(fresh, filter="data")
        wanted = set()
        for f in fresh.rglob("*"):
            if not f.is_file():
                continue
            rel = f.relative_to(fresh)
            wanted.add(rel)
            old = dest / rel
            if not (old.is_file() and old.read_bytes() == f.read_bytes()):
                old.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f, old)
        for top in EXPORTED:
            for f in (dest / top).rglob("*") if (dest / top).is_dir() else []:
                if f.is_file() and f.relative_to(dest) not in wanted:
                    f.unlink()
    # The tests read the public traces of the repository and run its
    # `tracelab` command (which imports the scratch packages through
    # PYTHONPATH): links to the checkout's, read only.
    for name in ("datasets", ".venv"):
        link = dest / name
        if not link.exists():
            link.symlink_to(ROOT / name)


def includes(path: Path, search: list[Path], seen: set[Path]) -> set[Path]:
    """Every quoted #include reachable from `path`: beside the includer, else on `search`."""
    for name in re.findall(r'^\s*#include\s+"([^"]+)"', path.read_text(), re.M):
        found = [d / name for d in [path.parent, *search] if (d / name).is_file()]
        dep = found[0].resolve() if found else None
        if dep is not None and dep not in seen:
            seen.add(dep)
            includes(dep, search, seen)
    return seen


def part_of(rel: str) -> str:
    return "engine" if rel.startswith("replay/engine/") else "cores"


def targets_for(src: Path, rel: str, python: bool) -> list[tuple[str, str]]:
    """(build, target) pairs that a change to `rel` must pass, most likely killer first:
    the file's own test, the tests that include it directly, then through other headers."""
    target = (src / rel).resolve()
    stem = Path(rel).stem
    if part_of(rel) == "engine":
        tests = sorted((src / "replay" / "engine" / "tests").glob("*_test.cc"))
        names = sorted((t.stem for t in tests), key=lambda n: (n != f"{stem}_test", n))
        return [("engine", n) for n in names] + ([("engine", PYTEST_TARGET)] if python else [])
    search = [src / "click-elements" / "core"]
    ranked = []
    for t in sorted((src / "click-elements" / "tests").glob("*_test.cc")):
        reach = includes(t, search, set())
        if target not in reach:
            continue
        direct = any(
            (d / name).resolve() == target
            for name in re.findall(r'^\s*#include\s+"([^"]+)"', t.read_text(), re.M)
            for d in [t.parent, *search]
        )
        ranked.append(((t.stem != f"{stem}_test", not direct, t.stem), t.stem))
    return [("cores", name) for _, name in sorted(ranked)]


def configure(src: Path, work: Path, python: bool) -> dict[str, Path]:
    builds = {"cores": work / "build-cores", "engine": work / "build-engine"}
    common = ["-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release"]
    cores = ["cmake", "-S", str(src / "click-elements"), "-B", str(builds["cores"]), *common]
    cores.append(f"-DCMAKE_CXX_FLAGS_RELEASE={OPT_FLAGS['cores']}")
    engine = ["cmake", "-S", str(src / "replay" / "engine"), "-B", str(builds["engine"]), *common]
    engine.append(f"-DCMAKE_CXX_FLAGS_RELEASE={OPT_FLAGS['engine']}")
    if python:
        pybind = subprocess.run(
            [str(PYTHON), "-m", "pybind11", "--cmakedir"], text=True, capture_output=True, check=True
        ).stdout.strip()
        # Without link-time optimisation, which pybind11 adds to a release
        # module: it would recompile the whole module at every link.
        engine += [
            f"-DPython_EXECUTABLE={PYTHON}",
            f"-Dpybind11_DIR={pybind}",
            "-DTRACELAB_ENGINE_PYTHON=ON",
            "-DCMAKE_INTERPROCEDURAL_OPTIMIZATION=OFF",
        ]
    else:
        engine += ["-DTRACELAB_ENGINE_PYTHON=OFF"]
    for cmd in (cores, engine):
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return builds


class Runner:
    """Builds and runs one (build, target) pair at a time in the scratch tree."""

    def __init__(self, src: Path, builds: dict[str, Path]):
        self.src = src
        self.builds = builds
        self.baseline_s: dict[tuple[str, str], float] = {}

    def build(self, part: str, target: str) -> bool:
        name = "tracelab_engine" if target == PYTEST_TARGET else target
        proc = subprocess.run(
            ["ninja", "-C", str(self.builds[part]), name],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=BUILD_TIMEOUT_S,
        )
        return proc.returncode == 0

    def command(self, part: str, target: str) -> tuple[list[str], dict[str, str] | None]:
        if target != PYTEST_TARGET:
            return [str(self.builds[part] / target), "--gtest_brief=1"], None
        env = dict(os.environ)
        # The scratch module and packages before the venv's installed ones.
        env["PYTHONPATH"] = os.pathsep.join(
            str(p) for p in [self.builds["engine"], self.src / "replay", self.src / "models"]
        )
        tests = [str(self.src / t) for t in ENGINE_PYTESTS]
        return [str(PYTHON), "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests], env

    def run(self, part: str, target: str, timeout: float) -> str:
        cmd, env = self.command(part, target)
        try:
            proc = subprocess.run(
                cmd,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=timeout,
                cwd=self.builds[part] if env is None else self.src,
                env=env,
            )
        except subprocess.TimeoutExpired:
            return "timeout"
        return "killed" if proc.returncode != 0 else "survived"

    def baseline(self, pairs: list[tuple[str, str]]) -> None:
        """Build every pair once and time its tests on the unmutated sources."""
        for part in sorted({p for p, _ in pairs}):
            names = sorted({"tracelab_engine" if t == PYTEST_TARGET else t for p, t in pairs if p == part})
            proc = subprocess.run(
                ["ninja", "-C", str(self.builds[part]), *names],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                timeout=BUILD_TIMEOUT_S * 4,
            )
            if proc.returncode != 0:
                raise SetupError(f"the unmutated {part} does not build: {proc.stderr.strip()[-500:]}")
        if any(t == PYTEST_TARGET for _, t in pairs):
            _, env = self.command("engine", PYTEST_TARGET)
            proc = subprocess.run(
                [
                    str(PYTHON),
                    "-c",
                    "import tracelab, tracelab_engine; print(tracelab_engine.__file__, tracelab.__file__)",
                ],
                env=env,
                capture_output=True,
                text=True,
            )
            where = proc.stdout.split()
            if len(where) != 2 or not all(Path(w).resolve().is_relative_to(self.src.parent) for w in where):
                detail = where or proc.stderr.strip().splitlines()[-1:]
                raise SetupError(f"the Python tests would not use the scratch module and package ({detail})")
        for part, target in pairs:
            t0 = time.monotonic()
            outcome = self.run(part, target, BUILD_TIMEOUT_S)
            if outcome != "survived":
                raise SetupError(f"the unmutated {target} does not pass ({outcome})")
            self.baseline_s[(part, target)] = time.monotonic() - t0

    def judge(self, pairs: list[tuple[str, str]]) -> tuple[str, str]:
        """(outcome, the target that decided it) for the mutant now in the tree."""
        if not pairs:
            return "no test", ""
        for part, target in pairs:
            if not self.build(part, target):
                return "unviable", target
            limit = TIMEOUT_FACTOR * self.baseline_s[(part, target)] + TIMEOUT_MARGIN_S
            outcome = self.run(part, target, limit)
            if outcome != "survived":
                return outcome, target
        return "survived", ""


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", default=DEFAULT_FILES, help="files to mutate (repo-relative)")
    ap.add_argument("--max", type=int, default=60, help="mutants to run at most (default 60)")
    ap.add_argument("--minutes", type=float, default=25, help="time budget (default 25)")
    ap.add_argument("--seed", type=int, default=1, help="sampling seed (default 1)")
    ap.add_argument("--commit", default="HEAD", help="commit to export and mutate (default HEAD)")
    ap.add_argument("--json", type=Path, help="write every mutant and its outcome here")
    ap.add_argument(
        "--only", action="append", default=[], metavar="ID", help="run this mutant (file:line:n); repeatable"
    )
    ap.add_argument("--workdir", type=Path, help="keep the scratch tree and builds here (default: a temporary one)")
    ap.add_argument("--no-python", action="store_true", help="engine files: C++ tests only")
    ap.add_argument("--list", action="store_true", help="list the candidates (id and diff) and exit")
    args = ap.parse_args(argv)

    commit = subprocess.run(
        ["git", "rev-parse", "--short", args.commit], cwd=ROOT, text=True, capture_output=True
    ).stdout.strip()
    if not commit:
        print(f"mutate-cpp: error: {args.commit} is not a commit", file=sys.stderr)
        return 2
    if args.only:
        args.files = sorted({o.rsplit(":", 2)[0] for o in args.only})
    started = time.monotonic()
    deadline = started + args.minutes * 60
    if args.workdir:
        work = args.workdir.resolve()
        work.mkdir(parents=True, exist_ok=True)
        scratch = None
    else:
        scratch = tempfile.TemporaryDirectory(prefix="mutate-cpp-")
        work = Path(scratch.name)
    src = work / "src"
    src.mkdir(exist_ok=True)
    try:
        export(commit, src)
        candidates: list[Mutant] = []
        for rel in args.files:
            path = src / rel
            if not path.is_file():
                print(f"mutate-cpp: error: {rel} is not in {commit}", file=sys.stderr)
                return 2
            candidates += mutants_of(rel, path.read_text().splitlines(keepends=True))
        if args.list:
            for m in candidates:
                print(f"{m.id} in {m.function}(): {m.original.strip()}  ->  {m.mutated.strip()}")
            return 0
        if args.only:
            by_id = {m.id: m for m in candidates}
            missing = [o for o in args.only if o not in by_id]
            if missing:
                print(f"mutate-cpp: error: no mutant {', '.join(missing)} at {commit}", file=sys.stderr)
                return 2
            chosen = [by_id[o] for o in args.only]
        else:
            rng = random.Random(args.seed)
            rng.shuffle(candidates)
            chosen = candidates[: args.max]
        python = not args.no_python and any(part_of(f) == "engine" for f in args.files)
        print(
            f"mutate-cpp: {len(candidates)} candidate mutants in {len(args.files)} files at {commit}; "
            f"running {len(chosen)} at most in {args.minutes:g} min",
            flush=True,
        )
        try:
            builds = configure(src, work, python)
            runner = Runner(src, builds)
            pairs_all = sorted({pair for rel in args.files for pair in targets_for(src, rel, python)})
            t0 = time.monotonic()
            print(f"mutate-cpp: baseline build and run of {len(pairs_all)} test targets", flush=True)
            runner.baseline(pairs_all)
            print(f"mutate-cpp: baseline done in {round(time.monotonic() - t0)} s", flush=True)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, SetupError) as e:
            print(f"mutate-cpp: error: {e}", file=sys.stderr)
            return 2
        done: list[Mutant] = []
        for m in chosen:
            if time.monotonic() > deadline:
                break
            path = src / m.file
            original = path.read_text()
            text = original.splitlines(keepends=True)
            text[m.line - 1] = m.mutated + "\n"
            path.write_text("".join(text))
            t0 = time.monotonic()
            try:
                m.outcome, m.decided_by = runner.judge(targets_for(src, m.file, python))
            except subprocess.TimeoutExpired:
                m.outcome = "timeout"
            finally:
                path.write_text(original)
                # The restored file must rebuild: its timestamp moves past the mutant's objects.
                os.utime(path)
            m.seconds = round(time.monotonic() - t0, 1)
            done.append(m)
            print(
                f"{m.outcome:<9} {m.id} in {m.function}(): {m.original.strip()}  ->  "
                f"{m.mutated.strip()}  ({m.seconds} s{', ' + m.decided_by if m.decided_by else ''})",
                flush=True,
            )
    finally:
        if scratch is not None:
            scratch.cleanup()
    summary: dict[str, dict[str, int]] = {}
    for m in done:
        part = summary.setdefault(
            part_of(m.file), {"killed": 0, "survived": 0, "timeout": 0, "unviable": 0, "no test": 0}
        )
        part[m.outcome] += 1
    minutes = round((time.monotonic() - started) / 60, 1)
    print(f"\nmutate-cpp at {commit}: {len(done)} mutants in {minutes} min")
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
                    "minutes": minutes,
                    "summary": summary,
                    "mutants": [asdict(m) for m in done],
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
