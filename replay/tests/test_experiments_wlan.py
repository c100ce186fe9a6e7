"""The thesis's WLAN experiments (E-THS-9..12): the analytic
parts by hand, and the --quick runs of the ns-3 scenario where it is built."""

from __future__ import annotations

import json
import math

import pytest
from tracelab.replay.experiments import wlan
from tracelab.replay.experiments.cli import main as experiments_main
from tracelab.replay.experiments.closed_loop import long_threshold
from tracelab.replay.experiments.registry import EXPERIMENTS
from tracelab.replay.experiments.wlan import (
    WlanFlow,
    WlanResult,
    WlanRun,
    dcf_single_tcp_mbps,
    fairness,
    long_lived_spec,
    max_queued_packets,
    mixed_spec,
    ofdm_airtime_us,
    response_means,
)


def test_ofdm_airtimes_by_hand():
    # 1500-B IP packet + 36 B of MAC: 16 + 8·1536 + 6 = 12 310 bits / 216 per symbol = 57 symbols (228 µs) + 20.
    assert ofdm_airtime_us(1536, 54) == 248
    # The 14-B MAC ACK at 24 Mb/s: 134 bits / 96 = 2 symbols.
    assert ofdm_airtime_us(14, 24) == 28
    # 52-B TCP ACK + 36: 726 bits / 216 = 4 symbols.
    assert ofdm_airtime_us(88, 54) == 36


def test_dcf_bound_by_hand():
    access = 34 + 7.5 * 9
    data = access + 248 + 16 + 28
    ack = access + 36 + 16 + 28
    assert dcf_single_tcp_mbps() == pytest.approx(1448 * 8 / (data + ack / 2))
    assert 23.9 < dcf_single_tcp_mbps() < 24.0 < 27.3


def test_at_most_322_5_packets_queue_at_the_ap():
    assert max_queued_packets() == 5 * 43 + 5 * 43 / 2 == 322.5


def test_buffer_specs_in_packets_and_bytes():
    assert long_lived_spec("FIFO", 30, "packets") == "fifo(capacity=30)"
    assert long_lived_spec("FIFO", 30, "bytes") == "fifo(capacity=45000, granularity=bytes)"
    assert long_lived_spec("LARS", 10, "bytes") == "lars(ack=true, capacity=15000, granularity=bytes)"


def test_run_arguments_name_the_workload():
    run = WlanRun("pefd(capacity=30)", 9.0, 2, uploads=5, downloads=5)
    assert run.args() == [
        "--qdisc=pefd(capacity=30)",
        "--duration=9",
        "--seed=2",
        "--uploads=5",
        "--downloads=5",
        "--start=1",
        "--ns3::TcpSocket::InitialCwnd=1",
        # The spec's NewReno: RFC 6582 recovery, no SACK, not ns-3's default PRR.
        "--ns3::TcpSocketBase::Sack=false",
        "--ns3::TcpL4Protocol::RecoveryType=ns3::TcpClassicRecovery",
    ]
    mixed = WlanRun("fifo", 100.0, 1, load=10e6, ratio=10, drain=20)
    assert mixed.args()[-6:-3] == ["--load=1e+07", "--ratio=10", "--drain=20"]
    assert "Sack=false_RecoveryType=TcpClassicRecovery" in mixed.dirname()
    assert "load=1e+07" in mixed.dirname()
    assert "(" not in run.dirname() and "," not in run.dirname()


def test_fairness_per_direction():
    def flow(down, received, arrived, lost):
        acks = 0 if down else arrived
        return WlanFlow(
            down, 0, 1.0, None, received, arrived - acks, acks, lost if down else 0, 0 if down else lost, 0.02, 14480.0
        )

    r = WlanResult({"end_s": 11.0}, [flow(True, 1_000_000, 100, 10), flow(False, 3_000_000, 40, 1)])
    f = fairness(r)
    assert f.down_mbps == pytest.approx(0.8) and f.up_mbps == pytest.approx(2.4)
    assert f.ratio == pytest.approx(3.0)
    assert f.loss_down == pytest.approx(0.1) and f.loss_up == pytest.approx(0.025)
    assert f.window_down == pytest.approx(10.0)
    starved = WlanResult({"end_s": 11.0}, [flow(True, 0, 5, 5), flow(False, 1000, 1, 0)])
    assert math.isinf(fairness(starved).ratio)
    assert math.isinf(fairness(starved).paced_rtt(True))


def test_paced_rtt_is_window_over_rate():
    # 5 downloads at 0.4 Mb/s together with 2-segment windows: 2·1448·8 bits / 80 kb/s = 0.2896 s per window.
    f = wlan.Fairness(24.0, 0.4, 0.2, 0.3, 0.08, 0.2, 40.0, 2.0)
    assert f.paced_rtt(True) == pytest.approx(2 * 1448 * 8 / 80e3)
    assert f.paced_rtt(False) == pytest.approx(40 * 1448 * 8 / 4.8e6)


def test_mixed_split_and_means_by_hand():
    def flow(down, size, response):
        return WlanFlow(down, size, 0.0, response, size, 0, 0, 0, 0, None, None)

    flows = [
        flow(True, 100, 1.0),
        flow(True, 10, 0.2),
        flow(False, 10, 0.4),
        flow(False, 60, None),
        flow(True, 20, 0.3),
    ]
    # 200 bytes in all: the 100-byte transfer alone carries half.
    assert long_threshold(flows) == 100
    dn_short, dn_long, up_short, up_long = response_means(flows, 100)
    assert dn_short == pytest.approx(0.25) and dn_long == 1.0 and up_short == 0.4
    assert math.isnan(up_long)  # the only long upload did not complete
    assert mixed_spec("LARS", 30) == "lars(ack=true, capacity=30)"
    assert mixed_spec("PEFD", 300) == "pefd(capacity=300)"


def test_registry_scales_name_known_schedulers():
    e10, e12 = EXPERIMENTS["E-THS-10"], EXPERIMENTS["E-THS-12"]
    for seconds, buffers, schedulers in (e10.full, e10.quick, e12.full[0], e12.quick[0]):
        assert seconds > 0 and buffers and set(schedulers) <= set(wlan.LONG_LIVED_SCHEDULERS)
    # E-THS-12's mixed part runs as long as E-THS-11's, so their Table A.1 packet-mode runs are the same.
    for (seconds, drain, schedulers), (seconds11, drain11, _, _) in (
        (e12.full[1], EXPERIMENTS["E-THS-11"].full),
        (e12.quick[1], EXPERIMENTS["E-THS-11"].quick),
    ):
        assert (seconds, drain) == (seconds11, drain11) and "FIFO" in schedulers
        assert set(schedulers) <= set(wlan.LONG_LIVED_SCHEDULERS)
    e = EXPERIMENTS["E-THS-11"]
    for seconds, _, tables, schedulers in (e.full, e.quick):
        assert seconds > 0 and set(tables) <= set(wlan.MIXED_TABLES) and "FIFO" in schedulers
        assert set(schedulers) <= set(wlan.MIXED_SCHEDULERS)


NS3_SKIP = pytest.mark.skipif(wlan.wlan_binary() is None, reason=f"ns-3 not built: {wlan.WLAN_MISSING}")
WLAN = ["E-THS-9", "E-THS-10", "E-THS-11", "E-THS-12"]


@pytest.fixture(scope="module")
def wlan_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("wlan")
    assert experiments_main(["run", *WLAN, "--quick", "-o", str(out)]) in (0, 1)
    return {i: json.loads((out / i / "result.json").read_text()) for i in WLAN}


def verdict(result, prefix):
    matching = [c for c in result["checks"] if c["name"].startswith(prefix)]
    assert matching, f"no check {prefix!r}"
    return matching[0]["verdict"]


@NS3_SKIP
def test_wlan_results_record_ns3_and_every_check(wlan_results):
    for r in wlan_results.values():
        assert r["engine"] == "ns-3" and r["kind"] == "closed loop"
        assert r["tools"]["ns3"].startswith("3.44")
        assert r["checks"] and all(c["published"] is not None and c["tolerance"] for c in r["checks"])


@NS3_SKIP
def test_ths9_one_transfer_reaches_the_dcf_bound_without_loss(wlan_results):
    r = wlan_results["E-THS-9"]
    for prefix in ("both directions within", "AP backlog ≤ the 43-segment", "nothing lost alone"):
        assert verdict(r, prefix) == "held", prefix
    download = float(r["table"]["rows"][0][1])
    assert 23.9 <= download <= 27.3


@NS3_SKIP
def test_ths10_lossless_buffer_and_fifo_unfair_lasack_fair(wlan_results):
    r = wlan_results["E-THS-10"]
    for prefix in ("at most 5·43", "FIFO, 500-packet buffer", "FIFO strongly unfair", "LASACK ≈ perfectly fair"):
        assert verdict(r, prefix) == "held", prefix


@NS3_SKIP
def test_ths12_analytic_check_and_lasack_insensitive(wlan_results):
    r = wlan_results["E-THS-12"]
    assert verdict(r, "5 · (43/2) · 40 B") == "held"
    assert verdict(r, "LASACK insensitive") == "held"
    # Byte mode makes FIFO fairer (the uploads' ACKs no longer take full slots).
    fifo = next(row for row in r["table"]["rows"] if row[0] == "long-lived" and row[2] == "FIFO")
    packets, bytes_ = (float(x) for x in fifo[3].split(" → "))
    assert bytes_ < packets


def test_ths12_mixed_byte_buffer_is_30_packets_of_1500_bytes():
    assert long_lived_spec("SCFQ", 30, "bytes") == "scfq(capacity=45000, granularity=bytes)"
    ratio, buffer, load, _ = wlan.MIXED_TABLES[wlan.MIXED_GRANULARITY_TABLE]
    assert (ratio, buffer, load) == (1, 30, 10e6)
    # The packet-mode spec is E-THS-11's, so the run cache serves both experiments.
    for s in wlan.MIXED_SCHEDULERS:
        assert long_lived_spec(s, buffer, "packets") == mixed_spec(s, buffer)


@NS3_SKIP
def test_ths12_mixed_rows_and_checks(wlan_results):
    r = wlan_results["E-THS-12"]
    mixed = {row[2]: row for row in r["table"]["rows"] if row[0] == "mixed"}
    assert set(mixed) == {"FIFO", "LASACK"}
    for row in mixed.values():
        assert row[1] == "30"
        # Download loss in % and each direction's short-transfer mean in seconds, packets → bytes.
        for cell, bound in ((row[4], 100), (row[6], 5), (row[7], 5)):
            packets, bytes_ = (float(x) for x in cell.split(" → "))
            assert 0 <= packets <= bound and 0 <= bytes_ <= bound
    # The packet-mode FIFO run is E-THS-11's: the same short-transfer means.
    e11 = next(row for row in wlan_results["E-THS-11"]["table"]["rows"] if row[:2] == ["A.1", "FIFO"])
    assert mixed["FIFO"][6].split(" → ")[0] == e11[2] and mixed["FIFO"][7].split(" → ")[0] == e11[6]
    for prefix in ("mixed, bytes: download loss lower", "mixed: LASACK insensitive"):
        check = next(c for c in r["checks"] if c["name"].startswith(prefix))
        assert check["published"] and check["tolerance"] and check["measured"]
        # A failed check carries the run's figures and the traced cause.
        assert check["verdict"] == "held" or "ns-3's cell" in check["why"]


@NS3_SKIP
def test_ths11_every_scheduler_sees_the_same_transfers(wlan_results):
    r = wlan_results["E-THS-11"]
    done = {row[1]: row[10] for row in r["table"]["rows"]}
    assert set(done) == {"FIFO", "LASACK", "PEFD"}
    # One seed, one workload: the same arrivals under every scheduler, all completed by the end of the drain.
    assert len(set(done.values())) == 1
    completed, total = next(iter(done.values())).split("/")
    assert completed == total and int(total) > 100
    # Each run's AP: its drop share and high-water, bounded by the 30-packet buffer of Table A.1.
    for row in r["table"]["rows"]:
        assert 0 <= float(row[11]) < 100 and 0 < int(row[12]) <= 30
    assert all(c["published"] for c in r["checks"])


def test_congestion_of_a_mixed_run_by_hand():
    def flow(down, size, response, lost_data, lost_acks):
        return WlanFlow(down, size, 0.0, response, size, 10, 5, lost_data, lost_acks, None, None)

    flows = [
        flow(True, 10_000, 0.1, 1, 0),  # short, lost a data packet
        flow(False, 10_000, 0.1, 0, 2),  # short, lost ACKs
        flow(True, 20_000, 0.2, 0, 0),
        flow(False, 30_000, 0.3, 0, 0),
        flow(True, 1_000_000, 2.0, 3, 0),  # long downloads: 4 and 2 Mb/s
        flow(True, 500_000, 2.0, 0, 0),
        flow(False, 2_000_000, 1.0, 0, 0),  # long upload: not in the downloads' rate
    ]
    summary = {"ap": {"received": 400, "dropped": 6, "highwater_packets": 30}}
    c = wlan.congestion(WlanResult(summary, flows), threshold=500_000)
    assert c.ap_drop_share == pytest.approx(6 / 400) and c.highwater == 30
    assert c.short_with_loss == pytest.approx(2 / 4)
    assert c.long_down_mbps == pytest.approx(3.0)


def test_published_rates_say_the_load_is_both_directions_together():
    # Table A.1: FIFO's 1063-MSS long downloads (1460-B MSS) in 2.404 s.
    assert wlan.published_long_down_mbps("A.1", "FIFO") == pytest.approx(1063 * 1460 * 8 / 2.404 / 1e6)
    # Processor sharing, T = x / (C − λ): the loss-free 300-MSS tables (LASACK) put the high and the medium
    # load ≈ 8.7 Mb/s apart — 20 − 10 in total, not 2 × (20 − 10) per direction.
    gap = wlan.published_long_down_mbps("A.5", "LASACK") - wlan.published_long_down_mbps("A.6", "LASACK")
    assert 7.5 < gap < 10.0
