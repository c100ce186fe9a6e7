"""`tracelab report`: static HTML with PNG plots (matplotlib, Agg) for analyzer profiles,
replay runs and sweeps. Entry point: tracelab.report.cli.main(argv)."""
