"""The engine against the Click package (click-elements/click): the same real
trace through the same core gives the same delivered packets and drops.

Runs only where Click is installed ($CLICKPREFIX, or `click` on PATH);
elsewhere it is reported as SKIPPED with the reason, never as a pass.
Click's CheckIPHeader keeps IPv4 only, so the engine reads the trace with
the BPF filter `ip`; both links run at the confs' default 300 kb/s.
CheckIPHeader also drops packets with a bad header checksum (the engine
replays them as recorded, like tcpreplay), so the trace is one with valid
checksums, and it trims a frame's bytes beyond the IP total length
(Ethernet padding, trailers), so packets are compared up to that length.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
import tracelab_engine as engine
from conftest import REPO

TRACE = "zeek-baselines/m57-long-http/m57-long-49583-80.pcap"  # 227 packets, one HTTP download
CASES = {  # conf file -> the engine element the conf builds
    "tlfifoqueue.click": "fifo(capacity=50)",
    "tlefdqueue.click": "efd(capacity=50, th=30000)",
}


def click_prefix() -> Path | None:
    if os.environ.get("CLICKPREFIX"):
        return Path(os.environ["CLICKPREFIX"])
    found = shutil.which("click")
    return Path(found).resolve().parent.parent if found else None


def bodies(path: Path, strip: int) -> list[bytes]:
    """The IPv4 packets of a pcap, `strip` link bytes off, cut to their total length."""
    data = path.read_bytes()
    endian = "<" if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    off, out = 24, []
    while off + 16 <= len(data):
        caplen = struct.unpack(endian + "I", data[off + 8 : off + 12])[0]
        ip = data[off + 16 + strip : off + 16 + caplen]
        out.append(ip[: struct.unpack(">H", ip[2:4])[0]])
        off += 16 + caplen
    return out


@pytest.fixture(scope="module")
def click_package(tmp_path_factory):
    prefix = click_prefix()
    if prefix is None or not (prefix / "bin" / "click").is_file():
        pytest.skip("SKIPPED (no Click installation: set CLICKPREFIX or put click on PATH)")
    work = tmp_path_factory.mktemp("click")
    (work / "Makefile").write_text(f"include {REPO / 'click-elements' / 'click' / 'Makefile'}\n")
    build = subprocess.run(["make", "-C", str(work), f"CLICKPREFIX={prefix}", "-j2"], capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    return prefix, work


@pytest.mark.parametrize("conf", sorted(CASES))
def test_click_and_engine_agree(tmp_path, datasets, click_package, conf):
    prefix, work = click_package
    trace = datasets / TRACE
    click_out = tmp_path / "click.pcap"
    env = dict(os.environ, CLICKPATH=f"{work}:{prefix / 'lib'}:{prefix / 'share' / 'click'}")
    run = subprocess.run(
        [
            str(prefix / "bin" / "click"),
            "--simtime",
            str(REPO / "click-elements" / "click" / "conf" / conf),
            f"TRACE={trace}",
            f"OUT={click_out}",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert run.returncode == 0, run.stderr
    counts = dict(re.findall(r"(\w+)=(\d+)", run.stdout + run.stderr))
    engine_out = tmp_path / "engine.pcap"
    m = engine.run(
        {
            "sources": [f"pcap(path='{trace}', filter='ip')"],
            "nodes": [{"element": CASES[conf], "rate": 300000}],
            "out_pcap": str(engine_out),
        }
    )
    assert m["overall"]["dropped_total"] > 0  # the link is slow enough to queue and drop
    assert int(counts["in"]) == m["overall"]["offered"]
    assert int(counts["out"]) == m["overall"]["delivered"]
    assert int(counts["drops"]) == m["overall"]["dropped_total"]
    assert bodies(click_out, 0) == bodies(engine_out, 14)  # Click writes raw IP, the engine Ethernet
