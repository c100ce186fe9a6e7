# syntax=docker/dockerfile:1
# The tracelab image: the wheel of `pip install .` (pyproject.toml) in a virtualenv
# on a slim Debian, run as a non-root user; the demo as the default command.
#
#   docker build -t tracelab:0.1.0 .
#   docker run --rm tracelab:0.1.0                 # `tracelab demo` on the bundled trace
#   docker run --rm -v "$PWD:/data" -w /data --user "$(id -u):$(id -g)" tracelab:0.1.0 \
#       tracelab profile trace.pcap -o out          # on your own capture
#
# Every download is verified: base images by digest; Debian packages by apt's
# signatures; Python packages by the sha256 of docker/*.lock (--require-hashes);
# Rust crates by the checksums of analyzer/Cargo.lock (--locked). Both digests
# are multi-arch indexes (linux/amd64 among others); the Python hashes are of the
# x86_64 wheels, so the image builds for linux/amd64.

# --- build: the Rust toolchain of rust-toolchain.toml, on Debian 12 ------------
FROM rust:1.95.0-slim-bookworm@sha256:d7482085ff5b415f84dba5647ae71606650bdef00db7aeb69f4b3d170c3e4082 AS build
# The toolchain the image carries (rust-toolchain.toml's channel), without
# rustup downloading the rustfmt and clippy components that file lists for linting.
ENV RUSTUP_TOOLCHAIN=1.95.0
# Debian packages at the versions of the pinned base image's release, with its
# security updates: pinning each version would break when an update retires it.
# hadolint ignore=DL3008
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      python3 python3-venv python3-dev g++ cmake ninja-build pkg-config libpcap-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Dependency layers first, so a source change reinstalls neither: the build tools
# and the runtime packages (in the venv the runtime stage takes whole).
COPY docker/build.lock docker/runtime.lock docker/
RUN python3 -m venv /opt/build-tools \
 && /opt/build-tools/bin/pip install -q --no-cache-dir --require-hashes --no-deps -r docker/build.lock \
 && python3 -m venv /opt/tracelab \
 && /opt/tracelab/bin/pip install -q --no-cache-dir --require-hashes --no-deps -r docker/runtime.lock
COPY . .
# The wheel with the build tools above (no build isolation: no Python download
# here), then into the venv without dependencies (they are the locked ones).
# Cargo cannot fetch the crates without the crates' sources (a workspace needs
# its targets), so instead of a layer they live in cache mounts: the registry
# (downloads) and analyzer/target and build/ (compiled crates and C++ objects)
# survive from one build to the next.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/analyzer/target \
    --mount=type=cache,target=/src/build \
    /opt/build-tools/bin/pip wheel -q --no-cache-dir --no-build-isolation --no-deps -w /wheels . \
 && /opt/tracelab/bin/pip install -q --no-cache-dir --no-deps /wheels/tracelab-*.whl \
 && /opt/tracelab/bin/tracelab --version

# --- runtime: Debian 12, Python and libpcap, the venv, a non-root user ----------
FROM debian:12.12-slim@sha256:d5d3f9c23164ea16f31852f95bd5959aad1c5e854332fe00f7b3a20fcc9f635c
# hadolint ignore=DL3008
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      python3 libpcap0.8 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 --user-group tracelab
COPY --from=build /opt/tracelab /opt/tracelab
COPY datasets/real/pcapplusplus-example.pcap /opt/tracelab/share/tracelab/
ENV PATH=/opt/tracelab/bin:$PATH
# Numeric, so a runtime that forbids root (runAsNonRoot) can check it.
USER 10001:10001
WORKDIR /home/tracelab
CMD ["tracelab", "demo", "--trace", "/opt/tracelab/share/tracelab/pcapplusplus-example.pcap", "-o", "demo"]
