"""What the end-to-end tests share: running `tracelab` as a user types it,
and building the Rust programs some tests need."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# The replay link of the end-to-end tests and baselines: 10 Gb/s, the trace
# scaled to 90 % load.
LINK_10G_LOAD_90 = ("--rate", "10G", "--load", "0.9")


def run_tracelab(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """`tracelab ARGS...` in `cwd`, its output captured."""
    return subprocess.run([sys.executable, "-m", "tracelab.cli", *args], cwd=cwd, capture_output=True, text=True)


def tracelab_ok(*args: str, cwd: Path = ROOT) -> str:
    """`tracelab ARGS...`, which must succeed; its stdout."""
    run = run_tracelab(*args, cwd=cwd)
    assert run.returncode == 0, f"tracelab {' '.join(args)} exited {run.returncode}\n{run.stdout}\n{run.stderr}"
    return run.stdout


def cargo_build(manifest: Path, *extra: str) -> None:
    """A release build of the crate or workspace at `manifest` (cargo skips it
    when nothing changed)."""
    cmd = ["cargo", "build", "--release", "--locked", "--quiet", "--manifest-path", str(manifest), *extra]
    subprocess.run(cmd, check=True)


TCPMIX = ROOT / "build" / "generate" / "target" / "release" / "tcpmix"


def tcpmix(path: Path, packets: int, seed: int) -> Path:
    """A generated enterprise-edge trace (datasets/generate) written to `path`;
    the generator is built first if it is not."""
    if not TCPMIX.exists():
        cargo_build(
            ROOT / "datasets" / "generate" / "Cargo.toml", "--target-dir", str(ROOT / "build" / "generate" / "target")
        )
    subprocess.run(
        [str(TCPMIX), "--packets", str(packets), "--seed", str(seed), str(path)], check=True, capture_output=True
    )
    return path
