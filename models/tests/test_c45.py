"""Hand-worked checks of the C4.5 formulas and the scikit-learn contract."""

import json
import math

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler
from tracelab_models.c45 import C45Classifier, added_errors, gain_ratio, info_gain, split_info


def test_info_gain_by_hand():
    # Parent 3a/3b: 1 bit. Branches [2a,0b] (0 bits) and [1a,3b] (H(1/4) = 0.811278 bits):
    # gain = 1 - 4/6 * 0.811278 = 0.459148.
    assert info_gain([[2, 0], [1, 3]]) == pytest.approx(0.459148, abs=1e-6)
    # Two more instances with an unknown value: gain scaled by the known fraction 6/8.
    assert info_gain([[2, 0], [1, 3]], 8) == pytest.approx(0.459148 * 6 / 8, abs=1e-6)


def test_split_info_counts_unknowns_as_a_branch():
    # Branches 2 and 4 plus 2 unknowns out of 8: -(1/4 lg 1/4 + 1/2 lg 1/2 + 1/4 lg 1/4) = 1.5.
    assert split_info([2, 4], 8) == pytest.approx(1.5)
    assert gain_ratio([[2, 0], [1, 3]], 8) == pytest.approx(0.459148 * 6 / 8 / 1.5, abs=1e-6)


def test_added_errors_by_hand():
    # e = 0: N (1 - CF^(1/N)); Quinlan's book: U25%(0, 6) = 0.206 per instance.
    assert added_errors(6, 0) == pytest.approx(6 * (1 - 0.25 ** (1 / 6)))
    assert added_errors(6, 0) / 6 == pytest.approx(0.206, abs=5e-4)
    assert added_errors(1, 0) == pytest.approx(0.75)
    # e = 1, N = 16 with z = 0.67449, f = 1.5/16 (continuity correction):
    # r = (f + z²/2N + z sqrt(f/N - f²/N + z²/4N²)) / (1 + z²/N) = 0.154732; 16 r - 1 = 1.47571.
    assert added_errors(16, 1) == pytest.approx(1.47571, abs=1e-5)
    # e + 0.5 >= N: the remaining instances.
    assert added_errors(4, 3.6) == pytest.approx(0.4)
    with pytest.raises(ValueError):
        added_errors(10, 1, cf=0.6)


def test_threshold_mdl_and_gain_ratio_by_hand():
    X = np.arange(1, 7, dtype=float).reshape(-1, 1)
    y = np.array(list("aaabbb"))
    tree = C45Classifier().fit(X, y)
    # Candidates with >= 2 per side: after 2, 3 and 4. Best after 3 (gain 1 bit), MDL
    # correction 1 - log2(3)/6; threshold = largest value <= midpoint 3.5 = 3.
    assert tree.to_text() == "x0 <= 3: a (3.0)\nx0 > 3: b (3.0)"
    t = C45Classifier()
    t._X, t._y, t._k = X, np.array([0, 0, 0, 1, 1, 1]), 2
    f, gain, ratio, mid, _ = t._numeric_split(0, np.arange(6), np.ones(6), 6.0)
    assert (f, mid) == (0, 3.5)
    assert gain == pytest.approx(1 - math.log2(3) / 6)
    assert ratio == pytest.approx(1 - math.log2(3) / 6)  # split info of 3|3 is 1 bit


def test_pruning_by_hand():
    X = np.arange(1, 13, dtype=float).reshape(-1, 1)
    y = np.array(list("bbbbbbbbabba"))
    unpruned = C45Classifier(prune=False, collapse=False).fit(X, y)
    assert unpruned.to_text() == "x0 <= 8: b (8.0)\nx0 > 8: a (4.0/2.0)"
    # Subtree: 8(1 - 0.25^(1/8)) = 1.2728 plus 2 + 1.0699 = 3.0699 -> 4.3427 errors.
    # As a leaf (12 instances, 2 errors): 2 + 1.5680 = 3.5680 <= 4.3427 + 0.1: pruned.
    assert added_errors(8, 0) + 2 + added_errors(4, 2) == pytest.approx(4.3427, abs=1e-4)
    assert 2 + added_errors(12, 2) == pytest.approx(3.5680, abs=1e-4)
    assert C45Classifier().fit(X, y).to_text() == ": b (12.0/2.0)"


def test_missing_values_follow_both_branches():
    X = np.array([[1.0], [2.0], [3.0], [4.0], [5.0], [6.0], [np.nan]])
    y = np.array(list("aaabbba"))
    tree = C45Classifier().fit(X, y)
    # The unknown instance goes down both sides with weight 1/2.
    assert tree.to_text() == "x0 <= 3: a (3.5)\nx0 > 3: b (3.5/0.5)"
    proba = tree.predict_proba([[np.nan]])[0]
    assert proba == pytest.approx([0.5 * 1 + 0.5 * (0.5 / 3.5), 0.5 * (3 / 3.5)])


def test_sklearn_contract():
    X, y = load_iris(return_X_y=True)
    est = C45Classifier(confidence_factor=0.1)
    assert clone(est).get_params()["confidence_factor"] == 0.1
    est.set_params(min_samples_leaf=3)
    assert est.get_params()["min_samples_leaf"] == 3
    scores = cross_val_score(make_pipeline(MinMaxScaler(), C45Classifier()), X, y, cv=5)
    assert scores.mean() > 0.9
    proba = C45Classifier().fit(X, y).predict_proba(X)
    assert proba.shape == (150, 3) and np.allclose(proba.sum(axis=1), 1)


def test_json_round_trip_predicts_the_same():
    X, y = load_iris(return_X_y=True)
    tree = C45Classifier().fit(X, y)
    doc = json.loads(tree.to_json(["sl", "sw", "pl", "pw"]))
    assert doc["format"] == "tracelab-c45" and doc["tree"]["feature_name"] == "pw"
    again = C45Classifier.from_dict(doc)
    assert (again.predict(X) == tree.predict(X)).all()
    with pytest.raises(ValueError, match="tracelab-c45"):
        C45Classifier.from_dict({"format": "other"})


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="confidence_factor"):
        C45Classifier(confidence_factor=0.9).fit([[1.0], [2.0]], [0, 1])
    with pytest.raises(ValueError):
        C45Classifier().fit([[1.0], [np.inf]], [0, 1])
    tree = C45Classifier().fit([[1.0], [2.0], [3.0], [4.0]], [0, 0, 1, 1])
    with pytest.raises(ValueError):
        tree.predict([[1.0, 2.0]])


def _walk(node: dict, x, k: int) -> np.ndarray:
    """ClassifierTree.getProbs written out again over the JSON tree: the oracle of
    the predictor (the Rust analyzer's `predict-c45`)."""
    counts = np.array(node["class_counts"])
    if "feature" not in node:
        return counts / counts.sum() if counts.sum() > 0 else np.zeros(k)
    branch = np.array(node["branch_counts"])
    children = [node["le"], node["gt"]]
    v = x[node["feature"]]
    if np.isnan(v):
        w = branch.sum(axis=1) / branch.sum()
        return sum(p * _walk(c, x, k) for c, p in zip(children, w, strict=True) if sum(c["class_counts"]) > 0)
    i = 0 if v <= node["threshold"] else 1
    if abs(sum(children[i]["class_counts"])) < 1e-6:
        bc = branch[i] if branch[i].sum() > 1e-6 else counts
        return bc / bc.sum()
    return _walk(children[i], x, k)


def test_predictions_equal_a_walk_of_the_tree():
    """The training rows themselves (each threshold is a training value, so many rows
    sit exactly on one: the predictor must read the thresholds back bit for bit), with
    missing values, three classes and a tree of several levels."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(3000, 4)) * [1.0, 1e-3, 1e5, 1 / 3]
    X[rng.random(X.shape) < 0.05] = np.nan
    z = np.nan_to_num(X / [1.0, 1e-3, 1e5, 1 / 3])
    y = (z[:, 0] + z[:, 1] ** 2 + rng.normal(0, 0.5, len(X)) > 1).astype(int) + (z[:, 2] > 1)
    tree = C45Classifier().fit(X, y)
    assert tree.tree_size() > 20
    doc = tree.to_dict()
    expected = np.array([_walk(doc["tree"], x, 3) for x in X])
    proba = tree.predict_proba(X)
    assert np.abs(proba - expected).max() < 1e-12
    assert (tree.predict(X) == tree.classes_[expected.argmax(axis=1)]).all()
