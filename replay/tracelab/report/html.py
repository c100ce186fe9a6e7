"""A small HTML page builder and the plotting conventions shared by every section.

The page is static: no script, no external resource; images are PNG files beside it
(img/NAME.png, relative links), so the report can be copied or served as is.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: never needs a display
import matplotlib.pyplot as plt
import numpy as np

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { border-bottom: 2px solid #444; } h2 { margin-top: 2em; border-bottom: 1px solid #aaa; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: right; }
th { background: #eee; } td:first-child, th:first-child { text-align: left; }
figure { display: inline-block; margin: 0.5em; vertical-align: top; }
figcaption { font-size: 0.85em; color: #555; max-width: 480px; }
p.note { color: #666; font-size: 0.9em; }
"""


class Page:
    def __init__(self, out_dir: Path, title: str):
        self.out = Path(out_dir)
        self.img = self.out / "img"
        self.img.mkdir(parents=True, exist_ok=True)
        self.title = title
        self.parts: list[str] = []
        self.images: list[str] = []

    def h(self, level: int, text: str) -> None:
        self.parts.append(f"<h{level}>{html.escape(text)}</h{level}>")

    def p(self, text: str, note: bool = False) -> None:
        attr = ' class="note"' if note else ""
        self.parts.append(f"<p{attr}>{html.escape(text)}</p>")

    def table(self, header: list[str], rows: list[list]) -> None:
        head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(fmt(v))}</td>" for v in r) + "</tr>" for r in rows)
        self.parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")

    def figure(self, fig, name: str, caption: str) -> None:
        """Save ``fig`` as img/NAME.png (a unique name) and show it with its caption."""
        path = self.image_path(name)
        fig.tight_layout()  # keeps axis labels inside the image
        fig.savefig(path, dpi=80)
        plt.close(fig)
        self.show(path, caption)

    def image_path(self, name: str) -> Path:
        """A fresh img/NAME.png path for a plot drawn elsewhere (then call show)."""
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
        fname, n = stem, 1
        while fname in self.images:
            n += 1
            fname = f"{stem}_{n}"
        self.images.append(fname)
        return self.img / f"{fname}.png"

    def show(self, path: Path, caption: str) -> None:
        fname = path.stem
        self.parts.append(
            f'<figure><img src="img/{fname}.png" alt="{html.escape(caption)}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>"
        )

    def write(self) -> Path:
        path = self.out / "index.html"
        path.write_text(
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{html.escape(self.title)}</title><style>{STYLE}</style></head>\n<body>"
            f"<h1>{html.escape(self.title)}</h1>\n" + "\n".join(self.parts) + "\n</body></html>\n"
        )
        return path


def fmt(v) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        if not np.isfinite(v):
            return "–"
        return f"{v:.4g}"
    return str(v)


def fig(width: float = 5.5, height: float = 3.6):
    f, ax = plt.subplots(figsize=(width, height))
    return f, ax


def cdf(ax, values, label: str) -> bool:
    """Empirical CDF of the finite values (step at each sample); False when there are none."""
    x = np.sort(np.asarray(values, dtype=float)[np.isfinite(values)])
    if len(x) == 0:
        return False
    ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", label=f"{label} (n={len(x)})")
    ax.set_ylabel("P(X ≤ x)")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    return True


def log_if_wide(ax, values) -> None:
    """Log x axis when the positive values span more than two decades."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x) & (x > 0)]
    if len(x) and x.max() / x.min() > 100:
        ax.set_xscale("log")
