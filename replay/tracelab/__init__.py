"""tracelab: traffic trace analysis and replay.

The `tracelab` command (tracelab.cli) is the one front door; each subcommand
is a thin adapter over the part that does the work (the Rust analyzer, the
models package, the replay engine).
"""

# One version for the whole toolkit: the analyzer workspace's (analyzer/Cargo.toml),
# which `tracelab-analyzer --version` prints too. The wheel build writes it into
# tracelab/_version.py; an in-tree checkout reads it from Cargo.toml. Neither
# path imports importlib.metadata, which alone would double `tracelab --help`'s time.
try:
    from ._version import __version__
except ImportError:
    import os as _os
    import re as _re

    _CARGO_TOML = _os.path.join(_os.path.dirname(__file__), "..", "..", "analyzer", "Cargo.toml")
    with open(_CARGO_TOML, encoding="utf-8") as _f:
        _found = _re.search(r'^\[workspace\.package\][^\[]*?^version = "([^"]+)"', _f.read(), _re.M)
    if _found is None:
        raise ImportError(f"no [workspace.package] version in {_CARGO_TOML}") from None
    __version__ = _found[1]
