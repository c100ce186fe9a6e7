"""Workload models from an analyzer profile (thesis §9.3, docs/reference/algorithms.md §10).

* legacy: download/upload shares of bytes, one mean RTT (share-weighted over scopes) and
  the one-way delay of link 12-y = RTT/2 (Table 9.2, left);
* topological: intranet/internet x download/upload shares (Table 9.1), RTT per scope and
  the one-way delays 12-w = RTT_intranet/2, 12-v = RTT_internet/2 (Table 9.2, right);
* apps: per scope and side, train sizes, warm-up times, pacing per packet and packet
  sizes as empirical distributions (the future-work TCP source of thesis §9.3.3);
* flows: flow sizes and inter-arrival times fitted by the four families;
* traffic: per scope x protocol, what `tracelab synth` needs for a trace that profiles
  like the original (counts, services, states, per-connection variables chosen by AIC
  among seven families with a KS check or else empirical tables, a Gaussian copula
  tying them, hosts with their fan-in and fan-out, the trace's duration and --local);
  see traffic.py.

Upload = bytes from the initiator (client) to the responder, download = the reverse
(data direction, docs/reference/algorithms.md ⚠AMB-29); connections without payload (immature) are
left out of the shares. RTT per connection = the DATA-ACK estimate RTT_A-B of
well-behaved connections (thesis Fig. 9.3), or the handshake RTT when no connection has
a DATA-ACK estimate; the method used is recorded.
"""

from __future__ import annotations

import json
import math
import tempfile
from importlib import resources
from pathlib import Path

import jsonschema
import numpy as np
import pyarrow.compute as pc

from . import __version__, dataset, zeeklog
from . import schema as S
from .distributions import fit_all
from .profile import ProfileError, column, read_summary, read_table, sample_connections
from .traffic import derive_traffic

SCOPES = (S.SCOPE_INTRANET, S.SCOPE_INTERNET)
_PROBS = [i / 100 for i in range(101)]


def model_schema() -> dict:
    return json.loads(resources.files(__package__).joinpath("schema/workload-model.schema.json").read_text())


def validate(model: dict, source: str = "model") -> None:
    """Raise ValueError naming the failing field when ``model`` breaks the schema."""
    try:
        jsonschema.Draft202012Validator(model_schema()).validate(model)
    except jsonschema.ValidationError as e:
        where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
        raise ValueError(f"{source}: invalid workload model at {where}: {e.message}") from None


def save(model: dict, path) -> None:
    validate(model, str(path))
    Path(path).write_text(json.dumps(model, indent=2, allow_nan=False) + "\n")


def load(path) -> dict:
    """Read and validate a ``*.model.json`` (what the replay engine calls)."""
    try:
        model = json.loads(Path(path).read_text())
    except OSError as e:
        raise ProfileError(f"{path}: cannot read ({e})") from e
    except json.JSONDecodeError as e:
        raise ProfileError(f"{path}: invalid JSON at line {e.lineno} ({e.msg})") from e
    except UnicodeDecodeError as e:
        raise ProfileError(f"{path}: not UTF-8 text (byte {e.start})") from e
    except RecursionError as e:
        # json nests one Python call per bracket: a hostile file can exhaust the stack.
        raise ProfileError(f"{path}: JSON nested too deeply") from e
    validate(model, str(path))
    return model


def empirical(x) -> dict:
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    if len(x) == 0:
        return {"n": 0, "mean": None, "p": [], "v": []}
    return {"n": len(x), "mean": float(x.mean()), "p": _PROBS, "v": [float(v) for v in np.quantile(x, _PROBS)]}


def histogram(values, counts=None) -> dict:
    values = np.asarray(values, dtype=float)
    counts = np.ones(len(values), dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    ok = np.isfinite(values)
    uniq, inv = np.unique(values[ok], return_inverse=True)
    return {
        "values": uniq.tolist(),
        "counts": np.bincount(inv, weights=counts[ok], minlength=len(uniq)).astype(int).tolist(),
    }


def _finite(obj):
    """JSON has no inf/NaN: such values become null."""
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


DERIVE_STEPS = 4  # read, fit flows, apps, traffic


def derive(profile_dir, max_fit_samples: int = 100_000, seed: int = 0, advance=lambda _step: None) -> dict:
    """The workload model of one profile directory (validated); `advance(next)`
    after each of its DERIVE_STEPS steps but the last."""
    profile_dir = Path(profile_dir)
    conns = read_table(
        profile_dir,
        S.CONNECTIONS,
        [
            S.TS,
            S.SCOPE,
            S.ORIG_BYTES,
            S.RESP_BYTES,
            S.WELL_BEHAVED,
            S.RTT_DATA_ACK,
            S.RTT_HANDSHAKE,
            *(S.side_col(s, S.PACING_PER_PKT) for s in S.SIDES),
        ],
    )
    summary = read_summary(profile_dir)
    scope = np.array(conns.column(S.SCOPE).fill_null("").to_pylist(), dtype=object)
    up = column(conns, S.ORIG_BYTES, 0.0)
    down = column(conns, S.RESP_BYTES, 0.0)
    mature = (up + down) > 0

    # Shares of bytes, Table 9.1.
    in_scope = np.isin(scope, SCOPES) & mature
    total = (up + down)[in_scope].sum()
    if total <= 0:
        raise ProfileError(
            f"{profile_dir / S.CONNECTIONS}: no intranet or internet connection carries "
            "payload (are the enterprise networks given to the analyzer with --local?)"
        )
    shares = {
        s: {
            "download": float(down[in_scope & (scope == s)].sum() / total),
            "upload": float(up[in_scope & (scope == s)].sum() / total),
        }
        for s in SCOPES
    }

    # RTT per scope, Table 9.2.
    well = np.array(conns.column(S.WELL_BEHAVED).fill_null(False).to_pylist(), dtype=bool)
    rtt, method = column(conns, S.RTT_DATA_ACK), "data-ack"
    if not np.isfinite(rtt[well]).any():
        rtt, method = column(conns, S.RTT_HANDSHAKE), "handshake"
    rtts = {}
    for s in SCOPES:
        r = rtt[well & (scope == s) & np.isfinite(rtt)]
        rtts[s] = {
            "n": len(r),
            "mean": float(r.mean()) if len(r) else None,
            "median": float(np.median(r)) if len(r) else None,
        }
    scope_share = {s: shares[s]["download"] + shares[s]["upload"] for s in SCOPES}
    known = [s for s in SCOPES if rtts[s]["mean"] is not None]
    legacy_rtt = (
        sum(scope_share[s] * rtts[s]["mean"] for s in known) / sum(scope_share[s] for s in known)
        if known and sum(scope_share[s] for s in known) > 0
        else None
    )

    def half(v):
        return None if v is None else v / 2

    # Flow sizes and inter-arrival times.
    sizes = (up + down)[mature]
    ts = np.sort(column(conns, S.TS))
    ts = ts[np.isfinite(ts)]
    advance("fit flow sizes and inter-arrivals")
    size_fit = fit_all(sizes, "flow size (bytes)", max_fit_samples, seed).to_dict()
    gap_fit = fit_all(np.diff(ts), "flow inter-arrival (s)", max_fit_samples, seed).to_dict()
    advance("apps")
    apps = _apps(profile_dir, conns, scope)
    advance("traffic")
    traffic = derive_traffic(profile_dir, summary, seed)
    model = {
        "schema": "tracelab.workload-model",
        "version": 1,
        "provenance": {
            # summary.json (analyzer) carries {"trace": {"path": ...}, "tool": {"version": ...}}.
            "source_trace": (summary.get("trace") or {}).get("path"),
            "profile_dir": str(profile_dir),
            "analyzer_version": (summary.get("tool") or {}).get("version"),
            "tool": "tracelab-models",
            "tool_version": __version__,
            "parameters": {
                "max_fit_samples": max_fit_samples,
                "seed": seed,
                "rtt_method": method,
                "share_unit": "payload bytes",
                "well_behaved_only_for_rtt": True,
            },
        },
        "flows": {
            "connections": int(conns.num_rows),
            "size_bytes": size_fit,
            "interarrival_s": gap_fit,
        },
        "legacy": {
            "shares": {
                "download": sum(shares[s]["download"] for s in SCOPES),
                "upload": sum(shares[s]["upload"] for s in SCOPES),
            },
            "rtt_s": legacy_rtt,
            "link_delays_s": {"x-11": 0.0, "11-12": 0.0, "12-y": half(legacy_rtt)},
        },
        "topological": {
            "shares": shares,
            "rtt_s": rtts,
            "rtt_method": method,
            "link_delays_s": {
                "x-11": 0.0,
                "11-12": 0.0,
                "12-w": half(rtts[S.SCOPE_INTRANET]["mean"]),
                "12-v": half(rtts[S.SCOPE_INTERNET]["mean"]),
            },
        },
        "apps": apps,
        "traffic": traffic,
    }
    model = _finite(model)
    validate(model, str(profile_dir))
    return model


def derive_input(source, local: list[str], max_fit_samples: int = 100_000, seed: int = 0,
                 advance=lambda _step: None) -> dict:  # fmt: skip
    """The model of a profile directory, of a partitioned profile dataset (read
    back as its plain profile, dataset.py), or of Zeek conn logs (a file or a
    directory of rotated ones, zeeklog.py) read as a profile; `local` is for
    Zeek logs only."""
    if zeeklog.is_profile(source) or dataset.is_dataset(source):
        if local:
            raise ValueError(f"{source}: --local is for Zeek logs; a profile has its locality already")
    if zeeklog.is_profile(source):
        return derive(source, max_fit_samples, seed, advance)
    if dataset.is_dataset(source):
        with tempfile.TemporaryDirectory(prefix="tracelab-dataset-") as tmp:
            dataset.to_profile(source, tmp)
            model = derive(tmp, max_fit_samples, seed, advance)
        model["provenance"]["profile_dir"] = str(source)
        return model
    with tempfile.TemporaryDirectory(prefix="tracelab-zeek-") as tmp:
        summary = zeeklog.to_profile(source, local, tmp)
        model = derive(tmp, max_fit_samples, seed, advance)
    model["provenance"]["profile_dir"] = str(source)
    model["provenance"]["input"] = summary["input"]
    validate(model, str(source))
    return model


def _apps(profile_dir, conns, scope) -> dict:
    warm = read_table(profile_dir, S.WARMUPS, [S.CONN, S.SIDE, S.WARMUP_S], required=False)
    trains = read_table(profile_dir, S.TRAINS, [S.CONN, S.SIDE, S.SIZE_PKTS], required=False)
    warm_scope = _sample_scope(profile_dir, S.WARMUPS, warm, scope)
    train_scope = _sample_scope(profile_dir, S.TRAINS, trains, scope)
    sizes = read_table(profile_dir, S.PACKET_SIZES, [S.SIDE, S.SCOPE, S.IP_LEN, S.COUNT], required=False)
    out = {}
    for s in SCOPES:
        out[s] = {}
        for side in S.SIDES:
            pacing = column(conns, S.side_col(side, S.PACING_PER_PKT))[scope == s]
            out[s][side] = {
                "train_size_pkts": histogram(_select(trains, train_scope, s, side, S.SIZE_PKTS)),
                "warmup_s": empirical(_select(warm, warm_scope, s, side, S.WARMUP_S)),
                "pacing_per_pkt_s": empirical(pacing),
                "packet_size_bytes": _packet_sizes(sizes, s, side),
            }
    return out


def _sample_scope(profile_dir, name, table, scope):
    """Each sample's connection scope (samples name their connection by row)."""
    if table is None:
        return None
    return scope[sample_connections(table, len(scope), Path(profile_dir) / name)]


def _select(table, sample_scope, scope, side, col):
    if table is None:
        return []
    sides = np.array(table.column(S.SIDE).to_pylist(), dtype=object)
    return column(table, col)[(sides == side) & (sample_scope == scope)]


def _packet_sizes(table, scope, side) -> dict:
    if table is None:
        return histogram([])
    mask = pc.and_(pc.equal(table.column(S.SCOPE), scope), pc.equal(table.column(S.SIDE), side))
    t = table.filter(mask)
    return histogram(column(t, S.IP_LEN), column(t, S.COUNT, 0.0))
