"""Writing TRex profile files from plans, and running TRex-side scripts.

A profile is the template file (stl_template.py / astf_template.py) with its
``PLAN = None`` line replaced by the plan as a Python literal, plus the plan as JSON
beside it (``NAME.plan.json``) for readers that do not run Python (run_remote, reports).

The TRex client library bundles its own scapy, yaml and zmq and replaces modules of
those names in the process that imports it, so everything that needs it runs in a
separate interpreter: the virtualenv made by replay/trex-env/setup.sh.
"""

from __future__ import annotations

import json
import os
import pprint
import re
import subprocess
from importlib import resources
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
TEMPLATES = {"stl": "stl_template.py", "astf": "astf_template.py"}
_PLAN_LINE = "PLAN = None  # replaced by the generator with the plan (a Python literal)\n"
# TRex imports a profile by its file name up to the first dot.
_MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\.py")


class TrexUnavailable(RuntimeError):
    """No interpreter with the TRex client library (the message says how to make one)."""


def write_profile(plan: dict, path) -> Path:
    path = Path(path)
    if not _MODULE_NAME.fullmatch(path.name):
        raise ValueError(
            f"{path}: TRex imports a profile as a module: the name must be a Python "
            "identifier ending in .py (letters, digits, underscores), e.g. lab_stl.py"
        )
    text = resources.files(__package__).joinpath(TEMPLATES[plan["kind"]]).read_text()
    if text.count(_PLAN_LINE) != 1:
        raise RuntimeError(f"template {TEMPLATES[plan['kind']]} lost its PLAN line")
    literal = pprint.pformat(plan, sort_dicts=False, width=110)
    text = text.replace(_PLAN_LINE, f"PLAN = {literal}\n", 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    plan_json(path).write_text(json.dumps(plan, indent=2) + "\n")
    return path


def plan_json(profile_path) -> Path:
    p = Path(profile_path)
    return p.with_name(p.stem + ".plan.json")


def trex_python() -> Path:
    """$TRACELAB_TREX_PYTHON, else build/trex-venv/bin/python of this checkout."""
    explicit = os.environ.get("TRACELAB_TREX_PYTHON")
    candidate = Path(explicit) if explicit else REPO_ROOT / "build" / "trex-venv" / "bin" / "python"
    if not candidate.is_file():
        raise TrexUnavailable(
            f"no TRex client interpreter at {candidate}: run replay/trex-env/setup.sh "
            "(or set TRACELAB_TREX_PYTHON to a Python with lbr-trex-client)"
        )
    return candidate


def run_trex_script(script: str, args: list[str], timeout: float = 300) -> subprocess.CompletedProcess:
    """Run one of this package's TRex-side scripts (check_profile.py, run_remote.py)."""
    path = resources.files(__package__).joinpath(script)
    return subprocess.run([str(trex_python()), str(path), *args], capture_output=True, text=True, timeout=timeout)


def check_profile(profile, kind: str, tunables: list[str] | None = None) -> dict:
    """Load ``profile`` with the real TRex client and return what check_profile.py reports
    (the profile's JSON as TRex serialises it, and for STL the from_json round trip)."""
    args = [str(profile), "--kind", kind]
    # "--tunable=VALUE": the values themselves start with "--".
    args += [f"--tunable={t}" for t in tunables or []]
    done = run_trex_script("check_profile.py", args)
    if done.returncode != 0:
        raise RuntimeError(f"TRex could not load {profile}:\n{done.stderr.strip() or done.stdout.strip()}")
    return json.loads(done.stdout)
