"""Load a generated profile with the TRex client library and print it as TRex sees it.

Runs in the TRex client's own interpreter (build/trex-venv), not in tracelab's:
    build/trex-venv/bin/python replay/tracelab/trex/check_profile.py lab_stl.py --kind stl
Prints one JSON object: for STL, the streams' to_json, whether STLProfile.from_json of
that JSON serialises back to the same JSON, and the stream count; for ASTF, the
profile's to_json. Exit 1 with TRex's message when the profile does not load.
"""

import argparse
import json
import sys

import lbr_trex_client  # noqa: F401  (puts TRex's own packages on sys.path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("profile")
    ap.add_argument("--kind", choices=("stl", "astf"), required=True)
    ap.add_argument("--tunable", action="append", default=[], help="passed to the profile, e.g. --tunable=--classes=x")
    args = ap.parse_args()
    try:
        if args.kind == "stl":
            from trex.stl.api import STLProfile

            profile = STLProfile.load_py(args.profile, tunables=args.tunable)
            streams = profile.to_json()
            again = STLProfile.from_json(streams).to_json()
            out = {
                "kind": "stl",
                "streams": streams,
                "stream_count": len(profile.get_streams()),
                "round_trip_equal": json.dumps(streams, sort_keys=True) == json.dumps(again, sort_keys=True),
            }
        else:
            from trex.astf.api import ASTFProfile

            profile = ASTFProfile.load_py(args.profile, tunables=args.tunable)
            out = {"kind": "astf", "profile": profile.to_json()}
    except Exception as e:  # TRex raises its own error types; report the message, exit 1
        print(f"{args.profile}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
