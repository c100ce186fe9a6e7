"""`tracelab report`: one self-contained HTML page with inline SVG figures (matplotlib,
Agg) for analyzer profiles, replay runs, sweeps and fidelity comparisons (docs/report.md).
Entry point: tracelab.report.cli.main(argv)."""
