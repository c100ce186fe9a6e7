"""`tracelab report`: an HTML page with PNG plots for analyzer profiles, replay runs and sweeps."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import profile, runs
from .html import Page

EPILOG = """inputs (any number, in order):
  a profile directory   (from `tracelab profile`: connections.parquet, summary.json, samples/, load.parquet)
  a replay run          (from `tracelab replay run`: metrics.json, optional packets.parquet)
  a sweep               (from `tracelab replay sweep`: sweep.json)

example:
  tracelab report out/p out/run out/sweep -o out/report && xdg-open out/report/index.html"""


def build(inputs: list[Path], out: Path, title: str = "tracelab report") -> tuple[Path, list[dict]]:
    """Render every input into out/index.html (+ out/img/*.png); returns the page and
    what each section showed (counts, for checks)."""
    page = Page(out, title)
    shown = []
    for i, path in enumerate(inputs):
        tag = f"s{i}"
        if profile.is_profile(path):
            shown.append({"kind": "profile", **profile.render(page, path, tag)})
        elif runs.is_sweep(path):
            shown.append({"kind": "sweep", **runs.render_sweep(page, path, tag)})
        elif runs.is_run(path):
            shown.append({"kind": "run", **runs.render_run(page, path, tag)})
        else:
            raise runs.ReportError(
                f"{path}: not a profile (connections.parquet), a run (metrics.json) or a sweep (sweep.json)"
            )
    return page.write(), shown


def main(argv: list[str] | None = None) -> int:
    from tracelab_models.profile import ProfileError

    ap = argparse.ArgumentParser(
        prog="tracelab report", description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("inputs", nargs="+", type=Path, metavar="PROFILE_DIR|RUN_DIR|SWEEP_DIR")
    ap.add_argument("-o", "--output", required=True, type=Path, help="report directory (index.html, img/)")
    ap.add_argument("--title", default="tracelab report")
    a = ap.parse_args(argv)
    try:
        path, shown = build(a.inputs, a.output, a.title)
    except (runs.ReportError, ProfileError, OSError) as e:
        print(f"tracelab report: {e}", file=sys.stderr)
        return 2
    print(f"wrote {path} ({len(shown)} section(s))")
    return 0


if __name__ == "__main__":
    sys.exit(main())
