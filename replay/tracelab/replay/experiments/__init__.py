"""Reproductions of the seed experiments in the embedded engine
(docs/reference/experiments.md): E-CHK-1..4, E-MTQ-4, E-THS-3.

Each `e_*` function runs the experiment at a given scale and returns an
`Outcome`: a table of measured vs published values and the spec's checks,
each marked held or not. `python -m tracelab.replay.experiments` writes the
report (REPORT.md beside this file is the checked-in one); the tests run
the same functions at a reduced scale.
"""

from .runs import EXPERIMENTS, Outcome  # noqa: F401
