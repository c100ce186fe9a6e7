"""tracelab: traffic trace analysis and replay.

The `tracelab` command (tracelab.cli) is the one front door; each subcommand
is a thin adapter over the part that does the work (the Rust analyzer, the
models package, the replay engine).
"""

__version__ = "0.1.0"
