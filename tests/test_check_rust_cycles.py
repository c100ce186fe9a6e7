"""scripts/check-rust-cycles.py: a circle between two modules of a small fake
crate fails the check, uses between a module and its parent do not, and the
real tree has no circle."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "check-rust-cycles.py"


def check(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, SCRIPT, *map(str, args)], cwd=ROOT, capture_output=True, text=True)


def fake_crate(root: Path, files: dict[str, str]) -> Path:
    """A crate `fake` at `root` with these files under src/."""
    (root / "Cargo.toml").write_text('[package]\nname = "fake"\nversion = "0.1.0"\nedition = "2021"\n')
    for name, text in files.items():
        path = root / "src" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


# The crate root re-exports, every module uses the root and its parent:
# none of that is a circle.
NO_CYCLE = {
    "lib.rs": "mod a;\nmod b;\npub use a::A;\npub struct Config;\n",
    "a.rs": "use crate::b::B;\nuse crate::Config;\npub struct A(B);\nmod inner;\n"
    "#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
    "a/inner.rs": "use super::A;\nuse crate::b::B; // crate::a::A in a comment is no use\n",
    "b.rs": "pub struct B;\nconst S: &str = \"crate::a::A\";\nfn f() -> char { '{' }\n",
}


@pytest.mark.parametrize(
    ("files", "cycle"),
    [
        # Each uses the other through `use crate::`.
        (
            {"lib.rs": "mod a;\nmod b;\n", "a.rs": "use crate::b::B;\npub struct A;\n", "b.rs": "use crate::a::A;\n"},
            "a -> b -> a",
        ),
        # Through `super::` and a path in code, across three modules.
        (
            {
                "lib.rs": "mod a;\nmod b;\nmod c;\n",
                "a.rs": "use super::b::B;\n",
                "b.rs": "pub struct B;\nfn f() { crate::c::g(); }\n",
                "c.rs": "pub fn g() { let _ = crate::a::A; }\n",
            },
            "a -> b -> c -> a",
        ),
        # Through a name the crate root re-exports, from an inline module.
        (
            {
                "lib.rs": "mod a;\nmod b;\npub use b::B;\n",
                "a.rs": "pub struct A;\nmod inner {\n    use crate::B;\n}\n",
                "b.rs": "pub struct B;\nuse crate::a::A;\n",
            },
            "a -> a::inner -> b -> a",
        ),
    ],
)
def test_a_cycle_fails(tmp_path: Path, files: dict[str, str], cycle: str) -> None:
    r = check(fake_crate(tmp_path, files))
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"fake: {cycle}" in r.stdout.splitlines(), r.stdout


def test_parents_submodules_and_reexports_are_no_cycle(tmp_path: Path) -> None:
    r = check(fake_crate(tmp_path, NO_CYCLE))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "rust module cycles: none (1 crates, 5 modules)"


def test_a_directory_without_crates_is_an_error(tmp_path: Path) -> None:
    assert check(tmp_path).returncode == 2


def test_the_real_tree_has_no_cycle() -> None:
    r = check()
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("rust module cycles: none ("), r.stdout


def test_help() -> None:
    r = check("--help")
    assert r.returncode == 0 and "usage: check-rust-cycles.py" in r.stdout
