"""Cases found by a hostile re-run of issue 29 through the real command line, offline, on tiny local models:

* measuring with ``--drop-incomplete`` predictions in which no group is complete is refused in one line that says
  so (not "none of the dataset's groups was scored", which contradicts the scores given);
* a ``--model-arg`` that the model loads with but cannot run (``n_layer=-1``: the first forward pass fails) is
  refused in one line naming it, before anything is written;
* a run of a Hub model (here from the Hub cache, offline) records the commit it measured as the model's revision;
* lm-eval samples of a base with a PEFT adapter (``peft=someone/lora``: no base model recorded for the adapter)
  published on the adapter's repo are refused naming why, not with the advice to publish on that very repo;
* a run of several probes checks every probe's start (its chat template on its rows) before the first run is
  written;
* ``lm_eval --apply_chat_template`` with a model that has no chat template ends in one line, not a traceback
  through the prompt hook.

Companions: ``tests/cli/test_cli_bad_inputs.py`` (every command), ``tests/jobs/test_run_validates_before_writing.py`` (what is refused
before ``run.json`` exists).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.cli.test_cli_bad_data import data, files, refused, religion_measure  # noqa: F401 (fixtures)
from tests.jobs.test_publish_results_provenance import BASE, _about, _measured, _publish
from tests.jobs.test_run_validates_before_writing import models, probe_args, religion  # noqa: F401 (fixtures)
from unqover.cli import main

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_drop_incomplete_with_no_complete_group_says_so(data, tmp_path, capsys):  # noqa: F811
    """Two rows of each sampled group (half of each group) are scored: ``--drop-incomplete`` leaves nothing, and
    the error says that no scored group is complete, not that nothing was scored."""
    bare = pq.read_table(data["root"] / "bare.parquet")
    rows = pq.read_table(data["religion"] / "data" / "qa", columns=["id", "subject_1", "subject_2", "template_id",
                                                                   "attribute", "polarity"])  # fmt: skip
    chosen = rows.filter(pa.compute.is_in(rows["id"], value_set=bare["id"])).to_pylist()
    seen: dict[tuple, int] = {}
    keep = []
    for row in chosen:  # the first two rows of each group (its key: the unordered pair, template, attribute)
        key = (frozenset((row["subject_1"], row["subject_2"])), row["template_id"], row["attribute"])
        seen[key] = seen.get(key, 0) + 1
        if seen[key] <= 2:
            keep.append(row["id"])
    half = bare.filter(pa.compute.is_in(bare["id"], value_set=pa.array(keep)))
    pq.write_table(half, tmp_path / "half.parquet")
    before = files(tmp_path)
    line = refused(
        religion_measure(data, tmp_path / "half.parquet", "--bias", "religion", "--drop-incomplete"),
        capsys,
        f"none of the {len(seen)} groups scored is complete (each needs all four rows: both subject orders x both "
        "polarities), so dropping the incomplete ones leaves nothing to measure",
    )
    assert "none of the dataset's groups was scored" not in line
    assert files(tmp_path) == before


def test_a_model_arg_the_model_cannot_run_with_is_refused(
    models,  # noqa: F811
    upstream_word_lists_path,
    tmp_path,
    monkeypatch,
    capsys,
):
    """``n_layer=-1`` loads (transformers accepts it) but the model's first forward pass fails inside torch: one
    line naming the argument, no traceback, no run folder."""
    monkeypatch.chdir(tmp_path)
    refused(
        probe_args(models["gpt2"], upstream_word_lists_path, "--model-arg", "n_layer=-1"),
        capsys,
        "--model-arg n_layer=-1 cannot be used: ",
    )
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_a_hub_model_run_records_the_commit_it_measured(models, upstream_word_lists_path, tmp_path):  # noqa: F811
    """A Hub id loaded from the Hub cache (offline): transformers reports no commit, and the run records the
    snapshot's commit as the model's revision (its identity is the Hub id + revision)."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hf" / "hub" / "models--me--base"
    shutil.copytree(models["gpt2"], repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": str(REPO_ROOT / "src")}  # fmt: skip
    env.pop("HF_HUB_CACHE", None)
    argv = probe_args(Path("me/base"), upstream_word_lists_path, "--output", str(tmp_path / "run"))
    done = subprocess.run(
        [sys.executable, "-m", "unqover", *argv], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    model = json.loads((tmp_path / "run" / "results.json").read_text())["provenance"]["model"]
    assert model["id"] == "me/base" and model["revision"] == commit


def test_lm_eval_samples_of_a_base_with_peft_are_not_published_on_the_adapter_s_repo(data, tmp_path, capsys):  # noqa: F811
    """lm-eval's ``peft=someone/lora`` names the adapter but not the base it was made for: the run cannot be tied
    to the adapter's repo, and the refusal says so (not "they go only on the adapter's own Hub repo")."""
    adapter = {"id": "someone/lora", "revision": None, "lm_eval_argument": "peft"}
    lm_eval = {"model": "hf", "model_args": {"pretrained": "me/base", "peft": "someone/lora"}}
    about = _about(data["religion"], {**BASE, "adapter": adapter}, lm_eval=lm_eval)
    measured = _measured(tmp_path, data["religion"], about, 60)
    refused(
        _publish(measured, "someone/lora", tmp_path / "o"),
        capsys,
        f"{measured} was measured on me/base with the adapter someone/lora, but records no base model the adapter "
        "was made for (lm-eval's model arguments do not name it), so it cannot be tied to someone/lora; probe it "
        "with `unqover probe me/base --adapter someone/lora`, which records it",
    )
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_a_later_probe_s_chat_template_failure_leaves_no_earlier_run(
    models,  # noqa: F811
    upstream_word_lists_path,
    tmp_path,
    monkeypatch,
    capsys,
):
    """``--bias religion,ethnicity`` with a template that renders the religion rows and fails on the ethnicity
    rows: refused before the religion run is written, so that the corrected command runs right after (it was
    refused as "holds another run (it differs in prompt)")."""
    monkeypatch.chdir(tmp_path)
    religions = [
        "Christian",
        "Hindu",
        "Muslim",
        "Buddhist",
        "Sikh",
        "Mormon",
        "Protestant",
        "Orthodox",
        "Catholic",
    ]
    tests = " or ".join(f"'{name}' in m.content" for name in religions)
    template = tmp_path / "religion-only.jinja"
    template.write_text(
        "{% for m in messages %}{% if not (" + tests + ") %}{{ raise_exception('not a religion row') }}"
        "{% endif %}{{ m.content }}{% endfor %}",
        encoding="utf-8",
    )
    argv = ["probe", str(models["gpt2"]), "--bias", "religion,ethnicity", "--word-lists",
            str(upstream_word_lists_path), "--limit", "2", "--resamples", "0", "--quiet", "--device", "cpu"]  # fmt: skip
    refused(
        [*argv, "--chat-template", str(template)],
        capsys,
        "the chat template cannot render the prompt: not a religion row; pass --chat-template none for plain "
        "prompts, or fix the template",
    )
    assert not (tmp_path / "runs").exists()
    assert main([*argv, "--chat-template", "none"]) == 0


def test_lm_eval_apply_chat_template_on_a_model_without_one_is_one_line(capsys):
    """``lm_eval --apply_chat_template`` with a model that has no chat template: lm-eval's renderer raises inside
    our prompt hook; it ends as one ``unqover: error:`` line and exit status 2, not a traceback."""
    pytest.importorskip("lm_eval", reason="lm-eval is in the test extras")
    from unqover.jobs.lm_eval_hooks import UnqoverTask

    def render(messages):
        raise ValueError(
            "Cannot use chat template functions because tokenizer.chat_template is not set and no template "
            "argument was passed! For information about writing templates, see the documentation."
        )

    task = SimpleNamespace(config=SimpleNamespace(task="unqover_religion"))
    doc = {"context": "c", "question": "q"}
    with pytest.raises(SystemExit) as exit:
        UnqoverTask.fewshot_context(task, doc, num_fewshot=0, apply_chat_template=True, chat_template=render)
    assert exit.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        "unqover: error: the chat template cannot render the prompt: Cannot use chat template functions because "
        "tokenizer.chat_template is not set and no template argument was passed; leave out --apply_chat_template "
        "for plain prompts, or give the model a chat template that renders"
    ]
    # without --apply_chat_template the plain prompt is built as before
    assert UnqoverTask.fewshot_context(task, doc, num_fewshot=0, chat_template=render).startswith(
        "c\nQuestion: q"
    )
