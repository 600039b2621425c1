#!/usr/bin/env bash
# Create (or update) .venv with the project and its test tools, on a fresh machine.
# torch goes first and pinned: `pip install torch==2.13.0` takes the CPU wheel, an open range a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet torch==2.13.0
.venv/bin/python -m pip install --quiet -e ".[test]"
