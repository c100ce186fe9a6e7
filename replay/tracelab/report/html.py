"""A small HTML page builder and the plotting conventions shared by every section.

The page is one self-contained file: figures are inline SVG (vector, with their text
kept as <text> so it can be searched and copied), the style sheet is inline, there is
no script and nothing is loaded from anywhere, so the report works offline and can be
mailed as is. On request (``png=True``, `--png`) every figure is also written as
NAME.png beside index.html and linked from its caption.

Conventions: heavy-tailed variables on log-log CCDF axes (P(X ≥ x)), other
distributions as CDFs, both with a 95 % Dvoretzky–Kiefer–Wolfowitz band (the
distribution-free confidence band of an empirical CDF: ±sqrt(ln(2/α)/2n)); every axis
has a label with its unit, every figure with more than one curve a legend.
"""

from __future__ import annotations

import html
import io
import math
import re
from contextlib import contextmanager
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: never needs a display
import matplotlib.pyplot as plt
import numpy as np
from cycler import cycler

# Okabe–Ito: a palette that stays distinct for the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")

RC = {
    "svg.fonttype": "none",  # text stays text: searchable, and sharp at any zoom
    "svg.hashsalt": "tracelab",  # deterministic ids (set per figure when saving)
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica", "sans-serif"],
    "font.size": 9,
    "axes.titlesize": 9.5,
    "axes.labelsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.prop_cycle": cycler(color=PALETTE),
    "grid.alpha": 0.35,
    "grid.linewidth": 0.5,
    "legend.fontsize": 7.5,
    "legend.frameon": False,
    "lines.linewidth": 1.4,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "figure.dpi": 100,
    "savefig.dpi": 150,
}

DKW_ALPHA = 0.05
MAX_POINTS = 1200  # per curve: keeps the SVG small; the tail is always kept point by point

STYLE = """
:root { --fg: #1d2327; --muted: #5f6b73; --line: #d5dade; --bg-alt: #f5f7f8; --accent: #0072B2; }
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; margin: 0;
       color: var(--fg); line-height: 1.45; background: #fff; }
header { background: #263238; color: #fff; padding: 1.2em 2em 0.8em; }
header h1 { margin: 0 0 0.2em; font-size: 1.6em; font-weight: 600; }
header p { margin: 0; color: #cfd8dc; font-size: 0.9em; }
nav { display: flex; flex-wrap: wrap; gap: 0.3em 1.4em; padding: 0.6em 2em; border-bottom: 1px solid var(--line);
      background: var(--bg-alt); font-size: 0.9em; }
nav a { color: var(--accent); text-decoration: none; white-space: nowrap; }
main { max-width: 1280px; margin: 0 auto; padding: 0 2em 3em; }
section { margin-top: 2.2em; }
h2 { font-size: 1.3em; margin: 0 0 0.4em; padding-bottom: 0.2em; border-bottom: 2px solid var(--fg); }
h3 { font-size: 1.05em; margin: 1.6em 0 0.4em; color: #37474f; }
p { margin: 0.4em 0; } p.note { color: var(--muted); font-size: 0.88em; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.85em; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid var(--line); padding: 0.3em 0.6em; text-align: right; }
td { white-space: nowrap; }
th { vertical-align: bottom; background: var(--bg-alt); font-weight: 600; border-bottom: 2px solid #b0bec5; }
tbody tr:nth-child(even) { background: #fafbfc; }
td:first-child, th:first-child { text-align: left; }
td.v-pass { color: #1b5e20; background: #e8f5e9; font-weight: 600; }
td.v-fail { color: #b71c1c; background: #ffebee; font-weight: 600; }
td.v-n\\/a { color: var(--muted); }
.badge { display: inline-block; padding: 0.05em 0.6em; border-radius: 1em; font-size: 0.85em; font-weight: 600; }
.badge.pass { background: #e8f5e9; color: #1b5e20; } .badge.fail { background: #ffebee; color: #b71c1c; }
.figs { display: grid; grid-template-columns: repeat(auto-fill, minmax(470px, 1fr)); gap: 1.2em 1.6em;
        margin: 0.8em 0; }
figure { margin: 0; min-width: 0; }
figure.wide { grid-column: 1 / -1; }
figure svg { display: block; width: 100%; height: auto; max-width: 640px; }
figure.wide svg { max-width: 1000px; }
figcaption { font-size: 0.82em; color: var(--muted); margin-top: 0.2em; max-width: 640px; }
figure.wide figcaption { max-width: 1000px; }
figcaption a { color: var(--accent); }
"""


@contextmanager
def style():
    """The report's matplotlib settings (everything drawn for the page runs inside)."""
    with matplotlib.rc_context(RC):
        yield


class Page:
    def __init__(self, out_dir: Path, title: str, png: bool = False):
        self.out = Path(out_dir)
        self.out.mkdir(parents=True, exist_ok=True)
        self.title = title
        self.png = png
        self.parts: list[tuple[str, str]] = []  # (kind, html); kind "figure" parts are gridded
        self.figures: list[str] = []  # figure ids, in page order
        self.sections: list[tuple[str, str]] = []  # (id, title) of the h2 sections, for the navigation

    def h(self, level: int, text: str, nav: str | None = None) -> None:
        """A heading; level 2 starts a section, listed in the navigation bar as ``nav``
        (default: the text)."""
        if level == 2:
            sid = f"sec{len(self.sections) + 1}"
            self.sections.append((sid, nav or text))
            self.parts.append(("section", sid))
            self.parts.append(("html", f'<h2 id="{sid}">{html.escape(text)}</h2>'))
        else:
            self.parts.append(("html", f"<h{level}>{html.escape(text)}</h{level}>"))

    def p(self, text: str, note: bool = False) -> None:
        attr = ' class="note"' if note else ""
        self.parts.append(("html", f"<p{attr}>{html.escape(text)}</p>"))

    def raw(self, markup: str) -> None:
        """Markup the caller has escaped already."""
        self.parts.append(("html", markup))

    def table(self, header: list[str], rows: list[list]) -> None:
        head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
        body = "".join("<tr>" + "".join(_td(v) for v in r) + "</tr>" for r in rows)
        self.parts.append(
            ("html", f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>')
        )

    def figure(self, fig, name: str, caption: str, wide: bool = False) -> str:
        """Inline ``fig`` as SVG with its caption (and NAME.png with --png); returns its id."""
        fid = self._fresh(name)
        with style():
            tidy_log_axes(fig)
            fig.tight_layout()  # keeps axis labels inside the figure
            svg = svg_markup(fig, fid, caption)
            if self.png:
                fig.savefig(self.out / f"{fid}.png")
        plt.close(fig)
        link = f' <a href="{fid}.png">PNG</a>' if self.png else ""
        cls = ' class="wide"' if wide else ""
        self.parts.append(
            ("figure", f'<figure id="{fid}"{cls}>{svg}<figcaption>{html.escape(caption)}{link}</figcaption></figure>')
        )
        return fid

    def _fresh(self, name: str) -> str:
        stem = re.sub(r"[^A-Za-z0-9_-]+", "_", name)
        fid, n = stem, 1
        while fid in self.figures:
            n += 1
            fid = f"{stem}_{n}"
        self.figures.append(fid)
        return fid

    def body(self) -> str:
        out, grid, open_section = [], [], False

        def flush():
            if grid:
                out.append('<div class="figs">' + "\n".join(grid) + "</div>")
                grid.clear()

        for kind, markup in self.parts:
            if kind == "figure":
                grid.append(markup)
                continue
            flush()
            if kind == "section":
                if open_section:
                    out.append("</section>")
                out.append(f'<section aria-labelledby="{markup}">')
                open_section = True
            else:
                out.append(markup)
        flush()
        if open_section:
            out.append("</section>")
        return "\n".join(out)

    def write(self, subtitle: str = "") -> Path:
        path = self.out / "index.html"
        nav = "".join(f'<a href="#{sid}">{html.escape(t)}</a>' for sid, t in self.sections)
        path.write_text(
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(self.title)}</title><style>{STYLE}</style></head>\n<body>\n"
            f"<header><h1>{html.escape(self.title)}</h1><p>{html.escape(subtitle)}</p></header>\n"
            + (f"<nav>{nav}</nav>\n" if len(self.sections) > 1 else "")
            + f"<main>\n{self.body()}\n</main>\n</body></html>\n"
        )
        return path


def svg_markup(fig, fid: str, caption: str) -> str:
    """``fig`` as an inline <svg> element whose ids are prefixed with ``fid`` (many
    figures share one document) and whose XML prologue and metadata are dropped."""
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": fid}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    s = buf.getvalue()
    s = s[s.index("<svg") :]
    s = re.sub(r"<metadata>.*?</metadata>\s*", "", s, flags=re.S)
    s = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{fid}-{m.group(1)}"', s)
    s = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{fid}-{m.group(1)})", s)
    s = re.sub(r'xlink:href="#([^"]+)"', lambda m: f'xlink:href="#{fid}-{m.group(1)}"', s)
    title = f"<title>{html.escape(caption)}</title>"
    return re.sub(r"<svg\b([^>]*)>", lambda m: f'<svg{m.group(1)} role="img">{title}', s, count=1).strip()


def _td(v) -> str:
    text = fmt(v)
    cls = f' class="v-{text}"' if text in ("pass", "fail", "n/a") else ""
    return f"<td{cls}>{html.escape(text)}</td>"


def fmt(v) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        if not np.isfinite(v):
            return "–"
        return f"{v:.4g}"
    return str(v)


def fig(width: float = 5.2, height: float = 3.4, ncols: int = 1):
    with style():
        f, ax = plt.subplots(1, ncols, figsize=(width, height))
    return f, ax


# ---------------------------------------------------------------- distributions


def dkw_epsilon(n: int, alpha: float = DKW_ALPHA) -> float:
    """Half-width of the (1 - alpha) DKW band of an empirical CDF of n samples."""
    return math.sqrt(math.log(2 / alpha) / (2 * n))


def thin(n: int, max_points: int = MAX_POINTS) -> np.ndarray:
    """Indices of at most ~max_points of n sorted samples: evenly spread over the body,
    and log-spaced towards the largest samples so a heavy tail is kept point by point."""
    if n <= max_points:
        return np.arange(n)
    half = max_points // 2
    body = np.linspace(0, n - 1, half)
    tail = n - np.geomspace(1, n, half)
    return np.unique(np.concatenate([body, tail, [0, n - 1]]).round().astype(int))


def _finite(values) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    return x[np.isfinite(x)]


def ccdf(ax, values, label: str, band: bool = True, **style_kw) -> bool:
    """Empirical CCDF P(X ≥ x) on log-log axes with its 95 % DKW band. Values ≤ 0 cannot
    be drawn on a log axis: they still count in n (the curve then starts below 1) and
    the legend says how many there are. False when there is no positive value."""
    x = _finite(values)
    n = len(x)
    pos = np.sort(x[x > 0])
    if len(pos) == 0:
        return False
    u, first = np.unique(pos, return_index=True)  # ties: one point per distinct value
    y = (len(pos) - first) / n  # P(X >= u) over all n samples
    nonpos = n - len(pos)
    label = f"{label} (n={n}{f', {nonpos} ≤ 0' if nonpos else ''})"
    _curve(ax, u, y, "pre", label, n, band, 0.5 / n, style_kw)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylabel("P(X ≥ x)  (CCDF)")
    return True


def cdf(ax, values, label: str, band: bool = True, **style_kw) -> bool:
    """Empirical CDF P(X ≤ x) with its 95 % DKW band; False when there is no finite value."""
    x = _finite(values)
    n = len(x)
    if n == 0:
        return False
    u, counts = np.unique(x, return_counts=True)
    _curve(ax, u, np.cumsum(counts) / n, "post", f"{label} (n={n})", n, band, 0.0, style_kw)
    ax.set_ylabel("P(X ≤ x)  (CDF)")
    ax.set_ylim(-0.02, 1.02)
    return True


def _curve(ax, x, y, where, label, n, band, floor, style_kw) -> None:
    """A step curve through (x, y), thinned, with markers when it has few points (a
    point mass would otherwise be invisible), and its DKW band."""
    idx = thin(len(x))
    kw = dict(style_kw)
    if len(x) <= 25:
        kw.setdefault("marker", "o")
        kw.setdefault("ms", 3)
    (line,) = ax.step(x[idx], y[idx], where=where, label=label, **kw)
    if band and len(x) > 1:
        eps = dkw_epsilon(n)
        ax.fill_between(
            x[idx],
            np.clip(y[idx] - eps, floor, 1),
            np.clip(y[idx] + eps, floor, 1),
            step=where,
            color=line.get_color(),
            alpha=0.13,
            lw=0,
            zorder=line.get_zorder() - 1,
        )


def tidy_log_axes(fig) -> None:
    """Readable tick labels on log axes: major ticks only, and 1-2-5 ticks in plain
    numbers when an axis spans less than two decades (matplotlib would otherwise label
    crowded minor ticks like 3x10^-2)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    for ax in fig.axes:
        for axis, lim in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            if axis.get_scale() != "log":
                continue
            axis.set_minor_formatter(NullFormatter())
            lo, hi = sorted(lim)
            if axis is ax.yaxis and ax.get_ylabel().startswith("P(X") and hi > 1.3:
                hi = 1.3  # a probability axis: nothing to see above 1
                ax.set_ylim(lo, hi)
            if lo > 0 and hi / lo < 100:
                axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
                axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))


def log_if_wide(ax, values) -> None:
    """Log x axis when the positive values span more than two decades."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x) & (x > 0)]
    if len(x) and x.max() / x.min() > 100:
        ax.set_xscale("log")


# ---------------------------------------------------------------- time axes


NICE = (1.0, 2.0, 2.5, 5.0)


def nice_width(raw: float, span: float | None = None, lo: int = 1, hi: int = 10**9) -> float:
    """The 1-2-2.5-5 x 10^k width closest (in ratio) to raw; with ``span``, among those
    that cut it into lo..hi bins when there is one."""
    if not raw > 0:
        return 1.0
    exp = math.floor(math.log10(raw))
    cands = sorted(m * 10.0**e for e in range(exp - 2, exp + 3) for m in NICE)
    if span:
        fits = [c for c in cands if lo <= math.ceil(span / c) <= hi]
        cands = fits or cands
    return min(cands, key=lambda c: abs(math.log(c / raw)))


def bin_width(points, span: float, lo: int = 20, hi: int = 100) -> float:
    """A bin width for counting ``points`` (event times) over ``span``: Freedman–Diaconis
    (2 IQR n^-1/3), clamped so the span has between lo and hi bins, rounded to a nice
    number."""
    x = _finite(points)
    if span <= 0:
        return 1.0
    width = span / hi
    if len(x) >= 4:
        iqr = np.subtract(*np.percentile(x, [75, 25]))
        if iqr > 0:
            width = 2 * iqr * len(x) ** (-1 / 3)
    width = min(max(width, span / hi), span / lo)
    return nice_width(width, span, lo, hi)


def time_unit(span_s: float) -> tuple[str, float]:
    """A unit for a time axis of span_s seconds: (name, seconds per unit)."""
    if span_s >= 3 * 3600:
        return "h", 3600.0
    if span_s >= 3 * 60:
        return "min", 60.0
    if span_s >= 1:
        return "s", 1.0
    return "ms", 1e-3
