#!/usr/bin/env bash
# Create (or update) .venv with the project and its test tools, on a fresh machine.
# torch goes first and pinned: `pip install torch==2.13.0` takes the CPU wheel, an open range a multi-GB CUDA build.
# ".[test]" pulls in the models extra (torch, transformers, accelerate) and the other extras' packages the tests use;
# `pip install unqover` alone is the light core (datasets, measures, evaluate modules, reports; no torch).
# --with-browser also installs Debian's chromium, which the Space's browser test drives (Playwright's own browser
# download is not used); it needs root or sudo.
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet torch==2.13.0
.venv/bin/python -m pip install --quiet -e ".[test]"
if [ "${1:-}" = "--with-browser" ] && [ ! -x /usr/bin/chromium ]; then
    if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
        echo "setup_env.sh: install Debian's chromium (apt-get install chromium) as root for the browser test" >&2
        exit 1
    fi
    $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
