"""Runs Weka's J48 (from Maven Central) as the oracle for our C4.5.

The jars are fetched once per machine with the pom beside this file into Maven's
default local repository (~/.m2) and copied to a temporary directory per session.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

POM = Path(__file__).parent / "weka" / "pom.xml"


def weka_classpath(tmp_dir: Path) -> str:
    """Classpath with weka-stable and bounce, or pytest.skip with the reason."""
    for tool in ("java", "mvn"):
        if shutil.which(tool) is None:
            pytest.skip(f"SKIPPED ({tool} not on PATH: the Weka J48 oracle needs Java and Maven)")
    lib = tmp_dir / "weka-lib"
    proc = subprocess.run(
        [
            "mvn",
            "-q",
            "-B",
            "-f",
            str(POM),
            "dependency:copy-dependencies",
            "-DexcludeTransitive=true",
            f"-DoutputDirectory={lib}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    jars = sorted(lib.glob("*.jar"))
    if proc.returncode != 0 or len(jars) != 2:
        pytest.fail(f"mvn could not fetch Weka (exit {proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return ":".join(str(j) for j in jars)


def write_arff(path: Path, X: np.ndarray, y, feature_names, class_names) -> None:
    """ARFF with numeric attributes and a nominal class; NaN is written as '?'."""
    with open(path, "w") as f:
        f.write("@relation data\n")
        for n in feature_names:
            f.write(f"@attribute {n} numeric\n")
        f.write("@attribute class {" + ",".join(class_names) + "}\n@data\n")
        for row, label in zip(X, y, strict=True):
            vals = ["?" if np.isnan(v) else repr(float(v)) for v in row]
            f.write(",".join(vals) + f",{label}\n")


def run_j48(cp: str, train: Path, test: Path | None = None, extra=()) -> str:
    cmd = ["java", "-cp", cp, "weka.classifiers.trees.J48", "-t", str(train), *extra]
    if test is not None:
        cmd += ["-T", str(test)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"J48 failed: {proc.stderr[-2000:]}")
    return proc.stdout


def tree_text(output: str) -> str:
    """The tree body between the J48 header and 'Number of Leaves'."""
    m = re.search(r"J48 pruned tree\n-+\n\n?(.*?)\n\nNumber of Leaves", output, re.S)
    if m is None:
        raise ValueError("no J48 tree in output:\n" + output[:2000])
    return m.group(1).strip("\n")


def correct_on(output: str, section: str) -> int:
    """'Correctly Classified Instances' count of a section ('test data', 'Stratified')."""
    part = output.split(section, 1)[1]
    m = re.search(r"Correctly Classified Instances\s+(\d+)", part)
    return int(m.group(1))
