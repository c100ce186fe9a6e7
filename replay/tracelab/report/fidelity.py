"""Report section for a `tracelab fidelity` directory (docs/fidelity.md): the marginals
table of fidelity.json (original, synthetic, error, tolerance, verdict), its
divergences, and for each distribution the original's and the synthetic profile's
empirical CDF and CCDF on the same axes, from the same samples as the divergences
(tracelab_models.fidelity.distributions of DIR/original and DIR/synthetic)."""

from __future__ import annotations

import html
import warnings
from pathlib import Path

import numpy as np
from scipy import stats
from tracelab_models.fidelity import error_text, tolerance_text

from .html import PALETTE, Page, ccdf, cdf, fig
from .runs import read_document

# The original wide and solid under the synthetic thin and dashed: identical curves stay both visible.
ORIG_STYLE = {"color": PALETTE[7], "lw": 2.4, "alpha": 0.8, "ms": 6}
SYNTH_STYLE = {"color": PALETTE[3], "lw": 1.3, "ls": "--"}


def is_fidelity(path: Path) -> bool:
    return (path / "fidelity.json").is_file()


def render(page: Page, fid_dir: Path, tag: str) -> dict:
    d = read_document(fid_dir / "fidelity.json", "tracelab.fidelity")
    cfg = d.get("config") or {}
    page.h(2, f"Fidelity: {cfg.get('trace', fid_dir)}", nav=f"Fidelity {Path(str(cfg.get('trace', fid_dir))).name}")
    verdict = "pass" if not d.get("failed") else "fail"
    page.raw(
        f'<p><span class="badge {verdict}">{d.get("passed", 0)} passed, {d.get("failed", 0)} failed, '
        f"{d.get('not_applicable', 0)} n/a</span> Synthetic trace from the trace's derived model "
        f"(seed {html.escape(str(cfg.get('seed', '?')))}), both profiled the same way; "
        f"directory {html.escape(str(fid_dir))}. Tolerances and definitions: docs/fidelity.md.</p>"
    )
    marginals = d.get("marginals") or []
    page.table(
        ["marginal", "original", "synthetic", "error", "tolerance", "verdict"],
        [[m["name"], m["original"], m["synthetic"], _err(m), _tol(m), m["verdict"]] for m in marginals],
    )
    dists = d.get("distributions") or []
    shown = {"marginals": len(marginals), "passed": d.get("passed"), "failed": d.get("failed"), "figures": 0}
    if not dists:
        return shown
    page.h(3, "Distributions: original against synthetic")
    samples = _samples(fid_dir)
    ks = {}
    for row in dists:
        name = row["name"]
        if samples is None or name not in samples[0]:
            continue
        a, b = (np.asarray(s[name], dtype=float) for s in samples)
        a, b = a[np.isfinite(a)], b[np.isfinite(b)]
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # tiny samples: the p-value warns; only D is shown
            ks[name] = stats.ks_2samp(a, b, method="asymp").statistic if len(a) and len(b) else None
    page.table(
        ["distribution", "n original", "n synthetic", "JSD (base 2)", "EMD / range", "KS D (two-sample)"],
        [[r["name"], r["n_original"], r["n_synthetic"], r["jsd"], r["emd_norm"], ks.get(r["name"])] for r in dists],
    )
    if samples is None:
        page.p(f"{fid_dir}: no original/ and synthetic/ profiles beside fidelity.json: no curves.", note=True)
        return shown
    for row in dists:
        name = row["name"]
        if name not in samples[0]:
            page.p(f"{name}: not among the distributions this version computes; no curve.", note=True)
            continue
        if _overlay(page, name, samples[0][name], samples[1][name], row, f"{tag}_{_slug(name)}"):
            shown["figures"] += 1
    return shown


def _samples(fid_dir: Path):
    orig, synth = fid_dir / "original", fid_dir / "synthetic"
    if not ((orig / "connections.parquet").is_file() and (synth / "connections.parquet").is_file()):
        return None
    from tracelab_models.fidelity import ProfileView, distributions

    return distributions(ProfileView(orig)), distributions(ProfileView(synth))


def _overlay(page: Page, name: str, a, b, row: dict, fid: str) -> bool:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    f, (left, right) = fig(10, 3.5, ncols=2)
    drawn = cdf(left, a, "original", **ORIG_STYLE) | cdf(left, b, "synthetic", **SYNTH_STYLE)
    if not drawn:
        import matplotlib.pyplot as plt

        plt.close(f)
        page.p(f"{name}: no samples in either profile.", note=True)
        return False
    # Log x when the values are positive or zero (zeros then show as the CDF starting above 0)
    # and span more than a decade; linear with negative values.
    pos = np.concatenate([a[np.isfinite(a) & (a > 0)], b[np.isfinite(b) & (b > 0)]])
    negative = (np.isfinite(a) & (a < 0)).any() or (np.isfinite(b) & (b < 0)).any()
    if len(pos) and not negative and pos.max() / pos.min() > 10:
        left.set_xscale("log")
    tail = ccdf(right, a, "original", **ORIG_STYLE) | ccdf(right, b, "synthetic", **SYNTH_STYLE)
    unit = name[name.rfind("(") + 1 : -1] if name.endswith(")") else "bytes" if "bytes" in name else ""
    label = name if name.endswith(")") else f"{name} ({unit})" if unit else name
    for ax in (left, right):
        ax.set_xlabel(label)
        ax.legend(loc="lower right" if ax is left else "lower left")
    left.set_title("CDF")
    right.set_title("CCDF (log-log)" if tail else "CCDF: no positive value")
    jsd, emd = row.get("jsd"), row.get("emd_norm")
    stats_text = ", ".join(
        t for t in (f"JSD {jsd:.3g}" if jsd is not None else "", f"EMD/range {emd:.3g}" if emd is not None else "") if t
    )
    page.figure(
        f,
        fid,
        f"{name}: original (black, solid) and synthetic (vermillion, dashed) on the same axes; CDF (left) and CCDF "
        f"(right); shaded: 95 % DKW confidence bands{'; ' + stats_text if stats_text else ''}.",
        wide=True,
    )
    return True


def _slug(name: str) -> str:
    return "fid_" + "".join(c if c.isalnum() else "_" for c in name.lower()).strip("_")


def _err(m: dict) -> str:
    return error_text(m.get("error"), m.get("unit")) or "–"


def _tol(m: dict) -> str:
    return tolerance_text(m.get("tolerance"), m.get("unit")) or "–"
