"""`tracelab profile` at scale: many rotated capture files as one capture,
and the profile run in parallel on a Dask cluster (issue #20)."""
