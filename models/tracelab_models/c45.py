"""C4.5 decision tree (Quinlan, release 8) as Weka's J48 builds it, as a scikit-learn estimator.

What is implemented, stated plainly (defaults equal J48's defaults):
  * numeric attributes only (the role features, and every array scikit-learn passes);
    nominal attributes are not implemented;
  * binary splits ``x <= t`` chosen by gain ratio among attributes whose information
    gain is at least the average gain minus 1e-3; candidate thresholds between distinct
    sorted values (more than 1e-5 apart), each side holding at least
    ``clip(0.1 * known_weight / n_classes, min_samples_leaf, 25)``; the MDL correction
    ``log2(#candidates) / node_weight`` is subtracted from the gain; the final threshold
    is the largest training value not above the midpoint (C4.5's choice);
  * missing values (NaN): ignored when scoring a split, the gain scaled by the known
    fraction, then sent down every branch with weight proportional to the branch
    weights, both in training and prediction;
  * collapsing, then error-based pruning with confidence factor 0.25 and subtree raising.

Floating-point comparisons use Weka's tolerance (1e-6) so ties break the same way as in
J48: the first attribute and the first threshold that are strictly better win.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import threading
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import norm
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .analyzer import analyzer_binary

_EPS = 1e-6  # weka.core.Utils.SMALL


def _gr(a: float, b: float) -> bool:
    return a - b > _EPS


def _eq(a: float, b: float) -> bool:
    return abs(a - b) < _EPS


def _xlnx(x):
    """x*ln(x) with 0 for x <= 0, elementwise (EntropyBasedSplitCrit.lnFunc)."""
    x = np.asarray(x, dtype=float)
    out = np.zeros_like(x)
    pos = x > 0
    out[pos] = x[pos] * np.log(x[pos])
    return out


def info_gain(class_counts_per_branch: np.ndarray, total_weight: float | None = None) -> float:
    """C4.5 information gain (bits per instance) of a split given its class counts.

    ``class_counts_per_branch`` has one row per branch. ``total_weight`` includes the
    weight of instances whose attribute value is unknown; the gain is scaled by the
    known fraction, as C4.5 does.
    """
    counts = np.asarray(class_counts_per_branch, dtype=float)
    known = counts.sum()
    if known <= 0:
        return 0.0
    total = known if total_weight is None else total_weight
    old = (_xlnx(known) - _xlnx(counts.sum(axis=0)).sum()) / math.log(2)
    new = -(_xlnx(counts).sum() - _xlnx(counts.sum(axis=1)).sum()) / math.log(2)
    gain = (known / total) * (old - new)
    return 0.0 if _eq(gain, 0.0) else gain / known


def split_info(branch_weights, total_weight: float) -> float:
    """Split information (bits per instance); unknowns count as their own branch."""
    w = np.asarray(branch_weights, dtype=float)
    unknown = total_weight - w.sum()
    ent = (-_xlnx(w).sum() - float(_xlnx(unknown)) + float(_xlnx(total_weight))) / math.log(2)
    return ent / total_weight


def gain_ratio(
    class_counts_per_branch: np.ndarray, total_weight: float | None = None, gain: float | None = None
) -> float:
    """Gain ratio = gain / split info (0 when the split info is 0)."""
    counts = np.asarray(class_counts_per_branch, dtype=float)
    total = counts.sum() if total_weight is None else total_weight
    if gain is None:
        gain = info_gain(counts, total)
    si = split_info(counts.sum(axis=1), total) * total
    if _eq(si, 0.0):
        return 0.0
    return gain / (si / total)


def added_errors(n: float, e: float, cf: float = 0.25) -> float:
    """Extra errors C4.5 adds to ``e`` observed errors out of ``n`` (Weka Stats.addErrs).

    Upper limit of the binomial confidence interval at level ``cf`` (normal approximation
    with continuity correction; exact formula for e = 0, linear between 0 and 1).
    """
    if cf > 0.5:
        raise ValueError("confidence factor must be <= 0.5")
    if e < 1:
        base = n * (1 - cf ** (1 / n))
        if e == 0:
            return base
        return base + e * (added_errors(n, 1, cf) - base)
    if e + 0.5 >= n:
        return max(n - e, 0.0)
    z = norm.ppf(1 - cf)
    f = (e + 0.5) / n
    r = (f + z * z / (2 * n) + z * math.sqrt(f / n - f * f / n + z * z / (4 * n * n))) / (1 + z * z / n)
    return r * n - e


def _max_index(values) -> int:
    """First index of the maximum, strict by Weka's tolerance (Distribution.maxClass)."""
    best, idx = 0.0, 0
    for i, v in enumerate(values):
        if _gr(v, best):
            best, idx = v, i
    return idx


@dataclass
class _Node:
    counts: np.ndarray  # class weights of the training data reaching the node
    feature: int = -1  # -1: leaf
    threshold: float = 0.0
    branch_counts: np.ndarray | None = None  # class weights per branch (unknowns spread)
    children: list[_Node] = field(default_factory=list)
    rows: np.ndarray | None = None  # training rows (indices) reaching the node
    weights: np.ndarray | None = None  # their weights (fractional after a missing value)

    @property
    def is_leaf(self) -> bool:
        return self.feature < 0

    def make_leaf(self) -> None:
        self.feature, self.children, self.branch_counts = -1, [], None


class C45Classifier(ClassifierMixin, BaseEstimator):
    """C4.5 / J48 decision tree.

    Parameters mirror J48's options: ``confidence_factor`` (-C), ``min_samples_leaf``
    (-M), ``subtree_raising`` (off with -S), ``prune`` (-U turns it off), ``collapse``
    (-O turns it off), ``mdl_correction`` (-J turns it off).

    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> C45Classifier().fit(X, y).score(X, y)
    0.98
    """

    def __init__(
        self,
        confidence_factor: float = 0.25,
        min_samples_leaf: int = 2,
        subtree_raising: bool = True,
        prune: bool = True,
        collapse: bool = True,
        mdl_correction: bool = True,
    ):
        self.confidence_factor = confidence_factor
        self.min_samples_leaf = min_samples_leaf
        self.subtree_raising = subtree_raising
        self.prune = prune
        self.collapse = collapse
        self.mdl_correction = mdl_correction

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y):
        if not 0 < self.confidence_factor <= 0.5:
            raise ValueError(f"confidence_factor must be in (0, 0.5], got {self.confidence_factor}")
        if self.min_samples_leaf < 1:
            raise ValueError(f"min_samples_leaf must be >= 1, got {self.min_samples_leaf}")
        X, y = validate_data(self, X, y, ensure_all_finite="allow-nan", dtype=np.float64)
        check_classification_targets(y)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        self._X, self._y = X, y_idx
        self._k = len(self.classes_)
        rows = np.arange(X.shape[0])
        self.tree_ = self._build(rows, np.ones(X.shape[0]))
        if self.collapse:
            self._collapse(self.tree_)
        if self.prune:
            self._prune(self.tree_)
        self._strip(self.tree_)
        del self._X, self._y
        return self

    def _class_counts(self, rows, w) -> np.ndarray:
        return np.bincount(self._y[rows], weights=w, minlength=self._k).astype(float)

    def _build(self, rows, w) -> _Node:
        counts = self._class_counts(rows, w)
        node = _Node(counts=counts, rows=rows, weights=w)
        total = counts.sum()
        if total < 2 * self.min_samples_leaf - _EPS or _eq(total, counts[_max_index(counts)]):
            return node
        split = self._select_split(rows, w, total)
        if split is None:
            return node
        node.feature, node.threshold, node.branch_counts = split
        for child_rows, child_w in self._partition(node, rows, w):
            node.children.append(self._build(child_rows, child_w))
        return node

    def _select_split(self, rows, w, total):
        """C45ModelSelection.selectModel restricted to numeric attributes."""
        cands = []
        for f in range(self._X.shape[1]):
            c = self._numeric_split(f, rows, w, total)
            if c is not None:
                cands.append(c)
        if not cands:
            return None
        avg_gain = sum(c[1] for c in cands) / len(cands)
        best, best_ratio = None, 0.0
        for c in cands:
            if c[1] >= avg_gain - 1e-3 and _gr(c[2], best_ratio):
                best, best_ratio = c, c[2]
        if best is None or _eq(best_ratio, 0.0):
            return None
        f, _, _, mid, branch_counts = best
        # C4.5 moves the threshold down to the largest training value not above it
        # (exact comparisons here and in the branch test, as in Weka 3.8.6's bytecode).
        col = self._X_all_col(f)
        below = col[col <= mid]
        threshold = float(below.max())
        return f, threshold, branch_counts

    def _X_all_col(self, f):
        col = self._X[:, f]
        return col[~np.isnan(col)]

    def _numeric_split(self, f, rows, w, total):
        """C45Split.handleNumericAttribute: returns (f, gain, ratio, midpoint, branch counts)."""
        vals = self._X[rows, f]
        known = ~np.isnan(vals)
        n_known = int(known.sum())
        order = np.argsort(vals[known], kind="stable")
        v = vals[known][order]
        y = self._y[rows][known][order]
        wk = w[known][order]
        onehot = np.zeros((n_known, self._k))
        onehot[np.arange(n_known), y] = wk
        cum = np.cumsum(onehot, axis=0)  # class weights of the first i+1 values
        known_counts = cum[-1] if n_known else np.zeros(self._k)
        known_w = known_counts.sum()
        min_split = 0.1 * known_w / self._k
        if min_split <= self.min_samples_leaf + _EPS:
            min_split = self.min_samples_leaf
        elif _gr(min_split, 25):
            min_split = 25.0
        if n_known < 2 * min_split - _EPS:
            return None
        # Split after position i when the next value is distinct (by more than 1e-5).
        boundary = np.nonzero(v[:-1] + 1e-5 < v[1:])[0]
        left = cum[boundary]
        right = known_counts - left
        lw, rw = left.sum(axis=1), right.sum(axis=1)
        ok = (lw >= min_split - _EPS) & (rw >= min_split - _EPS)
        boundary, left, right = boundary[ok], left[ok], right[ok]
        if len(boundary) == 0:
            return None
        old = (_xlnx(known_w) - _xlnx(known_counts).sum()) / math.log(2)
        new = -(
            _xlnx(left).sum(axis=1) + _xlnx(right).sum(axis=1) - _xlnx(left.sum(axis=1)) - _xlnx(right.sum(axis=1))
        ) / math.log(2)
        gains = (known_w / total) * (old - new)
        gains = np.where(np.abs(gains) < _EPS, 0.0, gains / known_w)
        best_gain, best_i = 0.0, -1
        for i, g in enumerate(gains):  # first strictly better candidate wins
            if _gr(g, best_gain):
                best_gain, best_i = g, i
        if best_i < 0:
            return None
        if self.mdl_correction:
            best_gain -= math.log2(len(boundary)) / total
        if best_gain <= _EPS:
            return None
        b = boundary[best_i]
        mid = (v[b] + v[b + 1]) / 2
        if mid == v[b + 1]:
            mid = v[b]
        branch_known = np.vstack([left[best_i], right[best_i]])
        ratio = gain_ratio(branch_known, total, best_gain)
        # Store the full distribution: unknowns spread in proportion to the branches.
        unknown_counts = self._class_counts(rows[~known], w[~known])
        probs = branch_known.sum(axis=1) / known_w
        branch_counts = branch_known + np.outer(probs, unknown_counts)
        return f, best_gain, ratio, mid, branch_counts

    def _partition(self, node, rows, w):
        """ClassifierSplitModel.split: missing values go down both branches, weighted."""
        vals = self._X[rows, node.feature]
        missing = np.isnan(vals)
        le = ~missing & (vals <= node.threshold)
        gt = ~missing & ~le
        bw = node.branch_counts.sum(axis=1)
        frac = bw / bw.sum() if _gr(bw.sum(), 0.0) else np.full(2, 0.5)
        out = []
        for mask, p in ((le, frac[0]), (gt, frac[1])):
            take = mask | (missing & (p > _EPS))
            ww = np.where(missing, w * p, w)[take]
            out.append((rows[take], ww))
        return out

    # ------------------------------------------------------------------ pruning
    def _training_errors(self, node) -> float:
        if node.is_leaf:
            return node.counts.sum() - node.counts[_max_index(node.counts)]
        return sum(self._training_errors(c) for c in node.children)

    def _collapse(self, node) -> None:
        if node.is_leaf:
            return
        own = node.counts.sum() - node.counts[_max_index(node.counts)]
        if self._training_errors(node) >= own - 1e-3:
            node.make_leaf()
        else:
            for c in node.children:
                self._collapse(c)

    def _leaf_estimate(self, counts) -> float:
        n = counts.sum()
        if _eq(n, 0.0):
            return 0.0
        e = n - counts[_max_index(counts)]
        return e + added_errors(n, e, self.confidence_factor)

    def _estimated_errors(self, node) -> float:
        if node.is_leaf:
            return self._leaf_estimate(node.counts)
        return sum(self._estimated_errors(c) for c in node.children)

    def _branch_estimate(self, node, rows, w) -> float:
        """Estimated errors if ``node``'s subtree classified (rows, w) instead."""
        if node.is_leaf:
            return self._leaf_estimate(self._class_counts(rows, w))
        saved = node.branch_counts
        node.branch_counts = self._split_counts(node, rows, w)
        parts = self._partition(node, rows, w)
        node.branch_counts = saved
        return sum(self._branch_estimate(c, r, ww) for c, (r, ww) in zip(node.children, parts, strict=True))

    def _split_counts(self, node, rows, w) -> np.ndarray:
        """C45Split.resetDistribution: branch class weights of new data, unknowns spread."""
        vals = self._X[rows, node.feature]
        missing = np.isnan(vals)
        le = ~missing & (vals <= node.threshold)
        gt = ~missing & ~le
        known = np.vstack([self._class_counts(rows[le], w[le]), self._class_counts(rows[gt], w[gt])])
        kw = known.sum()
        probs = known.sum(axis=1) / kw if not _eq(kw, 0.0) else np.full(2, 0.5)
        return known + np.outer(probs, self._class_counts(rows[missing], w[missing]))

    def _redistribute(self, node, rows, w) -> None:
        """newDistribution: recompute counts below a raised subtree."""
        node.rows, node.weights = rows, w
        node.counts = self._class_counts(rows, w)
        if not node.is_leaf:
            node.branch_counts = self._split_counts(node, rows, w)
            for c, (r, ww) in zip(node.children, self._partition(node, rows, w), strict=True):
                self._redistribute(c, r, ww)

    def _prune(self, node) -> None:
        if node.is_leaf:
            return
        for c in node.children:
            self._prune(c)
        largest = self._largest_branch(node)
        if self.subtree_raising:
            child = node.children[largest]
            err_largest = self._branch_estimate(child, node.rows, node.weights)
        else:
            err_largest = math.inf
        err_leaf = self._leaf_estimate(node.counts)
        err_tree = self._estimated_errors(node)
        if err_leaf <= err_tree + 0.1 + _EPS and err_leaf <= err_largest + 0.1 + _EPS:
            node.make_leaf()
            return
        if err_largest <= err_tree + 0.1 + _EPS:
            child = node.children[largest]
            node.feature, node.threshold = child.feature, child.threshold
            node.children, node.branch_counts = child.children, child.branch_counts
            self._redistribute(node, node.rows, node.weights)
            self._prune(node)

    @staticmethod
    def _largest_branch(node) -> int:
        """Distribution.maxBag: the last branch of maximal weight."""
        bw = node.branch_counts.sum(axis=1)
        best, idx = 0.0, -1
        for i, v in enumerate(bw):
            if v >= best - _EPS:
                best, idx = v, i
        return idx

    def _strip(self, node) -> None:
        node.rows = node.weights = None
        for c in node.children:
            self._strip(c)

    # --------------------------------------------------------------- prediction
    def predict_proba(self, X):
        """Class probabilities (ClassifierTree.distributionForInstance: a missing value
        follows every branch, weighted; an empty leaf takes its parent's branch
        distribution), by the project's one C4.5 predictor, the Rust analyzer's
        `predict-c45`, all rows in one call."""
        check_is_fitted(self, "tree_")
        X = validate_data(self, X, reset=False, ensure_all_finite="allow-nan", dtype=np.float64)
        return predict_c45(self.to_dict(), X)

    def predict(self, X):
        proba = self.predict_proba(X)
        return self.classes_[[_max_index(p) for p in proba]]

    # ------------------------------------------------------------------ output
    def n_leaves(self) -> int:
        check_is_fitted(self, "tree_")
        return _count(self.tree_, leaves_only=True)

    def tree_size(self) -> int:
        check_is_fitted(self, "tree_")
        return _count(self.tree_, leaves_only=False)

    def to_text(self, feature_names=None, class_names=None) -> str:
        """The tree exactly as J48 prints it (below its 'J48 pruned tree' header)."""
        check_is_fitted(self, "tree_")
        fn = _names(feature_names, self.n_features_in_, "x")
        cn = [str(c) for c in (class_names if class_names is not None else self.classes_)]
        if self.tree_.is_leaf:
            return ": " + _label(self.tree_.counts, self.tree_.counts, cn)
        lines: list[str] = []
        _dump(self.tree_, 0, fn, cn, lines)
        return "\n".join(lines)

    def to_dict(self, feature_names=None) -> dict:
        """JSON-ready tree (format ``tracelab-c45`` v1) that the Rust analyzer can apply; the
        format and the prediction rule both sides follow: docs/reference/role-model.md."""
        check_is_fitted(self, "tree_")
        fn = _names(feature_names, self.n_features_in_, "x")
        return {
            "format": "tracelab-c45",
            "version": 1,
            "features": fn,
            "classes": [_jsonable(c) for c in self.classes_],
            "params": self.get_params(),
            "tree": _node_dict(self.tree_, fn),
        }

    @classmethod
    def from_dict(cls, doc: dict) -> C45Classifier:
        if doc.get("format") != "tracelab-c45" or doc.get("version") != 1:
            raise ValueError("not a tracelab-c45 v1 tree (format/version fields)")
        est = cls(**doc["params"])
        est.classes_ = np.array(doc["classes"])
        est.n_features_in_ = len(doc["features"])
        est.tree_ = _node_from_dict(doc["tree"])
        return est

    def to_json(self, feature_names=None) -> str:
        return json.dumps(self.to_dict(feature_names), indent=2)


class PredictorError(RuntimeError):
    """The C4.5 predictor (the Rust analyzer) refused the tree or its rows."""


class PredictorMissing(PredictorError):
    """The C4.5 predictor (the Rust analyzer) is not built or not installed."""


def predict_c45(doc: dict, X: np.ndarray) -> np.ndarray:
    """Class probabilities of the rows of `X` under the tree `doc` (``to_dict``) from
    `tracelab-analyzer predict-c45`: rows in as little-endian float64, probabilities out
    (analyzer/crates/tracelab-analyzer/src/predict_c45.rs)."""
    k = len(doc["classes"])
    if len(X) == 0:
        return np.zeros((0, k))
    binary = analyzer_binary()
    if binary is None:
        raise PredictorMissing("the C4.5 predictor is the Rust analyzer, not built here: build it with `make build`")
    rows = np.ascontiguousarray(X, dtype="<f8").tobytes()
    # The tree reaches the analyzer through a pipe, not a temporary file: a
    # prediction writes nothing to disk, so a full disk or a file-size limit
    # can only fail the command's own outputs.
    tree_in, tree_out = os.pipe()
    try:
        proc = subprocess.Popen(
            [str(binary), "predict-c45", "--tree", f"/dev/fd/{tree_in}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(tree_in,),
        )
    except BaseException:
        os.close(tree_out)
        raise
    finally:
        os.close(tree_in)
    feeder = threading.Thread(target=_feed, args=(tree_out, json.dumps(doc).encode()), daemon=True)
    feeder.start()
    stdout, stderr = proc.communicate(rows)
    feeder.join()
    if proc.returncode != 0:
        raise PredictorError(stderr.decode(errors="replace").strip() or f"predict-c45 ended with {proc.returncode}")
    return np.frombuffer(stdout, dtype="<f8").reshape(len(X), k).copy()


def _feed(fd: int, data: bytes) -> None:
    """Writes `data` into the pipe `fd` and closes it; a predictor that ended
    without reading it all has said why on its stderr."""
    with open(fd, "wb") as pipe:
        try:
            pipe.write(data)
        except BrokenPipeError:
            pass


def _names(names, n, prefix):
    if names is None:
        return [f"{prefix}{i}" for i in range(n)]
    names = [str(s) for s in names]
    if len(names) != n:
        raise ValueError(f"expected {n} feature names, got {len(names)}")
    return names


def _jsonable(v):
    return v.item() if isinstance(v, np.generic) else v


def _count(node, leaves_only) -> int:
    if node.is_leaf:
        return 1
    return sum(_count(c, leaves_only) for c in node.children) + (0 if leaves_only else 1)


def _java_double(x: float) -> str:
    """Double.toString for the 2-decimal values J48 prints (48.0, 1.33)."""
    r = math.floor(x * 100 + 0.5) / 100  # Math.round is half-up, Python's round is not
    return repr(float(r))


def _weka_number(x: float) -> str:
    """weka.core.Utils.doubleToString(x, 6): at most 6 decimals, no trailing zeros."""
    s = f"{x:.6f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def _label(branch: np.ndarray, parent_counts: np.ndarray, cn) -> str:
    total = branch.sum()
    cls = _max_index(branch) if _gr(total, 0.0) else _max_index(parent_counts)
    err = total - branch[cls] if _gr(total, 0.0) else 0.0
    s = f"{cn[cls]} ({_java_double(total)}"
    if _gr(err, 0.0):
        s += f"/{_java_double(err)}"
    return s + ")"


def _dump(node, depth, fn, cn, lines) -> None:
    for i, child in enumerate(node.children):
        op = "<=" if i == 0 else ">"
        head = "|   " * depth + f"{fn[node.feature]} {op} {_weka_number(node.threshold)}"
        if child.is_leaf:
            lines.append(head + ": " + _label(node.branch_counts[i], node.counts, cn))
        else:
            lines.append(head)
            _dump(child, depth + 1, fn, cn, lines)


def _node_dict(node, fn) -> dict:
    d = {"class_counts": [float(c) for c in node.counts]}
    if node.is_leaf:
        return d
    d.update(
        {
            "feature": int(node.feature),
            "feature_name": fn[node.feature],
            "threshold": float(node.threshold),
            "branch_counts": [[float(c) for c in row] for row in node.branch_counts],
            "le": _node_dict(node.children[0], fn),
            "gt": _node_dict(node.children[1], fn),
        }
    )
    return d


def _node_from_dict(d) -> _Node:
    node = _Node(counts=np.array(d["class_counts"], dtype=float))
    if "feature" in d:
        node.feature = int(d["feature"])
        node.threshold = float(d["threshold"])
        node.branch_counts = np.array(d["branch_counts"], dtype=float)
        node.children = [_node_from_dict(d["le"]), _node_from_dict(d["gt"])]
    return node
