"""`tracelab synth`: a synthetic pcap from a workload model.

The pcap (and --truth) are written atomically (tracelab_models.outputs): whole,
or the previous files left as they were. Exit statuses (tracelab.errors): 2 an
option it cannot use, 3 a model it cannot read or use, 4 an output it cannot
write."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from tracelab_models import progress
from tracelab_models.outputs import atomic_file, together

from ..errors import INPUT, USAGE, fail
from .sampling import SynthError
from .trace import Options, synthesize, write_pcap

EPILOG = """examples:
  tracelab synth out/m.model.json -o out/synth.pcap
  tracelab synth out/m.model.json --seed 7 --duration 600s --local 192.168.0.0/16 -o out/big.pcap
  tracelab synth out/m.model.json --snaplen 96 --truth out/truth.parquet -o out/s.pcap
  tracelab synth out/m.model.json --legacy --connections 20000 --udp-share 0.3 -o out/old.pcap

The pcap is classic libpcap (Ethernet, microsecond timestamps). It lasts the
original trace's duration (or --duration) and holds its connections per scope,
protocol and state, their services, sizes, durations, trains and RTTs, between
local hosts in the model's --local prefixes (or the given ones) and remote hosts
in 198.18.0.0/15; profile it with the same --local. How the model is used:
`tracelab/synth/chain.py`.

--legacy (implied by a model without a `traffic` section, and needed by the
options marked legacy): the older writer, `tracelab/synth/trace.py`, from the
flows/topological/apps sections, with intranet clients 10.1.0.0/16 and servers
10.2.0.0/16, Internet (local) clients 10.3.0.0/16 and servers 48.0.0.0/16."""
LEGACY_DEFAULTS = {"connections": None, "udp_share": 0.0, "rtt": [], "local_rtt_fraction": 0.1, "clients": 200,
                   "servers": 16}  # fmt: skip


class UsageError(SynthError):
    """An option the synthesizer cannot use (exit 2; tracelab.errors)."""


def _time(option: str, text: str) -> float:
    from tracelab.trex.plan import PlanError, parse_time

    try:
        return parse_time(text)
    except PlanError as e:
        raise UsageError(f"{option} {text!r}: {e}") from None


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tracelab synth",
        description="Write a synthetic pcap from a workload model.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("model", type=Path, help="workload model (*.model.json, from `tracelab model derive`)")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="OUT.pcap")
    p.add_argument(
        "--duration", metavar="D", help="length of the trace, e.g. 90s or 600s (default: the original trace's)"
    )
    p.add_argument(
        "--local",
        action="append",
        default=[],
        metavar="PREFIX",
        help="local network(s) of the synthetic hosts (repeatable or comma-separated; default: the model's)",
    )
    p.add_argument("--legacy", action="store_true", help="the older writer (see below)")
    p.add_argument(
        "--connections", type=int, metavar="N", help="legacy: connections to write (default: the model's count)"
    )
    p.add_argument(
        "--seed",
        type=int,
        default=1,
        help="random seed (default 1); the pcap is a function of the model and the options",
    )
    p.add_argument(
        "--udp-share",
        type=float,
        default=0.0,
        metavar="F",
        help="legacy: share of connections written as UDP flows where the model allows TCP (default 0)",
    )
    p.add_argument(
        "--rtt",
        action="append",
        default=[],
        metavar="SCOPE=T",
        help="legacy: RTT of a scope instead of the model's median, e.g. intranet=1ms",
    )
    p.add_argument(
        "--local-rtt-fraction",
        type=float,
        default=0.1,
        metavar="F",
        help="legacy: part of an Internet connection's RTT between the monitor and the local host (0.1)",
    )
    p.add_argument("--clients", type=int, default=200, help="legacy: client hosts per scope (200)")
    p.add_argument("--servers", type=int, default=16, help="legacy: server hosts per scope (16)")
    p.add_argument("--snaplen", type=int, default=65535, help="bytes captured per frame (default: whole frames)")
    p.add_argument(
        "--max-packets",
        type=int,
        default=20_000_000,
        metavar="N",
        help="refuse to write a trace of more packets (default 20,000,000)",
    )
    p.add_argument(
        "--truth",
        type=Path,
        metavar="FILE.parquet",
        help="also write the ground truth, one row per connection (sizes, trains, RTT, ...)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no summary on stdout")
    return p


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    from tracelab_models.outputs import OutputError
    from tracelab_models.profile import ProfileError

    try:
        summary = _run(a)
    except UsageError as e:
        return fail(USAGE, e)
    except (SynthError, ProfileError, ValueError) as e:
        return fail(INPUT, e)
    except OutputError as e:
        return fail(e.status, e)
    if not a.quiet:
        print(json.dumps(summary, indent=2))
    return 0


def _run(a: argparse.Namespace) -> dict:
    """Writes the pcap (and the truth): both whole, or neither replaced."""
    from tracelab_models.workload import load

    t0 = time.monotonic()
    legacy_opts = [k for k, v in LEGACY_DEFAULTS.items() if getattr(a, k) != v]
    with together() as outputs:
        step = outputs.enter_context(progress.steps("synth", 3 if a.truth else 2, "read model", a.quiet))
        model = load(a.model)
        step("synthesize and write the pcap")
        pcap_tmp = outputs.enter_context(atomic_file(a.output, "pcap"))
        truth_tmp = outputs.enter_context(atomic_file(a.truth, "ground truth")) if a.truth else None
        if not a.legacy and not legacy_opts and model.get("traffic"):
            summary, truth = _chain(a, model, pcap_tmp)
        else:
            summary, truth = _legacy(a, model, pcap_tmp)
        if truth_tmp is not None:
            step("ground truth")
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.table(truth()), truth_tmp)
    return {**summary, "model": str(a.model), "output": str(a.output), "wall_s": round(time.monotonic() - t0, 3)}


def _legacy(a: argparse.Namespace, model: dict, path: Path):
    if a.duration or a.local:
        raise UsageError("--duration and --local need the current writer (drop --legacy and the legacy options)")
    rtts = {}
    for item in a.rtt:
        scope, sep, value = item.partition("=")
        if not sep or scope not in ("intranet", "internet"):
            raise UsageError(f"--rtt {item!r}: expected intranet=T or internet=T, e.g. internet=30ms")
        rtts[scope] = _time("--rtt", value)
    if a.clients < 1 or a.servers < 1:
        raise UsageError("--clients and --servers: at least 1")
    opts = Options(
        connections=a.connections,
        seed=a.seed,
        udp_share=a.udp_share,
        local_rtt_fraction=a.local_rtt_fraction,
        clients=a.clients,
        servers=a.servers,
        max_packets=a.max_packets,
        rtt_s=rtts,
    )
    trace = synthesize(model, opts)
    write_pcap(trace, path, a.snaplen)
    return trace.summary, lambda: trace.connections


def _chain(a: argparse.Namespace, model: dict, path: Path):
    from . import chain

    opts = chain.ChainOptions(
        seed=a.seed,
        duration_s=_time("--duration", a.duration) if a.duration else None,
        local=[p for item in a.local for p in item.split(",") if p],
        max_packets=a.max_packets,
    )
    planned = chain.plan(model, opts)
    summary = chain.write(model, opts, path, a.snaplen, planned)
    return summary, lambda: chain.truth(planned)


if __name__ == "__main__":
    sys.exit(main())
