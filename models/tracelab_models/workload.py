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

from . import __version__, dataset, zeeklog
from . import schema as S
from .columns import as_column
from .distributions import fit_all
from .profile import ProfileError, read_summary
from .sqlprofile import MEMORY_LIMIT, ProfileDB
from .traffic import derive_traffic, interarrivals

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
    """n, mean and percentiles of the finite values of `x`: an array or a column
    (columns.py); None is no values."""
    x = as_column([] if x is None else x).finite()
    if len(x) == 0:
        return {"n": 0, "mean": None, "p": [], "v": []}
    return {"n": len(x), "mean": x.mean(), "p": _PROBS, "v": [float(v) for v in x.quantiles(_PROBS)]}


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


def derive(profile_dir, max_fit_samples: int = 100_000, seed: int = 0, advance=lambda _step: None,
           memory_limit: str = MEMORY_LIMIT) -> dict:  # fmt: skip
    """The workload model of one profile directory or partitioned dataset (validated),
    computed through DuckDB (sqlprofile.py) within `memory_limit` plus the fits'
    samples; `advance(next)` after each of its DERIVE_STEPS steps but the last."""
    profile_dir = Path(profile_dir)
    with ProfileDB(profile_dir, memory_limit) as db:
        return _derive(db, profile_dir, max_fit_samples, seed, advance)


def _derive(db, profile_dir: Path, max_fit_samples: int, seed: int, advance) -> dict:
    db.require(
        "connections",
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
    db.execute(f"""
        CREATE OR REPLACE TEMP TABLE derive_rows AS SELECT conn,
            coalesce(scope, '') AS scope,
            coalesce(CAST(orig_bytes AS DOUBLE), 0.0) AS up, coalesce(CAST(resp_bytes AS DOUBLE), 0.0) AS down,
            coalesce(well_behaved, false) AS well,
            coalesce(CAST(ts AS DOUBLE), 'NaN'::DOUBLE) AS ts,
            coalesce(CAST({S.RTT_DATA_ACK} AS DOUBLE), 'NaN'::DOUBLE) AS rtt_data_ack,
            coalesce(CAST({S.RTT_HANDSHAKE} AS DOUBLE), 'NaN'::DOUBLE) AS rtt_handshake,
            {", ".join(f"coalesce(CAST({S.side_col(s, S.PACING_PER_PKT)} AS DOUBLE), 'NaN'::DOUBLE) AS {s}_pacing"
                       for s in S.SIDES)}
        FROM connections""")  # fmt: skip

    def rows(expr, where):
        return db.column(f"SELECT {expr} AS v, conn FROM derive_rows WHERE {where}", "conn")

    mature = "up + down > 0"

    # Shares of bytes, Table 9.1.
    in_scope = f"scope IN ('{S.SCOPE_INTRANET}', '{S.SCOPE_INTERNET}') AND {mature}"
    total = rows("up + down", in_scope).total()
    if total <= 0:
        raise ProfileError(
            f"{db.paths['connections']}: no intranet or internet connection carries "
            "payload (are the enterprise networks given to the analyzer with --local?)"
        )
    shares = {
        s: {
            "download": rows("down", f"{in_scope} AND scope = '{s}'").total() / total,
            "upload": rows("up", f"{in_scope} AND scope = '{s}'").total() / total,
        }
        for s in SCOPES
    }

    # RTT per scope, Table 9.2.
    rtt, method = "rtt_data_ack", "data-ack"
    if not db.scalar(f"SELECT count(*) FROM derive_rows WHERE well AND isfinite({rtt})"):
        rtt, method = "rtt_handshake", "handshake"
    rtts = {}
    for s in SCOPES:
        r = rows(rtt, f"well AND scope = '{s}' AND isfinite({rtt})")
        rtts[s] = {
            "n": len(r),
            "mean": r.mean() if len(r) else None,
            "median": r.median() if len(r) else None,
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
    advance("fit flow sizes and inter-arrivals")
    size_fit = fit_all(rows("up + down", mature), "flow size (bytes)", max_fit_samples, seed).to_dict()
    gaps = interarrivals(db, "derive_rows")
    gap_fit = fit_all(gaps, "flow inter-arrival (s)", max_fit_samples, seed).to_dict()
    advance("apps")
    apps = _apps(db)
    advance("traffic")
    traffic = derive_traffic(db, summary, seed)
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
            "connections": int(db.scalar("SELECT count(*) FROM connections")),
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
                 advance=lambda _step: None, memory_limit: str = MEMORY_LIMIT) -> dict:  # fmt: skip
    """The model of a profile directory, of a partitioned profile dataset (read
    back as its plain profile, dataset.py), or of Zeek conn logs (a file or a
    directory of rotated ones, zeeklog.py) read as a profile; `local` is for
    Zeek logs only."""
    if zeeklog.is_profile(source) or dataset.is_dataset(source):
        if local:
            raise ValueError(f"{source}: --local is for Zeek logs; a profile has its locality already")
    if zeeklog.is_profile(source) or dataset.is_dataset(source):
        return derive(source, max_fit_samples, seed, advance, memory_limit)
    with tempfile.TemporaryDirectory(prefix="tracelab-zeek-") as tmp:
        summary = zeeklog.to_profile(source, local, tmp)
        model = derive(tmp, max_fit_samples, seed, advance, memory_limit)
    model["provenance"]["profile_dir"] = str(source)
    model["provenance"]["input"] = summary["input"]
    validate(model, str(source))
    return model


def _apps(db) -> dict:
    db.check_sample_conns("warmups", (S.CONN, S.SIDE, S.WARMUP_S), int(db.scalar("SELECT count(*) FROM connections")))
    db.check_sample_conns("trains", (S.CONN, S.SIDE, S.SIZE_PKTS), int(db.scalar("SELECT count(*) FROM connections")))
    if db.has("packet_sizes"):
        db.require("packet_sizes", (S.SIDE, S.SCOPE, S.IP_LEN, S.COUNT))
    out = {}
    for s in SCOPES:
        out[s] = {}
        for side in S.SIDES:
            out[s][side] = {
                "train_size_pkts": _histogram(db, _query(_samples(db, "trains", S.SIZE_PKTS, s, side)), "count(*)"),
                "warmup_s": empirical(_samples(db, "warmups", S.WARMUP_S, s, side)),
                "pacing_per_pkt_s": empirical(
                    db.column(f"SELECT {side}_pacing AS v, conn FROM derive_rows WHERE scope = '{s}'", "conn")
                ),
                "packet_size_bytes": _histogram(
                    db,
                    f"SELECT coalesce(CAST({S.IP_LEN} AS DOUBLE), 'NaN'::DOUBLE) AS v, "
                    f"coalesce(CAST({S.COUNT} AS DOUBLE), 0.0) AS weight FROM packet_sizes "
                    f"WHERE {S.SCOPE} = '{s}' AND {S.SIDE} = '{side}'"
                    if db.has("packet_sizes")
                    else None,
                    "sum(CAST(trunc(weight) AS BIGINT))",
                ),
            }
    return out


def _samples(db, table: str, value: str, scope: str, side: str):
    """The `value`s of one side's samples whose connection is in `scope`, in the
    table's order (a column; None without the table)."""
    if not db.has(table):
        return None
    return db.column(
        f"SELECT coalesce(CAST(s.{value} AS DOUBLE), 'NaN'::DOUBLE) AS v, s.conn, s._file, s._row "
        f"FROM {table} s JOIN derive_rows c USING (conn) WHERE s.{S.SIDE} = '{side}' AND c.scope = '{scope}'",
        db.order(table),
    )


def _query(column) -> str | None:
    return None if column is None else column.select


def _histogram(db, select: str | None, count: str) -> dict:
    """`histogram` of the finite values `v` of a query: each value once, with its `count`."""
    if select is None:
        return histogram([])
    pairs = db.rows(f"SELECT v, {count} FROM ({select}) WHERE isfinite(v) GROUP BY v ORDER BY v")
    return {"values": [float(v) for v, _ in pairs], "counts": [int(c) for _, c in pairs]}
