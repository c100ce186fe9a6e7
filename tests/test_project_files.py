"""The project's own files: the citation metadata is valid CFF 1.2.0 and
says the version and licence the code says."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import jsonschema
import yaml

ROOT = Path(__file__).resolve().parents[1]


def citation() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text())


def test_citation_is_valid_cff():
    schema = json.loads((ROOT / "tests" / "data" / "citation-file-format-1.2.0.schema.json").read_text())
    data = citation()
    data["date-released"] = str(data["date-released"])  # YAML reads a date; CFF's schema checks the text
    jsonschema.Draft7Validator(schema).validate(data)


def test_citation_version_and_licence_match_the_code():
    from tracelab import __version__

    data = citation()
    assert data["version"] == __version__
    assert data["license"] == "BSD-3-Clause"
    assert (ROOT / "LICENSE").read_text().startswith("BSD 3-Clause License")
    cargo = tomllib.loads((ROOT / "analyzer" / "Cargo.toml").read_text())
    assert cargo["workspace"]["package"]["license"] == data["license"]
    assert cargo["workspace"]["package"]["version"] == data["version"]
