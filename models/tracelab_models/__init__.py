"""tracelab models: host roles, fitted distributions and workload models from analyzer profiles."""

__version__ = "0.1.0"
