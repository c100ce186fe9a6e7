"""TRex profiles from workload models (STL per class, ASTF per scope), checked with the
real TRex client in its own interpreter, and run against a lab's TRex server.
Entry point: tracelab.trex.cli.main(argv)."""
