"""`tracelab replay trex`: TRex profiles from a workload model, checked and run in a lab."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from . import plan as P
from . import readback
from .profiles import TrexUnavailable, check_profile, plan_json, run_trex_script, write_profile

TREX_MIN_CPS = 0.5
EPILOG = """examples:
  tracelab replay trex stl m.model.json --rate 10G --load 0.9 --budget intranet=1ms --budget internet=50ms -o lab_stl.py
  tracelab replay trex astf m.model.json --templates 8 --seed 1 -o lab_astf.py
  tracelab replay trex check lab_stl.py           # load with the real TRex client (build/trex-venv)
  tracelab replay trex run lab_stl.py --server 192.0.2.10 --duration 30 -o results.json

Profiles are Python files TRex loads (register() returns the profile class); the
numbers are also in NAME.plan.json beside them. See docs/lab-runbook.md."""


def _load_model(path):
    from tracelab_models.workload import load

    return load(path)


def _pairs(items, what):
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise P.PlanError(f"{what} {item!r}: expected NAME=VALUE")
        out[key] = value
    return out


def _nets(items):
    nets = {}
    for key, cidr in _pairs(items, "--net").items():
        scope, _, side = key.partition(".")
        if scope not in P.SCOPES or side not in ("client", "server"):
            raise P.PlanError(
                f"--net {key}: expected intranet|internet.client|server, e.g. internet.server=48.0.0.0/16"
            )
        nets.setdefault(scope, {})[side] = cidr
    return nets


def cmd_stl(a) -> int:
    plan = P.stl_plan(
        _load_model(a.model),
        rate=a.rate,
        load=a.load,
        max_sizes=a.max_sizes,
        latency_pps=a.latency_pps,
        clients=a.clients,
        servers=a.servers,
        budgets=_pairs(a.budget, "--budget"),
        nets=_nets(a.net),
    )
    write_profile(plan, a.output)
    for c in plan["classes"]:
        budget = "no budget" if c["budget_s"] is None else f"budget {c['budget_s'] * 1e3:g} ms"
        print(
            f"{c['name']:<18} pg_id {c['pg_id']}  {c['rate_bps_l1'] / 1e9:8.4f} Gb/s L1  "
            f"{sum(s['pps'] for s in c['streams']) / 1e6:8.4f} Mpps  {len(c['streams'])} sizes  {budget}"
        )
    for s in plan["skipped"]:
        print(f"{s['class']:<18} skipped: {s['reason']}")
    print(f"wrote {a.output} and {plan_json(a.output)}")
    return 0


def cmd_astf(a) -> int:
    plan = P.astf_plan(
        _load_model(a.model),
        templates=a.templates,
        seed=a.seed,
        max_conn_bytes=a.max_conn_bytes,
        max_trains=a.max_trains,
        cps=a.cps,
        clients=a.clients,
        servers=a.servers,
        nets=_nets(a.net),
    )
    write_profile(plan, a.output)
    for g in plan["scopes"]:
        mean = sum(t["bytes"]["orig"] + t["bytes"]["resp"] for t in g["templates"]) / len(g["templates"])
        print(
            f"{g['scope']:<9} {len(g['templates'])} templates  {g['cps']:10.3f} conn/s  "
            f"mean {mean:10.0f} B/conn  ports {g['templates'][0]['port']}-{g['templates'][-1]['port']}"
        )
    for s in plan["skipped"]:
        print(f"{s['scope']:<9} skipped: {s['reason']}")
    low = min(t["cps"] for g in plan["scopes"] for t in g["templates"])
    if low < TREX_MIN_CPS:
        # TRex documents 0.5 conn/s as the smallest template rate; scaling all templates
        # together keeps the model's scope shares.
        print(
            f"note: the slowest template has {low:.4g} conn/s, TRex's minimum is {TREX_MIN_CPS}: "
            f"run with a multiplier of at least {TREX_MIN_CPS / low:.4g} (or give a larger --cps)"
        )
    print(f"wrote {a.output} and {plan_json(a.output)}")
    return 0


def _kind(profile) -> str:
    path = plan_json(profile)
    try:
        return json.loads(path.read_text())["kind"]
    except (OSError, ValueError, KeyError) as e:
        raise P.PlanError(f"{path}: cannot read the profile's plan ({e}); was {profile} made by tracelab?") from e


def cmd_check(a) -> int:
    kind = _kind(a.profile)
    seen = check_profile(a.profile, kind)
    if kind == "stl":
        print(
            f"{a.profile}: TRex loaded {seen['stream_count']} streams; "
            f"to_json/from_json round trip {'identical' if seen['round_trip_equal'] else 'DIFFERS'}"
        )
        return 0 if seen["round_trip_equal"] else 1
    prof = seen["profile"]
    print(
        f"{a.profile}: TRex loaded {len(prof['templates'])} templates, {len(prof['program_list'])} programs, "
        f"{len(prof['buf_list'])} buffers"
    )
    return 0


def cmd_run(a) -> int:
    kind = _kind(a.profile)
    plan = json.loads(plan_json(a.profile).read_text())
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(a.output) if a.output else Path(tmp) / "results.json"
        args = [
            str(a.profile),
            "--server",
            a.server,
            "--kind",
            kind,
            "--duration",
            str(a.duration),
            "--mult",
            a.mult,
            "--connect-timeout",
            str(a.connect_timeout),
            "-o",
            str(out),
            "--ports",
            *map(str, a.ports),
        ]
        done = run_trex_script("run_remote.py", args, timeout=a.duration + 120)
        sys.stdout.write(done.stdout)
        sys.stderr.write(done.stderr)
        if done.returncode != 0:
            return done.returncode
        result = json.loads(out.read_text())
    rates = readback.mpps(result.get("port_stats", {}), a.ports, result["duration_s"]) if kind == "stl" else None
    if rates:
        print(
            f"ports {a.ports}: {rates['tx_mpps']:.3f} Mpps sent, {rates['rx_mpps']:.3f} Mpps received "
            f"over {result['duration_s']:.1f} s"
        )
        for r in readback.class_summary(plan, result["pgid_stats"]):
            rv = "-" if r["r_v_low"] is None else f"{r['r_v_low']:.4f}..{r['r_v_high']:.4f}"
            print(
                f"{r['class']:<18} latency avg {r['latency_avg_usec']} us max {r['latency_max_usec']} us  "
                f"lost {r['lost']}  R_v {rv}"
            )
    return 0


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="tracelab replay trex",
        description=__doc__,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = ap.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("model", help="workload model (*.model.json from `tracelab model derive`)")
    common.add_argument("-o", "--output", required=True, help="profile file to write (a Python module name + .py)")
    common.add_argument("--clients", type=int, default=254, help="client addresses per scope (default 254)")
    common.add_argument("--servers", type=int, default=16, help="server addresses per scope (default 16)")
    common.add_argument(
        "--net",
        action="append",
        default=[],
        metavar="SCOPE.SIDE=CIDR",
        help="address range, e.g. internet.server=48.0.0.0/16 (defaults: 10.1/10.2 intranet, "
        "10.3 clients and 48.0 servers internet)",
    )
    s = sub.add_parser("stl", parents=[common], help="stateless profile: streams per class with latency stats")
    s.add_argument("--rate", default="10G", help="port rate, L1 (default 10G)")
    s.add_argument("--load", type=float, default=0.9, help="share of the port rate offered (default 0.9)")
    s.add_argument("--max-sizes", type=int, default=8, help="packet-size streams per class at most (default 8)")
    s.add_argument("--latency-pps", type=int, default=1000, help="latency probes per class (default 1000 pps)")
    s.add_argument(
        "--budget",
        action="append",
        default=[],
        metavar="CLASS=TIME",
        help="delay budget of a class or scope, e.g. internet=50ms or intranet-upload=1ms",
    )
    s.set_defaults(run=cmd_stl)
    s = sub.add_parser("astf", parents=[common], help="stateful TCP profile: templates of trains, warm-ups, pacing")
    s.add_argument("--templates", type=int, default=8, help="connection templates per scope (default 8)")
    s.add_argument("--seed", type=int, default=1, help="seed of the draws of trains, warm-ups, pacing (default 1)")
    s.add_argument("--cps", type=float, help="connections per second, all scopes (default: model's mean inter-arrival)")
    s.add_argument("--max-conn-bytes", type=int, default=10_000_000, help="cap of a template's size (default 10 MB)")
    s.add_argument("--max-trains", type=int, default=200, help="cap of trains per template (default 200)")
    s.set_defaults(run=cmd_astf)
    s = sub.add_parser("check", help="load a profile with the real TRex client; STL to_json/from_json round trip")
    s.add_argument("profile")
    s.set_defaults(run=cmd_check)
    s = sub.add_parser("run", help="run a profile against a TRex server (SKIPPED when none answers)")
    s.add_argument("profile")
    s.add_argument("--server", required=True, help="TRex server address")
    s.add_argument("--ports", type=int, nargs="+", default=[0])
    s.add_argument("--duration", type=float, default=10.0)
    s.add_argument("--mult", default="1")
    s.add_argument("--connect-timeout", type=float, default=3.0)
    s.add_argument("-o", "--output", help="keep TRex's raw results here (JSON)")
    s.set_defaults(run=cmd_run)
    return ap


def main(argv: list[str] | None = None) -> int:
    from tracelab_models.profile import ProfileError  # what the model loader raises

    a = parser().parse_args(argv)
    try:
        return a.run(a)
    except (P.PlanError, ProfileError, TrexUnavailable, ValueError, RuntimeError, OSError) as e:
        print(f"tracelab replay trex {a.command}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
