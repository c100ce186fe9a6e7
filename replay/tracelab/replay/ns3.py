"""`tracelab replay ns3`: a workload model's connections as real ns-3 TCP/UDP
applications through a queueing element — replay that reacts like the
trace's senders (the thesis's future work, [003 §9.3.3]).

    tracelab replay ns3 trace.model.json --element 'efd(th=30000)' --rate 10M \\
        --load 0.8 --duration 60s --seed 1 -o out/ns3

The schedule is drawn here, with one seeded generator, by the model's own
samplers (tracelab.synth.sampling, which `tracelab synth` uses):

* connection inter-arrivals and sizes (payload bytes, both directions) from
  the model's best-fitting families, capped so their means stay the model's
  observed means; --load rescales the inter-arrivals to that share of --rate;
* the scope (intranet/Internet) of each connection drawn with the topological
  byte shares as probabilities (independent of its size); the bytes split into upload
  and download by the scope's upload share (--view legacy: the legacy shares,
  one scope);
* --transfer apps (default): trains alternate between the client (first) and
  the server, their packet counts and data-packet sizes drawn from the
  side's histograms, and each train after the first waits a think time (a
  draw of the side's warm-ups) after the previous one was received — over
  one TCP connection, so the exchange slows down with the network; a scope
  whose apps model has no TCP trains sends UDP; --transfer bulk: the upload
  then the download as one train each (the "legacy" bulk TCP transfer);
  --transfer udp: the apps trains as UDP datagrams on the sender's own clock
  (the thesis's trace player).

The network is the dumbbell of algorithms.md §10 (`tl-ns3-model-replay`,
click-elements/ns3/model_replay.cc): 10 clients, 10 servers (5 intranet,
5 Internet), one-way delays from the model's link delays (Table 9.2), the
element on both directions of the bottleneck. DIR/metrics.json has the shape
of `replay run`'s (schema tracelab.replay.metrics): per class (scope x
direction) the bottleneck's offered, delivered and dropped packets, queue
delays (the bottleneck's sojourn times) and budget violations, plus the
connections' response times per class and per size class; DIR also keeps
the schedule and the simulator's raw outputs. DIR is written whole or not at
all.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import tracelab_engine as engine
from tracelab_models.outputs import OutputError, atomic_dir

from .. import __version__
from ..errors import INPUT, INTERNAL, OUTPUT, USAGE, fail
from ..parts import REPO_ROOT
from ..synth.sampling import (
    SynthError,
    best_fit,
    capped_means,
    draw_capped,
    draw_hist,
    draw_quantiles,
    mean_preserving_cap,
    observed_mean,
)
from . import config as cfgmod
from . import model_source
from .output import write_metrics

SCOPES = ("intranet", "internet")
SIDES = ("orig", "resp")
VIEWS = ("topological", "legacy")
TRANSFERS = ("apps", "bulk", "udp")
TOPOLOGIES = ("dumbbell",)
CLIENTS, SERVERS = 10, 10  # algorithms.md §10: hosts 1-10, 13-22
PURE_ACK_MAX_IP_LEN = 80  # IP 20 + TCP 60: longer packets surely carry payload
# Response-time size classes, payload bytes of the connection (both directions).
SIZE_CLASSES = ((0, 10_000), (10_000, 100_000), (100_000, 1_000_000), (1_000_000, math.inf))
MAX_CONNECTIONS = 55_535  # one server port each (model_replay.cc)
MAX_INTERARRIVAL_S = 3600.0  # hard cap of an inter-arrival, as synth's (its Options.max_interarrival_s)
QUANTILES = (("p50_ps", 0.5), ("p90_ps", 0.9), ("p99_ps", 0.99), ("p999_ps", 0.999))

EPILOG = """examples:
  tracelab replay ns3 trace.model.json --element 'efd(th=30000)' --rate 10M --load 0.8 --duration 60s -o out/ns3
  tracelab replay ns3 trace.model.json --element las --rate 10M --view legacy --transfer bulk -o out/legacy
  tracelab replay ns3 trace.model.json --element fifo --rate 10M --class intranet-download:5ms -o out/fifo

The scenario program is build/ns3/tl-ns3-model-replay (`make ns3`), or
$TRACELAB_NS3_MODEL_REPLAY. Outputs: DIR/metrics.json (replay run's shape,
plus `connections` and `size_classes`), DIR/schedule.csv (the drawn trains),
DIR/ns3/ (connections.csv, packets.csv, summary.json of the simulator).
"""


class Ns3ReplayError(Exception):
    """The simulator failed or is not built."""


class InputError(Exception):
    """The workload model cannot be read or cannot give a schedule: exit 3."""


def binary() -> Path | None:
    explicit = os.environ.get("TRACELAB_NS3_MODEL_REPLAY")
    path = Path(explicit) if explicit else REPO_ROOT / "build" / "ns3" / "tl-ns3-model-replay"
    return path if path.is_file() else None


# --- the schedule ---------------------------------------------------------------------


@dataclass
class Schedule:
    """The drawn connections and their trains (payload bytes, seconds)."""

    start: np.ndarray  # per connection
    scope: np.ndarray  # index into SCOPES (legacy: 0 for all)
    client: np.ndarray
    server: np.ndarray
    udp: np.ndarray
    trains: list[list[tuple[int, int, float]]]  # per connection: (side, bytes, think_s)
    delays: dict[str, float]  # x-11, 11-12, 12-w, 12-v
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.start)

    def write(self, path: Path) -> None:
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(["conn", "start_s", "client", "server", "udp", "side", "bytes", "think_s"])
            for i, trains in enumerate(self.trains):
                head = [i, repr(float(self.start[i])), int(self.client[i]), int(self.server[i]), int(self.udp[i])]
                for side, nbytes, think in trains:
                    w.writerow([*head, side, nbytes, repr(float(think))])


def _capped_mean(dist, cap: float) -> float:
    caps, means = capped_means(dist, cap)
    return float(np.interp(cap, caps, means))


def _data_keep(hist: dict):
    """The side's data-packet IP lengths (as `synth`): above a bare header with options."""
    v = np.asarray(hist["values"], dtype=float)
    c = np.asarray(hist["counts"], dtype=float)
    for floor in (PURE_ACK_MAX_IP_LEN, 40):
        if ((v > floor) & (v <= 1500) & (c > 0)).any():
            return lambda x, f=floor: (x > f) & (x <= 1500)
    return None


def _side_trains(app: dict, budget: int, udp: bool, rng: np.random.Generator) -> list[int]:
    """The side's budget of payload bytes cut into trains of drawn packet counts
    and sizes; the last one cut to what is left."""
    keep = _data_keep(app["packet_size_bytes"])
    header = 28 if udp else 40
    if keep is None:  # no data-packet sizes in the model: one train of the whole budget
        return [budget] if budget > 0 else []
    out, left = [], budget
    has_trains = sum(app["train_size_pkts"]["counts"]) > 0
    while left > 0:
        npk = int(draw_hist(app["train_size_pkts"], 1, rng)[0]) if has_trains else 1
        payload = int((draw_hist(app["packet_size_bytes"], max(npk, 1), rng, keep) - header).sum())
        take = min(max(payload, 1), left)
        out.append(take)
        left -= take
    return out


def draw_schedule(
    model: dict[str, Any],
    *,
    duration: float,
    seed: int,
    rate_bps: float,
    load: float | None = None,
    view: str = "topological",
    transfer: str = "apps",
    max_flow: float = model_source.DEFAULT_MAX_FLOW,
) -> Schedule:
    """Connections starting during [0, duration), drawn with one generator seeded `seed`."""
    if view not in VIEWS or transfer not in TRANSFERS:
        raise cfgmod.ConfigError(f"view {view!r} / transfer {transfer!r}: expected {VIEWS} / {TRANSFERS}")
    rng = np.random.default_rng(seed)
    notes: list[str] = []
    flows = model["flows"]
    try:
        ia = best_fit(flows["interarrival_s"], "flow inter-arrivals")
        size_dist = best_fit(flows["size_bytes"], "flow sizes")
        ia_cap = mean_preserving_cap(ia, observed_mean(flows["interarrival_s"]), MAX_INTERARRIVAL_S)
        size_cap = mean_preserving_cap(size_dist, observed_mean(flows["size_bytes"]), max_flow)
    except SynthError as e:
        raise InputError(str(e)) from None
    mean_gap, mean_size = _capped_mean(ia, ia_cap), _capped_mean(size_dist, size_cap)
    scale = 1.0
    if load is not None:
        # Offered payload bits per second = load x rate.
        scale = mean_size * 8 / (load * rate_bps) / mean_gap
        notes.append(f"--load {load:g}: inter-arrivals x {scale:.4g} (mean {mean_gap * scale:.4g} s)")
    notes.append(
        f"connections: inter-arrival {flows['interarrival_s']['best']} capped at {ia_cap:.4g} s, "
        f"size {flows['size_bytes']['best']} capped at {size_cap:.4g} B (mean {mean_size:.4g} B)"
    )
    expected = duration / (mean_gap * scale)
    if expected > MAX_CONNECTIONS:
        raise cfgmod.ConfigError(
            f"about {expected:.0f} connections in {duration:g} s, above {MAX_CONNECTIONS}: shorten --duration"
        )
    starts: list[float] = []
    t = 0.0
    while True:
        block = draw_capped(ia, ia_cap, 1024, rng) * scale
        for g in block:
            t += float(g)
            if t >= duration:
                break
            starts.append(t)
        else:
            continue
        break
    n = len(starts)
    if n > MAX_CONNECTIONS:
        raise cfgmod.ConfigError(f"{n} connections drawn, above {MAX_CONNECTIONS}: shorten --duration")
    start = np.asarray(starts)
    size = np.maximum(np.round(draw_capped(size_dist, size_cap, n, rng)), 2).astype(np.int64)

    topo, legacy = model["topological"], model["legacy"]
    scope = np.zeros(n, dtype=np.int64)
    u_scope = rng.random(n)  # drawn in both views: the same seed, the same connections
    if view == "topological":
        share = np.array([topo["shares"][s]["download"] + topo["shares"][s]["upload"] for s in SCOPES])
        if not share.sum() > 0:
            raise InputError("the model's topological shares are all 0: no traffic to replay")
        # Each connection's scope drawn with the scope's byte share as its
        # probability, independent of its size: the byte shares hold in
        # expectation and per-scope response times compare the same sizes
        # (the legacy RTT of Table 9.2, 0.9 x 1 ms + 0.1 x 100 ms, weighs the
        # scopes so). `synth`'s largest-first rule, which makes the byte shares
        # exact, would leave the small scope the small connections.
        scope = np.minimum(np.searchsorted(np.cumsum(share / share.sum()), u_scope, side="right"), 1)
        up = [topo["shares"][s]["upload"] / max(share[k], 1e-300) for k, s in enumerate(SCOPES)]
    else:
        total = legacy["shares"]["download"] + legacy["shares"]["upload"]
        if not total > 0:
            raise InputError("the model's legacy shares are all 0: no traffic to replay")
        up = [legacy["shares"]["upload"] / total] * 2
    delays = _delays(model, view, notes)

    client = rng.integers(0, CLIENTS, n)
    half = SERVERS // 2
    if view == "topological":
        server = np.where(scope == 0, rng.integers(0, half, n), half + rng.integers(0, SERVERS - half, n))
    else:
        server = rng.integers(0, SERVERS, n)
    tcp_ok = [all(sum(model["apps"][s][side]["train_size_pkts"]["counts"]) > 0 for side in SIDES) for s in SCOPES]
    udp = np.array([transfer == "udp" or (transfer == "apps" and not tcp_ok[s]) for s in scope], dtype=bool)
    if transfer == "apps" and view == "topological":
        for k, s in enumerate(SCOPES):
            if not tcp_ok[k] and (scope == k).any():
                notes.append(f"{s}: the apps model has no TCP trains on both sides: its connections are UDP")

    trains: list[list[tuple[int, int, float]]] = []
    for i in range(n):
        s = int(scope[i]) if view == "topological" else None
        total = int(size[i])
        orig = min(max(round(total * up[int(scope[i])]), 1), total - 1)
        budgets = (orig, total - orig)
        if transfer == "bulk":
            trains.append([(side, b, 0.0) for side, b in enumerate(budgets)])
            continue
        # The apps model of the connection's scope (legacy: the larger scope's by bytes).
        app_scope = SCOPES[s] if s is not None else _legacy_apps_scope(model)
        apps = model["apps"][app_scope]
        per_side = [_side_trains(apps[SIDES[side]], budgets[side], bool(udp[i]), rng) for side in (0, 1)]
        seq: list[tuple[int, int, float]] = []
        k = 0
        while k < max(len(per_side[0]), len(per_side[1])):
            for side in (0, 1):
                if k < len(per_side[side]):
                    warm = apps[SIDES[side]]["warmup_s"]
                    think = 0.0 if not seq or not warm["n"] else max(float(draw_quantiles(warm, 1, rng)[0]), 0.0)
                    seq.append((side, per_side[side][k], think))
            k += 1
        trains.append(seq)
    if view == "legacy":
        notes.append(f"legacy view: every server 12-y = {delays['12-w'] * 1e3:.3f} ms, one scope")
    return Schedule(start, scope, client, server, udp, trains, delays, notes)


def _legacy_apps_scope(model: dict[str, Any]) -> str:
    sh = model["topological"]["shares"]
    return max(SCOPES, key=lambda s: sh[s]["download"] + sh[s]["upload"])


def _delays(model: dict[str, Any], view: str, notes: list[str]) -> dict[str, float]:
    """One-way link delays (Table 9.2) from the model; a missing one is taken
    from the scope's RTT / 2, else from the legacy 12-y (said in the notes)."""
    legacy = model["legacy"]["link_delays_s"]
    y = legacy.get("12-y")
    if y is None:
        rtt = model["legacy"].get("rtt_s")
        y = rtt / 2 if rtt else None
    if view == "legacy":
        if y is None:
            raise InputError("the model has no legacy RTT or 12-y delay: give a model with one")
        return {"x-11": legacy.get("x-11") or 0.0, "11-12": legacy.get("11-12") or 0.0, "12-w": y, "12-v": y}
    topo = model["topological"]["link_delays_s"]
    out = {"x-11": topo.get("x-11") or 0.0, "11-12": topo.get("11-12") or 0.0}
    for link, scope in (("12-w", "intranet"), ("12-v", "internet")):
        d = topo.get(link)
        if d is None:
            rtt = model["topological"]["rtt_s"][scope]["mean"]
            if rtt is not None:
                d = rtt / 2 - out["x-11"] - out["11-12"]
                notes.append(f"{scope}: no {link} delay; RTT/2 = {d * 1e3:.3f} ms")
            elif y is not None:
                d = y
                notes.append(f"{scope}: no RTT estimate; using the legacy 12-y {y * 1e3:.3f} ms")
            else:
                raise InputError(f"the model has no {scope} RTT and no legacy RTT: no delay for link {link}")
        out[link] = max(float(d), 0.0)
    return out


# --- running and reading ----------------------------------------------------------------


@dataclass(frozen=True)
class Setup:
    element: str
    rate_bps: int
    end_s: float
    seed: int
    view: str
    transfer: str
    budgets_ps: dict[str, int | None]
    ns3_args: tuple[str, ...] = ()


def simulate(schedule: Schedule, setup: Setup, out: Path) -> float:
    """Runs the scenario program into `out`; returns its wall seconds."""
    exe = binary()
    if exe is None:
        raise Ns3ReplayError("ns-3 is not built: build the adapters with `make ns3` (or set TRACELAB_NS3_MODEL_REPLAY)")
    out.mkdir(parents=True, exist_ok=True)
    schedule.write(out / "schedule.csv")
    d = schedule.delays
    args = [
        str(exe),
        f"--schedule={out / 'schedule.csv'}",
        f"--qdisc={setup.element}",
        f"--rate={setup.rate_bps}",
        f"--clients={CLIENTS}",
        f"--servers={SERVERS}",
        f"--clientDelay={d['x-11']!r}",
        f"--coreDelay={d['11-12']!r}",
        f"--intranetDelay={d['12-w']!r}",
        f"--internetDelay={d['12-v']!r}",
        f"--end={setup.end_s!r}",
        f"--seed={setup.seed}",
        f"--out={out / 'ns3'}",
        *setup.ns3_args,
    ]
    t0 = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        msg = (proc.stderr.strip().splitlines() or [f"exited {proc.returncode}"])[-1]
        if proc.returncode == 2:
            raise cfgmod.ConfigError(msg.removeprefix("tl-ns3-model-replay: "))
        raise Ns3ReplayError(f"tl-ns3-model-replay exited {proc.returncode}: {msg}")
    return time.perf_counter() - t0


def class_names(view: str) -> list[str]:
    return list(model_source.CLASSES) if view == "topological" else ["download", "upload"]


def _class_of(view: str, scope: np.ndarray, download: np.ndarray) -> np.ndarray:
    """Index into class_names(view): scope x direction (replay run's order)."""
    d = np.where(download, 0, 1)
    return scope * 2 + d if view == "topological" else d


def _stats_ps(seconds: np.ndarray) -> dict[str, Any]:
    ps = np.round(np.asarray(seconds, dtype=float) * 1e12)
    if len(ps) == 0:
        return {"count": 0, "mean_ps": 0.0, "min_ps": 0, **{k: 0 for k, _ in QUANTILES}, "max_ps": 0, "exact": True}
    q = {k: int(np.quantile(ps, p, method="inverted_cdf")) for k, p in QUANTILES}
    return {
        "count": len(ps),
        "mean_ps": float(ps.mean()),
        "min_ps": int(ps.min()),
        **q,
        "max_ps": int(ps.max()),
        "exact": True,
    }


def _response(resp: np.ndarray, done: np.ndarray) -> dict[str, Any]:
    r = resp[done]
    out: dict[str, Any] = {
        "connections": len(resp),
        "completed": int(done.sum()),
        "unfinished": int((~done).sum()),
    }
    out.update({f"{k}_s": v for k, v in _stats_s(r).items()})
    return out


def _stats_s(r: np.ndarray) -> dict[str, float | None]:
    if len(r) == 0:  # JSON null: no completed connection
        return {"mean": None, "p50": None, "p90": None, "p99": None, "max": None}
    return {
        "mean": float(r.mean()),
        "p50": float(np.quantile(r, 0.5)),
        "p90": float(np.quantile(r, 0.9)),
        "p99": float(np.quantile(r, 0.99)),
        "max": float(r.max()),
    }


def _read_csv(path: Path) -> dict[str, list[str]]:
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    head, body = rows[0], rows[1:]
    return {h: [r[i] for r in body] for i, h in enumerate(head)}


def _read_packets(path: Path) -> dict[str, np.ndarray]:
    """packets.csv as columns (a long run has millions of rows): an empty
    server is -1 (not a server's packet), an empty sojourn NaN (dropped)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    types = {
        "dir": pa.int64(),
        "server": pa.int64(),
        "ip_bytes": pa.int64(),
        "arrival_s": pa.float64(),
        "fate": pa.string(),
        "sojourn_s": pa.float64(),
    }
    t = pcsv.read_csv(path, convert_options=pcsv.ConvertOptions(column_types=types))
    return {
        "dir": t["dir"].to_numpy(),
        "server": t["server"].fill_null(-1).to_numpy(),
        "ip_bytes": t["ip_bytes"].to_numpy(),
        "fate": np.asarray(t["fate"].to_pylist(), dtype=object),
        "sojourn_s": t["sojourn_s"].to_numpy(zero_copy_only=False),
    }


class ConservationError(Exception):
    """The simulator's outputs do not add up: a bug, never a silent result."""


def metrics(schedule: Schedule, setup: Setup, ns3_dir: Path, wall: float) -> dict[str, Any]:
    """replay run's metrics.json body from the simulator's outputs."""
    import json

    summary = json.loads((ns3_dir / "summary.json").read_text())
    conns = _read_csv(ns3_dir / "connections.csv")
    pk = _read_packets(ns3_dir / "packets.csv")
    names = class_names(setup.view)
    half = SERVERS // 2
    # Packets at the bottleneck: dir 0 upload (client -> server), 1 download.
    dirs, server, nbytes, fate, sojourn = pk["dir"], pk["server"], pk["ip_bytes"], pk["fate"], pk["sojourn_s"]
    pscope = (server >= half).astype(np.int64) if setup.view == "topological" else np.zeros(len(server), np.int64)
    pcls = np.where(server >= 0, _class_of(setup.view, pscope, dirs == 1), -1)
    reasons = list(engine.drop_reasons())
    unknown = sorted(set(fate.tolist()) - {"delivered", *reasons})
    if unknown:
        raise ConservationError(f"the simulator reported fates {unknown} the engine does not know")

    # Connections.
    c_bytes_o = np.asarray(conns["bytes_orig"], dtype=np.int64)
    c_bytes_r = np.asarray(conns["bytes_resp"], dtype=np.int64)
    c_del_o = np.asarray(conns["delivered_orig"], dtype=np.int64)
    c_del_r = np.asarray(conns["delivered_resp"], dtype=np.int64)
    done = np.asarray([s != "" for s in conns["completion_s"]])
    resp = np.asarray([float(s) if s else math.nan for s in conns["response_s"]])
    c_server = np.asarray(conns["server"], dtype=np.int64)
    if len(done) != len(schedule):
        raise ConservationError(f"{len(done)} connections reported of {len(schedule)} scheduled")
    scheduled = np.array([[sum(b for s, b, _ in t if s == side) for side in (0, 1)] for t in schedule.trains])
    if len(schedule) and not ((scheduled[:, 0] == c_bytes_o).all() and (scheduled[:, 1] == c_bytes_r).all()):
        raise ConservationError("the simulator's connection sizes are not the schedule's")
    over = (c_del_o > c_bytes_o) | (c_del_r > c_bytes_r)
    short = done & ((c_del_o != c_bytes_o) | (c_del_r != c_bytes_r))
    if over.any() or short.any():
        raise ConservationError(
            f"{int(over.sum())} connections got more bytes than sent, {int(short.sum())} completed without every byte"
        )
    c_scope = (c_server >= half).astype(np.int64) if setup.view == "topological" else np.zeros(len(done), np.int64)
    ccls = _class_of(setup.view, c_scope, c_bytes_r >= c_bytes_o)

    classes = []
    for k, name in enumerate(names):
        sel = pcls == k
        delivered = sel & (fate == "delivered")
        q = sojourn[delivered]
        budget = setup.budgets_ps.get(name)
        violations = int((np.round(q * 1e12) > budget).sum()) if budget is not None else 0
        dropped = {r: int((sel & (fate == r)).sum()) for r in reasons}
        dropped_total = sum(dropped.values())
        offered = int(sel.sum())
        classes.append(
            {
                "name": name,
                "budget_ps": budget,
                "offered": offered,
                "offered_bytes": int(nbytes[sel].sum()),
                "delivered": int(delivered.sum()),
                "delivered_bytes": int(nbytes[delivered].sum()),
                "dropped": dropped,
                "dropped_total": dropped_total,
                "queued_end": offered - int(delivered.sum()) - dropped_total,
                "violations": violations,
                "r_v": violations / int(delivered.sum()) if delivered.any() else 0.0,
                "eplr": (dropped_total + violations) / offered if offered else 0.0,
                "queue_delay": _stats_ps(q),
                "response_time": _response(resp[ccls == k], done[ccls == k]),
            }
        )
    o_del = fate == "delivered"
    o_drop = {r: int((fate == r).sum()) for r in reasons}
    o_viol = sum(c["violations"] for c in classes)
    # Packets still in a bottleneck queue when the run ends: counted by the simulator, not by row,
    # so they have no class; the overall and per-node figures include them.
    queued = sum(summary["bottleneck"][d]["queued_at_end"] for d in ("upload", "download"))
    overall = {
        "name": "all",
        "offered": len(fate) + queued,
        "offered_bytes": int(nbytes.sum()),
        "delivered": int(o_del.sum()),
        "delivered_bytes": int(nbytes[o_del].sum()),
        "dropped": o_drop,
        "dropped_total": sum(o_drop.values()),
        "queued_end": queued,
        "violations": o_viol,
        "r_v": o_viol / int(o_del.sum()) if o_del.any() else 0.0,
        "eplr": (sum(o_drop.values()) + o_viol) / (len(fate) + queued) if len(fate) + queued else 0.0,
        "queue_delay": _stats_ps(sojourn[o_del]),
        "response_time": _response(resp, done),
    }
    nodes = []
    total_sz = c_bytes_o + c_bytes_r
    for d, direction in enumerate(("upload", "download")):
        b = summary["bottleneck"][direction]
        sel = dirs == d
        n_del = int((sel & (fate == "delivered")).sum())
        n_drop = int((sel & (fate != "delivered")).sum())
        # A packet still queued when the run ends has no row (a row is written when it leaves).
        if (
            b["received"] != int(sel.sum()) + b["queued_at_end"]
            or b["sent"] != n_del
            or b["dropped"] != n_drop
            or b["received"] != b["sent"] + b["dropped"] + b["queued_at_end"]
            or b["core_offered"] != b["received"]
        ):
            raise ConservationError(f"the {direction} bottleneck's counts do not add up: {b}, {n_del} delivered rows")
        nodes.append(
            {
                "element": setup.element,
                "direction": direction,
                "rate_bps": setup.rate_bps,
                "offered": b["received"],
                "served": b["sent"],
                "dropped_total": b["dropped"],
                "queued_end": b["queued_at_end"],
                "flows_highwater": b["flows_highwater"],
                "wire_bytes": int(nbytes[sel & (fate == "delivered")].sum()),
                "utilization": float(nbytes[sel & (fate == "delivered")].sum() * 8 / setup.rate_bps / setup.end_s),
            }
        )
    size_classes = []
    for lo, hi in SIZE_CLASSES:
        sel = (total_sz >= lo) & (total_sz < hi)
        size_classes.append(
            {"min_bytes": lo, "max_bytes": None if math.isinf(hi) else hi, **_response(resp[sel], done[sel])}
        )
    return {
        "classes": classes,
        "overall": overall,
        "nodes": nodes,
        "size_classes": size_classes,
        "connections": {
            "scheduled": len(schedule),
            "tcp": int((~schedule.udp).sum()),
            "udp": int(schedule.udp.sum()),
            "completed": int(done.sum()),
            "unfinished": int((~done).sum()),
            "bytes_scheduled": int(total_sz.sum()),
            "bytes_delivered": int((c_del_o + c_del_r).sum()),
        },
        "simulator": {
            "name": "ns-3",
            "ns3_version": summary["ns3_version"],
            "program": "tl-ns3-model-replay",
            "type": summary["type"],
            "segment": summary["segment"],
            "initial_cwnd_segments": summary["initial_cwnd_segments"],
            "delayed_ack_count": summary["delayed_ack_count"],
            "delays_s": summary["delays_s"],
        },
        "timing": {"virtual_s": setup.end_s, "wall_seconds": wall},
    }


def replay(
    model: dict[str, Any], setup: Setup, *, duration: float, load: float | None, work: Path
) -> tuple[Schedule, dict[str, Any]]:
    """Draws the schedule, runs it in `work`, returns (schedule, metrics)."""
    schedule = draw_schedule(
        model,
        duration=duration,
        seed=setup.seed,
        rate_bps=setup.rate_bps,
        load=load,
        view=setup.view,
        transfer=setup.transfer,
    )
    if len(schedule) == 0:
        raise cfgmod.ConfigError(f"no connection starts within --duration {duration:g} s: lengthen it")
    wall = simulate(schedule, setup, work)
    return schedule, metrics(schedule, setup, work / "ns3", wall)


# --- the command -------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tracelab replay ns3",
        description=__doc__.split("\n\n")[0],
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("model", type=Path, metavar="MODEL", help="workload model (tracelab model derive)")
    p.add_argument(
        "--element",
        default="fifo",
        metavar="SPEC",
        help="queueing element on the bottleneck, both directions (engine spec; default fifo, 300 packets)",
    )
    p.add_argument("--rate", default="10M", metavar="BPS", help="bottleneck rate (default 10M, algorithms.md §10)")
    p.add_argument("--topology", choices=TOPOLOGIES, default="dumbbell", help="network (algorithms.md §10)")
    p.add_argument(
        "--view",
        choices=VIEWS,
        default="topological",
        help="shares and delays: per scope (topological) or download/upload with one 12-y delay (legacy)",
    )
    p.add_argument(
        "--transfer",
        choices=TRANSFERS,
        default="apps",
        help="apps: TCP trains with think times; bulk: one TCP train per direction; udp: trains over UDP",
    )
    p.add_argument(
        "--load",
        type=float,
        metavar="L",
        help="rescale the connection rate to this load of --rate (default: the model's arrivals)",
    )
    p.add_argument("--duration", default="10s", metavar="T", help="connections start during [0, T) (default 10s)")
    p.add_argument(
        "--drain",
        default="30s",
        metavar="T",
        help="simulated time after --duration; a connection not done by then is unfinished (default 30s)",
    )
    p.add_argument("--seed", type=int, default=1, help="seed of the schedule and of ns-3 (default 1)")
    p.add_argument(
        "--class",
        dest="classes",
        action="append",
        default=[],
        metavar="NAME:BUDGET",
        help="queue-delay budget of a class at the bottleneck, e.g. intranet-download:5ms (violations)",
    )
    p.add_argument(
        "--ns3",
        action="append",
        default=[],
        metavar="ARG",
        help="an ns-3 attribute for the simulator, e.g. --ns3 ns3::TcpSocket::DelAckCount=1",
    )
    p.add_argument("-o", "--output", type=Path, required=True, metavar="DIR", help="output directory")
    p.add_argument("-q", "--quiet", action="store_true")
    return p


def _setup(ns: argparse.Namespace) -> tuple[Setup, float]:
    if ns.load is not None and not ns.load > 0:
        raise cfgmod.ConfigError(f"--load {ns.load}: expected a positive load")
    rate = int(engine.parse_rate(ns.rate))
    duration = engine.parse_time(ns.duration) / 1e12
    drain = engine.parse_time(ns.drain) / 1e12
    if not duration > 0:
        raise cfgmod.ConfigError("--duration must be positive")
    names = class_names(ns.view)
    budgets: dict[str, int | None] = {n: None for n in names}
    for c in ns.classes:
        parsed = cfgmod.parse_class(c)
        if parsed["name"] not in budgets or "budget" not in parsed or len(parsed) != 2:
            raise cfgmod.ConfigError(f"--class {c!r}: expected NAME:BUDGET with NAME one of {', '.join(names)}")
        budgets[parsed["name"]] = int(engine.parse_time(parsed["budget"]))
    extra = []
    for a in ns.ns3:
        if not a.startswith("ns3::") or "=" not in a:
            raise cfgmod.ConfigError(f"--ns3 {a!r}: expected ns3::Type::Attribute=VALUE")
        extra.append(f"--{a}")
    return Setup(ns.element, rate, duration + drain, ns.seed, ns.view, ns.transfer, budgets, tuple(extra)), duration


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    ns = build_parser().parse_args(argv)
    if binary() is None:  # as `tracelab experiments run` for a closed-loop experiment
        return fail(
            USAGE, "replay ns3 needs ns-3: build the adapters with `make ns3` (or set TRACELAB_NS3_MODEL_REPLAY)"
        )
    try:
        setup, duration = _setup(ns)
        try:
            model = model_source.load_model(ns.model)
        except cfgmod.ConfigError as e:
            raise InputError(str(e)) from e
        with atomic_dir(ns.output, "replay ns3", owns=lambda p: (p / "metrics.json").is_file()) as staged:
            schedule, m = replay(model, setup, duration=duration, load=ns.load, work=staged)
            config = {
                "model": str(ns.model),
                "element": setup.element,
                "rate_bps": setup.rate_bps,
                "topology": ns.topology,
                "view": setup.view,
                "transfer": setup.transfer,
                "load": ns.load,
                "duration_s": duration,
                "end_s": setup.end_s,
                "seed": setup.seed,
                "classes": [{"name": k, "budget_ps": v} for k, v in setup.budgets_ps.items()],
                "ns3_args": list(setup.ns3_args),
            }
            m["workload_model"] = {"path": str(ns.model), "notes": schedule.notes}
            write_metrics(staged / "metrics.json", config, m, argv=["tracelab", "replay", "ns3", *argv])
    except (cfgmod.ConfigError, engine.SpecError) as e:
        return fail(USAGE, e)
    except InputError as e:
        return fail(INPUT, e)
    except (Ns3ReplayError, ConservationError) as e:
        return fail(INTERNAL, f"internal error: {e}")
    except OutputError as e:
        return fail(e.status, e)
    except OSError as e:
        return fail(OUTPUT, f"{ns.output}: {e.strerror}")
    if not ns.quiet:
        for note in schedule.notes:
            print(f"model: {note}")
        for line in summary_lines(m):
            print(line)
        print(f"wrote {ns.output / 'metrics.json'} (tracelab {__version__}, ns-3 {m['simulator']['ns3_version']})")
    return 0


def summary_lines(m: dict[str, Any]) -> list[str]:
    c = m["connections"]
    lines = [
        f"connections: {c['scheduled']} ({c['tcp']} TCP, {c['udp']} UDP), {c['completed']} completed, "
        f"{c['unfinished']} unfinished; {c['bytes_delivered']} of {c['bytes_scheduled']} bytes delivered",
        f"{'class':<18} {'offered':>8} {'dropped':>8} {'viol':>6} {'conns':>6} {'mean resp':>10} {'p90 resp':>10}",
    ]
    for k in [*m["classes"], m["overall"]]:
        r = k["response_time"]
        mean, p90 = (f"{r[q]:>9.4f}s" if r[q] is not None else f"{'-':>10}" for q in ("mean_s", "p90_s"))
        lines.append(
            f"{k['name']:<18} {k['offered']:>8} {k['dropped_total']:>8} {k['violations']:>6} {r['connections']:>6} "
            f"{mean} {p90}"
        )
    return lines


if __name__ == "__main__":
    sys.exit(main())
