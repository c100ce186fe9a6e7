"""`tracelab replay run|sweep` end to end: outputs, errors, sweeps."""

from __future__ import annotations

import errno
import json
import os
import resource
import struct
import subprocess
import sys

import pyarrow.parquet as pq
import pytest
import tracelab_engine as engine
from tracelab.replay.cli import main

TRACE = "real/tcpreplay/test.pcap"


def pcap_records(path):
    """(ts_ns, caplen) of every record of a nanosecond pcap, read by hand."""
    data = path.read_bytes()
    magic = struct.unpack("<I", data[:4])[0]
    assert magic == 0xA1B23C4D  # little-endian, nanosecond timestamps
    off, out = 24, []
    while off < len(data):
        sec, nsec, caplen, _ = struct.unpack("<IIII", data[off : off + 16])
        out.append((sec * 10**9 + nsec, caplen))
        off += 16 + caplen
    return out


def test_run_writes_metrics_pcap_and_detail(tmp_path, datasets, capsys):
    out_pcap = tmp_path / "out.pcap"
    rc = main(
        [
            "run",
            "--pcap",
            str(datasets / TRACE),
            "--element",
            "efd(capacity=300, th=30000)",
            "--rate",
            "10G",
            "--out-pcap",
            str(out_pcap),
            "--detail",
            "-o",
            str(tmp_path / "r"),
        ]
    )
    assert rc == 0
    assert "wrote" in capsys.readouterr().out
    m = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert m["schema"] == "tracelab.replay.metrics"
    assert m["config"]["nodes"][0]["element"] == "efd(capacity=300, th=30000)"
    assert m["tool"]["command"][:3] == ["tracelab", "replay", "run"]
    c = m["conservation"]
    assert c["offered"] == c["delivered"] + c["dropped"] + c["queued"] + c["in_flight"] == 160
    src = m["sources"][0]["counts"]
    assert src["read"] == 179 and src["replayed"] == 160 and src["skipped_non_ip"] == 19
    # At recorded timing nothing is lost; every packet leaves its queueing
    # delay plus its own serialization time (0.8 ns a byte) after arriving.
    rows = pq.read_table(tmp_path / "r" / "packets.parquet").to_pylist()
    assert all(r["fate"] == "delivered" for r in rows)
    assert all(r["end_ps"] - r["created_ps"] == r["queue_delay_ps"] + r["length"] * 800 for r in rows)
    assert sum(r["queue_delay_ps"] == 0 for r in rows) > 100
    recs = pcap_records(out_pcap)
    assert len(recs) == 160
    assert [ts for ts, _ in recs] == sorted(ts for ts, _ in recs)


def test_out_pcap_timestamps_are_input_plus_delay(tmp_path, datasets):
    out_pcap = tmp_path / "out.pcap"
    assert (
        main(
            [
                "run",
                "--pcap",
                str(datasets / TRACE),
                "--out-pcap",
                str(out_pcap),
                "--detail",
                "-q",
                "-o",
                str(tmp_path / "r"),
            ]
        )
        == 0
    )
    rows = pq.read_table(tmp_path / "r" / "packets.parquet").to_pylist()
    recs = pcap_records(out_pcap)
    base = recs[0][0] - rows[0]["end_ps"] // 1000  # the capture epoch of the first packet
    assert [ts for ts, _ in recs] == [base + r["end_ps"] // 1000 for r in rows]


def test_synthetic_source_with_classes(tmp_path, capsys):
    rc = main(
        [
            "run",
            "--source",
            "poisson(load=0.3, size=40, cls=0, stop=200us, seed=3)",
            "--source",
            "poisson(load=0.3, size=1500, cls=1, stop=200us, seed=4)",
            "--class",
            "sensing:50us",
            "--class",
            "file:200us",
            "--element",
            "chutq(policy=dcf, shim=0)",
            "-o",
            str(tmp_path / "r"),
        ]
    )
    assert rc == 0
    m = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert [c["name"] for c in m["classes"]] == ["sensing", "file"]
    assert m["classes"][0]["budget_ps"] == 50 * 10**6
    assert m["nodes"][0]["max_transmission_bytes"] <= 9000
    assert "sensing" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--element", "efd(capacity=300, th=30000"], "expected ',' or ')'"),
        (["--element", "efd(capacty=300)"], "unknown parameter 'capacty'"),
        (["--element", "nosuch"], "unknown element 'nosuch'"),
        (["--element", "fifo", "--rate", "10X"], "not a bit rate"),
        (["--until", "5"], "not a duration"),
    ],
)
def test_bad_options_are_named(tmp_path, datasets, capsys, args, message):
    rc = main(["run", "--pcap", str(datasets / TRACE), *args, "-o", str(tmp_path / "r")])
    assert rc == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "element, message",
    [
        ("sift(p=2)", "sift: p=2 out of range (0, 1]"),
        ("xprotect(p_ins=0)", "xprotect: p_ins=0 out of range (0, 1]"),
        ("efd(th=0)", "efd: th=0 out of range [1, inf)"),
        ("ncqplus(alpha=1)", "ncqplus: alpha=1 out of range (0, 1)"),
        ("lars(tau=0s)", "lars: tau=0 out of range (0, inf) s"),
    ],
)
def test_out_of_range_parameters_are_refused(tmp_path, datasets, capsys, element, message):
    # click-elements/core/param_checks.hh: refused before the run, in one line
    # naming the parameter, its value and the allowed range.
    rc = main(["run", "--pcap", str(datasets / TRACE), "--element", element, "-o", str(tmp_path / "r")])
    assert rc == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r" / "metrics.json").exists()


def test_missing_input_is_an_error_not_a_crash(tmp_path, capsys):
    rc = main(["run", "--pcap", str(tmp_path / "nope.pcap"), "-o", str(tmp_path / "r")])
    assert rc == 3  # an input it cannot read
    assert "nope.pcap" in capsys.readouterr().err


def test_sweep_over_a_grid(tmp_path):
    config = tmp_path / "sweep.yaml"
    config.write_text(
        "sources: ['poisson(load={load}, size=1500, count=20000, seed=5)']\n"
        "nodes: [{element: 'fifo(capacity=100000)', rate: 10G}]\n"
    )
    rc = main(["sweep", "--config", str(config), "--grid", "load=0.2,0.5,0.8", "-q", "-o", str(tmp_path / "s")])
    assert rc == 0
    rows = pq.read_table(tmp_path / "s" / "sweep.parquet").to_pylist()
    assert [r["load"] for r in rows] == ["0.2", "0.5", "0.8"]
    # M/D/1: mean wait rho*S/(2(1-rho)), S = 1.2 us; within 10 % on 20 000 packets.
    for r in rows:
        rho = float(r["load"])
        expect = rho * 1.2e6 / (2 * (1 - rho))
        assert r["all.queue_delay_mean_ps"] == pytest.approx(expect, rel=0.1)
    assert (tmp_path / "s" / "load=0.5" / "metrics.json").is_file()


def _sweep_lines(capsys) -> dict[str, str]:
    """Each run's progress line of a sweep, by label: 'reused' or a wall time."""
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("[")]
    return {ln.split("] ", 1)[1].split(":", 1)[0]: ln for ln in lines}


def test_sweep_resume_reuses_only_runs_with_the_same_config_hash(tmp_path, datasets, capsys):
    (tmp_path / "t.pcap").write_bytes((datasets / TRACE).read_bytes())
    config = tmp_path / "sweep.yaml"
    text = (
        "sources: ['poisson(load={load}, size=1500, count=2000, seed=5)', 'pcap(path=t.pcap, speed=2)']\n"
        "nodes: [{element: 'fifo(capacity=100)', rate: 10G}]\n"
        "grid: {load: [0.2, 0.5]}\n"
    )
    config.write_text(text)
    out = tmp_path / "s"
    assert main(["sweep", str(config), "-o", str(out)]) == 0
    first = {d: (out / d / "metrics.json").read_bytes() for d in ("load=0.2", "load=0.5")}
    hashes = {json.loads(b)["config_hash"] for b in first.values()}
    assert len(hashes) == 2 and all(len(h) == 64 for h in hashes)
    capsys.readouterr()
    # The same sweep: every run is reused, byte for byte.
    assert main(["sweep", str(config), "-o", str(out), "--resume"]) == 0
    lines = _sweep_lines(capsys)
    assert all(ln.endswith("reused") for ln in lines.values()) and len(lines) == 2
    assert {d: (out / d / "metrics.json").read_bytes() for d in first} == first
    # A change outside the grid (the link rate) changes every run's key: all rerun.
    config.write_text(text.replace("rate: 10G", "rate: 1G"))
    assert main(["sweep", str(config), "-o", str(out), "--resume"]) == 0
    assert not any(ln.endswith("reused") for ln in _sweep_lines(capsys).values())
    assert json.loads((out / "load=0.2" / "metrics.json").read_text())["config"]["nodes"][0]["rate"] == "1G"
    # A changed input pcap (same path) reruns, and so does a run whose key differs.
    config.write_text(text)
    assert main(["sweep", str(config), "-o", str(out)]) == 0
    capsys.readouterr()
    doc = json.loads((out / "load=0.5" / "metrics.json").read_text())
    doc["config_hash"] = "0" * 64
    (out / "load=0.5" / "metrics.json").write_text(json.dumps(doc))
    assert main(["sweep", str(config), "-o", str(out), "--resume"]) == 0
    lines = _sweep_lines(capsys)
    assert lines["load=0.2"].endswith("reused") and not lines["load=0.5"].endswith("reused")
    with open(tmp_path / "t.pcap", "ab") as fh:
        fh.write(b"\0" * 16)  # one more (empty) record: the same path, other contents
    assert main(["sweep", str(config), "-o", str(out), "--resume"]) == 0
    assert not any(ln.endswith("reused") for ln in _sweep_lines(capsys).values())


def test_sweep_without_resume_reruns_everything(tmp_path, capsys):
    config = tmp_path / "sweep.yaml"
    config.write_text("sources: ['poisson(load={load}, size=1500, count=500, seed=5)']\ngrid: {load: [0.3]}\n")
    assert main(["sweep", str(config), "-o", str(tmp_path / "s")]) == 0
    assert main(["sweep", str(config), "-o", str(tmp_path / "s")]) == 0
    assert not any(ln.endswith("reused") for ln in _sweep_lines(capsys).values())


def test_sweep_placeholder_errors(tmp_path, capsys):
    config = tmp_path / "sweep.yaml"
    config.write_text("sources: ['poisson(load={load}, count=10)']\n")
    assert main(["sweep", "--config", str(config), "--grid", "rate=1,2", "-o", str(tmp_path / "s")]) == 2
    assert "placeholders without values: load" in capsys.readouterr().err


def test_python_api_rejects_unknown_keys():
    with pytest.raises(engine.SpecError, match="unknown key 'sourcez'"):
        engine.run({"sourcez": []})


def test_config_file_with_relative_pcap_path_and_overrides(tmp_path, datasets):
    trace = datasets / TRACE
    (tmp_path / "t.pcap").symlink_to(trace)
    config = tmp_path / "run.yaml"
    config.write_text(
        "sources: [\"pcap(path=t.pcap, filter='ip')\"]\n"
        "nodes: [{element: 'fifo(capacity=50, in_service=0)', rate: 300k}]\n"
    )
    assert main(["run", "--config", str(config), "-q", "-o", str(tmp_path / "a")]) == 0
    a = json.loads((tmp_path / "a" / "metrics.json").read_text())
    assert a["sources"][0]["counts"]["replayed"] == 150  # the IPv4 packets
    # in_service=0 is Click's Queue: 9 drops as in the Click cross-check case
    assert a["overall"]["dropped"]["buffer_full"] == 9
    # An option overrides the file: a faster link drops nothing.
    assert main(["run", "--config", str(config), "--rate", "10G", "-q", "-o", str(tmp_path / "b")]) == 0
    b = json.loads((tmp_path / "b" / "metrics.json").read_text())
    assert b["overall"]["dropped_total"] == 0
    assert b["config"]["nodes"][0]["element"] == "fifo(capacity=50, in_service=0)"


def test_a_full_disk_while_the_engine_writes_its_pcap_is_exit_4(tmp_path, datasets):
    """The engine checks its pcap writes itself: a file size limit below the
    delivered pcap's size (EFBIG, as a full disk gives ENOSPC) ends the run
    with one line naming the pcap and the reason, and nothing is left."""

    def limit_file_size():
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))

    argv = ["replay", "run", "--pcap", str(datasets / TRACE), "--element", "fifo(capacity=300)", "--rate", "10G"]
    argv += ["--out-pcap", str(tmp_path / "d.pcap"), "-o", str(tmp_path / "r"), "-q"]
    done = subprocess.run(
        [sys.executable, "-m", "tracelab.cli", *argv],
        capture_output=True,
        text=True,
        preexec_fn=limit_file_size,
        timeout=120,
    )
    assert done.returncode == 4
    assert done.stderr == f"tracelab: error: cannot write '{tmp_path / 'd.pcap'}': {os.strerror(errno.EFBIG)}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def write_udp_pcap(path, times_ns):
    """A nanosecond Ethernet pcap of 100-byte IPv4/UDP packets at `times_ns`."""
    ip = bytes([0x45, 0, 0, 100, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 1, 1]) + bytes(80)
    frame = bytes(12) + b"\x08\x00" + ip
    out = [struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1)]
    for t in times_ns:
        out.append(struct.pack("<IIII", t // 10**9, t % 10**9, len(frame), len(frame)) + frame)
    path.write_bytes(b"".join(out))


def test_a_capture_spanning_years_replays_with_exact_times(tmp_path):
    """The engine skips the idle years beyond 13 days and reports the exact
    times, beyond 64-bit picoseconds, as Python ints."""
    t0, years = 1_700_000_000 * 10**9, 2117 * 86400 * 10**9  # 5.8 years in ns
    write_udp_pcap(tmp_path / "y.pcap", [t0, t0 + 1000, t0 + years, t0 + years + 1000])
    m = engine.run({"sources": [f"pcap(path='{tmp_path / 'y.pcap'}')"], "nodes": [{"element": "fifo(capacity=10)"}]})
    t = m["timing"]
    assert m["overall"]["delivered"] == 4
    assert t["last_arrival_ps"] == (years + 1000) * 1000 > 2**63
    assert t["end_ps"] == t["last_arrival_ps"] + 80 * 1000  # 100 bytes at 10 Gb/s
    assert t["idle_skipped_ps"] == years * 1000 - (1000 + 80) * 1000 - 2**60
