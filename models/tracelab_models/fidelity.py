"""Fidelity of a synthetic trace: the marginals of two profiles side by side.

`tracelab fidelity` profiles a trace, derives its workload model, synthesizes a
trace from the model and profiles that; this module compares the two profiles
(analyzer output directories). Each marginal is computed the same way from
either profile, compared with a tolerance, and given a verdict; the contract
(names, definitions, tolerances) is docs/fidelity.md.

Distributions (connection bytes, duration, inter-arrival, handshake RTT per
scope) are also compared as wholes, with the two measures the synthetic-trace
literature publishes (NetShare, NetSSM): the Jensen-Shannon divergence of
their histograms on common logarithmic bins (base 2, so 0 = identical and
1 = disjoint) and the earth mover's distance normalised by the original's
range (0 = identical).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyarrow.compute as pc

from .profile import read_summary, read_table

# Tolerances of the contract (docs/fidelity.md).
REL_RATE = 0.10  # connections per second, bytes means, trains, host counts
SHARE_PTS = 3.0  # shares, in percentage points
REL_MEDIAN = 0.15  # medians of bytes and duration
REL_RTT = 0.20  # handshake RTT medians
REL_P99 = 0.30  # p99 of connection bytes
TOP_SERVICES = 5
JSD_BINS = 50


@dataclass(frozen=True)
class Marginal:
    name: str
    original: float | str | None
    synthetic: float | str | None
    error: float | None  # relative error, or difference in points, or None
    unit: str  # "rel" (relative error), "pts" (percentage points), "set"
    tolerance: float | None
    verdict: str  # "pass", "fail" or "n/a" (the original has no value)

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Divergence:
    name: str
    n_original: int
    n_synthetic: int
    jsd: float | None
    emd_norm: float | None

    def to_json(self) -> dict:
        return asdict(self)


CONNECTION_COLUMNS = ("ts", "proto", "scope", "orig_bytes", "resp_bytes", "duration", "rtt_handshake_s", "well_behaved",
                      "orig_trains", "resp_trains", "id.resp_p")  # fmt: skip


class ProfileView:
    """The columns of one profile that the marginals read, as NumPy arrays."""

    def __init__(self, directory: Path):
        directory = Path(directory)
        self.summary = read_summary(directory)
        conns = read_table(directory, "connections.parquet", CONNECTION_COLUMNS)
        hosts = read_table(directory, "hosts.parquet", ("local", "server", "outcnx"))
        service = read_table(directory, "connections.parquet")
        service = service.column("service") if "service" in service.column_names else None

        def col(table, name, dtype=float):
            c = table.column(name)
            if dtype is float:
                return np.asarray(pc.fill_null(c.cast("double"), math.nan).to_numpy(zero_copy_only=False), dtype=float)
            return np.asarray(c.to_pylist(), dtype=object)

        self.ts = col(conns, "ts")
        self.proto = col(conns, "proto", object)
        self.scope = col(conns, "scope", object)
        self.orig_bytes = np.nan_to_num(col(conns, "orig_bytes"))
        self.resp_bytes = np.nan_to_num(col(conns, "resp_bytes"))
        self.duration = col(conns, "duration")
        self.rtt_handshake = col(conns, "rtt_handshake_s")
        self.well_behaved = np.asarray(conns.column("well_behaved").to_pylist(), dtype=bool)
        self.trains = np.nan_to_num(col(conns, "orig_trains")) + np.nan_to_num(col(conns, "resp_trains"))
        self.resp_port = np.nan_to_num(col(conns, "id.resp_p")).astype(np.int64)
        self.service = None if service is None else np.asarray(service.to_pylist(), dtype=object)
        self.host_local = np.asarray(hosts.column("local").to_pylist(), dtype=bool)
        self.host_server = np.asarray(hosts.column("server").to_pylist(), dtype=bool)
        self.host_outcnx = np.nan_to_num(col(hosts, "outcnx"))
        self.duration_s = float(self.summary.get("trace", {}).get("duration_s") or 0.0)

    @property
    def n(self) -> int:
        return len(self.ts)

    @property
    def bytes(self) -> np.ndarray:
        return self.orig_bytes + self.resp_bytes

    def services(self) -> Counter:
        """Connections per service: the `service` the analyzer detected from the
        payload (Zeek's names), and for a connection without one (`-`, or a profile
        without the column) `proto/port` of the responder, a port-based stand-in.
        The same rule as the model's service mix (traffic.py)."""
        ports = (f"{p}/{port}" for p, port in zip(self.proto, self.resp_port, strict=True))
        if self.service is None:
            return Counter(ports)
        return Counter(s if s not in (None, "", "-") else q for s, q in zip(self.service, ports, strict=True))


# --- the contract ------------------------------------------------------------------


def _finite(x: np.ndarray) -> np.ndarray:
    return x[np.isfinite(x)]


def _rel(name: str, a: float | None, b: float | None, tol: float) -> Marginal:
    if a is None or not math.isfinite(a):
        return Marginal(name, None, b, None, "rel", tol, "n/a")
    if b is None or not math.isfinite(b):
        return Marginal(name, a, None, None, "rel", tol, "fail")
    if a == 0:  # no relative error: equal or not
        return Marginal(name, a, b, None if b else 0.0, "rel", tol, "pass" if b == 0 else "fail")
    err = (b - a) / abs(a)
    return Marginal(name, a, b, err, "rel", tol, "pass" if abs(err) <= tol + 1e-12 else "fail")


def _pts(name: str, a: float | None, b: float | None, tol: float = SHARE_PTS) -> Marginal:
    """Shares given as fractions, compared in percentage points."""
    if a is None:
        return Marginal(name, None, b, None, "pts", tol, "n/a")
    b = 0.0 if b is None else b
    err = 100.0 * (b - a)
    return Marginal(name, a, b, err, "pts", tol, "pass" if abs(err) <= tol + 1e-9 else "fail")


def _stat(x: np.ndarray, f) -> float | None:
    x = _finite(x)
    return float(f(x)) if len(x) else None


def _share(mask: np.ndarray) -> float | None:
    return float(mask.mean()) if len(mask) else None


def marginals(orig: ProfileView, synth: ProfileView) -> list[Marginal]:
    def rel(name: str, of: Callable[[ProfileView], float | None], tol: float) -> Marginal:
        return _rel(name, of(orig), of(synth), tol)

    def pts(name: str, of: Callable[[ProfileView], float | None]) -> Marginal:
        return _pts(name, of(orig), of(synth))

    def p99(x: np.ndarray) -> float:
        return float(np.quantile(x, 0.99))

    out = [rel("connections per second", lambda v: v.n / v.duration_s if v.duration_s > 0 else None, REL_RATE)]
    for proto in ("tcp", "udp"):
        out.append(rel(f"{proto.upper()} bytes per connection, mean",
                       lambda v, p=proto: _stat(v.bytes[v.proto == p], np.mean), REL_RATE))  # fmt: skip
    for proto in ("tcp", "udp", "icmp"):
        out.append(pts(f"{proto.upper()} share of connections", lambda v, p=proto: _share(v.proto == p)))
    for scope in ("intranet", "internet"):
        out.append(pts(f"{scope} share of connections", lambda v, s=scope: _share(v.scope == s)))
    for side, label in (("orig_bytes", "originator->responder"), ("resp_bytes", "responder->originator")):
        for scope in ("intranet", "internet"):
            out.append(pts(f"{scope} share of {label} bytes", lambda v, d=side, s=scope: _byte_share(v, d, s)))
    out.append(rel("connection bytes, median", lambda v: _stat(v.bytes, np.median), REL_MEDIAN))
    out.append(rel("connection duration, median", lambda v: _stat(v.duration, np.median), REL_MEDIAN))
    for scope in ("intranet", "internet"):
        out.append(rel(f"{scope} handshake RTT, median",
                       lambda v, s=scope: _stat(v.rtt_handshake[v.scope == s], np.median), REL_RTT))  # fmt: skip
    out.append(rel("connection bytes, p99", lambda v: _stat(v.bytes, p99), REL_P99))
    out.append(rel("trains per well-behaved connection, mean",
                   lambda v: _stat(v.trains[v.well_behaved], np.mean), REL_RATE))  # fmt: skip
    out.append(
        rel("local client hosts", lambda v: float(np.count_nonzero(v.host_local & (v.host_outcnx > 0))), REL_RATE)
    )
    out.append(rel("local server hosts", lambda v: float(np.count_nonzero(v.host_local & v.host_server)), REL_RATE))
    out.append(top_services(orig, synth))
    return out


def _byte_share(v: ProfileView, side: str, scope: str) -> float | None:
    """The scope's part of all bytes sent by `side` (orig_bytes or resp_bytes)."""
    b = getattr(v, side)
    total = b.sum()
    return float(b[v.scope == scope].sum() / total) if total > 0 else None


def top_services(orig: ProfileView, synth: ProfileView, k: int = TOP_SERVICES) -> Marginal:
    """The same set of top-k services by connections (order aside)."""
    top = lambda v: [s for s, _ in sorted(v.services().items(), key=lambda kv: (-kv[1], kv[0]))[:k]]  # noqa: E731
    a, b = top(orig), top(synth)
    if not a:
        return Marginal(f"top-{k} services", None, ",".join(b), None, "set", None, "n/a")
    same = set(a) == set(b)
    return Marginal(f"top-{k} services", ",".join(a), ",".join(b), None, "set", None, "pass" if same else "fail")


# --- distributions ------------------------------------------------------------------


def jensen_shannon(a: np.ndarray, b: np.ndarray, bins: int = JSD_BINS) -> float | None:
    """JSD (base 2) of two samples' histograms on common bins: logarithmic
    when both are positive (sizes, times span decades), else linear."""
    a, b = _finite(a), _finite(b)
    if len(a) == 0 or len(b) == 0:
        return None
    both = np.concatenate([a, b])
    lo, hi = float(both.min()), float(both.max())
    if lo == hi:
        return 0.0
    if lo > 0:
        edges = np.geomspace(lo, hi, bins + 1)
    else:
        edges = np.linspace(lo, hi, bins + 1)
    p = np.histogram(a, edges)[0].astype(float)
    q = np.histogram(b, edges)[0].astype(float)
    p, q = p / p.sum(), q / q.sum()
    m = (p + q) / 2

    def kl(x: np.ndarray) -> float:
        nz = x > 0
        return float(np.sum(x[nz] * np.log2(x[nz] / m[nz])))

    return max(0.0, min(1.0, (kl(p) + kl(q)) / 2))


def emd_normalised(a: np.ndarray, b: np.ndarray) -> float | None:
    """Earth mover's (1-Wasserstein) distance of two samples divided by the
    range of the first: the area between the two empirical CDFs, in units
    of the original's span (of its magnitude when it has one value)."""
    a, b = np.sort(_finite(a)), np.sort(_finite(b))
    if len(a) == 0 or len(b) == 0:
        return None
    span = float(a[-1] - a[0])
    grid = np.sort(np.concatenate([a, b]))
    fa = np.searchsorted(a, grid[:-1], side="right") / len(a)
    fb = np.searchsorted(b, grid[:-1], side="right") / len(b)
    w1 = float(np.sum(np.abs(fa - fb) * np.diff(grid)))
    if span == 0:
        span = abs(float(a[0]))
    if span == 0:
        return None if w1 else 0.0
    return w1 / span


def distributions(v: ProfileView) -> dict[str, np.ndarray]:
    gaps = np.diff(np.sort(_finite(v.ts)))
    out = {
        "connection bytes": v.bytes,
        "connection duration (s)": v.duration,
        "connection inter-arrival (s)": gaps,
    }
    for scope in ("intranet", "internet"):
        out[f"{scope} handshake RTT (s)"] = v.rtt_handshake[v.scope == scope]
    return out


def divergences(orig: ProfileView, synth: ProfileView) -> list[Divergence]:
    a, b = distributions(orig), distributions(synth)
    out = []
    for name in a:
        x, y = a[name], b[name]
        out.append(Divergence(name, len(_finite(x)), len(_finite(y)), jensen_shannon(x, y), emd_normalised(x, y)))
    return out


def compare(original: Path, synthetic: Path) -> tuple[list[Marginal], list[Divergence]]:
    orig, synth = ProfileView(original), ProfileView(synthetic)
    return marginals(orig, synth), divergences(orig, synth)


def error_text(error: float | None, unit: str) -> str | None:
    """A marginal's error as shown: relative in %, shares in points."""
    if error is None:
        return None
    return f"{error:+.1%}" if unit == "rel" else f"{error:+.2f} pts"


def tolerance_text(tolerance: float | None, unit: str) -> str | None:
    """A marginal's tolerance as shown; a set compares as a whole."""
    if tolerance is None:
        return "same set" if unit == "set" else None
    return f"±{tolerance:.0%}" if unit == "rel" else f"±{tolerance:g} pts"


def table(rows: list[Marginal]) -> str:
    """The marginals as an aligned text table (what `tracelab fidelity` prints)."""

    def num(x) -> str:
        if x is None:
            return "-"
        if isinstance(x, str):
            return x
        return f"{x:.4g}"

    cells = [("marginal", "original", "synthetic", "error", "tolerance", "verdict")]
    cells += [
        (m.name, num(m.original), num(m.synthetic), error_text(m.error, m.unit) or "-",
         tolerance_text(m.tolerance, m.unit) or "-", m.verdict)
        for m in rows
    ]  # fmt: skip
    widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
