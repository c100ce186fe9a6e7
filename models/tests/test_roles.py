"""Role instances, labels, normalisation, model files and cross-trace aggregation."""

import json

import numpy as np
import pytest
from fixtures import host_rows, public_dataset, write_profile
from tracelab_models import schema as S
from tracelab_models.profile import ProfileError, host_features
from tracelab_models.roles import (
    Normaliser,
    RoleModel,
    aggregate_roles,
    instances_from_table,
    load_instances,
    read_labels,
)
from tracelab_models.zeeklog import read_conn_logs


def _profile(tmp_path):
    feats = {
        "10.0.0.1": (50, 2, 3, 1, 20, 2),
        "10.0.0.2": (40, 1, 2, 1, 15, 1),
        "10.0.0.3": (0, 30, 0, 4, 0, 6),
        "10.0.0.4": (1, 25, 1, 5, 1, 7),
        "10.0.0.5": (0, 0, 0, 0, 0, 0),
    }
    hosts = host_rows(feats, servers={"10.0.0.1", "10.0.0.2"})
    hosts += host_rows({"8.8.8.8": (9, 0, 1, 0, 3, 0)}, servers={"8.8.8.8"}, local=False)
    return write_profile(tmp_path / "p", [], hosts)


def test_derived_labels_local_hosts_with_traffic(tmp_path):
    inst = load_instances(_profile(tmp_path))
    # 10.0.0.5 has no connection, 8.8.8.8 is remote: neither is an instance.
    assert inst.hosts == ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"]
    assert inst.y.tolist() == ["server", "server", "client", "client"]
    assert inst.X[0].tolist() == [50, 2, 3, 1, 20, 2]


def test_labels_file(tmp_path):
    p = _profile(tmp_path)
    lab = tmp_path / "labels.csv"
    lab.write_text("host,role\n# known roles\n10.0.0.1,client\n10.0.0.3,server\n")
    inst = load_instances(p, lab)
    assert inst.hosts == ["10.0.0.1", "10.0.0.3"] and inst.y.tolist() == ["client", "server"]
    lab.write_text("10.0.0.1,router\n")
    with pytest.raises(ProfileError, match=r"labels.csv:1: expected"):
        read_labels(lab)


def test_missing_profile_file_names_the_file(tmp_path):
    with pytest.raises(ProfileError, match=r"hosts\.parquet: not found"):
        load_instances(tmp_path)


def test_normalisation_fitted_on_training_set_only():
    train = np.array([[0.0, 10.0], [10.0, 10.0]])
    lin = Normaliser("linear").fit(train)
    assert lin.transform([[5.0, 10.0], [20.0, 7.0]]).tolist() == [[0.5, 0.0], [2.0, -0.0]]
    t = Normaliser("student").fit(np.array([[1.0], [3.0]]))
    # mean 2, sample std sqrt(2)
    assert t.transform([[2.0 + np.sqrt(2)]])[0, 0] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="normalisation"):
        Normaliser("log")


@pytest.mark.parametrize("clf", ["c45", "nb"])
def test_model_json_round_trip(tmp_path, clf):
    rng = np.random.default_rng(5)
    servers = rng.poisson((40, 2, 3, 1, 20, 2), (30, 6))
    clients = rng.poisson((1, 30, 1, 4, 1, 6), (30, 6))
    X = np.vstack([servers, clients]).astype(float)
    y = np.array(["server"] * 30 + ["client"] * 30)
    model = RoleModel(clf, "student").fit(X, y)
    model.save(tmp_path / "m.json")
    again = RoleModel.load(tmp_path / "m.json")
    assert (again.predict(X) == model.predict(X)).all()
    assert (model.predict(X) == y).mean() > 0.95
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["features"] == list(S.ROLE_FEATURES)


def test_aggregation_like_fig_8_12():
    traces = [
        {"a": "server", "b": "client", "c": "server", "d": "server"},
        {"a": "server", "b": "client", "c": "client", "d": "server"},
        {"a": "server", "c": "client", "d": "client", "e": "client"},
    ]
    agg = aggregate_roles(traces)
    assert agg["a"]["class"] == "always server" and agg["a"]["bin"] == "3s"
    assert agg["b"]["class"] == "always client" and agg["b"]["bin"] == "2c"
    assert agg["c"]["class"] == "likely client" and agg["c"]["bin"] == "1s2c"
    assert agg["d"]["class"] == "likely server" and agg["d"]["bin"] == "2s1c"
    assert agg["e"]["class"] == "always client"
    # exactly 50 %: likely server (>= 50 %)
    assert aggregate_roles([{"x": "server"}, {"x": "client"}])["x"]["class"] == "likely server"


def test_features_from_zeek_conn_log_of_a_real_trace():
    path = public_dataset("zeek-baselines/ftp-ipv4/baseline/scripts.base.protocols.ftp.ftp-ipv4/conn.log")
    conns, _ = read_conn_logs(path)
    feats = {r[S.HOST]: r for r in host_features(conns).to_pylist()}
    # Counted by hand from the 5 rows of Zeek's baseline: the client 141.142.220.235
    # opens the control connection (:21) and two passive data connections (:56666,
    # :56667); the server 199.233.217.249 opens two active-mode data connections back.
    assert [feats["141.142.220.235"][f] for f in S.ROLE_FEATURES] == [2, 3, 2, 3, 1, 1]
    assert [feats["199.233.217.249"][f] for f in S.ROLE_FEATURES] == [3, 2, 3, 2, 1, 1]
    # Both accepted a completed handshake (SF), so both count as servers: active FTP is
    # why derived labels are a heuristic and a labels file wins when there is one.
    assert feats["141.142.220.235"][S.SERVER] and feats["199.233.217.249"][S.SERVER]
    inst = instances_from_table(host_features(conns), local_only=False)
    assert len(inst.hosts) == len(feats)
