# The tracelab lab image: every part built, `tracelab` on PATH, the demo as the
# default command. Built with the same scripts/setup.sh as the README's commands.
#
#   docker build -t tracelab .
#   docker run --rm tracelab                      # runs `tracelab demo`
#   docker run --rm -v $PWD:/data tracelab tracelab profile /data/trace.pcap -o /data/out

# --- build: the Rust toolchain pinned in rust-toolchain.toml, on Debian 12 ---
FROM rust:1.95.0-slim-bookworm AS build
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      python3 python3-venv python3-dev git \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/tracelab
COPY . .
# setup.sh installs the Debian build packages, the pinned Python packages into
# .venv, and builds the analyzer, the cores and the replay engine.
RUN PYTHON=python3 bash scripts/setup.sh \
 && rm -rf analyzer/target/release/build analyzer/target/release/deps analyzer/target/release/incremental \
 && rm -rf build/click-elements

# --- runtime: Debian 12 with the runtime libraries only ---
FROM debian:12.12-slim
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      python3 libpcap0.8 libstdc++6 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/tracelab /opt/tracelab
ENV PATH=/opt/tracelab/.venv/bin:$PATH
WORKDIR /opt/tracelab
CMD ["tracelab", "demo", "-o", "/tmp/demo"]
