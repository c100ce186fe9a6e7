"""Every reproduced experiment, once: the runner (`tracelab experiments`),
the tests and the report all read this table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import (
    chunk_more,
    enterprise,
    jumbogen_closed,
    jumbogen_trace,
    jumbogen_units,
    mtq_chain,
    ncq_analytic,
    ncq_closed,
    runs,
    setups,
    thesis_more,
    wlan,
    workload_models,
)
from . import closed_loop as cl
from .outcome import Context, Outcome

OPEN, CLOSED = "open loop", "closed loop"
# Computed, not simulated: the published numbers' arithmetic, or our code on inputs built with known answers.
ANALYTIC = "analytic"
ENGINE, NS3 = "tracelab_engine", "ns-3"
PYTHON, MODELS, ANALYZER = "python", "tracelab_models", "analyzer"


@dataclass(frozen=True)
class Experiment:
    id: str
    title: str
    kind: str  # OPEN, CLOSED or ANALYTIC
    engine: str  # ENGINE, NS3, PYTHON, MODELS or ANALYZER
    run: Callable[[Any, Context], Outcome]
    # The scale argument of `run` at full size and with --quick (None: the experiment has no scale).
    full: Any
    quick: Any
    # Wall seconds of a full and a quick run on 2 cores: measured for the engine's, and for ns-3's the
    # measured CPU seconds of the quick runs / 2 jobs, scaled by duration for the full ones.
    est_full_s: float
    est_quick_s: float

    def scale(self, quick: bool) -> Any:
        return self.quick if quick else self.full


EXPERIMENTS: dict[str, Experiment] = {
    e.id: e
    for e in [
        # seconds of traffic of the engine's Λ = 0.9 run
        Experiment("E-CHK-0", "Chunking setup ([000 §5], Table II)", OPEN, ENGINE, setups.e_chk_0, 0.2, 0.01, 1, 1),
        Experiment(
            "E-CHK-1", "Effect of chunking at Λ = 0.9 ([000] Table III)", OPEN, ENGINE, runs.e_chk_1, 0.2, 0.01, 8, 1
        ),
        Experiment("E-CHK-2", "ChuMQ analytic model ([000 §6])", OPEN, ENGINE, runs.e_chk_2, None, None, 0, 0),
        Experiment("E-CHK-3", "R_v vs Λ, imbalanced ([000 §7.2.1])", OPEN, ENGINE, runs.e_chk_3, 0.2, 0.01, 2, 1),
        Experiment(
            "E-CHK-4", "Overload Λ = 0.8 → 1.2 → 0.8 ([000] Table IV)", OPEN, ENGINE, runs.e_chk_4, 0.5, 0.02, 29, 1
        ),
        Experiment(
            "E-CHK-5",
            "Chunking efficiency ([000 §7.3], Figs. 12–13)",
            OPEN,
            ENGINE,
            chunk_more.e_chk_5,
            0.05,
            0.005,
            30,
            4,
        ),
        Experiment(
            "E-CHK-6",
            "Ten applications, 3 vs 10 buffers ([000] Tables V–IX)",
            OPEN,
            ENGINE,
            chunk_more.e_chk_6,
            0.05,
            0.01,
            8,
            3,
        ),
        # seconds of Poisson arrivals of the engine's cross-check of Case 1
        Experiment(
            "E-NCQ-4",
            "NCQ priority model ([001 App.A])",
            OPEN,
            ENGINE,
            ncq_analytic.e_ncq_4,
            20000.0,
            2000.0,
            4,
            1,
        ),
        # (seconds of the unloaded run, seconds of the loaded runs)
        Experiment(
            "E-NCQ-0",
            "NCQ common setup measured ([001 §4.2], Fig. 4)",
            CLOSED,
            NS3,
            ncq_closed.e_ncq_0,
            (600.0, 60.0),
            (100.0, 5.0),
            136,
            12,
        ),
        # (seconds per run, the points of the sweep)
        Experiment(
            "E-NCQ-1",
            "NCQ/NCQ+ scalability ([001] Scen. 1, Figs. 5–9)",
            CLOSED,
            NS3,
            ncq_closed.e_ncq_1,
            (20.0, (120, 160, 200)),
            (5.0, (120, 160)),
            125,
            18,
        ),
        Experiment(
            "E-NCQ-2",
            "NCQ/NCQ+ under VoIP load ([001] Scen. 2, Figs. 10–13)",
            CLOSED,
            NS3,
            ncq_closed.e_ncq_2,
            (20.0, (3, 18)),
            (5.0, (6, 18)),
            63,
            16,
        ),
        Experiment(
            "E-NCQ-3",
            "NCQ/NCQ+ under sensor load ([001] Scen. 3, Figs. 14–17)",
            CLOSED,
            NS3,
            ncq_closed.e_ncq_3,
            (20.0, (6, 18)),
            (5.0, (6, 18)),
            63,
            17,
        ),
        # seconds per run (JumboGen's edge/core network in ns-3)
        Experiment(
            "E-JG-0", "JumboGen setup measured ([002 §4])", CLOSED, NS3, jumbogen_closed.e_jg_0, 20.0, 6.0, 35, 10
        ),
        # (seconds per run, Ethernet frame sizes in bytes)
        Experiment(
            "E-JG-1",
            "Packet size vs router loss ([002 §1], Table 1)",
            CLOSED,
            NS3,
            jumbogen_closed.e_jg_1,
            (0.7, (128, 256, 512, 1024, 1500)),
            (0.3, (128, 512, 1500)),
            45,
            12,
        ),
        Experiment(
            "E-JG-2", "RED variants ([002 §4.1], Table 2)", CLOSED, NS3, jumbogen_closed.e_jg_2, 20.0, 6.0, 47, 14
        ),
        Experiment(
            "E-JG-3", "Egress shaping ([002 §4.2], Table 3)", CLOSED, NS3, jumbogen_closed.e_jg_3, 20.0, 6.0, 35, 10
        ),
        # (seconds per run, JumboGen MTUs in KB)
        Experiment(
            "E-JG-4",
            "JumboGen MTU ([002 §4.3], Table 4)",
            CLOSED,
            NS3,
            jumbogen_closed.e_jg_4,
            (20.0, (8, 16, 24, 32)),
            (6.0, (8, 32)),
            45,
            7,
        ),
        # (seconds per run, per-packet processing floors in µs)
        Experiment(
            "E-JG-5",
            "Per-packet processing floor ([002 §4.4], Table 5)",
            CLOSED,
            NS3,
            jumbogen_closed.e_jg_5,
            (20.0, (3.9, 5.8, 7.8)),
            (6.0, (3.9, 7.8)),
            55,
            13,
        ),
        # IPv4 destination prefix lengths that stand in for egress paths (the first one is checked)
        Experiment(
            "E-JG-6",
            "Trace study ([002 §5], Tables 6–7)",
            OPEN,
            ENGINE,
            jumbogen_trace.e_jg_6,
            (8, 16, 24),
            (8,),
            20,
            5,
        ),
        # packets of each QTime stream
        Experiment(
            "E-JG-7",
            "JumboGen unit-level oracles ([002 §2–§3])",
            OPEN,
            ENGINE,
            jumbogen_units.e_jg_7,
            200000,
            20000,
            3,
            1,
        ),
        # seconds of ON/OFF traffic per run
        # seconds of ON/OFF traffic of the measured model-2 run
        Experiment("E-MTQ-0", "MTQ/QTL setup ([004 §4], Table 1)", OPEN, ENGINE, setups.e_mtq_0, 300.0, 20.0, 5, 1),
        Experiment("E-MTQ-1", "No mechanism ([004 §5], Fig. 4)", OPEN, ENGINE, mtq_chain.e_mtq_1, 300.0, 20.0, 50, 4),
        Experiment(
            "E-MTQ-2", "MTQ sweep ([004 §5.1], Figs. 5–6)", OPEN, ENGINE, mtq_chain.e_mtq_2, 300.0, 20.0, 300, 20
        ),
        Experiment("E-MTQ-3", "QTL sweep ([004 §5.2], Fig. 7)", OPEN, ENGINE, mtq_chain.e_mtq_3, 300.0, 20.0, 260, 17),
        Experiment("E-MTQ-4", "QTL + MTQ, model 2 ([004] Tables 2–3)", OPEN, ENGINE, runs.e_mtq_4, 300.0, 30.0, 48, 2),
        Experiment(
            "E-MTQ-5",
            "Summary configurations ([004 §5.4], Fig. 11)",
            OPEN,
            ENGINE,
            mtq_chain.e_mtq_5,
            300.0,
            20.0,
            90,
            6,
        ),
        Experiment(
            "E-MTQ-6",
            "Heterogeneous traffic volume ([004 §6.1], Table 4)",
            OPEN,
            ENGINE,
            mtq_chain.e_mtq_6,
            300.0,
            20.0,
            160,
            11,
        ),
        Experiment(
            "E-MTQ-7",
            "Different requirements, same path ([004 §6.2], Table 5)",
            OPEN,
            ENGINE,
            mtq_chain.e_mtq_7,
            300.0,
            20.0,
            45,
            3,
        ),
        Experiment(
            "E-MTQ-8",
            "Different requirements, different paths ([004 §6.3], Table 6)",
            OPEN,
            ENGINE,
            mtq_chain.e_mtq_8,
            300.0,
            20.0,
            50,
            3,
        ),
        Experiment(
            "E-THS-1",
            "SIFT sampling analytics ([003] Eq. 3.1–3.2)",
            OPEN,
            ENGINE,
            thesis_more.e_ths_1,
            20000,
            2000,
            19,
            3,
        ),
        # seconds of arrivals of the FIFO runs; after E-THS-4 in the same output directory it reuses its runs.
        Experiment("E-THS-2", "EFD wired setup ([003 §4.4])", CLOSED, NS3, setups.e_ths_2, 200.0, 60.0, 30, 8),
        Experiment(
            "E-THS-3", "Flow-table size, open loop ([003] Table 4.1)", OPEN, ENGINE, runs.e_ths_3, 1000.0, 100.0, 5, 1
        ),
        Experiment("E-THS-4", "Response times ([003] Table 4.2)", CLOSED, NS3, cl.e_ths_4, 200.0, 60.0, 67, 20),
        # Alone; after E-THS-4 in the same output directory it reuses E-THS-4's runs and takes no time.
        Experiment("E-THS-5", "Lock-outs ([003] Fig. 4.11)", CLOSED, NS3, cl.e_ths_5, 200.0, 60.0, 25, 8),
        Experiment("E-THS-6", "CBR protection ([003] Figs. 4.12–4.13)", CLOSED, NS3, cl.e_ths_6, 120.0, 40.0, 85, 33),
        # (seconds of arrivals, warm-up discarded)
        Experiment(
            "E-THS-7",
            "M/G/1 validation ([003] Figs. 5.3–5.10)",
            CLOSED,
            NS3,
            cl.e_ths_7,
            (600.0, 60.0),
            (200.0, 20.0),
            87,
            44,
        ),
        Experiment(
            "E-THS-8",
            "EFD variants ([003] §5.1, §5.3)",
            CLOSED,
            NS3,
            cl.e_ths_8,
            (1000.0, 100.0),
            (200.0, 20.0),
            55,
            13,
        ),
        # seconds of the transfer alone, each way
        Experiment("E-THS-9", "WLAN setup, one TCP transfer ([003] §6.3)", CLOSED, NS3, wlan.e_ths_9, 30.0, 5.0, 47, 9),
        # (seconds of long-lived transfers, AP buffers in packets, schedulers)
        Experiment(
            "E-THS-10",
            "Long-lived up/down fairness ([003] Figs. 6.2–6.3)",
            CLOSED,
            NS3,
            wlan.e_ths_10,
            (8.0, (10, 30, 70), tuple(wlan.LONG_LIVED_SCHEDULERS)),
            (8.0, (30,), ("FIFO", "BEFD", "LASACK", "PEFD")),
            118,
            29,
        ),
        # (seconds of arrivals, seconds of drain, tables A.1–A.6, schedulers)
        Experiment(
            "E-THS-11",
            "Mixed workload, up/down ([003] §6.5, Tables A.1–A.6)",
            CLOSED,
            NS3,
            wlan.e_ths_11,
            (30.0, 10.0, ("A.1", "A.2"), tuple(wlan.MIXED_SCHEDULERS)),
            (20.0, 10.0, ("A.1",), ("FIFO", "LASACK", "PEFD")),
            170,
            20,
        ),
        # ((long-lived: seconds, buffers, schedulers), (mixed Table A.1: seconds of arrivals, of drain,
        # schedulers)). After E-THS-10 and E-THS-11 in the same output directory it reuses their packet-mode runs.
        Experiment(
            "E-THS-12",
            "Buffer granularity ([003] ch.7, Figs. 7.2–7.5)",
            CLOSED,
            NS3,
            wlan.e_ths_12,
            ((8.0, (30, 70), tuple(wlan.LONG_LIVED_SCHEDULERS)), (30.0, 10.0, tuple(wlan.LONG_LIVED_SCHEDULERS))),
            ((8.0, (30,), ("FIFO", "LASACK")), (20.0, 10.0, ("FIFO", "LASACK"))),
            307,
            37,
        ),
        Experiment(
            "E-THS-13",
            "Enterprise trace characteristics ([003] Tables 8.1–8.2)",
            ANALYTIC,
            PYTHON,
            enterprise.e_ths_13,
            None,
            None,
            0,
            0,
        ),
        Experiment(
            "E-THS-14",
            "Role identification estimates ([003] Tables 8.3–8.4)",
            ANALYTIC,
            MODELS,
            enterprise.e_ths_14,
            None,
            None,
            0,
            0,
        ),
        Experiment(
            "E-THS-15",
            "Transfer decomposition, synthetic ([003 §9.2])",
            ANALYTIC,
            ANALYZER,
            enterprise.e_ths_15,
            None,
            None,
            1,
            1,
        ),
        # (seconds of arrivals, seconds of drain)
        Experiment(
            "E-THS-16",
            "Workload models ([003] §9.3, Tables 9.1–9.2)",
            CLOSED,
            NS3,
            workload_models.e_ths_16,
            (200.0, 60.0),
            (20.0, 20.0),
            477,
            28,
        ),
    ]
}
