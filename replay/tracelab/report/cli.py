"""`tracelab report`: one self-contained HTML page (inline SVG figures, no external
resource) for analyzer profiles, replay runs, sweeps and fidelity comparisons.
Exit statuses (tracelab.errors): 3 an input it cannot read or recognise, 4 a
report it cannot write."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tracelab_models.outputs import OutputError, atomic_dir

from .. import __version__
from ..errors import INPUT, fail
from . import fidelity, profile, runs
from .html import Page, style

EPILOG = """inputs (any number, in order):
  a profile directory   (from `tracelab profile`: connections.parquet, summary.json, samples/, load.parquet)
  a replay run          (from `tracelab replay run`: metrics.json, optional packets.parquet)
  a sweep               (from `tracelab replay sweep`: sweep.json)
  a fidelity directory  (from `tracelab fidelity`: fidelity.json, original/, synthetic/)

The page (OUT/index.html) holds everything: figures are inline SVG with searchable
text, and it loads nothing from elsewhere, so it works offline. --png also writes each
figure as OUT/NAME.png (linked from its caption), for slides and documents.

example:
  tracelab report out/p out/run out/sweep out/fidelity -o out/report && xdg-open out/report/index.html"""


def build(inputs: list[Path], out: Path, title: str = "tracelab report", png: bool = False) -> tuple[Path, list[dict]]:
    """Render every input into out/index.html (and out/NAME.png per figure with png);
    returns the page and what each section showed (counts, for checks). `out`
    is replaced whole once the page is written (tracelab_models.outputs)."""
    with atomic_dir(out, "report", owns=lambda d: (d / "index.html").is_file()) as staged:
        page, shown = _render(inputs, Page(staged, title, png=png))
        written = page.write(f"{len(inputs)} input(s), {len(page.figures)} figure(s); tracelab {__version__}")
    return out / written.name, shown


def _render(inputs: list[Path], page: Page) -> tuple[Page, list[dict]]:
    shown = []
    with style():
        for i, path in enumerate(inputs):
            tag = f"s{i}"
            before = len(page.figures)
            if fidelity.is_fidelity(path):
                shown.append({"kind": "fidelity", **fidelity.render(page, path, tag)})
            elif profile.is_profile(path):
                shown.append({"kind": "profile", **profile.render(page, path, tag)})
            elif runs.is_sweep(path):
                shown.append({"kind": "sweep", **runs.render_sweep(page, path, tag)})
            elif runs.is_run(path):
                shown.append({"kind": "run", **runs.render_run(page, path, tag)})
            else:
                raise runs.ReportError(
                    f"{path}: not a profile (connections.parquet), a run (metrics.json), a sweep (sweep.json) "
                    "or a fidelity directory (fidelity.json)"
                )
            shown[-1]["figure_ids"] = page.figures[before:]
    return page, shown


def main(argv: list[str] | None = None) -> int:
    from tracelab_models.profile import ProfileError

    ap = argparse.ArgumentParser(
        prog="tracelab report", description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("inputs", nargs="+", type=Path, metavar="PROFILE_DIR|RUN_DIR|SWEEP_DIR|FIDELITY_DIR")
    ap.add_argument("-o", "--output", required=True, type=Path, help="report directory (index.html)")
    ap.add_argument("--title", default="tracelab report")
    ap.add_argument("--png", action="store_true", help="also write every figure as OUT/NAME.png")
    a = ap.parse_args(argv)
    try:
        path, shown = build(a.inputs, a.output, a.title, png=a.png)
    except (runs.ReportError, ProfileError) as e:
        return fail(INPUT, e)
    except OutputError as e:
        return fail(e.status, e)
    except OSError as e:  # reading an input: writes end as OutputError
        return fail(INPUT, f"cannot read {e.filename or 'an input'}: {e.strerror or e}")
    figures = sum(len(s["figure_ids"]) for s in shown)
    print(f"wrote {path} ({len(shown)} section(s), {figures} figure(s){', PNG files beside it' if a.png else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
