"""The entry points the front door calls: exit codes, outputs, error messages."""

import json

import numpy as np
import pytest
from fixtures import host_rows, write_profile
from test_workload import _thesis_profile
from tracelab_models.cli import model_main, roles_main


def _role_profile(path, seed):
    rng = np.random.default_rng(seed)
    feats, servers = {}, set()
    for i in range(40):
        server = i % 3 == 0
        lam = (30, 2, 3, 1, 15, 2) if server else (1, 25, 1, 4, 1, 6)
        feats[f"10.0.{seed}.{i}"] = tuple(int(v) + 1 for v in rng.poisson(lam))
        if server:
            servers.add(f"10.0.{seed}.{i}")
    return write_profile(path, [], host_rows(feats, servers))


def test_roles_train_evaluate_apply(tmp_path, capsys):
    p1, p2 = _role_profile(tmp_path / "a", 1), _role_profile(tmp_path / "b", 2)
    assert roles_main(["train", str(p1), "-o", str(tmp_path / "m.json")]) == 0
    assert "trained on 40 hosts (14 servers)" in capsys.readouterr().out
    assert roles_main(["evaluate", str(p1), str(p2), "--json", str(tmp_path / "e.json")]) == 0
    out = capsys.readouterr().out
    assert "Performance estimate of Naive Bayes" in out and "80%-CI (%)" in out
    figures = json.loads((tmp_path / "e.json").read_text())
    assert [t["testset_size"] for t in figures[1]["trials"]] == [20, 20, 20, 20]
    assert roles_main(["apply", str(tmp_path / "m.json"), str(p1), str(p2), "-o", str(tmp_path / "r.csv")]) == 0
    lines = (tmp_path / "r.csv").read_text().splitlines()
    assert lines[0] == "host,class,bin,server,client" and len(lines) == 81


def test_roles_errors_name_the_file(tmp_path, capsys):
    assert roles_main(["train", str(tmp_path / "nope"), "-o", str(tmp_path / "m.json")]) == 3
    assert "nope/hosts.parquet: not found" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        roles_main(["train"])
    assert e.value.code == 2


def test_model_derive_validate_fit(tmp_path, capsys):
    p = _thesis_profile(tmp_path)
    out = tmp_path / "trace.model.json"
    assert model_main(["derive", str(p), "-o", str(out)]) == 0
    assert json.loads(out.read_text())["schema"] == "tracelab.workload-model"
    assert model_main(["validate", str(out)]) == 0
    assert model_main(["fit", str(p), "--variable", "interarrival", "--qq", str(tmp_path / "qq.png")]) == 0
    assert "best:" in capsys.readouterr().out and (tmp_path / "qq.png").exists()
    out.write_text("{")
    assert model_main(["validate", str(out)]) == 3  # unreadable JSON: an input error, not a verdict
    assert "invalid JSON at line 1" in capsys.readouterr().err


def test_help_has_an_example(capsys):
    for main in (roles_main, model_main):
        with pytest.raises(SystemExit) as e:
            main(["--help"])
        assert e.value.code == 0
    assert capsys.readouterr().out.count("examples:") == 2


def test_model_derive_reads_a_gzipped_zeek_conn_log(tmp_path, capsys):
    import gzip
    from pathlib import Path

    log = Path(__file__).resolve().parents[2] / "datasets/public/zeek-baselines/wikipedia/baseline/opt.basic/conn.log"
    gz = tmp_path / "conn.2026-11-25-10-00-00.log.gz"
    gz.write_bytes(gzip.compress(log.read_bytes()))
    out = tmp_path / "m.json"
    assert model_main(["derive", str(gz), "--local", "141.142.0.0/16", "-o", str(out)]) == 0
    assert "absent: legacy.rtt_s" in capsys.readouterr().out
    model = json.loads(out.read_text())
    assert model["provenance"]["input"]["files"] == [str(gz)] and model["flows"]["connections"] == 34
    assert model_main(["derive", str(tmp_path), "-o", str(out)]) == 0  # the directory of its rotated logs
    capsys.readouterr()
    (tmp_path / "empty").mkdir()
    assert model_main(["derive", str(tmp_path / "empty"), "-o", str(out)]) == 3
    assert "no conn.log" in capsys.readouterr().err
    profile = tmp_path / "profile"
    profile.mkdir()
    (profile / "connections.parquet").write_bytes(b"")
    with pytest.raises(SystemExit) as e:  # a usage error: a profile has its locality already
        model_main(["derive", str(profile), "--local", "10.0.0.0/8", "-o", str(out)])
    assert e.value.code == 2 and "--local is for Zeek logs" in capsys.readouterr().err
