"""A GGUF checkpoint through lm-evaluation-harness: ``lm_eval --model hf --model_args
pretrained=FOLDER,gguf_file=NAME --apply_chat_template`` on ``unqover lm-eval-tasks``' religion sample, then
``unqover measure`` on its logged samples, names the model ``unqover probe FILE.gguf`` names (the file's path and
its SHA-256, quantization and architecture) and gives the same log S per row and the same δ and ε within 1e-4
(μ and η, which need 1,375 groups, are declined by both at this sample's size).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from tests.lm_eval.test_lm_eval_tasks import HEADLINE, lm_eval, samples_file
from unqover.cli import main
from unqover.predictions import read_lm_eval_samples, read_predictions
from unqover.probes.result_identity import lm_eval_arguments

pytest.importorskip("lm_eval", reason="lm-eval is in the test extras")
pytest.importorskip("gguf", reason="the gguf package is in the models extra")

#: a sample lm-eval scores in well under a minute on the CPU: δ and ε are estimated; μ and η need 1,375 groups (about three
#: minutes of lm-eval here) and are declined, by both routes alike
GROUPS, SEED = 200, 3


@pytest.fixture(scope="module")
def religion(built_datasets) -> Path:
    """The session's religion dataset folder (qa), read-only."""
    return built_datasets["religion"]


@pytest.mark.lm_eval
def test_lm_eval_on_a_gguf_file_names_the_same_model_and_gives_the_probe_s_numbers(
    gguf_model, religion, tmp_path, capsys
):
    run = tmp_path / "run"
    argv = ["probe", str(gguf_model), "--bias", "religion", "--dataset", str(religion), "--device", "cpu"]
    assert main([*argv, "--limit", str(GROUPS), "--seed", str(SEED), "--output", str(run), "--quiet"]) == 0

    tasks = tmp_path / "tasks"
    argv = ["lm-eval-tasks", "--bias", "religion", "--dataset", str(religion), "--groups", str(GROUPS)]
    assert main([*argv, "--seed", str(SEED), "--output", str(tasks)]) == 0
    capsys.readouterr()
    name = "unqover_religion_sample"
    # the folder holds the GGUF file (and the transformers twin in hf/, but no config.json of its own)
    model = f"{gguf_model.parent},gguf_file={gguf_model.name}"
    lm_eval(tasks, model, name, tmp_path / "out", "--apply_chat_template")
    samples = samples_file(tmp_path / "out")
    measured = tmp_path / "measured.json"
    assert main(["measure", str(samples), "--output", str(measured)]) == 0

    # the same rows and the same log S for each
    ours = read_predictions(run / "predictions.parquet")[0].sort_by("id")
    theirs, provenance = read_lm_eval_samples(samples)
    theirs = theirs.sort_by("id")
    assert ours["id"].equals(theirs["id"]) and ours.num_rows == 4 * GROUPS
    for column in ("score_1", "score_2"):
        gap = np.abs(np.log(ours[column].to_numpy()) - np.log(theirs[column].to_numpy()))
        assert gap.max() <= 1e-4, column
    assert provenance["selection"] == {
        "design": "stratified-prn-v1",
        "seed": SEED,
        "groups": GROUPS,
        "of": 38500,
    }

    # the same numbers: δ, ε and their intervals within 1e-4; μ and η declined by both
    probed = json.loads((run / "results.json").read_text())
    again = json.loads(measured.read_text())
    assert_same_numbers(probed["result"], again["result"])

    # the same model: the GGUF file's path and record, as unqover probe records them
    record = {
        "file": gguf_model.name,
        "sha256": hashlib.sha256(gguf_model.read_bytes()).hexdigest(),
        "quantization": "F32",
        "architecture": "llama",
    }
    theirs_model, ours_model = again["provenance"]["model"], probed["provenance"]["model"]
    assert ours_model["gguf"] == theirs_model["gguf"] == record
    assert ours_model["path"] == theirs_model["path"] == str(gguf_model.resolve())
    assert ours_model["weights_sha256"] == theirs_model["weights_sha256"] == record["sha256"]
    assert theirs_model["lm_eval_model"] == "hf"
    assert lm_eval_arguments(theirs_model["lm_eval_model_args"]) == {
        "pretrained": str(gguf_model.parent),
        "gguf_file": gguf_model.name,
        "dtype": "float32",
    }


def assert_same_numbers(probed: dict, measured: dict) -> None:
    """δ and ε (finite) and their interval bounds within 1e-4; μ and η within 1e-4 where the sample gives them,
    else missing in both (``tests.lm_eval.test_lm_eval_tasks.assert_same_numbers`` wants all four finite)."""
    for name in HEADLINE.values():
        if name in ("mu", "eta") and GROUPS < 1375:
            assert probed[name] is None and measured[name] is None, name
            continue
        assert np.isfinite([probed[name], *probed["intervals"][name]]).all(), name
        assert abs(measured[name] - probed[name]) <= 1e-4, name
        assert np.abs(np.subtract(measured["intervals"][name], probed["intervals"][name])).max() <= 1e-4, name
