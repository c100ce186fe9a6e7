"""Many rotated capture files profiled as one capture (issue #20, item 1).

A generated trace is cut into uneven files (classic pcap, pcapng, one of
them gzipped), named so that their names do not sort in time order; the
profile of the files (given one by one, as a directory and as a glob) must
equal the profile of the whole trace, uids included (a uid is a keyed hash
of the connection's first time and 5-tuple, so it survives the cut). The
files are cut and written here with `struct`, independently of the
analyzer's readers and of the project's pcap writers."""

from __future__ import annotations

import gzip
import json
import random
import struct
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from support import run_tracelab, tcpmix

ANALYZER_OPTIONS = ("--local", "10.0.0.0/8", "--quiet", "--no-progress", "--threads", "1")


def read_pcap(path: Path) -> tuple[int, list[tuple[int, int, int, bytes]]]:
    """A little-endian microsecond pcap (what tcpmix writes): its link type
    and its records as (seconds, microseconds, wire length, data)."""
    raw = path.read_bytes()
    magic, _, _, _, _, _, link_type = struct.unpack_from("<IHHiIII", raw, 0)
    assert magic == 0xA1B2C3D4, "tcpmix writes little-endian microsecond pcap"
    records, offset = [], 24
    while offset < len(raw):
        sec, usec, cap_len, wire_len = struct.unpack_from("<IIII", raw, offset)
        records.append((sec, usec, wire_len, raw[offset + 16 : offset + 16 + cap_len]))
        offset += 16 + cap_len
    return link_type, records


def pcap_bytes(link_type: int, records) -> bytes:
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, link_type)]
    for sec, usec, wire_len, data in records:
        out.append(struct.pack("<IIII", sec, usec, len(data), wire_len) + data)
    return b"".join(out)


def pcapng_bytes(link_type: int, records) -> bytes:
    """One section, one interface (default microsecond resolution), EPBs."""

    def block(kind: int, body: bytes) -> bytes:
        body += b"\0" * (-len(body) % 4)
        length = 12 + len(body)
        return struct.pack("<II", kind, length) + body + struct.pack("<I", length)

    out = [block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))]
    out.append(block(1, struct.pack("<HHI", link_type, 0, 262144)))
    for sec, usec, wire_len, data in records:
        ts = sec * 1_000_000 + usec
        out.append(block(6, struct.pack("<IIIII", 0, ts >> 32, ts & 0xFFFFFFFF, len(data), wire_len) + data))
    return b"".join(out)


def profile(out: Path, *inputs: str, cwd: Path):
    return run_tracelab("profile", *inputs, *ANALYZER_OPTIONS, "-o", str(out), cwd=cwd)


def conn_log(profile_dir: Path) -> list[str]:
    return (profile_dir / "conn.log").read_text().splitlines()


@pytest.fixture(scope="module")
def rotated(tmp_path_factory) -> tuple[Path, Path, list[Path]]:
    """The whole trace, its profile, and the rotated files cut from it."""
    base = tmp_path_factory.mktemp("rotated")
    trace = tcpmix(base / "whole.pcap", 30_000, seed=20)
    link_type, records = read_pcap(trace)
    rng = random.Random(20)
    cuts = sorted(rng.sample(range(1, len(records)), 4))
    pieces = [records[a:b] for a, b in zip([0, *cuts], [*cuts, len(records)], strict=True)]
    # Uneven on purpose: check the cut produced pieces of different sizes.
    assert len({len(p) for p in pieces}) == len(pieces)
    rotated_dir = base / "captures"
    rotated_dir.mkdir()
    # Names whose sorted order is not the time order (as with wrapping
    # ring-buffer numbers): the chain must order by first timestamp.
    names = ["c-3.pcap", "c-0.pcapng", "c-4.pcap.gz", "c-1.pcap", "c-2.pcapng"]
    files = []
    for name, piece in zip(names, pieces, strict=True):
        path = rotated_dir / name
        if name.endswith(".pcapng"):
            path.write_bytes(pcapng_bytes(link_type, piece))
        elif name.endswith(".gz"):
            path.write_bytes(gzip.compress(pcap_bytes(link_type, piece), mtime=0))
        else:
            path.write_bytes(pcap_bytes(link_type, piece))
        files.append(path)
    whole = base / "whole.profile"
    run = profile(whole, str(trace), cwd=base)
    assert run.returncode == 0, run.stderr
    return base, whole, files


@pytest.mark.parametrize("form", ["files", "directory", "glob"])
def test_rotated_files_profile_as_the_whole_trace(rotated, form):
    base, whole, files = rotated
    if form == "files":
        # In the reverse of time order: the order given does not matter.
        inputs = [str(f) for f in reversed(files)]
    elif form == "directory":
        inputs = [str(files[0].parent)]
    else:
        inputs = [str(files[0].parent / "c-*")]
    out = base / f"rotated-{form}.profile"
    run = profile(out, *inputs, cwd=base)
    assert run.returncode == 0, run.stderr
    # Headers included: #open/#close are packet times, not the wall clock.
    assert conn_log(out) == conn_log(whole)
    assert len(conn_log(whole)) > 1000
    for table in ("connections", "hosts", "load"):
        assert pq.read_table(out / f"{table}.parquet").equals(pq.read_table(whole / f"{table}.parquet")), table
    for table in ("rtt", "trains", "warmups", "packet_sizes"):
        path = f"samples/{table}.parquet"
        assert pq.read_table(out / path).equals(pq.read_table(whole / path)), table
    summary = json.loads((out / "summary.json").read_text())
    whole_summary = json.loads((whole / "summary.json").read_text())
    for section in ("packets", "connections", "hosts", "composition"):
        assert summary[section] == whole_summary[section], section
    for bound in ("first_ts", "last_ts", "duration_s"):
        assert summary["trace"][bound] == whole_summary["trace"][bound]
    parts = summary["trace"]["files"]
    assert [Path(p["path"]).name for p in parts] == ["c-3.pcap", "c-0.pcapng", "c-4.pcap.gz", "c-1.pcap", "c-2.pcapng"]
    assert sum(p["frames"] for p in parts) == whole_summary["packets"]["read"]
    # Cut from one trace: each file starts no earlier than the previous ends.
    assert parts[0]["gap_before_s"] is None
    assert all(p["gap_before_s"] >= 0 for p in parts[1:])


def test_overlapping_files_are_reported(rotated):
    base, _, files = rotated
    # The same file twice overlaps itself.
    out = base / "overlap.profile"
    run = profile(out, str(files[1]), str(files[1]), cwd=base)
    assert run.returncode == 0, run.stderr
    assert "overlap" in run.stderr
    gap = json.loads((out / "summary.json").read_text())["trace"]["files"][1]["gap_before_s"]
    assert gap < 0


def test_mismatched_link_types_are_one_error(rotated, tmp_path):
    _, _, files = rotated
    link_type, records = read_pcap(files[0]) if files[0].suffix == ".pcap" else read_pcap(files[3])
    raw_ip = tmp_path / "raw.pcap"
    # LINKTYPE_RAW (101): another link type than the Ethernet trace's.
    raw_ip.write_bytes(pcap_bytes(101, [(r[0], r[1], r[2] - 14, r[3][14:]) for r in records[:10]]))
    assert link_type == 1
    run = profile(tmp_path / "out", str(files[0]), str(raw_ip), cwd=tmp_path)
    assert run.returncode == 3
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert "link type 101" in lines[0] and "link type 1" in lines[0]
    assert not (tmp_path / "out").exists()
