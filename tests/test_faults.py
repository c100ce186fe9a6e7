"""Fault injection across the Python commands: nothing lost, nothing silent.

Every command that writes results (model derive, roles train/apply, synth,
replay run/sweep, report) is run against a previous output of its own and then
killed (-9), interrupted (SIGINT, SIGTERM) just before its output is renamed
into place, limited to a file size smaller than its output (a full disk:
RLIMIT_FSIZE), refused its output directory (read-only) or its input
(unreadable); then come broken inputs: pcap and pcapng cut at each section
boundary, gzip streams cut, corrupt records, bad model and sweep files, and
element parameters out of range. Each case checks the exit status, that stderr
is the one error line, and that the previous output is byte for byte what it
was, with no partial file beside it.

The signals are sent from inside the command (tests/test_faults.py's HOOK
wraps os.rename/os.replace of the commands' temporary siblings), so they land
at the worst moment: everything written, nothing renamed yet.
"""

from __future__ import annotations

import ctypes
import gzip
import itertools
import json
import os
import resource
import shutil
import signal
import struct
import subprocess
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import run_tracelab

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "datasets" / "real" / "pcapplusplus-example.pcap"
SMALL_PCAP = ROOT / "datasets" / "public" / "real" / "tcpreplay" / "test.pcap"
SMALL_PCAPNG = ROOT / "datasets" / "public" / "real" / "libtrace" / "100_packets.pcapng"

# Runs `tracelab ARGS...` with os.rename/os.replace wrapped: the Nth rename of
# a temporary sibling (".partial-" / ".old-" in its name), or with N
# "after-aside" the rename that follows putting a previous directory aside,
# first sends the process the signal named by FAULT ("kill", "int", "term").
HOOK = r"""
import os, signal, sys, time
kind, nth = os.environ["FAULT"].split(":")
signum = {"kill": signal.SIGKILL, "int": signal.SIGINT, "term": signal.SIGTERM}[kind]
seen, aside = [0], [False]
def wrap(real):
    def renamed(src, dst, *a, **k):
        if any(".partial-" in os.fspath(p) or ".old-" in os.fspath(p) for p in (src, dst)):
            seen[0] += 1
            if (nth == "after-aside" and aside[0]) or seen[0] == (int(nth) if nth.isdigit() else -1):
                os.kill(os.getpid(), signum)
                time.sleep(2)  # the handler raises here, unless the signal is held
            aside[0] = ".old-" in os.fspath(dst)
        return real(src, dst, *a, **k)
    return renamed
os.rename, os.replace = wrap(os.rename), wrap(os.replace)
from tracelab.cli import main
sys.exit(main(sys.argv[1:]))
"""

PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 24, 1, 2


def without_root_override():
    """Permissions bind root too: drop the capabilities that bypass them from
    the bounding set, so the exec'd command has neither."""
    if os.geteuid() == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
            if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def file_size_limit(limit: int):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def with_ctrl_c(preexec=None):
    """A child of a shell's background job inherits SIGINT ignored, and Python
    then installs no Ctrl-C handler: the commands get the default back."""

    def apply():
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if preexec is not None:
            preexec()

    return apply


def tracelab(argv: list[str], cwd: Path, fault: str | None = None, preexec=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, FAULT=fault) if fault else None
    cmd = [sys.executable, "-c", HOOK, *argv] if fault else [sys.executable, "-m", "tracelab.cli", *argv]
    return subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, preexec_fn=with_ctrl_c(preexec), timeout=600
    )


@dataclass(frozen=True)
class Command:
    name: str
    argv: list[str]
    outputs: list[str]  # relative to the workspace; directories end in "/"
    unreadable: str  # an input the command must read
    unreadable_status: int = 3  # 2 for a configuration file (tracelab.errors)


REPLAY_RUN = ["replay", "run", "--pcap", "t.pcap", "--element", "fifo(capacity=50)", "--rate", "300k"]
COMMANDS = [
    Command("model-derive", ["model", "derive", "p", "-o", "out/m.json"], ["out/m.json"], "p/connections.parquet"),
    Command("roles-train", ["roles", "train", "p", "-o", "out/roles.json"], ["out/roles.json"], "p/hosts.parquet"),
    Command(
        "roles-apply", ["roles", "apply", "roles.json", "p", "-o", "out/roles.csv"], ["out/roles.csv"], "roles.json"
    ),
    Command(
        "synth",
        ["synth", "m.json", "-o", "out/s.pcap", "--truth", "out/t.parquet", "--seed", "1", "-q"],
        ["out/s.pcap", "out/t.parquet"],
        "m.json",
    ),
    Command(
        "replay-run",
        [*REPLAY_RUN, "--out-pcap", "out/d.pcap", "-o", "out/run/", "-q"],
        ["out/run/", "out/d.pcap"],
        "t.pcap",
    ),
    Command(
        "replay-sweep", ["replay", "sweep", "sweep.yaml", "-o", "out/sweep/", "-q"], ["out/sweep/"], "sweep.yaml", 2
    ),
    Command("report", ["report", "p", "-o", "out/report/"], ["out/report/"], "p/summary.json"),
]
DIRECTORY_OUTPUTS = [c for c in COMMANDS if any(o.endswith("/") for o in c.outputs)]
SWEEP = (
    "sources: ['poisson(load={load}, size=1500, count=3000, seed=3)']\n"
    "nodes: [{element: '{element}', rate: 10G}]\n"
    "grid: {load: [0.5, 1.2], element: ['fifo(capacity=20)', 'efd(capacity=20)']}\n"
)


def ok(argv: list[str], cwd: Path) -> None:
    r = tracelab(argv, cwd)
    assert r.returncode == 0, f"{argv}: {r.returncode}\n{r.stderr}"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """The inputs every command reads: a profile, its model, a role model, a
    small pcap and a sweep spec."""
    ws = tmp_path_factory.mktemp("inputs")
    ok(["profile", str(EXAMPLE), "--local", "10.0.0.0/8", "-o", "p", "--quiet", "--no-progress"], ws)
    ok(["model", "derive", "p", "-o", "m.json"], ws)
    ok(["roles", "train", "p", "-o", "roles.json"], ws)
    shutil.copy(SMALL_PCAP, ws / "t.pcap")
    (ws / "sweep.yaml").write_text(SWEEP)
    return ws


@pytest.fixture(scope="module")
def previous(inputs, tmp_path_factory) -> dict[str, Path]:
    """Per command, a workspace holding its inputs and a previous output, marked
    so that an identical rerun would still differ from it."""
    made = {}
    for c in COMMANDS:
        ws = tmp_path_factory.mktemp(c.name)
        shutil.copytree(inputs, ws, dirs_exist_ok=True)
        (ws / "out").mkdir()
        ok(c.argv, ws)
        for out in c.outputs:
            path = ws / out
            if path.is_dir():
                (path / "previous-run.txt").write_text("the previous output\n")
            else:
                with open(path, "ab") as fh:
                    fh.write(b"\n# the previous output\n")
        made[c.name] = ws
    return made


def workspace(previous: dict[str, Path], command: Command, tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(previous[command.name], ws, symlinks=True)
    return ws


def snapshot(ws: Path, command: Command) -> dict[str, bytes]:
    state = {}
    for out in command.outputs:
        path = ws / out
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for f in files:
            state[str(f.relative_to(ws))] = f.read_bytes()
    return state


def strays(ws: Path) -> list[str]:
    """Temporary siblings left in the workspace."""
    return sorted(str(p.relative_to(ws)) for p in ws.rglob("*") if ".partial-" in p.name or ".old-" in p.name)


def one_error_line(r: subprocess.CompletedProcess) -> str:
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("tracelab: error: "), lines[0]
    return lines[0]


def largest_output(ws: Path, command: Command) -> int:
    return max(len(b) for b in snapshot(ws, command).values())


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_kill_9_before_the_rename_keeps_the_previous_output(command, previous, tmp_path):
    ws = workspace(previous, command, tmp_path)
    before = snapshot(ws, command)
    r = tracelab(command.argv, ws, fault="kill:1")
    assert r.returncode == -signal.SIGKILL, r.stderr
    assert snapshot(ws, command) == before
    assert strays(ws)  # the killed run's partial output: the next run removes it
    ok(command.argv, ws)
    assert strays(ws) == []
    assert snapshot(ws, command) != before


@pytest.mark.parametrize("command", DIRECTORY_OUTPUTS, ids=lambda c: c.name)
def test_kill_9_between_the_two_renames_of_a_directory(command, previous, tmp_path):
    """The old directory is aside, the new one not yet in: the next run puts the
    old one back before it starts, and then replaces it."""
    ws = workspace(previous, command, tmp_path)
    before = snapshot(ws, command)
    r = tracelab(command.argv, ws, fault="kill:after-aside")
    assert r.returncode == -signal.SIGKILL, r.stderr
    assert any(".old-" in s for s in strays(ws))
    from tracelab_models.outputs import clean_stale

    for out in command.outputs:
        clean_stale(ws / out.rstrip("/"))
    # A command with a file output beside the directory (replay run --out-pcap)
    # has renamed the file already: no rename spans two paths.
    directory = {k: v for k, v in snapshot(ws, command).items() if not k.endswith(".pcap")}
    assert directory == {k: v for k, v in before.items() if not k.endswith(".pcap")}
    ok(command.argv, ws)
    assert strays(ws) == []


TWO_OUTPUTS = [c for c in COMMANDS if len(c.outputs) > 1]


@pytest.mark.parametrize("nth", [1, 2])
@pytest.mark.parametrize("command", TWO_OUTPUTS, ids=lambda c: c.name)
def test_a_signal_between_two_outputs_renames_both(command, nth, previous, tmp_path):
    """SIGINT before or after the first of two outputs is renamed: the signal
    is held until the second is in place too, so the pair is never half new."""
    ws = workspace(previous, command, tmp_path)
    before = snapshot(ws, command)
    r = tracelab(command.argv, ws, fault=f"int:{nth}")
    assert r.returncode == 130, r.stderr
    assert one_error_line(r) == "tracelab: error: interrupted (SIGINT)"
    after = snapshot(ws, command)
    assert all(after[k] != before[k] for k in before if "previous-run.txt" not in k)
    assert strays(ws) == []


@pytest.mark.parametrize("signame", ["int", "term"])
@pytest.mark.parametrize("command", [c for c in COMMANDS if len(c.outputs) == 1], ids=lambda c: c.name)
def test_a_signal_while_writing_leaves_nothing(command, signame, previous, tmp_path):
    """(The commands with two outputs hold a signal that comes while they rename
    them: test_a_signal_between_two_outputs_renames_both. The real Ctrl-C tests
    below interrupt them mid-write.)"""
    ws = workspace(previous, command, tmp_path)
    before = snapshot(ws, command)
    r = tracelab(command.argv, ws, fault=f"{signame}:1")
    signum = signal.SIGINT if signame == "int" else signal.SIGTERM
    assert r.returncode == 128 + signum, r.stderr
    assert one_error_line(r) == f"tracelab: error: interrupted ({signum.name})"
    assert "Traceback" not in r.stderr
    assert snapshot(ws, command) == before and strays(ws) == []


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_a_full_disk_is_exit_4_and_the_previous_output_stays(command, previous, tmp_path):
    ws = workspace(previous, command, tmp_path)
    before = snapshot(ws, command)
    r = tracelab(command.argv, ws, preexec=file_size_limit(largest_output(ws, command) // 2))
    assert r.returncode == 4, r.stderr
    assert one_error_line(r).startswith("tracelab: error: cannot write ")
    assert snapshot(ws, command) == before and strays(ws) == []


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_a_read_only_output_directory_is_exit_4(command, previous, tmp_path):
    ws = workspace(previous, command, tmp_path)
    before = snapshot(ws, command)
    (ws / "out").chmod(0o555)
    try:
        r = tracelab(command.argv, ws, preexec=without_root_override)
    finally:
        (ws / "out").chmod(0o755)
    assert r.returncode == 4, r.stderr
    line = one_error_line(r)
    assert line.startswith("tracelab: error: cannot write ") and "Permission denied" in line
    assert snapshot(ws, command) == before and strays(ws) == []


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_an_unreadable_input_is_exit_3_or_2_for_a_configuration(command, previous, tmp_path):
    ws = workspace(previous, command, tmp_path)
    before = snapshot(ws, command)
    (ws / command.unreadable).chmod(0o000)
    try:
        r = tracelab(command.argv, ws, preexec=without_root_override)
    finally:
        (ws / command.unreadable).chmod(0o644)
    assert r.returncode == command.unreadable_status, r.stderr
    assert Path(command.unreadable).name in one_error_line(r)
    assert snapshot(ws, command) == before and strays(ws) == []


# ------------------------------------------------------------------ broken inputs


def cut(data: bytes, at: int) -> bytes:
    return data[:at]


def _pcap_cases() -> dict[str, bytes]:
    pcap = SMALL_PCAP.read_bytes()
    first_caplen = struct.unpack_from("<I", pcap, 24 + 8)[0]
    second = 24 + 16 + first_caplen
    bad_caplen = bytearray(pcap)
    struct.pack_into("<I", bad_caplen, second + 8, 0x7FFFFFF0)
    ng = SMALL_PCAPNG.read_bytes()
    shb_len = struct.unpack_from("<I", ng, 4)[0]
    idb_len = struct.unpack_from("<I", ng, shb_len + 4)[0]
    epb = shb_len + idb_len
    return {
        "pcap-in-file-header": cut(pcap, 10),
        "pcap-in-first-record-header": cut(pcap, 24 + 8),
        "pcap-in-first-record-data": cut(pcap, 24 + 16 + first_caplen // 2),
        "pcap-in-second-record-header": cut(pcap, second + 5),
        "pcap-bad-magic": b"\x00\x01\x02\x03" + pcap[4:],
        "pcap-huge-caplen": bytes(bad_caplen),
        "pcapng-in-section-header": cut(ng, 14),
        "pcapng-in-interface-block": cut(ng, shb_len + 10),
        "pcapng-in-first-packet-block": cut(ng, epb + 40),
    }


PCAP_CASES = _pcap_cases()


@pytest.mark.parametrize("case", list(PCAP_CASES))
def test_replay_of_a_broken_capture_is_exit_3(case, previous, tmp_path):
    command = next(c for c in COMMANDS if c.name == "replay-run")
    ws = workspace(previous, command, tmp_path)
    before = snapshot(ws, command)
    (ws / "t.pcap").write_bytes(PCAP_CASES[case])
    r = tracelab(command.argv, ws)
    assert r.returncode == 3, r.stderr
    assert "t.pcap" in one_error_line(r)
    assert snapshot(ws, command) == before and strays(ws) == []


def _gz_cases() -> dict[str, bytes]:
    whole = gzip.compress(SMALL_PCAPNG.read_bytes(), mtime=0)
    return {
        "gz-in-header": cut(whole, 5),
        "gz-in-deflate-stream": cut(whole, len(whole) // 2),
        "gz-without-trailer": cut(whole, len(whole) - 4),
        "gz-bad-crc": whole[:-8] + bytes(b ^ 0xFF for b in whole[-8:-4]) + whole[-4:],
    }


GZ_CASES = _gz_cases()


# A capture that ends in a cut record (a file still being written, a rotated
# file cut by a full disk) is profiled up to the cut, the cut listed in
# summary.json's `truncated_tails` with one warning line, exit 0; a file cut in
# its file header is no capture, and corruption (a bad length or block, bad
# gzip data or checksum) fails the profile: exit 3, one line, nothing replaced
# (docs/analyzer.md). The oracles below walk the files with `struct`/`zlib`,
# independently of the analyzer's readers.

ANALYZER = ROOT / "analyzer" / "target" / "release" / "tracelab-analyzer"


def pcapng_blocks(data: bytes) -> list[tuple[int, int, int]]:
    """(start, end, type) of each whole block of a little-endian pcapng."""
    blocks, at = [], 0
    while at + 8 <= len(data):
        kind, length = struct.unpack_from("<II", data, at)
        if at + length > len(data):
            break
        blocks.append((at, at + length, kind))
        at += length
    return blocks


def pcap_records(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each whole record of a little-endian pcap."""
    records, at = [], 24
    while at + 16 <= len(data):
        end = at + 16 + struct.unpack_from("<I", data, at + 8)[0]
        if end > len(data):
            break
        records.append((at, end))
        at = end
    return records


def whole_packets(data: bytes) -> tuple[int, int | None]:
    """The oracle for a cut capture: its whole packet records and, if it ends
    inside one, where that record starts (None when it ends on a boundary)."""
    if data[:4] == b"\x0a\x0d\x0d\x0a":
        blocks = pcapng_blocks(data)
        packets = sum(1 for _, _, kind in blocks if kind == 6)
        end = blocks[-1][1] if blocks else 0
    else:
        records = pcap_records(data)
        packets, end = len(records), records[-1][1] if records else 24
    return packets, None if end == len(data) else end


def profile_directly(trace: Path, out: Path) -> subprocess.CompletedProcess:
    """The analyzer itself (no Python start-up): the cut sweeps run it often."""
    argv = [str(ANALYZER), str(trace), "-o", str(out), "--quiet", "--no-progress", "--threads", "1"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def assert_profiled_up_to_the_cut(r: subprocess.CompletedProcess, out: Path, name: str, packets: int, cut_at):
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["packets"]["read"] == packets
    tails = summary["truncated_tails"]
    if cut_at is None:
        assert tails == [] and r.stderr == "", r.stderr
        return
    assert [(Path(t["file"]).name, t["offset"]) for t in tails] == [(name, cut_at)]
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "warning" in lines[0] and name in lines[0] and f"offset {cut_at}" in lines[0], r.stderr


def cut_points(starts: list[int], first: int) -> list[int]:
    """Every boundary from `first` on, and a point inside each record (its
    header for one half of them, its data for the other)."""
    points = [starts[-1]]
    for i, (a, b) in enumerate(itertools.pairwise(starts)):
        points += [a, a + 4 if i % 2 else a + (b - a) // 2 + 1]
    return sorted({p for p in points if p >= first})


@pytest.mark.parametrize("fmt", ["pcap", "pcapng"])
def test_a_capture_cut_at_every_record_is_profiled_up_to_the_cut(fmt, tmp_path):
    whole = (SMALL_PCAP if fmt == "pcap" else SMALL_PCAPNG).read_bytes()
    if fmt == "pcap":
        starts = [a for a, _ in pcap_records(whole)] + [len(whole)]
        header_end = 24
    else:
        starts = [a for a, _, _ in pcapng_blocks(whole)] + [len(whole)]
        header_end = starts[1]  # the section header block
    for at in cut_points(starts, header_end):
        trace, out = tmp_path / f"cut-{at}.{fmt}", tmp_path / f"out-{at}"
        trace.write_bytes(whole[:at])
        packets, cut_at = whole_packets(whole[:at])
        assert_profiled_up_to_the_cut(profile_directly(trace, out), out, trace.name, packets, cut_at)
    # Cut in its file header (the section header), a file is no capture.
    for at in (0, 3, header_end // 2, header_end - 1):
        trace = tmp_path / f"head-{at}.{fmt}"
        trace.write_bytes(whole[:at])
        r = profile_directly(trace, tmp_path / "no-out")
        assert r.returncode == 3 and len(r.stderr.strip().splitlines()) == 1 and trace.name in r.stderr, r.stderr
        assert not (tmp_path / "no-out").exists()


def test_a_gzip_capture_cut_anywhere_is_profiled_up_to_the_cut(tmp_path):
    """A gzip stream cut in its deflate data or its trailer: the packets whose
    bytes were inflated (zlib's own decoder is the oracle), as for a file."""
    whole = gzip.compress(SMALL_PCAPNG.read_bytes(), mtime=0)
    shb_len = struct.unpack_from("<I", SMALL_PCAPNG.read_bytes(), 4)[0]
    points = sorted({*range(200, len(whole), len(whole) // 23), len(whole) - 8, len(whole) - 4, len(whole) - 1})
    for at in points:
        trace, out = tmp_path / f"cut-{at}.pcapng.gz", tmp_path / f"out-{at}"
        trace.write_bytes(whole[:at])
        inflated = zlib.decompressobj(wbits=31).decompress(whole[:at])
        assert len(inflated) > shb_len
        packets, cut_at = whole_packets(inflated)
        # A stream without its trailer is cut even when it ends on a block.
        cut_at = len(inflated) if cut_at is None else cut_at
        assert_profiled_up_to_the_cut(profile_directly(trace, out), out, trace.name, packets, cut_at)


def corrupt_cases() -> dict[str, bytes]:
    ng = bytearray(SMALL_PCAPNG.read_bytes())
    blocks = pcapng_blocks(bytes(ng))
    middle = blocks[len(blocks) // 2][0]
    struct.pack_into("<I", ng, middle + 4, 13)  # a block length no block has
    whole = gzip.compress(SMALL_PCAPNG.read_bytes(), mtime=0)
    flipped = bytearray(whole)
    for i in range(len(whole) // 2, len(whole) // 2 + 16):
        flipped[i] ^= 0x5A
    return {
        "pcap-huge-caplen": PCAP_CASES["pcap-huge-caplen"],
        "pcap-bad-magic": PCAP_CASES["pcap-bad-magic"],
        "pcapng-bad-block-length": bytes(ng),
        "gz-bad-crc": GZ_CASES["gz-bad-crc"],
        "gz-corrupt-deflate": bytes(flipped),
    }


CORRUPT_CASES = corrupt_cases()
CUT_CASES = {
    "pcap-in-second-record-header": PCAP_CASES["pcap-in-second-record-header"],
    "pcapng-in-first-packet-block": PCAP_CASES["pcapng-in-first-packet-block"],
    "gz-in-deflate-stream": GZ_CASES["gz-in-deflate-stream"],
    "gz-without-trailer": GZ_CASES["gz-without-trailer"],
}


@pytest.fixture()
def previous_profile(tmp_path) -> tuple[Path, dict[str, bytes]]:
    """A workspace whose `p` is a previous profile, and its bytes."""
    ok(["profile", str(SMALL_PCAP), "-o", "p", "--quiet", "--no-progress"], tmp_path)
    (tmp_path / "p" / "previous-run.txt").write_text("the previous output\n")
    return tmp_path, {str(f.relative_to(tmp_path)): f.read_bytes() for f in (tmp_path / "p").rglob("*") if f.is_file()}


def profile_dir(ws: Path) -> dict[str, bytes]:
    return {str(f.relative_to(ws)): f.read_bytes() for f in (ws / "p").rglob("*") if f.is_file()}


def trace_name(case: str) -> str:
    return "t.pcapng.gz" if case.startswith("gz") else "t.pcap"


@pytest.mark.parametrize("case", list(CORRUPT_CASES))
def test_profile_of_a_corrupt_capture_is_exit_3_and_replaces_nothing(case, previous_profile):
    ws, before = previous_profile
    (ws / trace_name(case)).write_bytes(CORRUPT_CASES[case])
    r = run_tracelab("profile", trace_name(case), "-o", "p", "--quiet", "--no-progress", cwd=ws)
    assert r.returncode == 3, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and trace_name(case) in lines[0] and "offset" in lines[0], r.stderr
    assert profile_dir(ws) == before and strays(ws) == []


@pytest.mark.parametrize("case", list(CUT_CASES))
def test_profile_of_a_cut_capture_replaces_the_previous_one_whole(case, previous_profile):
    ws, _ = previous_profile
    (ws / trace_name(case)).write_bytes(CUT_CASES[case])
    r = run_tracelab("profile", trace_name(case), "-o", "p", "--quiet", "--no-progress", cwd=ws)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "warning" in lines[0] and trace_name(case) in lines[0], r.stderr
    after = profile_dir(ws)
    assert "p/previous-run.txt" not in after and set(after) >= {"p/summary.json", "p/connections.parquet"}
    assert json.loads(after["p/summary.json"])["truncated_tails"][0]["file"] == trace_name(case)
    assert strays(ws) == []


def rotated_files(ws: Path) -> list[Path]:
    """SMALL_PCAP's records cut into three rotated files, in time order."""
    whole = SMALL_PCAP.read_bytes()
    records = pcap_records(whole)
    thirds = [records[: len(records) // 3], records[len(records) // 3 : 2 * len(records) // 3]]
    thirds.append(records[2 * len(records) // 3 :])
    files = []
    for i, part in enumerate(thirds):
        path = ws / f"rot-{i}.pcap"
        path.write_bytes(whole[:24] + b"".join(whole[a:b] for a, b in part))
        files.append(path)
    return files


def test_a_cut_rotated_file_is_counted_and_the_next_files_read(previous_profile):
    """A middle file cut short (the disk filled, then rotation went on): its
    whole records, then every record of the files after it."""
    ws, _ = previous_profile
    files = rotated_files(ws)
    middle = files[1].read_bytes()
    last_start = pcap_records(middle)[-1][0]
    files[1].write_bytes(middle[: last_start + 20])
    r = run_tracelab("profile", *(f.name for f in files), "-o", "p", "--quiet", "--no-progress", cwd=ws)
    assert r.returncode == 0, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "rot-1.pcap" in r.stderr, r.stderr
    summary = json.loads((ws / "p" / "summary.json").read_text())
    assert summary["packets"]["read"] == len(pcap_records(SMALL_PCAP.read_bytes())) - 1
    assert [(Path(t["file"]).name, t["offset"]) for t in summary["truncated_tails"]] == [("rot-1.pcap", last_start)]
    assert [f["frames"] for f in summary["trace"]["files"]] == [len(pcap_records(f.read_bytes())) for f in files]


def test_a_corrupt_rotated_file_is_exit_3_and_replaces_nothing(previous_profile):
    ws, before = previous_profile
    files = rotated_files(ws)
    middle = bytearray(files[1].read_bytes())
    struct.pack_into("<I", middle, pcap_records(bytes(middle))[3][0] + 8, 0x7FFFFFF0)
    files[1].write_bytes(bytes(middle))
    r = run_tracelab("profile", *(f.name for f in files), "-o", "p", "--quiet", "--no-progress", cwd=ws)
    assert r.returncode == 3, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "rot-1.pcap" in lines[0] and "offset" in lines[0], r.stderr
    assert profile_dir(ws) == before and strays(ws) == []


BAD_MODELS = {
    "not-json": "{",
    "not-a-model": '{"schema": "tracelab.workload-model"}',
    "empty": "",
}


@pytest.mark.parametrize("case", list(BAD_MODELS))
@pytest.mark.parametrize("name", ["synth", "replay-model"])
def test_a_bad_model_file_is_exit_3(name, case, previous, tmp_path):
    command = next(c for c in COMMANDS if c.name == ("synth" if name == "synth" else "replay-run"))
    ws = workspace(previous, command, tmp_path)
    before = snapshot(ws, command)
    (ws / "m.json").write_text(BAD_MODELS[case])
    argv = command.argv if name == "synth" else ["replay", "run", "--model", "m.json", "-o", "out/run/", "-q"]
    r = tracelab(argv, ws)
    assert r.returncode == 3, r.stderr
    assert "m.json" in one_error_line(r)
    assert snapshot(ws, command) == before and strays(ws) == []


BAD_SWEEPS = {
    "yaml-syntax": "sources: ['poisson(load={load})'\ngrid: {load: [0.5]}\n",
    "not-a-mapping": "- sources\n- grid\n",
    "grid-not-lists": "sources: ['poisson(load={load}, count=10)']\ngrid: {load: 0.5}\n",
    "unknown-key": "sourcez: ['poisson(load={load}, count=10)']\ngrid: {load: [0.5]}\n",
    "element-out-of-range": "sources: ['poisson(load=0.5, count=10)']\nnodes: [{element: '{e}'}]\n"
    "grid: {e: ['fifo(capacity=10)', 'sift(p=2)']}\n",
}


@pytest.mark.parametrize("case", list(BAD_SWEEPS))
def test_a_bad_sweep_file_is_exit_2(case, previous, tmp_path):
    command = next(c for c in COMMANDS if c.name == "replay-sweep")
    ws = workspace(previous, command, tmp_path)
    before = snapshot(ws, command)
    (ws / "sweep.yaml").write_text(BAD_SWEEPS[case])
    r = tracelab(command.argv, ws)
    assert r.returncode == 2, r.stderr
    one_error_line(r)
    assert snapshot(ws, command) == before and strays(ws) == []


@pytest.mark.parametrize(
    "element", ["sift(p=2)", "efd(capacity=0)", "fifo(capacity=-1)", "efd(capacity=300, th=0)", "sift(p=0)"]
)
def test_an_element_parameter_out_of_range_is_exit_2(element, previous, tmp_path):
    command = next(c for c in COMMANDS if c.name == "replay-run")
    ws = workspace(previous, command, tmp_path)
    before = snapshot(ws, command)
    argv = [element if a == "fifo(capacity=50)" else a for a in command.argv]
    r = tracelab(argv, ws)
    assert r.returncode == 2, r.stderr
    assert element.split("(")[0] in one_error_line(r)
    assert snapshot(ws, command) == before and strays(ws) == []


def interrupt_when(proc: subprocess.Popen, started) -> str:
    """Sends SIGINT once `started()` holds; the command's stderr."""
    try:
        for _ in range(6000):
            if started():
                break
            if proc.poll() is not None:
                pytest.fail(f"the command ended before it was interrupted: {proc.returncode}")
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        return proc.communicate(timeout=120)[1]
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_real_ctrl_c_during_a_long_replay(previous, tmp_path):
    """The engine runs without looking at signals; Ctrl-C still stops the
    command at once, mid-run, and leaves the previous run as it was."""
    command = next(c for c in COMMANDS if c.name == "replay-run")
    ws = workspace(previous, command, tmp_path)
    before = snapshot(ws, command)
    (ws / "long.yaml").write_text("sources: ['poisson(load=0.9, size=1500, count=500000000, seed=1)']\n")
    argv = [sys.executable, "-m", "tracelab.cli", "replay", "run", "--config", "long.yaml", "-o", "out/run", "-q"]
    proc = subprocess.Popen(argv, cwd=ws, stderr=subprocess.PIPE, text=True, preexec_fn=with_ctrl_c())
    err = interrupt_when(proc, lambda: any(p.name.startswith(".run.partial-") for p in (ws / "out").iterdir()))
    assert proc.returncode == 130, err
    assert err.strip() == "tracelab: error: interrupted (SIGINT)"
    assert snapshot(ws, command) == before and strays(ws) == []


def size_or_0(path: Path) -> int:
    """The size of a file that its writer may rename away at any moment."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def test_a_real_ctrl_c_during_a_long_synth(previous, tmp_path):
    """SIGINT from outside at a moment the test does not choose: as soon as a
    partial pcap appears, mid-write (the analyzer's writer's own partial inside
    synth's: `..s.partial-PID.partial-PID2.pcap`)."""
    command = next(c for c in COMMANDS if c.name == "synth")
    ws = workspace(previous, command, tmp_path)
    before = snapshot(ws, command)
    argv = [sys.executable, "-m", "tracelab.cli", "synth", "m.json", "-o", "out/s.pcap", "--duration", "600s", "-q"]
    proc = subprocess.Popen(argv, cwd=ws, stderr=subprocess.PIPE, text=True, preexec_fn=with_ctrl_c())
    out = ws / "out"
    err = interrupt_when(
        proc, lambda: any(p.name.startswith("..s.partial-") and size_or_0(p) > 0 for p in out.iterdir())
    )
    assert proc.returncode == 130, err
    assert err.strip() == "tracelab: error: interrupted (SIGINT)"
    assert snapshot(ws, command) == before and strays(ws) == []


@pytest.mark.parametrize("command", DIRECTORY_OUTPUTS, ids=lambda c: c.name)
def test_a_directory_that_is_not_a_previous_output_is_never_replaced(command, inputs, tmp_path):
    """-o pointing at a directory of other files (a typo, a home directory):
    the command refuses, exit 4, and every file there stays."""
    ws = tmp_path / "ws"
    shutil.copytree(inputs, ws)
    for out in command.outputs:
        if out.endswith("/"):
            (ws / out).mkdir(parents=True)
            (ws / out / "thesis.tex").write_text("months of work\n")
    r = tracelab(command.argv, ws)
    assert r.returncode == 4, r.stderr
    assert "does not hold a previous output of this command" in one_error_line(r)
    assert [p.name for p in (ws / "out").rglob("*") if p.is_file()] == ["thesis.tex"]
    assert strays(ws) == []
