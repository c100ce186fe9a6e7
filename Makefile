# tracelab — the two commands of the README, and the parts' own targets.
#   make demo    set up, build, and run the demo on a bundled real trace
#   make test    set up (with the test oracles), build, run every test suite
# See docs/CONTRIBUTING.md for building and testing one part alone.

.PHONY: demo test lint setup build ns3 baselines bench bench-analyzer bench-cores bench-engine bench-scale mutants clean help

help:
	@sed -n '2,4p' Makefile

setup:
	bash scripts/setup.sh --no-build

build:
	bash scripts/setup.sh

demo: build
	.venv/bin/tracelab demo -o out/demo

test:
	bash scripts/setup.sh --test
	.venv/bin/python scripts/run-tests.py

# The cores as ns-3 queue discs: fetch the pinned ns-3 wheel from PyPI (once)
# and build the adapters and the same-decisions driver into
# build/ns3/ (click-elements/ns3/README.md).
ns3: setup
	bash click-elements/ns3/build.sh

# The style and structure gates alone (also part of make test).
lint: setup
	bash scripts/lint.sh

# Rewrite tests/baselines/ from the current outputs (review the diff, commit it).
baselines: build
	.venv/bin/python tests/golden.py --update

# Every performance figure beside its reference (floor, budget, real time)
# as a ratio; JSON with machine and commit in build/bench/ (scripts/bench.py).
bench: build
	.venv/bin/python scripts/bench.py

bench-analyzer: build
	.venv/bin/python scripts/bench.py --only analyzer

bench-cores: build
	.venv/bin/python scripts/bench.py --only cores

bench-engine: build
	.venv/bin/python scripts/bench.py --only engine

# The parallel profile's scaling (docs/scale.md): a 20 M-packet trace in
# rotated files, serially and on 1 and 2 local Dask workers
# (scripts/bench_scale.py --packets N for another size).
bench-scale: build
	.venv/bin/python scripts/bench_scale.py

# Mutation testing, outside the per-commit CI run (docs/mutants.md records the
# latest result): cargo-mutants over the flow tracker, every n-th mutant from
# the k-th (MUTANTS_SHARD=k/n; 0/1 for all ~1400), and scripts/mutate-cpp.py
# over the cores and the engine, bounded by count and time (MUTANTS_CPP; the
# full run: MUTANTS_SHARD=0/1 MUTANTS_CPP="--max 1000 --minutes 900"), its
# scratch builds kept in build/mutants/cpp-work for the next run. cargo-mutants
# copies analyzer/ into TMPDIR, where the crates' tests look for
# datasets/public beside the copy: hence the link. Reports in build/mutants/.
MUTANTS_SHARD ?= 0/8
MUTANTS_CPP ?= --max 60 --minutes 25
mutants: build
	bash scripts/setup.sh --no-build --mutants
	mkdir -p build/mutants/work
	ln -sfn ../../../datasets build/mutants/work/datasets
	-cd analyzer && TMPDIR=$(CURDIR)/build/mutants/work nice cargo mutants --package tracelab-flow \
	  --sharding round-robin --shard $(MUTANTS_SHARD) --jobs 1 --timeout 300 --output ../build/mutants/rust
	nice .venv/bin/python scripts/mutate-cpp.py $(MUTANTS_CPP) --workdir build/mutants/cpp-work \
	  --json build/mutants/cpp.json

clean:
	rm -rf build out analyzer/target
