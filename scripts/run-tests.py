#!/usr/bin/env python3
"""Runs every test suite of tracelab and prints one closing line summed over
them: `N passed, N failed, N skipped`. Exit status 1 if anything failed or a
suite could not run.

Suites: cargo test (analyzer), ctest (click-elements, replay engine), pytest
(models, replay, end-to-end tests), the Click example runner (counted as
skipped, with its reason, when no Click installation is present), the ns-3
adapters (click-elements/ns3/run-tests.sh; skipped when not built), the bounded
fuzz run of the analyzer's decoder, readers and service parsers over their
checked-in corpus (analyzer/fuzz/run-ci.sh; skipped without the pinned nightly
and cargo-fuzz) and the lint gates (scripts/lint.sh: formatting, clippy, ruff,
import contracts, module cycles; one test per gate).

  scripts/run-tests.py            all suites
  scripts/run-tests.py rust cpp   only those (rust, cpp, python, click, ns3, fuzz, lint)
"""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build"


@dataclass
class Result:
    name: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    notes: list[str] = field(default_factory=list)


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    print(f"\n$ {' '.join(cmd)}", flush=True)
    return subprocess.run(cmd, cwd=ROOT, text=True, **kw)


def tee(cmd: list[str]) -> tuple[int, str]:
    """Runs cmd, streaming its output, and returns (status, output)."""
    print(f"\n$ {' '.join(cmd)}", flush=True)
    proc = subprocess.Popen(cmd, cwd=ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        sys.stdout.write(line)
        lines.append(line)
    return proc.wait(), "".join(lines)


def rust() -> Result:
    r = Result("cargo test")
    status, out = tee(
        [
            "cargo",
            "test",
            "--release",
            "--locked",
            "--manifest-path",
            "analyzer/Cargo.toml",
            "--workspace",
            "--no-fail-fast",
        ]
    )
    for m in re.finditer(r"test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored", out):
        r.passed += int(m[1])
        r.failed += int(m[2])
        r.skipped += int(m[3])
    if status != 0 and r.failed == 0:
        r.failed += 1
        r.notes.append(f"cargo test exited {status} (build failure?)")
    return r


def ctest_dir(name: str, build: Path) -> Result:
    r = Result(name)
    if not (build / "CTestTestfile.cmake").exists():
        r.failed += 1
        r.notes.append(f"{build} is not built: run scripts/setup.sh first")
        return r
    junit = build / "ctest-junit.xml"
    status = run(
        ["ctest", "--test-dir", str(build), "--output-on-failure", "-j2", "--output-junit", str(junit)]
    ).returncode
    if junit.exists():
        for case in ET.parse(junit).getroot().iter("testcase"):
            state = case.get("status", "run")
            if case.find("failure") is not None or state == "fail":
                r.failed += 1
            elif case.find("skipped") is not None or state in ("disabled", "notrun"):
                r.skipped += 1
            else:
                r.passed += 1
    if status != 0 and r.failed == 0:
        r.failed += 1
        r.notes.append(f"ctest exited {status}")
    return r


def cpp() -> list[Result]:
    results = [ctest_dir("ctest click-elements", BUILD / "click-elements")]
    if (ROOT / "replay" / "engine" / "CMakeLists.txt").exists():
        results.append(ctest_dir("ctest replay engine", BUILD / "engine"))
    return results


def python() -> list[Result]:
    """One pytest run per test folder: each folder imports its own helper
    modules (fixtures, reference models) from its own directory."""
    results = []
    for path in ("models/tests", "replay/tests", "tests"):
        if not (ROOT / path).is_dir():
            continue
        r = Result(f"pytest {path}")
        junit = BUILD / f"pytest-{path.replace('/', '-')}.xml"
        junit.parent.mkdir(parents=True, exist_ok=True)
        status = run(
            [
                str(ROOT / ".venv" / "bin" / "python"),
                "-m",
                "pytest",
                "-q",
                "-rs",
                "-p",
                "no:cacheprovider",
                f"--rootdir={ROOT / path}",
                f"--junitxml={junit}",
                path,
            ]
        ).returncode
        if junit.exists():
            for suite in ET.parse(junit).getroot().iter("testsuite"):
                tests = int(suite.get("tests", 0))
                failed = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
                skipped = int(suite.get("skipped", 0))
                r.failed += failed
                r.skipped += skipped
                r.passed += tests - failed - skipped
        if status not in (0, 5) and r.failed == 0:
            r.failed += 1
            r.notes.append(f"pytest exited {status}")
        results.append(r)
    return results


def pass_fail_script(name: str, script: Path) -> Result:
    """A script that prints `PASS x`, `FAIL x` and `SKIPPED (reason)` lines."""
    r = Result(name)
    if not script.exists():
        return r
    status, out = tee(["bash", str(script)])
    r.passed += len(re.findall(r"^PASS\b", out, re.M))
    r.failed += len(re.findall(r"^FAIL\b", out, re.M))
    skips = re.findall(r"^SKIPPED \((.*)\)", out, re.M)
    r.skipped += len(skips)
    r.notes.extend(f"SKIPPED ({s})" for s in skips)
    if status != 0 and r.failed == 0:
        r.failed += 1
        r.notes.append(f"{script.name} exited {status}")
    return r


def click() -> Result:
    return pass_fail_script("click examples", ROOT / "click-elements" / "click" / "run-examples.sh")


def lint() -> Result:
    """The style and structure gates (scripts/lint.sh), one test each."""
    return pass_fail_script("lint gates", ROOT / "scripts" / "lint.sh")


def ns3() -> Result:
    """The ns-3 queue discs: same decisions as the engine, the dumbbell with real TCP."""
    return pass_fail_script("ns-3 adapters", ROOT / "click-elements" / "ns3" / "run-tests.sh")


def fuzz() -> Result:
    """cargo-fuzz, each target for a bounded time over analyzer/fuzz/corpus/."""
    return pass_fail_script("fuzz targets", ROOT / "analyzer" / "fuzz" / "run-ci.sh")


SUITES = {"rust": rust, "cpp": cpp, "python": python, "click": click, "ns3": ns3, "fuzz": fuzz, "lint": lint}


def main(argv: list[str]) -> int:
    chosen = argv or list(SUITES)
    unknown = [s for s in chosen if s not in SUITES]
    if unknown:
        print(f"run-tests: unknown suite(s) {unknown}; choose from {list(SUITES)}", file=sys.stderr)
        return 2
    results: list[Result] = []
    for name in chosen:
        out = SUITES[name]()
        results.extend(out if isinstance(out, list) else [out])
    print("\n== test summary ==")
    for r in results:
        note = f"  [{'; '.join(r.notes)}]" if r.notes else ""
        print(f"{r.name:<22} {r.passed:>5} passed {r.failed:>4} failed {r.skipped:>4} skipped{note}")
    total = Result("total")
    for r in results:
        total.passed += r.passed
        total.failed += r.failed
        total.skipped += r.skipped
    print(f"{total.passed} passed, {total.failed} failed, {total.skipped} skipped")
    return 1 if total.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
