"""`tracelab report` on a real trace's profile, a replay run of the same trace, a sweep
and a fidelity comparison of the same trace, checked in a real headless Chromium
(Debian `chromium`, driven by Playwright from PyPI with executable_path: no browser is
downloaded): the page loads with no console error, makes no request that is not file:
or data:, and every figure is an inline SVG that renders with drawn paths. A full-page
screenshot goes to build/report-screenshot.png (printed). Without chromium or
Playwright the browser tests skip with the reason.

Chromium runs as root in the test containers, where its sandbox cannot start: it is
launched with --no-sandbox and --headless=new."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from tracelab.parts import analyzer_binary
from tracelab.replay.cli import main as replay_main
from tracelab.report import html as H
from tracelab.report.cli import build
from tracelab.report.cli import main as report_main

TRACE = "real/pcapplusplus/example.pcap"
REPO = Path(__file__).resolve().parents[2]
SCREENSHOT = REPO / "build" / "report-screenshot.png"
CHROMIUM_ARGS = ["--no-sandbox", "--headless=new", "--disable-gpu", "--disable-background-networking"]

# What the page shows of each <svg> figure once laid out: its box, how many <path>
# elements draw something (a non-empty d), how many <text> elements it has.
FIGURES_JS = """Array.from(document.querySelectorAll('figure')).map(f => {
  const svg = f.querySelector('svg');
  if (!svg) return {id: f.id, svg: false, width: 0, height: 0, paths: 0, texts: 0};
  const r = svg.getBoundingClientRect();
  const paths = Array.from(svg.querySelectorAll('path')).filter(p => (p.getAttribute('d') || '').trim().length > 2);
  return {id: f.id, svg: true, width: r.width, height: r.height, paths: paths.length,
          texts: svg.querySelectorAll('text').length};
})"""
IMAGES_JS = """Promise.all(Array.from(document.images).map(i => i.decode()
  .then(() => [i.getAttribute('src'), i.naturalWidth], () => [i.getAttribute('src'), 0])))"""


# ---------------------------------------------------------------- the page in Chromium


def open_page(chromium: str, url: str, screenshot: Path | None = None) -> dict:
    """Load url in headless Chromium and report what a reader would meet:
    errors (console errors, uncaught exceptions, failed loads), external (every request
    whose URL is not file: or data:; each is aborted before it leaves the browser),
    figures (FIGURES_JS) and images ((src, naturalWidth), 0 = did not render)."""
    from playwright.sync_api import sync_playwright

    errors, external = [], []

    def route(r):
        if r.request.url.startswith(("file:", "data:")):
            r.continue_()
        else:
            external.append(r.request.url)
            r.abort("blockedbyclient")

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            context.route("**/*", route)
            page = context.new_page()
            # Requests that routing does not see (file:, data:) still pass through here.
            page.on("request", lambda r: None if r.url.startswith(("file:", "data:")) else external.append(r.url))
            page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "assert") else None)
            page.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
            page.on("requestfailed", lambda r: errors.append(f"failed: {r.url} ({r.failure})"))
            page.goto(url, wait_until="load")
            figures = page.evaluate(FIGURES_JS)
            images = [tuple(x) for x in page.evaluate(IMAGES_JS)]
            if screenshot is not None:
                screenshot.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(screenshot), full_page=True)
        finally:
            browser.close()
    return {"errors": errors, "external": sorted(set(external)), "figures": figures, "images": images}


@pytest.fixture(scope="module")
def chromium():
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        print("SKIPPED (chromium not installed: apt-get install chromium, or scripts/setup.sh --test)")
        pytest.skip("chromium not installed (Debian package `chromium`)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        print("SKIPPED (playwright not installed: pip install -r requirements.lock)")
        pytest.skip("playwright not installed (PyPI `playwright`, pinned in requirements.lock)")
    return binary


# ---------------------------------------------------------------- inputs from a real trace


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, datasets):
    binary = analyzer_binary()
    if binary is None:
        pytest.skip("SKIPPED (analyzer not built: cargo build --release in analyzer/)")
    base = tmp_path_factory.mktemp("inputs")
    trace = datasets / TRACE
    subprocess.run(
        [str(binary), str(trace), "--local", "10.0.0.0/8", "-o", str(base / "p")], check=True, capture_output=True
    )
    assert (
        replay_main(
            [
                "run",
                "--pcap",
                str(trace),
                "--element",
                "efd(capacity=300,th=30000)",
                "--rate",
                "10G",
                "--load",
                "0.9",
                "--detail",
                "-q",
                "-o",
                str(base / "r"),
            ]
        )
        == 0
    )
    (base / "sweep.yaml").write_text(
        "sources: ['poisson(load={load}, size=1500, count=3000, seed={seed})']\n"
        "nodes: [{element: 'fifo(capacity=50)', rate: 10G}]\n"
    )
    assert (
        replay_main(
            [
                "sweep",
                "--config",
                str(base / "sweep.yaml"),
                "--grid",
                "load=0.5,1.3",
                "--grid",
                "seed=1,2",
                "-q",
                "-o",
                str(base / "s"),
            ]
        )
        == 0
    )
    from tracelab.fidelity import main as fidelity_main

    # 0: every marginal passed, 1: one failed; both are a fidelity directory to show.
    assert fidelity_main([str(trace), "--local", "10.0.0.0/8", "-q", "-o", str(base / "f")]) in (0, 1)
    return base


@pytest.fixture(scope="module")
def report(inputs, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    page, shown = build([inputs / "p", inputs / "r", inputs / "s", inputs / "f"], out)
    return page, shown


def figure_ids(text: str) -> list[str]:
    return re.findall(r'<figure id="([^"]+)"', text)


def test_report_numbers_flow_from_the_trace(inputs, report):
    page, shown = report
    summary = json.loads((inputs / "p" / "summary.json").read_text())
    metrics = json.loads((inputs / "r" / "metrics.json").read_text())
    prof, run, sweep, _ = shown
    # The profile section shows the analyzer's counts; the replay offered every packet the analyzer read.
    assert prof["connections"] == summary["connections"]["total"]
    assert prof["packets"]["read"] == summary["packets"]["read"] == run["offered"] == metrics["overall"]["offered"]
    assert sum(r[2] for r in prof["composition"]) == sum(
        c["cnxs"] for cats in summary["composition"].values() for c in cats.values()
    )
    assert sweep["runs"] == 4
    text = page.read_text()
    assert f"<td>{summary['packets']['read']}</td>" in text
    assert f"<td>{metrics['overall']['offered']}</td>" in text
    assert f"<td>{metrics['overall']['delivered']}</td>" in text
    # Every figure promised is inline SVG in the page, in order, and nothing else is.
    ids = figure_ids(text)
    assert ids == [f for s in shown for f in s["figure_ids"]]
    assert text.count("<svg") == len(ids) and "<img" not in text and not (page.parent / "img").exists()
    for needed in (
        "s0_sizes",
        "s0_durations",
        "s0_rtt",
        "s0_warmups",
        "s0_trains",
        "s0_pacing",
        "s0_qq_size",
        "s0_qq_inter-arrival",
        "s0_load",
        "s1_delay",
        "s1_flowtable0",
        "s2_r_v_vs_load",
        "s2_eplr_vs_load",
        "s2_chunk_vs_load",
    ):
        assert needed in ids, needed
    assert "s2_r_v_vs_seed" not in ids  # seeds repeat a grid point: aggregated, not an axis
    assert "line: median over 2 repetitions (seed), shaded: min–max" in text
    assert "exact, from packets.parquet" in text  # the run kept per-packet detail
    assert "95 % DKW confidence band" in text


def test_report_is_one_self_contained_file(report):
    """Nothing in the page points outside it: no script, no style sheet or font to
    fetch, no image file; figure text is SVG <text> (searchable), and the ids of the
    many SVGs in one document do not collide."""
    page, _ = report
    text = page.read_text()
    assert "<script" not in text.lower() and "<link" not in text.lower() and "@import" not in text
    assert re.findall(r'\b(?:src|href)="(?!#)[^"]*"', text) == []
    assert re.findall(r"url\((?!#)", text) == []
    assert not re.search(r"https?://(?!www\.w3\.org/)", text), re.search(r"https?://\S+", text)
    ids = re.findall(r'\bid="([^"]+)"', text)
    assert len(ids) == len(set(ids))
    for ref in re.findall(r'(?:url\(#|href="#)([^)"]+)', text):
        assert ref in ids, ref
    # Axis labels, with units, are text in the page.
    for label in ("flow size (payload bytes)", "P(X ≥ x)  (CCDF)", "load (Mb/s)", "queueing delay (µs)"):
        assert f">{label}<" in text, label


def test_report_sections_draw_what_the_data_has(inputs, report):
    page, _ = report
    text = page.read_text()
    # Heavy tails on log-log CCDF axes, with the legend counting samples.
    sizes = text[text.index('<figure id="s0_sizes"') :]
    sizes = sizes[: sizes.index("</figure>")]
    assert "P(X ≥ x)  (CCDF)" in sizes and "(n=" in sizes
    # Load over time: adaptive bins, between 20 and 100 of them, not the analyzer's 300 s.
    load = text[text.index('<figure id="s0_load"') :]
    m = re.search(r"in (\d+) bins of ([0-9.]+ m?s)", load)
    assert m and 20 <= int(m.group(1)) <= 100, m
    assert "300 s" not in m.group(2)


def test_fidelity_section(inputs, report):
    page, shown = report
    fid = shown[3]
    data = json.loads((inputs / "f" / "fidelity.json").read_text())
    text = page.read_text()
    assert fid["kind"] == "fidelity" and fid["marginals"] == len(data["marginals"])
    section = text[text.index(">Fidelity: ") :]
    for m in data["marginals"]:
        assert f"<td>{m['name'].replace('>', '&gt;')}</td>" in section, m["name"]
    assert section.count('<td class="v-pass">pass</td>') == data["passed"]
    assert section.count('<td class="v-fail">fail</td>') == data["failed"]
    assert f"{data['passed']} passed, {data['failed']} failed" in section
    # One original-vs-synthetic figure per distribution, both curves on the same axes.
    assert fid["figures"] == len(data["distributions"]) == len(fid["figure_ids"])
    for fig_id in fid["figure_ids"]:
        f = section[section.index(f'<figure id="{fig_id}"') :]
        f = f[: f.index("</figure>")]
        assert "original (n=" in f and "synthetic (n=" in f and "P(X ≤ x)  (CDF)" in f


def test_fidelity_section_with_a_failure_and_no_profiles(inputs, tmp_path):
    """fidelity.json alone (no original/, synthetic/): the table and verdicts, no curves."""
    data = json.loads((inputs / "f" / "fidelity.json").read_text())
    data["marginals"][0]["verdict"] = "fail"
    data["passed"], data["failed"] = data["passed"] - 1, data["failed"] + 1
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "fidelity.json").write_text(json.dumps(data))
    page, shown = build([tmp_path / "f"], tmp_path / "rep")
    text = page.read_text()
    assert '<td class="v-fail">fail</td>' in text and '<span class="badge fail">' in text
    assert "no original/ and synthetic/ profiles" in text and shown[0]["figure_ids"] == []
    (tmp_path / "f" / "fidelity.json").write_text(json.dumps({"schema": "other"}))
    assert report_main([str(tmp_path / "f"), "-o", str(tmp_path / "x")]) == 3


def test_report_renders_in_headless_chromium(report, chromium, capsys):
    page, shown = report
    seen = open_page(chromium, page.as_uri(), screenshot=SCREENSHOT)
    with capsys.disabled():
        print(f"\nreport screenshot: {SCREENSHOT}")
    assert seen["errors"] == []
    assert seen["external"] == []
    assert seen["images"] == []  # every figure is inline SVG
    figures = seen["figures"]
    assert [f["id"] for f in figures] == [f for s in shown for f in s["figure_ids"]]
    assert len(figures) > 15
    bad = [f for f in figures if not (f["svg"] and f["width"] > 100 and f["height"] > 50 and f["paths"] > 5)]
    assert bad == []
    assert all(f["texts"] > 3 for f in figures)  # axis labels and ticks are text
    assert SCREENSHOT.stat().st_size > 50_000


def test_the_browser_check_sees_what_is_wrong(chromium, tmp_path):
    """The oracle itself can fail: external requests (blocked and reported), a console
    error, a missing image and an empty figure are all seen."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<!DOCTYPE html><html><head>"
        '<link rel="stylesheet" href="http://127.0.0.1:9/style.css"></head><body>'
        '<img src="missing.png"><img src="https://127.0.0.1:9/logo.png">'
        '<figure id="empty"><svg width="0" height="0"></svg></figure>'
        '<figure id="blank"><svg width="200" height="100"><path d=""/></svg></figure>'
        '<script>console.error("boom")</script></body></html>'
    )
    seen = open_page(chromium, bad.as_uri())
    assert seen["external"] == ["http://127.0.0.1:9/style.css", "https://127.0.0.1:9/logo.png"]
    assert "boom" in seen["errors"]
    assert any("missing.png" in e for e in seen["errors"])
    assert ("missing.png", 0) in seen["images"]
    empty, blank = seen["figures"]
    assert empty["width"] == 0 and blank["paths"] == 0 and blank["width"] == 200


def test_report_cli_png_and_errors(inputs, tmp_path, capsys):
    assert report_main([str(inputs / "r"), "-o", str(tmp_path / "rep"), "--png"]) == 0
    assert "wrote" in capsys.readouterr().out and (tmp_path / "rep" / "index.html").is_file()
    text = (tmp_path / "rep" / "index.html").read_text()
    ids = figure_ids(text)
    assert ids and sorted(p.stem for p in (tmp_path / "rep").glob("*.png")) == sorted(ids)
    for fid in ids:
        assert f'<a href="{fid}.png">PNG</a>' in text
        assert (tmp_path / "rep" / f"{fid}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The same inputs give the same page, byte for byte (no dates, no random ids).
    assert report_main([str(inputs / "r"), "-o", str(tmp_path / "again")]) == 0
    again = (tmp_path / "again" / "index.html").read_text()
    assert again == re.sub(r' <a href="[^"]+\.png">PNG</a>', "", text)
    assert report_main([str(tmp_path), "-o", str(tmp_path / "x")]) == 3
    assert "not a profile (connections.parquet), a run (metrics.json), a sweep" in capsys.readouterr().err
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "metrics.json").write_text("{")
    assert report_main([str(broken), "-o", str(tmp_path / "y")]) == 3
    assert "metrics.json: not a readable metrics.json" in capsys.readouterr().err


# ---------------------------------------------------------------- plotting conventions


def test_ccdf_counts_ties_and_non_positive_values():
    f, ax = H.fig()
    assert H.ccdf(ax, [0, 1, 1, 2, 4, np.nan], "x", band=False)
    x, y = ax.lines[0].get_data()
    # P(X >= x) over all 5 finite samples; the 0 counts in n but is not drawn.
    assert list(np.unique(x)) == [1, 2, 4] and set(np.round(y, 6)) == {0.8, 0.4, 0.2}
    assert ax.lines[0].get_label() == "x (n=5, 1 ≤ 0)"
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert not H.ccdf(ax, [0, -1], "none")
    H.plt.close(f)


def test_dkw_band_and_adaptive_bins():
    assert H.dkw_epsilon(100) == pytest.approx(0.1358, abs=1e-4)
    rng = np.random.default_rng(1)
    for n, span in ((136, 15.6), (100_000, 86_400.0), (10, 3.0), (5_000, 0.02)):
        t = np.sort(rng.uniform(0, span, n))
        w = H.bin_width(t, span)
        assert 20 <= np.ceil(span / w) <= 100, (n, span, w)
        mant = w / 10 ** np.floor(np.log10(w))
        assert round(mant, 6) in (1, 2, 2.5, 5), w
    assert H.thin(10).tolist() == list(range(10))
    idx = H.thin(1_000_000)
    assert len(idx) <= H.MAX_POINTS + 2 and idx[0] == 0 and idx[-1] == 999_999
    assert (np.diff(idx[-20:]) == 1).all()  # the tail point by point
