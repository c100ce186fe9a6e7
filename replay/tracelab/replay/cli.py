"""`tracelab replay run|sweep`: traffic through queueing elements in the embedded engine.

    tracelab replay run --pcap in.pcap --element 'efd(capacity=300, th=30000)' --rate 10G \\
        --out-pcap out.pcap -o out/replay
    tracelab replay sweep --config chk.yaml --grid load=0.1,0.5,0.9 -o out/sweep

Outputs: DIR/metrics.json (the full configuration and every metric),
DIR/packets.parquet with one row per packet (--detail), and the delivered
packets as a pcap (--out-pcap). DIR, the pcap and a sweep's DIR are written
whole or not at all (tracelab_models.outputs). Exit statuses (tracelab.errors):
2 a bad option, spec or configuration, 3 an unreadable input, 4 an output it
cannot write, 5 an engine bug.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import threading
from pathlib import Path
from typing import Any

import tracelab_engine as engine
from tracelab_models import progress
from tracelab_models.outputs import OutputError, atomic_dir, atomic_file, together

from .. import __version__
from ..errors import INPUT, INTERNAL, OUTPUT, USAGE, fail
from ..scale.cluster import ClusterError, add_options, from_options
from ..scale.cluster import run_all as cluster_run_all
from . import config as cfgmod
from . import model_source
from .output import summary_lines, write_detail, write_metrics, write_sweep

EPILOG_RUN = """examples:
  tracelab replay run --pcap in.pcap --element 'efd(capacity=300, th=30000)' --rate 10G --out-pcap out.pcap -o out/r
  tracelab replay run --pcap in.pcap --load 0.9 --element 'fifo(capacity=50)' --detail -o out/r
  tracelab replay run --source 'poisson(load=0.9, size=40, cls=0, stop=1ms)' --class sensing:50us \\
      --element 'chutq(policy=dcf)' -o out/r
  tracelab replay run --model trace.model.json --load 0.9 --duration 2s --element 'efd(capacity=300)' -o out/r
  tracelab replay run --config run.yaml -o out/r

elements:
{elements}

sources (--source):
{sources}
"""

EPILOG_SWEEP = """A sweep spec is a run configuration whose strings hold placeholders
`{name}`, plus `grid:` mapping each name to its values (elements x parameters x
loads x seeds); --grid NAME=V1,V2,... replaces one name's values. Every
combination runs in the engine; each goes to DIR/<name=value,...>/metrics.json
(with its full configuration and config_hash, the hash of everything its result
depends on) and one row per run to DIR/sweep.parquet and sweep.json. DIR is
replaced whole when the sweep ends; --resume reuses the runs of the previous DIR
whose config_hash is the run's and reruns the others. --workers N or
--scheduler ADDRESS run the runs as Dask tasks (tracelab.scale.cluster), with
the serial sweep's results.

examples:
  tracelab replay sweep replay/sweeps/efd-vs-fifo.yaml -o out/sweep
  tracelab replay sweep replay/sweeps/efd-vs-fifo.yaml --grid seed=1 -o out/quick
  tracelab replay sweep replay/sweeps/efd-vs-fifo.yaml --workers 4 -o out/sweep
  tracelab replay sweep replay/sweeps/efd-vs-fifo.yaml --scheduler tcp://head:8786 -o out/sweep
"""


def add_run_options(p: argparse.ArgumentParser) -> None:
    src = p.add_argument_group("traffic")
    src.add_argument(
        "--pcap", action="append", default=[], metavar="IN", help="recorded trace (pcap/pcapng); repeatable"
    )
    src.add_argument(
        "--source",
        action="append",
        default=[],
        metavar="SPEC",
        help="synthetic source spec, e.g. 'poisson(load=0.5, size=64, stop=1ms)'; repeatable",
    )
    timing = src.add_mutually_exclusive_group()
    timing.add_argument("--speed", type=float, help="replay --pcap X times faster than recorded")
    timing.add_argument("--pcap-rate", metavar="BPS", help="time-scale --pcap to this mean bit rate (e.g. 9G)")
    timing.add_argument(
        "--load",
        type=float,
        help="time-scale --pcap, or set the connection rate of --model, to this load of the first link",
    )
    src.add_argument(
        "--model",
        type=Path,
        metavar="M.model.json",
        help="workload model (tracelab model derive): connections of its fitted sizes, inter-arrivals, "
        "shares, packet sizes, trains, warm-ups and RTTs; classes intranet/internet x download/upload",
    )
    src.add_argument(
        "--duration",
        default="1s",
        metavar="T",
        help="--model: connections start during [0, T) and run to their end (default 1s)",
    )
    src.add_argument(
        "--size-family",
        choices=model_source.FAMILIES,
        help="--model: flow-size family to use (default: the model's best fit)",
    )
    src.add_argument(
        "--gap-family",
        choices=model_source.FAMILIES,
        help="--model: inter-arrival family to use (default: the model's best fit)",
    )
    src.add_argument(
        "--max-flow",
        type=float,
        default=model_source.DEFAULT_MAX_FLOW,
        metavar="BYTES",
        help="--model: bound of a Pareto flow size (default 1e8)",
    )
    src.add_argument(
        "--class-rule",
        metavar="RULES",
        help="classes of --pcap packets: 'dscp=46->0; port=5060->1; net=10.0.0.0/8->2; else->3'",
    )
    net = p.add_argument_group("network")
    net.add_argument(
        "--element",
        action="append",
        default=[],
        metavar="SPEC",
        help="queueing element of a node; repeat for nodes in series (default fifo(capacity=300))",
    )
    net.add_argument(
        "--rate",
        action="append",
        default=[],
        metavar="BPS",
        help="output link rate per node (one value for all, or one per --element); default 10G",
    )
    net.add_argument(
        "--prop-delay",
        action="append",
        default=[],
        metavar="T",
        help="propagation delay per node (e.g. 1ms); default 0s",
    )
    net.add_argument(
        "--overhead",
        type=int,
        default=0,
        metavar="BYTES",
        help="per-frame bytes the links also serialize (20 = preamble + IFG)",
    )
    meas = p.add_argument_group("measurement")
    meas.add_argument(
        "--class",
        dest="classes",
        action="append",
        default=[],
        metavar="NAME[:BUDGET][,qtl=T][,mtq=T]",
        help="class 0, 1, ... in order: name, delay budget (R_v, EPLR, chunking W_max), QTL/MTQ headers",
    )
    meas.add_argument("--until", metavar="T", help="stop the clock at T (default: run until drained)")
    meas.add_argument("--measure-from", metavar="T", help="class metrics count packets created from T")
    meas.add_argument("--measure-until", metavar="T", help="... and before T")
    meas.add_argument("--router-pps", type=float, help="router capacity for eta (default 5e6, [000 §6.8])")
    meas.add_argument("--seed", type=int, help="run seed (default 1)")
    meas.add_argument(
        "--max-delay-samples", type=int, help="exact quantiles up to this many samples per distribution (default 2^24)"
    )
    p.add_argument("--config", type=Path, metavar="FILE", help="YAML/JSON configuration; options override it")


class InputError(Exception):
    """An input file (a workload model) that cannot be read or is invalid: exit 3."""


def build_config(ns: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    """The engine configuration, and notes on how a --model was read."""
    cfg: dict[str, Any] = cfgmod.load_file(ns.config) if ns.config else {}
    if ns.model and ns.pcap and ns.load is not None:
        raise cfgmod.ConfigError("--load with both --pcap and --model is ambiguous: give the pcap --pcap-rate")
    sources = [
        cfgmod.pcap_source(
            str(Path(p).resolve()),
            speed=ns.speed,
            rate=ns.pcap_rate,
            load=None if ns.model else ns.load,
            class_rule=ns.class_rule,
        )
        for p in ns.pcap
    ]
    notes: list[str] = []
    if ns.model:
        try:
            model = model_source.load_model(ns.model)
        except cfgmod.ConfigError as e:
            raise InputError(str(e)) from e
        spec, notes = model_source.source_spec(
            model,
            load=ns.load,
            stop=ns.duration,
            size_family=ns.size_family,
            gap_family=ns.gap_family,
            max_flow=ns.max_flow,
        )
        sources.append(spec)
        if not ns.classes and "classes" not in cfg:
            cfg["classes"] = [{"name": n} for n in model_source.CLASSES]
    sources += list(ns.source)
    if (ns.speed is not None or ns.pcap_rate or ns.class_rule) and not ns.pcap:
        raise cfgmod.ConfigError("--speed, --pcap-rate and --class-rule apply to --pcap traces")
    if ns.load is not None and not (ns.pcap or ns.model):
        raise cfgmod.ConfigError("--load applies to --pcap traces and --model workloads")
    if sources:
        cfg["sources"] = sources
    if not cfg.get("sources"):
        raise cfgmod.ConfigError("no traffic: give --pcap IN, --source SPEC or --config FILE")
    if ns.element or ns.rate or ns.prop_delay or "nodes" not in cfg:
        elements = (
            ns.element
            or [n["element"] if isinstance(n, dict) else n for n in cfg.get("nodes", [])]
            or ["fifo(capacity=300)"]
        )
        rates = per_node(ns.rate, len(elements), "--rate", "10G")
        delays = per_node(ns.prop_delay, len(elements), "--prop-delay", "0s")
        cfg["nodes"] = [
            {"element": e, "rate": r, "prop_delay": d, "overhead": ns.overhead}
            for e, r, d in zip(elements, rates, delays, strict=True)
        ]
    if ns.classes:
        cfg["classes"] = [cfgmod.parse_class(c) for c in ns.classes]
    for key in ("until", "measure_from", "measure_until", "router_pps", "seed", "max_delay_samples"):
        value = getattr(ns, key)
        if value is not None:
            cfg[key] = value
    return cfg, notes


def per_node(values: list[str], n: int, option: str, default: str) -> list[str]:
    if not values:
        return [default] * n
    if len(values) == 1:
        return values * n
    if len(values) != n:
        raise cfgmod.ConfigError(f"{option}: give one value, or one per --element ({n})")
    return values


def run_engine(cfg: dict[str, Any]) -> dict[str, Any]:
    """engine.run in a worker thread. The engine releases the GIL and does not
    look at signals, so in the main thread a Ctrl-C would wait for the whole
    run; here it interrupts the wait at once, the outputs being written are
    removed, and the abandoned (daemon) thread ends with the process."""
    done: dict[str, Any] = {}

    def work() -> None:
        try:
            done["metrics"] = engine.run(cfg)
        except BaseException as e:  # re-raised in the caller's thread
            done["error"] = e

    worker = threading.Thread(target=work, name="tracelab-engine", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.1)
    if "error" in done:
        raise done["error"]
    return done["metrics"]


def is_run_dir(path: Path) -> bool:
    return (path / "metrics.json").is_file()


def is_sweep_dir(path: Path) -> bool:
    return (path / "sweep.json").is_file()


def cmd_run(ns: argparse.Namespace) -> int:
    cfg, notes = build_config(ns)
    cfg["detail"] = bool(ns.detail)
    out = ns.output
    # The run directory and the delivered pcap are written whole or not at all;
    # a pcap asked for inside the directory is written with it.
    with together() as outputs:
        staged = outputs.enter_context(atomic_dir(out, "replay run", owns=is_run_dir))
        pcap_tmp = None
        if ns.out_pcap:
            inside = _relative_to(ns.out_pcap, out)
            if inside is not None:
                pcap_tmp = staged / inside
                pcap_tmp.parent.mkdir(parents=True, exist_ok=True)
            else:
                pcap_tmp = outputs.enter_context(atomic_file(ns.out_pcap, "delivered packets"))
            cfg["out_pcap"] = str(pcap_tmp)
        try:
            with progress.steps("replay run", 1, "engine", ns.quiet):
                metrics = run_engine(cfg)
        except RuntimeError as e:
            if pcap_tmp is not None:
                raise RuntimeError(str(e).replace(str(pcap_tmp), str(ns.out_pcap))) from e
            raise
        if ns.out_pcap:
            cfg["out_pcap"] = str(ns.out_pcap)
        detail = metrics.pop("detail", None)
        if ns.model:
            metrics["workload_model"] = {"path": str(ns.model), "notes": notes}
        write_metrics(staged / "metrics.json", cfg, metrics, argv=ns.argv)
        if detail is not None:
            write_detail(staged / "packets.parquet", detail)
    if not ns.quiet:
        for note in notes:
            print(f"model: {note}")
        for line in summary_lines(metrics):
            print(line)
        print(
            f"wrote {out / 'metrics.json'}"
            + (f", {out / 'packets.parquet'}" if detail is not None else "")
            + (f", {ns.out_pcap}" if ns.out_pcap else "")
        )
    return 0


def _relative_to(path: Path, directory: Path) -> Path | None:
    try:
        return path.resolve().relative_to(directory.resolve())
    except ValueError:
        return None


def cmd_sweep(ns: argparse.Namespace) -> int:
    spec = ns.spec or ns.config
    if spec is None:
        raise cfgmod.ConfigError("tracelab replay sweep: give a sweep spec (SPEC.yaml or --config FILE)")
    base = cfgmod.load_file(spec)
    # The spec's own `grid:` (name -> list of values); --grid replaces a name.
    file_grid = base.pop("grid", None) or {}
    if not isinstance(file_grid, dict) or not all(isinstance(v, list) and v for v in file_grid.values()):
        raise cfgmod.ConfigError(f"{spec}: `grid` must map each placeholder name to a non-empty list of values")
    grid: dict[str, list[str]] = {str(k): [str(v) for v in vals] for k, vals in file_grid.items()}
    for item in ns.grid:
        name, _, values = item.partition("=")
        if not name or not values:
            raise cfgmod.ConfigError(f"--grid {item!r}: expected NAME=V1,V2,...")
        grid[name] = values.split(",")
    runs = cfgmod.expand_grid(base, grid)
    keys = RunKeys()
    run_keys = [keys.of(cfg) for _, cfg in runs]
    # The sweep directory is replaced whole at the end: an interrupted sweep
    # leaves the previous one as it was, which --resume then reuses.
    labels = [",".join(f"{k}={v}" for k, v in point.items()) or "run" for point, _ in runs]
    previous = [
        reusable_run(ns.output / label, key) if ns.resume else None for label, key in zip(labels, run_keys, strict=True)
    ]
    todo = [i for i, p in enumerate(previous) if p is None]
    metrics_of: dict[int, dict[str, Any]] = {}
    finished = 0
    with (
        atomic_dir(ns.output, "sweep", owns=is_sweep_dir) as staged,
        progress.steps("sweep", len(runs), labels[0] if labels else "", ns.quiet) as step,
    ):

        def run_done(i: int, metrics: dict[str, Any]) -> None:
            nonlocal finished
            label = labels[i]
            if previous[i] is not None:
                shutil.copytree(ns.output / label, staged / label)
            else:
                metrics.pop("detail", None)
                write_metrics(
                    staged / label / "metrics.json", runs[i][1], metrics, argv=ns.argv, config_hash=run_keys[i]
                )
            metrics_of[i] = metrics
            finished += 1
            if not ns.quiet:
                o = metrics["overall"]
                print(
                    f"[{finished}/{len(runs)}] {label}: offered {o['offered']}, delivered {o['delivered']}, "
                    f"dropped {o['dropped_total']}, R_v {o['r_v']:.4f}, "
                    + ("reused" if previous[i] is not None else f"wall {metrics['timing']['wall_seconds']:.2f} s")
                )
            step(label if finished < len(runs) else "write sweep.parquet")

        for i, p in enumerate(previous):
            if p is not None:
                run_done(i, p)
        cluster = from_options(ns)
        # Serially the engine runs in a thread of this process (Ctrl-C stops it
        # at once); on a cluster each run is a task in a worker process.
        run_one = engine_run_in_worker if cluster.distributed else run_engine
        cluster_run_all(run_one, [runs[i][1] for i in todo], cluster, lambda k, m: run_done(todo[k], m), ns.quiet)
        write_sweep(staged, [(point, metrics_of[i]) for i, (point, _) in enumerate(runs)])
    reused = len(runs) - len(todo)
    if not ns.quiet:
        print(
            f"wrote {ns.output / 'sweep.parquet'} and {len(runs)} metrics.json"
            + (f" ({reused} reused from the previous sweep)" if ns.resume else "")
        )
    return 0


def engine_run_in_worker(cfg: dict[str, Any]) -> dict[str, Any]:
    """One sweep run as a Dask task: the engine in the worker's own thread
    (a worker process has no Ctrl-C of its own to watch for)."""
    return engine.run(cfg)


class RunKeys:
    """The key of a run: a hash of everything its result depends on — its full
    engine configuration (elements, sources, links, seeds, classes), the
    contents of the pcaps it reads, and the code (the tracelab version and the
    engine module's bytes, so a rebuilt engine reruns everything)."""

    def __init__(self) -> None:
        self._files: dict[str, str] = {}
        self._code = f"{__version__}:{self._file_digest(engine.__file__)}"

    def _file_digest(self, path: str) -> str:
        if path not in self._files:
            h = hashlib.sha256()
            try:
                with open(path, "rb") as fh:
                    while chunk := fh.read(1 << 20):
                        h.update(chunk)
                self._files[path] = h.hexdigest()
            except OSError as e:  # the engine reports it when the run reads it
                self._files[path] = f"unreadable: {e.strerror}"
        return self._files[path]

    def of(self, cfg: dict[str, Any]) -> str:
        files = {}
        for source in cfg.get("sources", []):
            name, params = engine.parse_spec(source)
            if name == "pcap":
                path = dict(params).get("path", "")
                files[path] = self._file_digest(path)
        doc = {"config": cfg, "files": files, "code": self._code}
        return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def reusable_run(directory: Path, key: str) -> dict[str, Any] | None:
    """The metrics of a previous run if it is complete and has the same key."""
    try:
        doc = json.loads((directory / "metrics.json").read_text())
    except (OSError, ValueError):
        return None
    complete = isinstance(doc, dict) and doc.get("schema") == "tracelab.replay.metrics" and "overall" in doc
    return doc if complete and doc.get("config_hash") == key else None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tracelab replay",
        description=__doc__.split("\n\n")[0],
        epilog="examples:\n"
        "  tracelab replay run --pcap in.pcap --element 'efd(capacity=300,th=30000)' --rate 10G --load 0.9 -o out/r\n"
        "  tracelab replay sweep replay/sweeps/efd-vs-fifo.yaml -o out/sweep\n"
        "  tracelab replay trex stl out/demo/trace.model.json -o out/trex/stl_demo.py  (TRex profile)\n"
        "  tracelab replay ns3 out/demo/trace.model.json --element efd --rate 10M -o out/ns3  (real TCP in ns-3)\n"
        "Run `tracelab replay run --help` for elements, sources and options.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"tracelab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="{run,sweep,trex}")
    elements = "\n".join(f"  {summary}" for _, summary in engine.known_elements())
    sources = "\n".join(f"  {summary}" for _, summary in engine.known_sources())
    run = sub.add_parser(
        "run",
        help="one replay through one or more nodes",
        epilog=EPILOG_RUN.format(elements=elements, sources=sources),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_run_options(run)
    run.add_argument("--out-pcap", type=Path, metavar="OUT", help="write the delivered packets (pcap sources only)")
    run.add_argument("--detail", action="store_true", help="write DIR/packets.parquet, one row per packet")
    run.add_argument("-o", "--output", type=Path, required=True, metavar="DIR", help="output directory")
    run.add_argument("-q", "--quiet", action="store_true")
    sweep = sub.add_parser(
        "sweep",
        help="the same configuration over a grid of parameter values",
        epilog=EPILOG_SWEEP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sweep.add_argument(
        "spec",
        nargs="?",
        type=Path,
        metavar="SPEC.yaml",
        help="sweep spec: a configuration with {name} placeholders and a `grid:` of their values",
    )
    sweep.add_argument("--config", type=Path, metavar="FILE", help="the same as SPEC (older form)")
    sweep.add_argument("--grid", action="append", default=[], metavar="NAME=V1,V2,...")
    sweep.add_argument("-o", "--output", type=Path, required=True, metavar="DIR")
    sweep.add_argument(
        "--resume",
        action="store_true",
        help="reuse the runs of the previous sweep in DIR whose configuration, input pcaps and engine are the same "
        "(their config_hash); run the others",
    )
    sweep.add_argument("-q", "--quiet", action="store_true")
    add_options(sweep)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["trex"]:  # TRex profiles: no engine involved
        from tracelab.trex.cli import main as trex_main

        return trex_main(argv[1:])
    if argv[:1] == ["ns3"]:  # closed loop in ns-3: no engine run
        from .ns3 import main as ns3_main

        return ns3_main(argv[1:])
    parser = build_parser()
    ns = parser.parse_args(argv)
    ns.argv = ["tracelab", "replay", *argv]
    if ns.command is None:
        parser.print_help()
        return 2
    try:
        return cmd_run(ns) if ns.command == "run" else cmd_sweep(ns)
    except (cfgmod.ConfigError, engine.SpecError, ClusterError) as e:
        return fail(USAGE, e)
    except engine.ConservationError as e:  # an engine or core bug: never a silent result
        return fail(INTERNAL, f"internal error: {e}")
    except InputError as e:
        return fail(INPUT, e)
    except OutputError as e:
        return fail(e.status, e)
    except RuntimeError as e:  # the engine's: an unreadable input, or its pcap unwritable
        return fail(OUTPUT if str(e).startswith("cannot write") else INPUT, e)


if __name__ == "__main__":
    sys.exit(main())
