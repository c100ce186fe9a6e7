"""The fidelity comparison (tracelab_models.fidelity) on hand-built profiles
whose marginals are computed by hand, and its two distribution measures
against scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fixtures import write_profile
from scipy.spatial.distance import jensenshannon
from scipy.stats import wasserstein_distance
from tracelab_models import fidelity as F


def conn(ts, proto, scope, ob, rb, dur, rtt=None, wb=False, trains=(0, 0), port=80):
    return {
        "ts": ts,
        "proto": proto,
        "scope": scope,
        "orig_bytes": ob,
        "resp_bytes": rb,
        "duration": dur,
        "rtt_handshake_s": rtt,
        "well_behaved": wb,
        "orig_trains": trains[0],
        "resp_trains": trains[1],
        "id.resp_p": port,
    }


HOSTS = [
    {"host": "10.0.0.1", "local": True, "server": False, "outcnx": 3},
    {"host": "10.0.0.2", "local": True, "server": True, "outcnx": 0},
    {"host": "8.8.8.8", "local": False, "server": True, "outcnx": 0},
]


def profile(tmp_path, name, conns, duration_s=10.0, hosts=HOSTS):
    return write_profile(tmp_path / name, conns, hosts=hosts, summary={"trace": {"duration_s": duration_s}})


def original(tmp_path):
    return profile(
        tmp_path,
        "orig",
        [
            conn(0.0, "tcp", "intranet", 100, 900, 1.0, rtt=0.001, wb=True, trains=(1, 2)),
            conn(1.0, "tcp", "internet", 300, 2700, 2.0, rtt=0.1, wb=True, trains=(2, 3), port=443),
            conn(3.0, "udp", "internet", 60, 140, 0.01, port=53),
            conn(6.0, "tcp", "internet", 0, 0, 3.0, rtt=0.3),
        ],
    )


def by_name(rows):
    return {m.name: m for m in rows}


def test_identical_profiles_pass_every_marginal(tmp_path):
    d = original(tmp_path)
    rows, dists = F.compare(d, d)
    assert all(m.verdict == "pass" for m in rows), F.table(rows)
    assert all(m.error in (None, 0.0) for m in rows)
    for dist in dists:
        assert dist.jsd == 0.0 and dist.emd_norm == 0.0, dist


def test_marginals_computed_by_hand(tmp_path):
    o = F.ProfileView(original(tmp_path))
    s = F.ProfileView(
        profile(
            tmp_path,
            "synth",
            [
                conn(0.0, "tcp", "intranet", 100, 900, 1.0, rtt=0.0012, wb=True, trains=(1, 1)),
                conn(1.0, "tcp", "internet", 300, 2700, 2.0, rtt=0.1, wb=True, trains=(2, 2), port=443),
                conn(2.0, "tcp", "internet", 300, 2700, 2.0, rtt=0.1, wb=True, trains=(2, 2), port=443),
            ],
            duration_s=5.0,
        )
    )
    m = by_name(F.marginals(o, s))
    # 4 connections in 10 s vs 3 in 5 s: 0.4 -> 0.6 per second, +50 %.
    assert m["connections per second"].original == pytest.approx(0.4)
    assert m["connections per second"].error == pytest.approx(0.5)
    assert m["connections per second"].verdict == "fail"
    # TCP bytes mean: (1000 + 3000 + 0) / 3 vs (1000 + 3000 + 3000) / 3.
    assert m["TCP bytes per connection, mean"].original == pytest.approx(4000 / 3)
    assert m["TCP bytes per connection, mean"].synthetic == pytest.approx(7000 / 3)
    # No UDP in the synthetic trace: a failure, not a pass.
    assert m["UDP bytes per connection, mean"].verdict == "fail"
    assert m["UDP share of connections"].error == pytest.approx(-25.0)
    assert m["ICMP share of connections"].verdict == "pass"
    assert m["intranet share of connections"].original == pytest.approx(0.25)
    assert m["intranet share of connections"].error == pytest.approx(100 / 3 - 25)
    # Originator->responder bytes: intranet 100 of 460 vs 100 of 700.
    assert m["intranet share of originator->responder bytes"].original == pytest.approx(100 / 460)
    assert m["intranet share of originator->responder bytes"].synthetic == pytest.approx(100 / 700)
    assert m["connection bytes, median"].original == pytest.approx(600.0)  # 0, 200, 1000, 3000
    assert m["connection duration, median"].original == pytest.approx(1.5)
    rtt = m["intranet handshake RTT, median"]
    assert rtt.error == pytest.approx(0.2) and rtt.verdict == "pass"  # +20 % is within ±20 %
    assert m["internet handshake RTT, median"].original == pytest.approx(0.2)  # 0.1, 0.3
    # Trains of well-behaved connections: (3 + 5) / 2 vs (2 + 4 + 4) / 3.
    assert m["trains per well-behaved connection, mean"].original == pytest.approx(4.0)
    assert m["trains per well-behaved connection, mean"].synthetic == pytest.approx(10 / 3)
    assert m["local client hosts"].original == 1.0 and m["local server hosts"].original == 1.0
    top = m["top-5 services"]
    assert top.original == "tcp/80,tcp/443,udp/53" and top.synthetic == "tcp/443,tcp/80" and top.verdict == "fail"


def test_zero_original_compares_by_equality(tmp_path):
    d = original(tmp_path)
    rows = by_name(F.compare(d, d)[0])
    assert rows["ICMP share of connections"].original == 0.0
    assert F._rel("x", 0.0, 0.0, 0.1).verdict == "pass"
    assert F._rel("x", 0.0, 1.0, 0.1).verdict == "fail"
    assert F._rel("x", None, 1.0, 0.1).verdict == "n/a"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_jensen_shannon_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.lognormal(0, 1, 500), rng.lognormal(0.5, 1.2, 400)
    edges = np.geomspace(min(a.min(), b.min()), max(a.max(), b.max()), F.JSD_BINS + 1)
    p, q = np.histogram(a, edges)[0], np.histogram(b, edges)[0]
    assert F.jensen_shannon(a, b) == pytest.approx(jensenshannon(p, q, base=2) ** 2)


def test_jensen_shannon_bounds():
    assert F.jensen_shannon(np.array([1.0, 2.0]), np.array([1.0, 2.0])) == 0.0
    assert F.jensen_shannon(np.array([1.0, 1.1]), np.array([100.0, 110.0])) == pytest.approx(1.0)
    assert F.jensen_shannon(np.array([]), np.array([1.0])) is None


@pytest.mark.parametrize("seed", [1, 2])
def test_emd_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.exponential(2.0, 300), rng.exponential(3.0, 200)
    span = a.max() - a.min()
    assert F.emd_normalised(a, b) == pytest.approx(wasserstein_distance(a, b) / span)


def test_emd_by_hand():
    # Shift [0, 1] by 1: every unit of mass moves 1, the original spans 1.
    assert F.emd_normalised(np.array([0.0, 1.0]), np.array([1.0, 2.0])) == pytest.approx(1.0)
    # One-valued original: normalised by its magnitude.
    assert F.emd_normalised(np.array([2.0, 2.0]), np.array([3.0])) == pytest.approx(0.5)
    assert F.emd_normalised(np.array([0.0]), np.array([0.0])) == 0.0
    assert F.emd_normalised(np.array([0.0]), np.array([1.0])) is None
    assert not math.isnan(F.emd_normalised(np.array([1.0, 5.0]), np.array([2.0])))


def test_table_lists_every_marginal(tmp_path):
    d = original(tmp_path)
    rows = F.compare(d, d)[0]
    text = F.table(rows)
    assert len(text.splitlines()) == len(rows) + 2
    assert "±10%" in text and "±3 pts" in text and "same set" in text
