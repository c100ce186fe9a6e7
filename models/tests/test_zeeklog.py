"""Zeek conn.log in every form Zeek writes (TSV, JSON lines, gzip, rotated
directories), against Zeek's own btest baselines in datasets/public."""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from tracelab_models import workload, zeeklog
from tracelab_models.profile import ProfileError

ROOT = Path(__file__).resolve().parents[2]
BASELINES = ROOT / "datasets/public/zeek-baselines"
WIKIPEDIA = BASELINES / "wikipedia/baseline/opt.basic/conn.log"
PPP = BASELINES / "ppp/baseline/core.ppp/conn.log"  # real (not canonicalised) times
# Every Zeek-written conn.log baseline (zeek-cut projections have no header).
ZEEK_LOGS = sorted(p for p in BASELINES.glob("*/baseline/*/conn*.log") if "\n#fields\t" in p.read_text())
# The analyzer's conn.log of tcpmix (real times, 1045 connections).
TCPMIX = ROOT / "tests/baselines/tcpmix/profile/conn.log"


def data_lines(path: Path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text().splitlines() if line and not line.startswith("#")]


def header(path: Path) -> dict[str, list[str]]:
    out = {}
    for line in path.read_text().splitlines():
        if line.startswith("#fields") or line.startswith("#types"):
            key, *vals = line.split("\t")
            out[key[1:]] = vals
    return out


def to_json_lines(path: Path) -> str:
    """The TSV log as Zeek's JSON writer writes it: one object per record, typed
    values, unset fields left out, sets as lists."""
    h = header(path)
    lines = []
    for cells in data_lines(path):
        rec = {}
        for name, typ, cell in zip(h["fields"], h["types"], cells, strict=True):
            if cell == "-":
                continue
            if typ in ("count", "port", "int"):
                rec[name] = int(cell)
            elif typ in ("time", "interval", "double"):
                rec[name] = cell if cell.startswith("XXXX") else float(cell)
            elif typ == "bool":
                rec[name] = cell == "T"
            elif typ.startswith("set["):
                rec[name] = [] if cell == "(empty)" else cell.split(",")
            else:
                rec[name] = cell
        lines.append(json.dumps(rec))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("path", ZEEK_LOGS, ids=lambda p: p.parent.name)
def test_zeek_baselines_read_typed_by_their_header(path):
    table, files = zeeklog.read_conn_logs(path)
    rows = data_lines(path)
    fields = header(path)["fields"]
    assert files == [path] and table.num_rows == len(rows)
    # Every value the table keeps is Zeek's cell, typed: '-' is null.
    for name in ("uid", "id.orig_h", "id.resp_p", "proto", "orig_bytes", "conn_state", "local_orig", "duration"):
        if name not in fields:
            continue
        i = fields.index(name)
        got = table.column(name).to_pylist()
        for cell, value in zip((r[i] for r in rows), got, strict=True):
            if cell == "-":
                assert value is None
            elif name == "local_orig":
                assert value == (cell == "T")
            elif name == "duration":
                assert value == pytest.approx(float(cell))
            else:
                assert str(value) == cell


def test_json_and_gzip_forms_read_as_the_tsv(tmp_path):
    for source in (WIKIPEDIA, PPP):
        tsv, _ = zeeklog.read_conn_logs(source)
        js = tmp_path / f"{source.parent.name}.log"
        js.write_text(to_json_lines(source))
        gz_tsv = tmp_path / f"conn.{source.parent.name}.log.gz"
        gz_tsv.write_bytes(gzip.compress(source.read_bytes()))
        gz_json = tmp_path / f"{source.parent.name}.json.log.gz"
        gz_json.write_bytes(gzip.compress(js.read_bytes()))
        for other in (js, gz_tsv, gz_json):
            assert zeeklog.read_conn_logs(other)[0].equals(tsv), other


def test_json_timestamps_in_each_form_zeek_writes(tmp_path):
    """LogAscii::json_timestamps: TS_EPOCH, TS_MILLIS, TS_ISO8601."""
    log = tmp_path / "conn.log"
    rec = {"uid": "C1", "id.orig_h": "10.0.0.1", "id.orig_p": 1, "id.resp_h": "10.0.0.2", "id.resp_p": 80}
    rec["proto"] = "tcp"
    for ts in (1795600800.25, 1795600800250, "2026-11-25T10:00:00.250000Z"):
        log.write_text(json.dumps({"ts": ts, **rec}) + "\n")
        assert zeeklog.read_conn_logs(log)[0].column("ts").to_pylist() == [1795600800.25], ts
    log.write_text(json.dumps({"ts": "yesterday", **rec}) + "\n")
    with pytest.raises(ProfileError, match=rf"{log}:1: ts 'yesterday' is neither"):
        zeeklog.read_conn_logs(log)


def test_rotated_directory_merges_in_time_order(tmp_path):
    whole, _ = zeeklog.read_conn_logs(TCPMIX)
    lines = TCPMIX.read_text().splitlines(keepends=True)
    head = [x for x in lines if x.startswith("#")]
    body = [x for x in lines if not x.startswith("#")]
    thirds = [body[0::3], body[1::3], body[2::3]]  # interleaved in time: the merge must sort
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "conn.2026-11-25-10-00-00.log.gz").write_bytes(gzip.compress("".join(head + thirds[0]).encode()))
    (logs / "conn.2026-11-25-11-00-00.log").write_text("".join(head + thirds[1]))
    (logs / "conn.log").write_text("".join(head + thirds[2]))
    (logs / "dns.log").write_text("not read")
    merged, files = zeeklog.read_conn_logs(logs)
    assert [f.name for f in files] == ["conn.2026-11-25-10-00-00.log.gz", "conn.2026-11-25-11-00-00.log", "conn.log"]
    assert merged.num_rows == whole.num_rows == 1045
    assert merged.column("uid").to_pylist() == whole.column("uid").to_pylist()


def test_model_from_zeek_baseline_matches_the_model_of_the_profiled_pcap(tmp_path):
    """Oracle: Zeek's conn.log of wikipedia.pcap and the analyzer's profile of the
    same pcap give the same connections and byte shares; the Zeek model says
    what it lacks."""
    profile = profile_wikipedia(tmp_path / "profile")
    zeek = workload.derive_input(WIKIPEDIA, ["141.142.0.0/16"], 1000, 0)
    ours = workload.derive_input(profile, [], 1000, 0)
    assert zeek["flows"]["connections"] == ours["flows"]["connections"] == 34
    for scope in ("intranet", "internet"):
        assert zeek["topological"]["shares"][scope] == pytest.approx(ours["topological"]["shares"][scope])
    assert zeek["legacy"]["shares"] == pytest.approx(ours["legacy"]["shares"])
    assert zeek["provenance"]["input"]["kind"] == "zeek-conn-log"
    # The same table: every column the conn.log profile has, the analyzer's has, with its type.
    zeeklog.to_profile(WIKIPEDIA, ["141.142.0.0/16"], tmp_path / "zeek")
    theirs = pq.read_schema(profile / "connections.parquet")
    ours = pq.read_schema(tmp_path / "zeek/connections.parquet")
    assert set(ours.names) - set(theirs.names) <= {"service"}  # an analyzer without service detection
    for f in ours:
        assert f.name not in theirs.names or theirs.field(f.name).type == f.type, f
    assert any("rtt" in s.lower() for s in zeek["provenance"]["input"]["absent"]["model"])
    assert zeek["topological"]["rtt_s"]["intranet"]["n"] == 0


def test_locality_from_the_log_without_local(tmp_path):
    zeeklog.to_profile(WIKIPEDIA, [], tmp_path)
    conns = pq.read_table(tmp_path / "connections.parquet")
    lo, lr = conns.column("local_orig").to_pylist(), conns.column("local_resp").to_pylist()
    expect = ["intranet" if a and b else "internet" if a or b else "external" for a, b in zip(lo, lr, strict=True)]
    assert conns.column("scope").to_pylist() == expect
    assert set(conns.column("rtt_handshake_s").to_pylist()) == {None}


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "no #fields header"),
        ("#fields\tts\tuid\n#types\ttime\n", "disagree"),
        ("{not json\n", ":1: "),
    ],
)
def test_bad_logs_are_one_line_errors(tmp_path, content, message):
    log = tmp_path / "conn.log"
    log.write_text(content)
    with pytest.raises(ProfileError, match=message) as e:
        zeeklog.read_conn_logs(log)
    assert str(log) in str(e.value) and "\n" not in str(e.value)


def test_bad_line_names_file_and_line(tmp_path):
    log = tmp_path / "conn.log"
    lines = WIKIPEDIA.read_text().splitlines()
    first = next(i for i, x in enumerate(lines) if not x.startswith("#"))
    lines[first + 2] = lines[first + 2].replace("\t5353\t", "\tfive\t", 1)
    lines[first + 4] = "\t".join(lines[first + 4].split("\t")[:5])
    log.write_text("\n".join(lines) + "\n")
    with pytest.raises(ProfileError, match=rf"{log}:{first + 3}: invalid literal"):
        zeeklog.read_conn_logs(log)
    gz = tmp_path / "conn.log.gz"
    gz.write_bytes(gzip.compress(WIKIPEDIA.read_bytes())[:200])
    with pytest.raises(ProfileError, match="cannot read"):
        zeeklog.read_conn_logs(gz)
    dns = tmp_path / "dns.log"
    dns.write_text("#separator \\x09\n#fields\tts\tuid\tquery\n#types\ttime\tstring\tstring\n1.0\tC1\tx.org\n")
    with pytest.raises(ProfileError, match=r"not a conn\.log"):
        zeeklog.read_conn_logs(dns)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ProfileError, match=r"no conn\.log"):
        zeeklog.read_conn_logs(empty)


def ours_stamps(lines: list[str]) -> set[str]:
    """Which of Zeek's #open/#close lines a log has."""
    return {x[1:].split("\t")[0] for x in lines if x.startswith(("#open", "#close"))}


def profile_wikipedia(out: Path) -> Path:
    """The analyzer's profile of the pcap behind the WIKIPEDIA baseline."""
    analyzer = ROOT / "analyzer/target/release/tracelab-analyzer"
    if not analyzer.exists():
        pytest.skip("analyzer not built")
    pcap = BASELINES / "wikipedia/wikipedia.pcap"
    subprocess.run([str(analyzer), str(pcap), "--local", "141.142.0.0/16", "-o", str(out), "--quiet"], check=True)
    return out


@pytest.mark.parametrize("which", ["fresh", "baseline"])
def test_our_conn_log_header_is_zeeks(tmp_path, which):
    """The analyzer's conn.log header lines — fresh from the analyzer on the
    pcap of Zeek's wikipedia baseline, and the checked-in tcpmix baseline — are
    Zeek's byte for byte for the same fields; #open and #close, when written,
    are in Zeek's place and form (btest baselines canonicalise Zeek's
    `#open<TAB>2026-11-25-10-00-00` to `#open XXXX-XX-XX-XX-XX-XX`); and the
    log reads back as connections."""
    log = profile_wikipedia(tmp_path / "profile") / "conn.log" if which == "fresh" else TCPMIX
    ours = log.read_text().splitlines()
    theirs = WIKIPEDIA.read_text().splitlines()
    keep = ("#separator", "#set_separator", "#empty_field", "#unset_field", "#path", "#fields", "#types")
    assert [x for x in ours if x.startswith(keep)] == [x for x in theirs if x.startswith(keep)]
    stamp = re.compile(r"#(open|close)\t\d{4}(-\d\d){5}")
    canonical = [stamp.sub(r"#\1 XXXX-XX-XX-XX-XX-XX", x) for x in ours if x.startswith("#")]
    zeek_order = [x for x in theirs if x.startswith("#") and not x.startswith("###")]
    assert canonical == [x for x in zeek_order if x.startswith(keep) or x[1:].split(" ")[0] in ours_stamps(ours)]
    table, _ = zeeklog.read_conn_logs(log)
    assert table.column("uid").null_count == 0 and table.column("ts").null_count == 0
    (tmp_path / "logs").mkdir()
    shutil.copy(log, tmp_path / "logs/conn.log")
    assert zeeklog.read_conn_logs(tmp_path / "logs")[0].equals(table)
