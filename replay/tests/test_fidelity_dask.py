"""`tracelab fidelity --seed 1,2` with `--workers N`: each seed's synthetic
side (synth, profile, compare) is one Dask task (tracelab.scale.cluster), and
the output is the serial run's, file for file; each seed's result is the one
a run of that seed alone gives."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from tracelab.fidelity import main

pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "datasets" / "real" / "pcapplusplus-example.pcap"


def fidelity(out: Path, *options: str) -> dict[str, object]:
    """Run it; every output file by name: JSON documents parsed, the rest hashed."""
    assert main([str(TRACE), "--local", "10.0.0.0/8", "-q", "-o", str(out), *options]) in (0, 1)
    files = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        name = str(path.relative_to(out))
        if path.suffix == ".json":
            files[name] = json.loads(path.read_text())
        else:
            files[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return files


def test_seeds_on_two_workers_equal_the_serial_run(tmp_path):
    serial = fidelity(tmp_path / "serial", "--seed", "1,2")
    top = serial["fidelity.json"]
    assert top["schema"] == "tracelab.fidelity-seeds" and top["config"]["seeds"] == [1, 2]
    assert [run["path"] for run in top["runs"]] == ["seed-1/fidelity.json", "seed-2/fidelity.json"]
    assert serial["seed-1/synthetic.pcap"] != serial["seed-2/synthetic.pcap"]  # the seed is the synthesizer's
    assert "seed-1/synthetic/connections.parquet" in serial and "original/connections.parquet" in serial
    assert fidelity(tmp_path / "dask", "--seed", "1", "--seed", "2", "--workers", "2") == serial

    # Seed 2 alone: the same synthetic trace and result, in the single-seed layout.
    alone = fidelity(tmp_path / "alone", "--seed", "2")
    assert alone["fidelity.json"] == serial["seed-2/fidelity.json"]
    assert alone["synthetic.pcap"] == serial["seed-2/synthetic.pcap"]
    assert alone["model.json"] == serial["model.json"]


def test_a_seed_given_twice_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main([str(TRACE), "--seed", "1,1", "-o", str(tmp_path / "f")])
    assert e.value.code == 2 and "given twice" in capsys.readouterr().err
