#!/bin/sh
# Create build/trex-venv: Python 3.11 + the pinned TRex client API (lbr-trex-client).
#   replay/trex-env/setup.sh            # from anywhere; PYTHON=python3.11 to choose the interpreter
# The tests and `tracelab replay trex` find it at build/trex-venv (or $TRACELAB_TREX_PYTHON).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
venv="$root/build/trex-venv"
python=${PYTHON:-python3.11}
"$python" -c 'import sys; assert sys.version_info[:2] == (3, 11), "lbr-trex-client is used with Python 3.11, got " + sys.version' 
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --require-hashes --no-deps -r "$here/requirements.txt"
# Importing the package puts TRex's interactive/ and external_libs on sys.path.
"$venv/bin/python" -c 'import lbr_trex_client; from trex.stl.api import STLProfile; from trex.astf.api import ASTFProfile'
echo "TRex client ready: $venv/bin/python"
