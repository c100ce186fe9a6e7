"""Reproductions of the seed experiments (docs/reference/experiments.md):
open loop in the embedded engine (E-CHK-1..4, E-MTQ-4, E-THS-3) and closed
loop with real TCP in the ns-3 dumbbell (E-THS-4..7).

Each experiment's function runs it at a given scale and returns an
`Outcome`: a table of measured vs published values and the spec's checks,
each with its published value, tolerance and verdict. `registry.EXPERIMENTS`
lists them all; `tracelab experiments run` (cli.py) writes one result.json
per experiment and REPORT.md from them (REPORT.md beside this file is the
checked-in full run); the tests run the same functions at the quick scale.
"""
