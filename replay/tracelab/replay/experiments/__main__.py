"""python -m tracelab.replay.experiments: the same as `tracelab experiments`."""

import sys

from .cli import main

sys.exit(main())
