"""Classic libpcap files (microsecond timestamps, Ethernet) of planned packets, written
by the project's one pcap writer, the Rust `tracelab_pcap::write`, through
`tracelab-analyzer write-pcap` (docs/decisions/0003-one-pcap-writer-per-language.md).

Synth streams the packet columns to it as fixed-layout little-endian records
(`RECORD`, the layout documented in
analyzer/crates/tracelab-analyzer/src/write_pcap.rs), chunk by chunk, so memory
stays bounded; the writer builds each Ethernet/IPv4 TCP or UDP frame with checksums
of the whole packet, zero payload bytes but for a service's first bytes
(payloads.py), cut at `snaplen`. It writes the file atomically: on an error nothing
replaces `path`.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ..parts import analyzer_binary
from . import payloads
from .sampling import SynthError

ETH_LEN, IP_LEN, TCP_LEN, UDP_LEN = 14, 20, 20, 8
MIN_SNAPLEN = ETH_LEN + IP_LEN + TCP_LEN  # the headers are always captured whole
PCAP_MAGIC_US = 0xA1B2C3D4

TCP, UDP = 6, 17
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10

STREAM_MAGIC = b"TLPKTS01"
# One packet: the columns synth plans (time_us ... flags) and the payloads.TABLE
# index of its first bytes (0: none).
RECORD = np.dtype(
    [
        ("time_us", "<i8"),
        ("src", "<u4"),
        ("dst", "<u4"),
        ("seq", "<u4"),
        ("ack", "<u4"),
        ("sport", "<u2"),
        ("dport", "<u2"),
        ("ip_len", "<u2"),
        ("ip_id", "<u2"),
        ("proto", "u1"),
        ("flags", "u1"),
        ("payload", "<u2"),
    ]
)
assert RECORD.itemsize == 36  # RECORD_LEN in write_pcap.rs


def _stream_header() -> bytes:
    heads = [len(payloads.TABLE).to_bytes(2, "little")]
    heads += [len(b).to_bytes(2, "little") + b for b in payloads.TABLE]
    return STREAM_MAGIC + b"".join(heads)


def records(cols: dict) -> np.ndarray:
    """The packet columns (time_us, proto, src, dst, sport, dport, ip_len, ip_id, seq,
    ack, flags; optionally payload) as stream records."""
    rec = np.zeros(len(cols["time_us"]), dtype=RECORD)
    for name in RECORD.names:
        if name in cols:
            rec[name] = cols[name]
    return rec


class PcapStream:
    """The running writer: `write` one chunk of packet columns at a time."""

    def __init__(self, proc: subprocess.Popen):
        self._proc = proc

    def write(self, cols: dict) -> None:
        try:
            self._proc.stdin.write(memoryview(records(cols)).cast("B"))
        except BrokenPipeError:
            pass  # the writer stopped on an error: `open_pcap` reports it


def _failure(proc: subprocess.Popen, path: Path) -> Exception:
    """The writer's one-line error as the exception of its class (exit statuses of
    tracelab.errors)."""
    from tracelab_models.outputs import OutputError

    line = proc.stderr.read().decode(errors="replace").strip().splitlines()
    reason = line[-1].removeprefix("tracelab-analyzer write-pcap: ") if line else ""
    if proc.returncode == 4:
        return OutputError("pcap", path, reason)
    if proc.returncode in (2, 3):
        return SynthError(f"writing the pcap {path}: {reason}")
    return RuntimeError(f"tracelab-analyzer write-pcap ended with status {proc.returncode}: {reason}")


@contextlib.contextmanager
def open_pcap(path: Path | str, snaplen: int = 65535) -> Iterator[PcapStream]:
    """Yields a PcapStream writing `path`; the file is complete when the block ends
    without an exception, and left as it was otherwise."""
    if snaplen < MIN_SNAPLEN:
        raise SynthError(f"snaplen {snaplen}: at least {MIN_SNAPLEN} (the headers are always captured)")
    binary = analyzer_binary()
    if binary is None:
        raise SynthError("the pcap writer is the Rust analyzer, which is not built: build it with `make build`")
    path = Path(path)
    cmd = [str(binary), "write-pcap", "--snaplen", str(snaplen), "-o", str(path)]
    with subprocess.Popen(cmd, stdin=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=1 << 20) as proc:
        try:
            with contextlib.suppress(BrokenPipeError):  # the writer refused to start: reported below
                proc.stdin.write(_stream_header())
            yield PcapStream(proc)
        except BaseException:
            # The writer removes its partial file on SIGTERM once its input ends.
            proc.terminate()
            raise
        finally:
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.close()
            proc.wait()
        if proc.returncode != 0:
            raise _failure(proc, path)


def write(path: Path | str, packets: dict, snaplen: int = 65535) -> None:
    """Writes time-ordered packets (columns as in `records`) to the pcap `path`."""
    with open_pcap(path, snaplen) as out:
        out.write(packets)
