"""The role-model contract (docs/reference/role-model.md) on the Python side:
RoleModel normalises the raw features in Python and predicts through the project's one
C4.5 predictor (the analyzer's roles.rs, run as `tracelab-analyzer predict-c45`), and
gets every case of data/c45_contract.json as the file says. roles.rs reads the same
file in its unit tests through the analyzer's own normalisation (`profile --roles`):
thresholds hit exactly, missing values, near-ties of the class probabilities, a
constant feature, a third class, values outside the training range."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tracelab_models.roles import RoleModel

CONTRACT = json.loads((Path(__file__).parent / "data" / "c45_contract.json").read_text())


@pytest.mark.parametrize("case", CONTRACT["cases"], ids=lambda c: f"{c['model']}:{c['raw']}")
def test_python_predicts_the_contract_case(case):
    model = RoleModel.from_dict(CONTRACT["models"][case["model"]])
    raw = np.array([[np.nan if v is None else v for v in case["raw"]]], dtype=float)
    assert model.predict(raw).tolist() == [case["class"]], case["why"]


def test_every_model_is_used_and_every_class_is_expected_somewhere():
    used = {c["model"] for c in CONTRACT["cases"]}
    assert used == set(CONTRACT["models"])
    assert {c["class"] for c in CONTRACT["cases"]} == {"client", "server", "router"}
