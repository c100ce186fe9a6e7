"""Run a generated profile against a TRex server and write what it measured.

Runs in the TRex client's interpreter (build/trex-venv; `tracelab replay trex run`
calls it and summarises the result):
    build/trex-venv/bin/python replay/tracelab/trex/run_remote.py --server 192.0.2.10 \
        --kind stl --ports 0 --duration 30 lab_stl.py -o results.json
STL: streams on the TX ports, latency per packet group read back. ASTF: the profile
loaded, `mult` scales its connection rates; TRex's client/server counters read back.
The JSON holds TRex's own dictionaries (port stats, pgid stats or ASTF stats) and the
run's wall duration. Exit codes: 0 done, 77 SKIPPED (no TRex server: nothing listens
at the address's RPC port), 1 failed (message on stderr).
"""

import argparse
import json
import socket
import sys
import time

import lbr_trex_client  # noqa: F401  (puts TRex's own packages on sys.path)

SKIP = 77


def reachable(host, port, timeout):
    """None if a TCP connection to TRex's RPC port opens, else the reason it does not."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as e:
        return f"{host}:{port}: {e.strerror or e}"


def run_stl(args):
    from trex.stl.api import STLClient, STLProfile

    profile = STLProfile.load_py(args.profile, tunables=args.tunable)
    client = STLClient(server=args.server, sync_port=args.sync_port, async_port=args.async_port)
    client.connect()
    try:
        client.reset(ports=args.ports)
        client.add_streams(profile.get_streams(), ports=args.ports)
        client.clear_stats()
        started = time.monotonic()
        client.start(ports=args.ports, mult=args.mult, duration=args.duration)
        client.wait_on_traffic(ports=args.ports, rx_delay_ms=args.rx_delay_ms)
        elapsed = time.monotonic() - started
        return {
            "kind": "stl",
            "ports": args.ports,
            "duration_s": elapsed,
            "port_stats": client.get_stats(ports=args.ports),
            "pgid_stats": client.get_pgid_stats(),
        }
    finally:
        client.disconnect()


def run_astf(args):
    from trex.astf.api import ASTFClient, ASTFProfile

    profile = ASTFProfile.load_py(args.profile, tunables=args.tunable)
    client = ASTFClient(server=args.server, sync_port=args.sync_port, async_port=args.async_port)
    client.connect()
    try:
        client.reset()
        client.load_profile(profile)
        client.clear_stats()
        started = time.monotonic()
        client.start(mult=float(args.mult), duration=args.duration)
        client.wait_on_traffic()
        elapsed = time.monotonic() - started
        return {"kind": "astf", "ports": args.ports, "duration_s": elapsed, "stats": client.get_stats()}
    finally:
        client.disconnect()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("profile")
    ap.add_argument("--server", required=True, help="TRex server address (name or IP)")
    ap.add_argument("--kind", choices=("stl", "astf"), required=True)
    ap.add_argument("--ports", type=int, nargs="+", default=[0], help="STL TX ports (default 0)")
    ap.add_argument("--duration", type=float, default=10.0, help="seconds of traffic (default 10)")
    ap.add_argument("--mult", default="1", help="STL: TRex multiplier ('1', '50%%', '5gbps'); ASTF: cps factor")
    ap.add_argument("--rx-delay-ms", type=int, default=100, help="STL: wait for in-flight latency packets")
    ap.add_argument("--sync-port", type=int, default=4501)
    ap.add_argument("--async-port", type=int, default=4500)
    ap.add_argument("--connect-timeout", type=float, default=3.0)
    ap.add_argument("--tunable", action="append", default=[])
    ap.add_argument("-o", "--output", help="results JSON (default: stdout)")
    args = ap.parse_args()

    why = reachable(args.server, args.sync_port, args.connect_timeout)
    if why:
        print(f"SKIPPED (no TRex server: {why})")
        return SKIP
    try:
        result = run_stl(args) if args.kind == "stl" else run_astf(args)
    except Exception as e:  # TRexError and friends: say what TRex said
        print(f"FAILED ({type(e).__name__}: {e})", file=sys.stderr)
        return 1
    result.update({"server": args.server, "profile": args.profile, "mult": args.mult})
    text = json.dumps(result, indent=2, default=str)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
