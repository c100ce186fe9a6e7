"""Entry points the `tracelab` front door calls: roles_main (train/apply/evaluate) and
model_main (derive/validate/fit). Each returns the toolkit's exit status
(tracelab.errors): 0 ok, 1 `model validate` found the model invalid, 2 bad
arguments (argparse), 3 an input that cannot be read or is invalid (the message
names the file and the reason), 4 an output that cannot be written. Outputs are
written atomically (outputs.py): whole, or the previous file left as it was."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import traceback

import numpy as np

from . import dataset, progress, workload, zeeklog
from . import schema as S
from .distributions import fit_all, qq_plot
from .evaluation import evaluate_holdout
from .outputs import OutputError, atomic_file, write_text
from .profile import ProfileError, column, read_table
from .roles import NORMALISATIONS, RoleModel, aggregate_roles, load_instances
from .sqlprofile import MEMORY_LIMIT

# The statuses of tracelab.errors (this package may not import tracelab).
NEGATIVE, INPUT = 1, 3

_ROLES_EXAMPLES = """examples:
  tracelab roles train PROFILE_DIR -o roles.json                 # labels derived from the trace
  tracelab roles train PROFILE_DIR --labels labels.csv --classifier nb --normalisation student -o nb.json
  tracelab roles evaluate PROFILE_DIR                            # 4 hold-out trials, C4.5 and Naive Bayes
  tracelab roles apply roles.json LBNL1 LBNL2 LBNL3 --renormalise -o roles.csv
labels.csv: lines 'host,role' with role server or client."""

_MODEL_EXAMPLES = """examples:
  tracelab model derive PROFILE_DIR -o trace.model.json
  tracelab model derive zeek/conn.log --local 10.0.0.0/8 -o trace.model.json  # or .log.gz, JSON, a log dir
  tracelab model validate trace.model.json
  tracelab model fit PROFILE_DIR --variable flow-size --qq qq.png"""


def _common(p):
    p.add_argument("--labels", metavar="CSV", help="labels file (host,role); default: derived from the trace")
    p.add_argument("--all-hosts", action="store_true", help="use remote hosts as instances too")
    p.add_argument(
        "--min-connections", type=int, default=1, metavar="N", help="instances need at least N connections (default 1)"
    )
    p.add_argument(
        "--normalisation",
        choices=NORMALISATIONS,
        default="linear",
        help="feature normalisation fitted on the training set (default linear)",
    )


def _instances(args):
    inst = [load_instances(p, args.labels, not args.all_hosts, args.min_connections) for p in args.profiles]
    X = np.vstack([i.X for i in inst])
    y = np.concatenate([i.y for i in inst])
    if len(set(y)) < 2:
        raise ProfileError(
            f"{', '.join(args.profiles)}: the labelled hosts are all '{y[0] if len(y) else 'none'}'"
            " — a classifier needs servers and clients"
        )
    return X, y


def roles_main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="tracelab roles",
        description="Host roles (server/client) from the six host features with C4.5 or Naive Bayes.",
        epilog=_ROLES_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train", help="train a role model on labelled profiles")
    t.add_argument("profiles", nargs="+", metavar="PROFILE_DIR")
    t.add_argument("-o", "--output", required=True, metavar="JSON")
    t.add_argument("--classifier", choices=("c45", "nb"), default="c45")
    _common(t)
    e = sub.add_parser("evaluate", help="thesis 4-trial hold-out evaluation (Tables 8.3/8.4)")
    e.add_argument("profiles", nargs="+", metavar="PROFILE_DIR")
    e.add_argument("--seed", type=int, default=1, help="shuffle seed (default 1)")
    e.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    _common(e)
    a = sub.add_parser("apply", help="classify the hosts of profiles; aggregate across them")
    a.add_argument("model", metavar="MODEL_JSON")
    a.add_argument("profiles", nargs="+", metavar="PROFILE_DIR")
    a.add_argument("-o", "--output", metavar="CSV", help="write host,class,bin,server,client (default stdout)")
    a.add_argument(
        "--renormalise",
        action="store_true",
        help="fit the normalisation on each applied trace (the thesis' LBNL procedure)",
    )
    a.add_argument("--all-hosts", action="store_true")
    a.add_argument("--min-connections", type=int, default=1, metavar="N")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "train":
            X, y = _instances(args)
            model = RoleModel(args.classifier, args.normalisation).fit(X, y)
            with atomic_file(args.output, "role model") as tmp:
                model.save(tmp)
            if args.classifier == "c45":
                print(model.clf.to_text(list(model.to_dict()["features"])))
            print(f"trained on {len(y)} hosts ({int((y == 'server').sum())} servers) -> {args.output}")
        elif args.cmd == "evaluate":
            X, y = _instances(args)
            reports = []
            for name, clf in (("Naive Bayes", "nb"), ("C4.5/J48", "c45")):
                r = evaluate_holdout(_Pipeline(clf, args.normalisation), X, y, name, seed=args.seed)
                reports.append(r)
                print(f"{r.table()}\n")
            if args.json:
                write_text(args.json, json.dumps([r.to_dict() for r in reports], indent=2) + "\n", "evaluation")
        else:
            model = RoleModel.load(args.model)
            per_trace = []
            for p in args.profiles:
                inst = load_instances(p, None, not args.all_hosts, args.min_connections)
                per_trace.append(
                    dict(zip(inst.hosts, model.predict(inst.X, args.renormalise), strict=True)) if inst.hosts else {}
                )
            lines = ["host,class,bin,server,client"] + [
                f"{h},{v['class']},{v['bin']},{v['server']},{v['client']}"
                for h, v in aggregate_roles(per_trace).items()
            ]
            text = "\n".join(lines) + "\n"
            if args.output:
                write_text(args.output, text, "roles")
            else:
                sys.stdout.write(text)
    except (ProfileError, ValueError) as e:
        return _fail(INPUT, e)
    except OutputError as e:
        return _fail(e.status, e)
    return 0


def _fail(status: int, error: Exception) -> int:
    """tracelab.errors.fail, which this package may not import."""
    if os.environ.get("TRACELAB_DEBUG", "") not in ("", "0"):
        traceback.print_exception(error)
    print(f"tracelab: error: {error}", file=sys.stderr)
    return status


class _Pipeline:
    """RoleModel as a clonable estimator for the hold-out loop (normalisation per training set)."""

    def __init__(self, clf, normalisation):
        self.clf, self.normalisation = clf, normalisation

    def fit(self, X, y):
        self.model_ = RoleModel(self.clf, self.normalisation).fit(X, y)
        return self

    def predict(self, X):
        return self.model_.predict(X)

    def get_params(self, deep=False):
        return {"clf": self.clf, "normalisation": self.normalisation}


_VARIABLES = ("flow-size", "interarrival")


def model_main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="tracelab model",
        description="Workload models from analyzer profiles.",
        epilog=_MODEL_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser(
        "derive",
        help="derive the legacy, topological and apps models of a profile or of Zeek conn logs",
        description="Derive a workload model from an analyzer profile, or from a Zeek conn.log (TSV or JSON "
        "lines, gzipped or not) or a directory of rotated conn logs. A conn.log has no packets: its model "
        "has no RTTs, trains, warm-ups, pacing or packet sizes (provenance.input.absent; docs/zeek.md).",
    )
    d.add_argument("profile", metavar="PROFILE_DIR|CONN_LOG|LOG_DIR")
    d.add_argument("--local", action="append", default=[], metavar="PREFIX",
                   help="local network of a Zeek log (repeatable); default: its local_orig/local_resp")  # fmt: skip
    d.add_argument("-o", "--output", required=True, metavar="MODEL_JSON")
    d.add_argument("--max-fit-samples", type=int, default=100_000, metavar="N")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--memory-limit", type=_memory_size, default=MEMORY_LIMIT, metavar="SIZE",
                   help="DuckDB's memory for the derive, beyond which it spills to a temporary directory "
                   f"(e.g. 256MB, 4GB; default {MEMORY_LIMIT}); the fits' samples come on top")  # fmt: skip
    d.add_argument("-q", "--quiet", action="store_true", help="no progress bar on stderr")
    v = sub.add_parser("validate", help="check a model file against the schema")
    v.add_argument("model", metavar="MODEL_JSON")
    f = sub.add_parser("fit", help="fit the four families to one variable; optional QQ plot")
    f.add_argument("profile", metavar="PROFILE_DIR")
    f.add_argument("--variable", choices=sorted(_VARIABLES), required=True)
    f.add_argument("--qq", metavar="PNG", help="write QQ plots")
    args = ap.parse_args(argv)
    if args.cmd == "derive" and args.local and (zeeklog.is_profile(args.profile) or dataset.is_dataset(args.profile)):
        ap.error(f"{args.profile}: --local is for Zeek logs; a profile has its locality already")
    try:
        if args.cmd == "derive":
            local = [p for item in args.local for p in item.split(",") if p]
            with progress.steps("model derive", workload.DERIVE_STEPS, "read", args.quiet) as step:
                m = workload.derive_input(args.profile, local, args.max_fit_samples, args.seed, step, args.memory_limit)
            workload.validate(m, str(args.output))  # save() checks again, but names the temporary file
            with atomic_file(args.output, "workload model") as tmp:
                workload.save(m, tmp)
            t = m["topological"]
            print(f"{args.output}: shares {json.dumps(t['shares'])}; link delays (s) {json.dumps(t['link_delays_s'])}")
            if "input" in m["provenance"]:
                print(f"from a Zeek conn.log, absent: {'; '.join(m['provenance']['input']['absent']['model'])}")
        elif args.cmd == "validate":
            try:
                workload.load(args.model)
            except ValueError as e:  # readable JSON that breaks the schema: the check's answer
                return _fail(NEGATIVE, e)
            print(f"{args.model}: valid tracelab.workload-model v1")
        else:
            samples = _samples(args.profile, args.variable)
            report = fit_all(samples, args.variable)
            for fit in report.fits:
                print(f"{fit.family:<12} KS D={fit.ks_d:.4f}  QQ={fit.qq_log10_rms:.3f}  {fit.params}")
            print(f"best: {report.best} ({report.reason})")
            if args.qq and report.fits:
                with atomic_file(args.qq, "QQ plot") as tmp:
                    qq_plot(report, samples, tmp)
    except (ProfileError, ValueError) as e:
        return _fail(INPUT, e)
    except OutputError as e:
        return _fail(e.status, e)
    return 0


def _memory_size(text: str) -> str:
    """A size as DuckDB's memory_limit takes it: a number and a unit."""
    if not re.fullmatch(r"\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)", text.strip()):
        raise argparse.ArgumentTypeError(f"{text!r} is not a size such as 512MB or 4GB")
    return text.strip()


def _samples(profile, variable):
    t = read_table(profile, S.CONNECTIONS, [S.TS, S.ORIG_BYTES, S.RESP_BYTES])
    if variable == "flow-size":
        return column(t, S.ORIG_BYTES, 0.0) + column(t, S.RESP_BYTES, 0.0)
    ts = np.sort(column(t, S.TS))
    return np.diff(ts[np.isfinite(ts)])
