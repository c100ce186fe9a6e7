"""Replay: traffic through the queueing cores in the embedded engine.

`tracelab replay run` and `tracelab replay sweep` (tracelab.replay.cli) drive
the C++ engine (the `tracelab_engine` module, built from replay/engine).
Configuration (tracelab.replay.config) is a plain dict, the same one the
engine takes, so experiments can also call `tracelab_engine.run` directly.
"""
