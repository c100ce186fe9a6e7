"""The `tracelab` front door.

One command, one subcommand per job. Each subcommand is a thin adapter over
the part that does the work; a subcommand whose part is not built or not
installed is not listed (and says why if called by name), so `tracelab --help`
shows only what works.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass

from . import __version__
from .errors import (
    OK,
    USAGE,
    Terminated,
    classify,
    debug_requested,
    did_you_mean,
    output_paths,
    raise_terminated,
    suggest_in_usage_errors,
)
from .parts import analyzer_binary, python_entry


@dataclass(frozen=True)
class Subcommand:
    name: str
    summary: str
    example: str
    # Returns the runner, or None when the part behind it is not available.
    resolve: Callable[[], Callable[[list[str]], int] | None]
    missing: str  # what to do when it is not available


def resolve_profile():
    if analyzer_binary() is None:
        return None
    from .scale import cli as scale_cli

    return scale_cli.main


def resolve_demo():
    if analyzer_binary() is None:
        return None
    from . import demo

    return demo.main


SUBCOMMANDS = [
    Subcommand(
        "profile",
        "profile a pcap/pcapng trace: connections (Zeek conn.log), RTT, warm-up, pacing, hosts, load",
        "tracelab profile trace.pcap --local 10.0.0.0/8 -o out/trace",
        resolve_profile,
        "build the analyzer: `make build` (or cargo build --release in analyzer/)",
    ),
    Subcommand(
        "roles",
        "train, evaluate and apply host-role classifiers (C4.5, Naive Bayes)",
        "tracelab roles train out/trace/hosts.parquet --labels labels.csv -o roles.json",
        lambda: python_entry("tracelab_models.cli", "roles_main"),
        "install the models package: `make setup`",
    ),
    Subcommand(
        "model",
        "derive a workload model (JSON) from a profile",
        "tracelab model derive out/trace -o trace.model.json",
        lambda: python_entry("tracelab_models.cli", "model_main"),
        "install the models package: `make setup`",
    ),
    Subcommand(
        "replay",
        "replay pcaps or workload models through queueing elements at 10 Gb/s",
        "tracelab replay run --pcap in.pcap --element 'efd(capacity=300,th=30000)' -o out/replay",
        lambda: python_entry("tracelab.replay.cli", "main") if importlib.util.find_spec("tracelab_engine") else None,
        "build the replay engine: `make build`",
    ),
    Subcommand(
        "experiments",
        "run the seed experiments (engine and ns-3 closed loop): result.json per experiment, REPORT.md",
        "tracelab experiments run E-THS-4 --quick -o out/experiments",
        lambda: (
            python_entry("tracelab.replay.experiments.cli", "main")
            if importlib.util.find_spec("tracelab_engine")
            else None
        ),
        "build the replay engine: `make build`",
    ),
    Subcommand(
        "synth",
        "write a synthetic pcap from a workload model (handshakes, trains, warm-ups, pacing, RTTs)",
        "tracelab synth out/demo/trace.model.json -o out/synthetic.pcap --seed 1",
        lambda: python_entry("tracelab.synth.cli", "main"),
        "install the replay package: `make setup`",
    ),
    Subcommand(
        "fidelity",
        "profile -> model -> synth -> profile: does the synthetic trace keep the original's marginals?",
        "tracelab fidelity trace.pcap --local 10.0.0.0/8 -o out/fidelity",
        lambda: python_entry("tracelab.fidelity", "main") if analyzer_binary() else None,
        "build the analyzer: `make build`",
    ),
    Subcommand(
        "query",
        "SQL over profiles and datasets of profiles (DuckDB, out of core)",
        'tracelab query out/trace "SELECT proto, count(*) FROM connections GROUP BY proto"',
        lambda: python_entry("tracelab.query", "main") if importlib.util.find_spec("duckdb") else None,
        "install duckdb: `make setup`",
    ),
    Subcommand(
        "report",
        "render HTML reports with plots of profiles, replay runs and sweeps",
        "tracelab report out/demo/profile out/demo/replay/efd -o out/report",
        lambda: python_entry("tracelab.report.cli", "main"),
        "install the replay package: `make setup`",
    ),
    Subcommand(
        "completion",
        "print a shell completion script (bash, zsh, fish) for the commands, subcommands and options",
        "tracelab completion bash > ~/.local/share/bash-completion/completions/tracelab",
        lambda: python_entry("tracelab.completion", "main"),
        "reinstall the replay package: `make setup`",
    ),
    Subcommand(
        "demo",
        "run the whole path that exists on a bundled real trace",
        "tracelab demo -o out/demo",
        resolve_demo,
        "build the analyzer: `make build`",
    ),
]


def build_parser(available: dict[str, Callable[[list[str]], int]]) -> argparse.ArgumentParser:
    listed = [s for s in SUBCOMMANDS if s.name in available]
    width = max(len(s.name) for s in SUBCOMMANDS)
    lines = [f"  {s.name:<{width}}  {s.summary}" for s in listed]
    examples = [f"  {s.example}" for s in listed]
    parser = argparse.ArgumentParser(
        prog="tracelab",
        usage="tracelab [--version] [--debug] COMMAND [ARGS...]",
        description="Traffic trace analysis and replay.",
        epilog="commands:\n"
        + "\n".join(lines)
        + "\n\nexamples:\n"
        + "\n".join(examples)
        + "\n\nRun `tracelab COMMAND --help` for a command's options.\n\n"
        + "exit status: 0 success; 1 a negative result (e.g. a fidelity marginal failed); 2 usage (arguments,\n"
        + "options, element specs, config files); 3 input data (a trace, profile, model or log unreadable or\n"
        + "invalid); 4 output (cannot write); 5 internal error; 130 Ctrl-C (SIGINT), 143 SIGTERM. profile,\n"
        + "model, roles, synth, replay run/sweep, report, query and fidelity write their outputs whole or not\n"
        + "at all: a failed or interrupted run leaves the previous ones as they were. Errors are one line on\n"
        + "stderr, `tracelab: error: <what> (<file>): <reason>`; --debug (or TRACELAB_DEBUG=1) adds the\n"
        + "traceback.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"tracelab {__version__}")
    parser.add_argument("--debug", action="store_true", help="print the traceback of an error")
    parser.add_argument("command", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    return parser


def available_commands() -> dict[str, Callable[[list[str]], int]]:
    """The runner of each command whose part is here."""
    available = {}
    for sub in SUBCOMMANDS:
        runner = sub.resolve()
        if runner is not None:
            available[sub.name] = runner
    return available


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    debug = debug_requested()
    while argv[:1] == ["--debug"]:
        debug, argv = True, argv[1:]
    if debug:  # the parts print the traceback of the errors they handle themselves
        os.environ["TRACELAB_DEBUG"] = "1"
    suggest_in_usage_errors()
    available = available_commands()
    parser = build_parser(available)
    if not argv or argv[0] in ("-h", "--help"):
        parser.print_help()
        return OK
    ns = parser.parse_args(argv[:1])
    name = ns.command
    if name in available:
        return run(available[name], argv[1:], debug)
    known = {s.name: s for s in SUBCOMMANDS}
    if name in known:
        print(f"tracelab: `{name}` is not available here: {known[name].missing}", file=sys.stderr)
    else:
        hint = did_you_mean(name, known)
        print(f"tracelab: unknown command `{name}`{hint} (see `tracelab --help`)", file=sys.stderr)
    return USAGE


def run(runner: Callable[[list[str]], int], argv: list[str], debug: bool) -> int:
    """Runs a subcommand; whatever escapes it ends as one error line and the
    exit status of its kind (tracelab.errors), the traceback only if asked.
    SIGTERM is raised as an exception like Ctrl-C, so that the outputs being
    written are removed on the way out (tracelab_models.outputs)."""
    previous = signal.signal(signal.SIGTERM, raise_terminated)
    try:
        return runner(argv)
    except KeyboardInterrupt as e:
        name = "SIGTERM" if isinstance(e, Terminated) else "SIGINT"
        print(f"tracelab: error: interrupted ({name})", file=sys.stderr)
        return 128 + (signal.SIGTERM if isinstance(e, Terminated) else signal.SIGINT)
    except Exception as e:
        if debug:
            traceback.print_exc()
        status, message = classify(e, output_paths(argv))
        print(f"tracelab: error: {message}", file=sys.stderr)
        return status
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
