"""`tracelab report` on a real trace's profile, a replay run of the same trace and a sweep,
checked in a real headless Chromium (Debian `chromium`): the page loads with no console
error and every image renders. Chromium is driven through the DevTools protocol over a
pipe (--remote-debugging-pipe: NUL-separated JSON on fds 3 and 4), so no network and no
extra client library. Without chromium the browser tests skip with the reason."""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import subprocess
import time

import pytest
from tracelab.parts import analyzer_binary
from tracelab.replay.cli import main as replay_main
from tracelab.report.cli import build
from tracelab.report.cli import main as report_main

TRACE = "real/pcapplusplus/example.pcap"


# ---------------------------------------------------------------- Chromium over a DevTools pipe


class Browser:
    FLAGS = (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--remote-debugging-pipe",
    )

    def __init__(self, binary, profile_dir):
        cmd_r, self.cmd_w = os.pipe()  # we write commands; Chromium reads them on fd 3
        self.out_r, out_w = os.pipe()  # Chromium writes replies and events on fd 4

        def fds():  # in the child, before exec
            os.dup2(cmd_r, 3)
            os.dup2(out_w, 4)

        self.proc = subprocess.Popen(
            [binary, *self.FLAGS, f"--user-data-dir={profile_dir}", "about:blank"],
            preexec_fn=fds,
            close_fds=False,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(cmd_r)
        os.close(out_w)
        self.buf = b""
        self.next_id = 0
        self.events = []

    def _read(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.out_r], [], [], left)[0]:
                raise TimeoutError("chromium did not answer in time")
            chunk = os.read(self.out_r, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=None, timeout=30):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def wait_event(self, method, timeout=30):
        deadline = time.monotonic() + timeout
        for e in self.events:
            if e.get("method") == method:
                return e
        while True:
            e = self._read(deadline)
            self.events.append(e)
            if e.get("method") == method:
                return e

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.cmd_w)
        os.close(self.out_r)


def check_page(binary, url, tmp_path):
    """(errors, images): console errors, uncaught exceptions and failed loads the page
    produced, and (src, naturalWidth) of every <img> once decoded (0 = did not render)."""
    browser = Browser(binary, tmp_path / "chromium-profile")
    try:
        target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            browser.call(f"{domain}.enable", session=session)
        browser.call("Page.navigate", {"url": url}, session=session)
        browser.wait_event("Page.loadEventFired", timeout=60)
        result = browser.call(
            "Runtime.evaluate",
            {
                "expression": "Promise.all(Array.from(document.images).map(i => i.decode()"
                ".then(() => [i.getAttribute('src'), i.naturalWidth], () => [i.getAttribute('src'), 0])))",
                "awaitPromise": True,
                "returnByValue": True,
            },
            session=session,
        )
        images = [tuple(x) for x in result["result"]["value"]]
        # Console messages logged during load arrive as events; let the last ones land.
        browser.call("Runtime.evaluate", {"expression": "1"}, session=session)
    finally:
        browser.close()
    errors = []
    for e in browser.events:
        m, p = e.get("method"), e.get("params", {})
        if m == "Runtime.exceptionThrown":
            errors.append(p["exceptionDetails"].get("text"))
        elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            errors.append(" ".join(str(a.get("value")) for a in p.get("args", [])))
        elif m == "Log.entryAdded" and p["entry"]["level"] == "error":
            errors.append(p["entry"]["text"])
    return errors, images


@pytest.fixture(scope="module")
def chromium():
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        print("SKIPPED (chromium not installed: apt-get install chromium)")
        pytest.skip("chromium not installed (Debian package `chromium`)")
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
        "sources: ['poisson(load={load}, size=1500, count=3000, seed=5)']\n"
        "nodes: [{element: 'fifo(capacity=50)', rate: 10G}]\n"
    )
    assert (
        replay_main(
            ["sweep", "--config", str(base / "sweep.yaml"), "--grid", "load=0.5,1.3", "-q", "-o", str(base / "s")]
        )
        == 0
    )
    return base


@pytest.fixture(scope="module")
def report(inputs, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    page, shown = build([inputs / "p", inputs / "r", inputs / "s"], out)
    return page, shown


def test_report_numbers_flow_from_the_trace(inputs, report):
    page, shown = report
    summary = json.loads((inputs / "p" / "summary.json").read_text())
    metrics = json.loads((inputs / "r" / "metrics.json").read_text())
    prof, run, sweep = shown
    # The profile section shows the analyzer's counts; the replay offered every packet the analyzer read.
    assert prof["connections"] == summary["connections"]["total"]
    assert prof["packets"]["read"] == summary["packets"]["read"] == run["offered"] == metrics["overall"]["offered"]
    assert sum(r[2] for r in prof["composition"]) == sum(
        c["cnxs"] for cats in summary["composition"].values() for c in cats.values()
    )
    assert sweep["runs"] == 2
    text = page.read_text()
    assert f"<td>{summary['packets']['read']}</td>" in text
    assert f"<td>{metrics['overall']['offered']}</td>" in text
    assert f"<td>{metrics['overall']['delivered']}</td>" in text
    # Every plot promised is a PNG file, and every PNG is shown.
    srcs = re.findall(r'<img src="([^"]+)"', text)
    files = sorted(p.relative_to(page.parent).as_posix() for p in (page.parent / "img").glob("*.png"))
    assert sorted(srcs) == files
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
        assert f"img/{needed}.png" in srcs, needed
    assert "exact, from packets.parquet" in text  # the run kept per-packet detail


def test_report_renders_in_headless_chromium(report, chromium, tmp_path):
    page, _ = report
    errors, images = check_page(chromium, page.as_uri(), tmp_path)
    assert errors == []
    assert len(images) == len(list((page.parent / "img").glob("*.png"))) > 10
    assert all(width > 0 for _, width in images), [src for src, w in images if w == 0]


def test_the_browser_check_sees_broken_images_and_console_errors(chromium, tmp_path):
    """The oracle itself can fail: a missing image and a console error are reported."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><html><body><img src="missing.png"><script>console.error("boom")</script></body></html>'
    )
    errors, images = check_page(chromium, bad.as_uri(), tmp_path)
    assert images == [("missing.png", 0)]
    assert "boom" in errors
    assert any("missing.png" in e or "ERR_FILE_NOT_FOUND" in e for e in errors)


def test_report_cli_and_errors(inputs, tmp_path, capsys):
    assert report_main([str(inputs / "r"), "-o", str(tmp_path / "rep")]) == 0
    assert "wrote" in capsys.readouterr().out and (tmp_path / "rep" / "index.html").is_file()
    assert report_main([str(tmp_path), "-o", str(tmp_path / "x")]) == 2
    assert "not a profile (connections.parquet), a run (metrics.json) or a sweep" in capsys.readouterr().err
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "metrics.json").write_text("{")
    assert report_main([str(broken), "-o", str(tmp_path / "y")]) == 2
    assert "metrics.json: not a readable metrics.json" in capsys.readouterr().err
