"""Host roles (server/client) from the six host features (thesis §8.4, docs/reference/algorithms.md §9.4).

Labels come from a labels file (CSV ``host,role``, role = server|client, ``#`` comments)
or are derived from a profile where servers are known: a host is a server when it
accepted at least one connection whose handshake completed on a port it listens on
(hosts.parquet ``server``), otherwise a client. Instances are the local hosts of the
trace (all hosts when none is marked local) with at least ``min_connections``
connections (the thesis pre-filters instances but gives no criteria).
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.naive_bayes import GaussianNB

from . import __version__
from . import schema as S
from .c45 import C45Classifier
from .profile import ProfileError, read_table

ROLES = ("client", "server")
NORMALISATIONS = ("none", "linear", "student")


@dataclass
class Instances:
    hosts: list[str]
    X: np.ndarray  # one row per host, columns = schema.ROLE_FEATURES
    y: np.ndarray | None  # 'server' / 'client', or None when unlabelled


def load_instances(profile_dir, labels_file=None, local_only=True, min_connections=1) -> Instances:
    """Role instances of one profile, labelled from ``labels_file`` or from hosts.parquet."""
    cols = [S.HOST, S.LOCAL, S.SERVER, *S.ROLE_FEATURES]
    t = read_table(profile_dir, S.HOSTS, cols)
    return instances_from_table(t, read_labels(labels_file) if labels_file else None, local_only, min_connections)


def instances_from_table(t, labels=None, local_only=True, min_connections=1) -> Instances:
    hosts = t.column(S.HOST).to_pylist()
    X = np.column_stack([np.asarray(t.column(f).to_pylist(), dtype=float) for f in S.ROLE_FEATURES])
    keep = X[:, 0] + X[:, 1] >= min_connections
    if local_only and S.LOCAL in t.column_names:
        local = np.array([bool(v) for v in t.column(S.LOCAL).to_pylist()])
        if local.any():
            keep &= local
    if labels is None:
        y = np.where(np.array(t.column(S.SERVER).to_pylist(), dtype=bool), "server", "client")
    else:
        y = np.array([labels.get(h, "") for h in hosts], dtype=object)
        keep &= y != ""  # hosts absent from the labels file are not instances
        y = y.astype(str)
    idx = np.nonzero(keep)[0]
    return Instances([hosts[i] for i in idx], X[idx], y[idx])


def read_labels(path) -> dict[str, str]:
    """CSV ``host,role``; a header line ``host,role`` and ``#`` comments are allowed."""
    labels = {}
    try:
        with open(path, newline="") as f:
            for lineno, row in enumerate(csv.reader(f), 1):
                if not row or row[0].startswith("#") or (lineno == 1 and row[:2] == ["host", "role"]):
                    continue
                if len(row) != 2 or row[1].strip() not in ROLES:
                    raise ProfileError(
                        f"{path}:{lineno}: expected 'host,server' or 'host,client', got {','.join(row)!r}"
                    )
                labels[row[0].strip()] = row[1].strip()
    except OSError as e:
        raise ProfileError(f"{path}: cannot read labels ({e})") from e
    return labels


class Normaliser:
    """Per-attribute normalisation fitted on one set: linear (min-max) or Student's t (z-score).

    A constant attribute maps to 0 (its range or deviation is 0).
    """

    def __init__(self, kind: str = "linear"):
        if kind not in NORMALISATIONS:
            raise ValueError(f"normalisation must be one of {', '.join(NORMALISATIONS)}, got {kind!r}")
        self.kind = kind
        self.offset = self.scale = None

    def fit(self, X):
        X = np.asarray(X, dtype=float)
        if self.kind == "none":
            self.offset, self.scale = np.zeros(X.shape[1]), np.ones(X.shape[1])
        elif self.kind == "linear":
            self.offset, self.scale = X.min(axis=0), X.max(axis=0) - X.min(axis=0)
        else:
            self.offset, self.scale = X.mean(axis=0), X.std(axis=0, ddof=1) if len(X) > 1 else np.zeros(X.shape[1])
        self.scale = np.where(self.scale > 0, self.scale, np.inf)
        return self

    def transform(self, X):
        return (np.asarray(X, dtype=float) - self.offset) / self.scale

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "offset": self.offset.tolist(),
            "scale": [None if not np.isfinite(s) else float(s) for s in self.scale],
        }

    @classmethod
    def from_dict(cls, d) -> Normaliser:
        n = cls(d["kind"])
        n.offset = np.array(d["offset"], dtype=float)
        n.scale = np.array([np.inf if s is None else s for s in d["scale"]], dtype=float)
        return n


def make_classifier(name: str):
    if name == "c45":
        return C45Classifier()
    if name == "nb":
        return GaussianNB()
    raise ValueError(f"classifier must be c45 or nb, got {name!r}")


class RoleModel:
    """Normaliser + classifier over the six features; saved as JSON the analyzer can apply.

    ``x' = (x - offset) / scale`` per feature (scale null = constant feature -> 0), then
    the tree (format tracelab-c45) or Gaussian Naive Bayes (per-class means/variances).
    """

    def __init__(self, classifier: str = "c45", normalisation: str = "linear"):
        self.classifier_name = classifier
        self.normaliser = Normaliser(normalisation)
        self.clf = make_classifier(classifier)

    def fit(self, X, y):
        Z = self.normaliser.fit(X).transform(X)
        self.clf.fit(Z, y)
        return self

    def predict(self, X, renormalise: bool = False):
        """Roles of ``X``; ``renormalise`` fits the normalisation on ``X`` itself, as the
        thesis does when applying the Eurecom model to each LBNL trace."""
        norm = Normaliser(self.normaliser.kind).fit(X) if renormalise else self.normaliser
        return self.clf.predict(norm.transform(X))

    def to_dict(self) -> dict:
        d = {
            "format": "tracelab-roles",
            "version": 1,
            "tool_version": __version__,
            "features": list(S.ROLE_FEATURES),
            "normalisation": self.normaliser.to_dict(),
            "classifier": self.classifier_name,
        }
        if self.classifier_name == "c45":
            d["tree"] = self.clf.to_dict(list(S.ROLE_FEATURES))
        else:
            d["naive_bayes"] = {
                "classes": self.clf.classes_.tolist(),
                "class_prior": self.clf.class_prior_.tolist(),
                "mean": self.clf.theta_.tolist(),
                "var": self.clf.var_.tolist(),
            }
        return d

    @classmethod
    def from_dict(cls, d) -> RoleModel:
        if d.get("format") != "tracelab-roles" or d.get("version") != 1:
            raise ValueError("not a tracelab-roles v1 model (format/version fields)")
        m = cls(d["classifier"], d["normalisation"]["kind"])
        m.normaliser = Normaliser.from_dict(d["normalisation"])
        if m.classifier_name == "c45":
            m.clf = C45Classifier.from_dict(d["tree"])
        else:
            nb = d["naive_bayes"]
            m.clf.classes_ = np.array(nb["classes"])
            m.clf.class_prior_ = np.array(nb["class_prior"])
            m.clf.theta_, m.clf.var_ = np.array(nb["mean"]), np.array(nb["var"])
            m.clf.n_features_in_ = len(d["features"])
        return m

    def save(self, path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def load(cls, path) -> RoleModel:
        try:
            return cls.from_dict(json.loads(Path(path).read_text()))
        except (OSError, json.JSONDecodeError, KeyError, ValueError) as e:
            raise ProfileError(f"{path}: not a role model ({e})") from e


def aggregate_roles(per_trace: list[dict[str, str]]) -> dict[str, dict]:
    """Cross-trace role of each host (thesis §8.4.2.2, Fig. 8.12).

    always server: labelled server in >= 1 trace and never client; always client:
    symmetric; otherwise likely server when labelled server in >= 50 % of the traces it
    appears in, else likely client. ``bin`` is the histogram label: '3s' / '2c' for the
    'always' classes, '3s2c' for mixed hosts.
    """
    counts = defaultdict(lambda: [0, 0])
    for roles in per_trace:
        for host, role in roles.items():
            counts[host][role == "client"] += 1
    out = {}
    for host in sorted(counts):
        s, c = counts[host]
        if c == 0:
            cls, label = "always server", f"{s}s"
        elif s == 0:
            cls, label = "always client", f"{c}c"
        else:
            cls = "likely server" if s >= (s + c) / 2 else "likely client"
            label = f"{s}s{c}c"
        out[host] = {"class": cls, "bin": label, "server": s, "client": c}
    return out
