"""Validate before writing: what a run would refuse once scoring starts is refused before ``run.json`` (or any
file or folder of the run) exists, through the real command line (``unqover.cli.main``), offline, on tiny local
models. A chat template is rendered once on a real row (a syntax error, ``raise_exception``, a constant template
that ignores the messages, one the sandbox blocks), ``--model-arg`` values are checked by type, the longest inputs
(a causal LM's prompt with its answer; QA, masked-LM and NLI inputs) are checked against the model's positions and
adapters are loaded; each ends in exit code 2 and one error line,
with no run folder left, so that the corrected command into the same default folder runs right after. A run that
fails after it claimed its folder, before anything is scored, removes what it wrote. ``--allow-pickle`` allows
pickled weights and never forbids safetensors.

The catalogue's companions: ``tests/cli/test_cli_bad_inputs.py`` (every command), ``tests/scoring/test_scoring_causal_options.py`` (the
causal-LM options that work).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tiny_models
from tests.cli.test_cli_bad_data import files, refused
from unqover.cli import main
from unqover.errors import UnqoverError
from unqover.jobs.run import discarded_on_failure
from unqover.scoring.causal import INSTRUCTION
from unqover.scoring.sampling import select_groups

SYSTEM = "Answer fairly, without stereotypes."
FIX = "pass --chat-template none for plain prompts, or fix the template"


@pytest.fixture(scope="module")
def religion(religion_tables) -> pa.Table:
    return religion_tables["qa"]


@pytest.fixture(scope="module")
def first_row(religion) -> dict:
    """The first row a ``--limit 2`` run scores (the row a chat template is tried on)."""
    return select_groups(religion, limit=2, seed=0).slice(0, 1).to_pylist()[0]


@pytest.fixture(scope="module")
def models(tmp_path_factory, religion) -> dict[str, Path]:
    """A tiny GPT-2 (256 positions, no chat template), the same with a chat template of its own that raises, the
    same with pickled (.bin) weights only, and a QA model and a masked LM (256 positions each)."""
    texts = sorted(set(religion["context"].to_pylist()[:400]) | set(religion["question"].to_pylist()[:400]))
    root = tmp_path_factory.mktemp("start-models")
    gpt2 = tiny_models.causal_lm(root / "gpt2", texts, "gpt2")
    own = root / "own-template"
    shutil.copytree(gpt2, own)
    (own / "chat_template.jinja").write_text(
        "{{ raise_exception('Roles must alternate') }}", encoding="utf-8"
    )
    pickled = root / "pickled"
    import torch
    from safetensors.torch import load_file

    shutil.copytree(gpt2, pickled)
    torch.save(load_file(pickled / "model.safetensors"), pickled / "pytorch_model.bin")
    (pickled / "model.safetensors").unlink()
    assert (pickled / "pytorch_model.bin").is_file() and not (pickled / "model.safetensors").exists()
    pets = [*texts, "Tom Felix Rex Buddy They sat quietly in the warm sun."]
    qa, mlm = tiny_models.bert_qa(root / "qa", pets), tiny_models.bert_mlm(root / "mlm", pets)
    return {"gpt2": gpt2, "own-template": own, "pickled": pickled, "qa": qa, "mlm": mlm}


def probe_args(model: Path, lists: Path, *extra: str) -> list[str]:
    """A quick run into the default folder (runs/<model>/...) of the working directory."""
    return ["probe", str(model), "--bias", "religion", "--word-lists", str(lists), "--limit", "2",
            "--resamples", "0", "--quiet", "--device", "cpu", *extra]  # fmt: skip


def refused_exactly(argv: list[str], capsys, message: str, prefix: str = "unqover: error: ") -> None:
    """Exit code 2 and exactly the one error line ``prefix + message``."""
    line = refused(argv, capsys, message)
    assert line == prefix + message, line


def scores(folder: Path) -> np.ndarray:
    predictions = pq.read_table(folder / "predictions.parquet").sort_by("id")
    return np.stack([predictions["score_1"].to_numpy(), predictions["score_2"].to_numpy()], axis=1)


def only_run(cwd: Path) -> Path:
    """The one run folder under ``cwd/runs``."""
    (found,) = [p.parent for p in (cwd / "runs").rglob("run.json")]
    return found


# ---------------------------------------------------------------------------------------------------------------
# chat templates: rendered once on a real row before anything is written

TEMPLATES = {
    "syntax error": (
        "{% for m in messages %}{{ m.content }",
        (),
        f"the chat template cannot render the prompt: unexpected '}}'; {FIX}",
    ),
    "raise_exception": (
        "{{ raise_exception('Roles must alternate') }}",
        (),
        f"the chat template cannot render the prompt: Roles must alternate; {FIX}",
    ),
    "raise_exception on a system message": (
        "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
        "{% for m in messages %}{{ m.content }}{% endfor %}",
        ("--system-prompt", SYSTEM),
        f"the chat template cannot render a system message: System role not supported; {FIX}",
    ),
    "constant": (
        "Hello there",
        (),
        "the chat template ignores the messages: its prompt for a row lacks the context ('Hello there'); pass "
        "--chat-template none for plain prompts, or give a template that renders each message's content",
    ),
    "sandbox-blocked": (
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        (),
        f"the chat template cannot render the prompt: access to attribute '__class__' of 'str' object is unsafe; "
        f"{FIX}",
    ),
    "sandbox-blocked mutation": (
        "{% for m in messages %}{{ m.content }}{% endfor %}{{ messages.append(1) }}",
        (),
        f"the chat template cannot render the prompt: access to attribute 'append' of 'list' object is unsafe; {FIX}",
    ),
}


@pytest.mark.parametrize("case", list(TEMPLATES), ids=list(TEMPLATES))
def test_a_chat_template_that_cannot_be_used_is_refused_before_anything_is_written(
    case, models, upstream_word_lists_path, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    text, extra, message = TEMPLATES[case]
    template = tmp_path / "chat.jinja"
    template.write_text(text, encoding="utf-8")
    before = files(tmp_path)
    argv = probe_args(models["gpt2"], upstream_word_lists_path, "--chat-template", str(template), *extra)
    refused_exactly(argv, capsys, message)
    assert files(tmp_path) == before  # no runs/ folder, nothing at all


def test_a_template_that_drops_the_system_prompt_is_refused(
    models, upstream_word_lists_path, first_row, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    template = tmp_path / "users-only.jinja"
    template.write_text(
        "{% for m in messages if m.role == 'user' %}{{ m.content }}{% endfor %}", encoding="utf-8"
    )
    rendered = f"{first_row['context']}\n{first_row['question']} {INSTRUCTION}"
    message = (
        f"the chat template ignores the messages: its prompt for a row lacks the system prompt ({rendered[:40]!r}...); "
        "pass --chat-template none for plain prompts, or give a template that renders each message's content"
    )
    argv = probe_args(models["gpt2"], upstream_word_lists_path, "--chat-template", str(template))
    refused_exactly([*argv, "--system-prompt", SYSTEM], capsys, message)
    assert not (tmp_path / "runs").exists()
    # without a system prompt the same template shows every message: it runs
    assert main(argv) == 0, capsys.readouterr().err


def test_the_model_s_own_template_is_tried_too_and_the_plain_command_runs_right_after(
    models, upstream_word_lists_path, tmp_path, monkeypatch, capsys
):
    """``--chat-template auto`` with a tokenizer template that raises: refused before the default folder exists,
    so that the corrected command into that folder (``--chat-template none``) is not refused "holds another run"."""
    monkeypatch.chdir(tmp_path)
    argv = probe_args(models["own-template"], upstream_word_lists_path)
    refused_exactly(argv, capsys, f"the chat template cannot render the prompt: Roles must alternate; {FIX}")
    assert not (tmp_path / "runs").exists()
    assert main([*argv, "--chat-template", "none"]) == 0, capsys.readouterr().err
    assert (only_run(tmp_path) / "results.json").is_file()


def test_a_template_failing_on_a_later_row_leaves_no_folder_behind(
    models, upstream_word_lists_path, first_row, tmp_path, monkeypatch, capsys
):
    """The template renders the first row and fails on another one while scoring, after run.json was written:
    the folder that command created (and the runs/ folders above it) are removed, and the corrected command into
    the same default folder runs; an empty folder given as --output is kept, emptied."""
    monkeypatch.chdir(tmp_path)
    assert (
        "Jewish" not in first_row["context"]
    )  # the first row renders; a later row of the run names Jewish people
    template = tmp_path / "picky.jinja"
    template.write_text(
        "{% if 'Jewish' in messages[-1].content %}{{ raise_exception('no such row') }}{% endif %}"
        "{% for m in messages %}{{ m.content }}{% endfor %}",
        encoding="utf-8",
    )
    argv = probe_args(models["gpt2"], upstream_word_lists_path)
    refused_exactly([*argv, "--chat-template", str(template)], capsys, f"the chat template cannot render the prompt: no such row; {FIX}")  # fmt: skip
    assert not (tmp_path / "runs").exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    refused([*argv, "--chat-template", str(template), "--output", str(mine)], capsys, "no such row")
    assert mine.is_dir() and not any(mine.iterdir())
    assert main(argv) == 0, capsys.readouterr().err
    assert main([*argv, "--output", str(mine)]) == 0, capsys.readouterr().err
    assert np.array_equal(scores(only_run(tmp_path)), scores(mine))


def test_a_failed_start_keeps_scores_and_folders_it_did_not_create(tmp_path):
    """What :func:`discarded_on_failure` removes after a failure: only a folder the run created (or an empty one
    it found) holding no scores; a folder with scored chunks stays for the resume, and so does one with files
    it found there."""

    def fail_in(folder: Path, write: list[str], alone: bool = True) -> None:
        with pytest.raises(RuntimeError), discarded_on_failure(folder, alone=alone):
            for name in write:
                (folder / name).parent.mkdir(parents=True, exist_ok=True)
                (folder / name).write_text("{}")
            raise RuntimeError("failed")

    new = tmp_path / "runs" / "model" / "run"
    fail_in(new, ["run.json", "shards/0-of-1/plan.json"])
    assert not (tmp_path / "runs").exists()
    fail_in(new, ["run.json", "shards/0-of-1/chunk-000000.parquet"])
    assert (new / "shards" / "0-of-1" / "chunk-000000.parquet").is_file()  # scores are kept for the resume
    shutil.rmtree(tmp_path / "runs")
    fail_in(new, ["run.json"], alone=False)  # one shard of several: the folder is shared
    assert (new / "run.json").is_file()
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine")
    fail_in(theirs, ["run.json"])
    assert sorted(p.name for p in theirs.iterdir()) == ["notes.txt", "run.json"]


# ---------------------------------------------------------------------------------------------------------------
# model arguments, checked by type before the weights load


MODEL_ARGS = {
    "NaN": (
        ("--model-arg", "low_cpu_mem_usage=NaN"),
        "argument --model-arg: low_cpu_mem_usage=NaN: NaN is not a finite number, and run.json records every "
        "value; give a number, true, false or text",
    ),
    "infinity in an object": (
        ("--model-arg", 'quantization_config={"llm_int8_threshold": 1e999}'),
        'argument --model-arg: quantization_config={"llm_int8_threshold": 1e999}: Infinity is not a finite '
        "number, and run.json records every value; give a number, true, false or text",
    ),
    "text for a config whole number": (
        ("--model-arg", "n_layer=abc"),
        "--model-arg n_layer=abc cannot be used: Field 'n_layer' expected int, got str (value: 'abc')",
    ),
    "a switch for a config whole number": (
        ("--model-arg", "n_layer=true"),
        "--model-arg n_layer=true cannot be used: Field 'n_layer' expected int, got bool (value: True)",
    ),
    "a switch that makes from_pretrained give no model": (
        ("--model-arg", "output_loading_info=true"),
        "--model-arg output_loading_info=true cannot be used: from_pretrained then gives a tuple, not a model",
    ),
    "text for a switch": (
        ("--model-arg", "ignore_mismatched_sizes=abc"),
        "--model-arg ignore_mismatched_sizes=abc cannot be used: ignore_mismatched_sizes takes true or false",
    ),
}


@pytest.mark.parametrize("case", list(MODEL_ARGS), ids=list(MODEL_ARGS))
def test_a_model_arg_of_the_wrong_type_is_refused_before_anything_is_written(
    case, models, upstream_word_lists_path, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    extra, message = MODEL_ARGS[case]
    if message.startswith("argument "):  # the parser's refusal names the command's help
        message += " (see unqover probe --help)"
    refused_exactly(probe_args(models["gpt2"], upstream_word_lists_path, *extra), capsys, message)
    assert not any(tmp_path.iterdir())


# ---------------------------------------------------------------------------------------------------------------
# the longest prompt against the model's positions


def test_a_system_prompt_longer_than_the_model_s_positions_is_refused_and_a_shorter_one_runs(
    models, upstream_word_lists_path, tmp_path, monkeypatch, capsys
):
    from transformers import AutoTokenizer

    monkeypatch.chdir(tmp_path)
    long = " ".join([SYSTEM] * 40)
    tokens = len(AutoTokenizer.from_pretrained(models["gpt2"])(long, add_special_tokens=False)["input_ids"])
    assert tokens > 256
    argv = probe_args(models["gpt2"], upstream_word_lists_path)
    line = refused([*argv, "--system-prompt", long], capsys, "the longest prompt with its answer is ")
    expected = (
        r"unqover: error: the longest prompt with its answer is ([\d,]+) tokens, more than the 256 positions of "
        rf"{re.escape(str(models['gpt2']))}; shorten --system-prompt \(it is {tokens:,} tokens\)"
    )
    match = re.fullmatch(expected, line)
    assert match and int(match[1].replace(",", "")) > tokens, line
    assert not (tmp_path / "runs").exists()
    assert main([*argv, "--system-prompt", SYSTEM]) == 0, capsys.readouterr().err
    assert json.loads((only_run(tmp_path) / "run.json").read_text())["prompt"]["system_prompt"] == SYSTEM


# ---------------------------------------------------------------------------------------------------------------
# adapters are loaded before anything is written; --allow-pickle allows pickle and never forbids safetensors


@pytest.fixture(scope="module")
def adapters(models, tmp_path_factory) -> dict[str, Path]:
    """A LoRA adapter of the tiny GPT-2 as safetensors, the same weights pickled (.bin), and one whose target
    modules the model lacks."""
    pytest.importorskip("peft")
    import torch
    from safetensors.torch import load_file

    from tests.scoring.test_scoring_causal_options import make_lora

    root = tmp_path_factory.mktemp("start-adapters")
    safe = make_lora(models["gpt2"], root / "lora")
    pickled = root / "lora-bin"
    pickled.mkdir()
    shutil.copy(safe / "adapter_config.json", pickled)
    torch.save(load_file(safe / "adapter_model.safetensors"), pickled / "adapter_model.bin")
    elsewhere = root / "lora-elsewhere"
    shutil.copytree(safe, elsewhere)
    config = json.loads((elsewhere / "adapter_config.json").read_text())
    (elsewhere / "adapter_config.json").write_text(json.dumps({**config, "target_modules": ["q_proj"]}))
    return {"safe": safe, "pickled": pickled, "elsewhere": elsewhere}


def test_an_adapter_that_does_not_fit_is_refused_before_anything_is_written(
    models, adapters, upstream_word_lists_path, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    argv = probe_args(models["gpt2"], upstream_word_lists_path, "--adapter", str(adapters["elsewhere"]))
    line = refused(argv, capsys, "does not fit")
    start = (
        f"unqover: error: the adapter {adapters['elsewhere']} does not fit {models['gpt2']}: it was made for "
        f"{str(models['gpt2'])!r} (its base_model_name_or_path); "
    )
    assert line.startswith(start) and "q_proj" in line, line
    assert not any(tmp_path.iterdir())


def test_allow_pickle_loads_a_safetensors_model_with_a_pickled_adapter(
    models, adapters, upstream_word_lists_path, tmp_path, capsys
):
    """The route the --adapter refusal recommends for a .bin adapter: with --allow-pickle the safetensors model
    still loads, and the pickled adapter gives the scores of the same adapter as safetensors."""
    lists = upstream_word_lists_path
    argv = probe_args(models["gpt2"], lists, "--adapter", str(adapters["pickled"]))
    refused(
        [*argv, "--output", str(tmp_path / "no")], capsys, "pass --allow-pickle to trust adapter_model.bin"
    )
    assert main([*argv, "--allow-pickle", "--output", str(tmp_path / "bin")]) == 0, capsys.readouterr().err
    safe = probe_args(
        models["gpt2"], lists, "--adapter", str(adapters["safe"]), "--output", str(tmp_path / "safe")
    )
    assert main(safe) == 0, capsys.readouterr().err
    assert np.allclose(scores(tmp_path / "bin"), scores(tmp_path / "safe"), rtol=1e-5, atol=0)
    plain = probe_args(models["gpt2"], lists, "--allow-pickle", "--output", str(tmp_path / "plain"))
    assert main(plain) == 0, capsys.readouterr().err  # no adapter: the safetensors model alone
    recorded = json.loads((tmp_path / "bin" / "run.json").read_text())["model"]["adapter"]
    assert recorded["id"] == str(adapters["pickled"])


def test_allow_pickle_loads_pickled_model_weights_and_they_score_as_the_safetensors_ones(
    models, upstream_word_lists_path, tmp_path, capsys
):
    lists = upstream_word_lists_path
    argv = probe_args(models["pickled"], lists, "--output", str(tmp_path / "bin"))
    refused(argv, capsys, "only safetensors weights are loaded; pass --allow-pickle to trust .bin files")
    assert not (tmp_path / "bin").exists()
    assert main([*argv, "--allow-pickle"]) == 0, capsys.readouterr().err
    assert main(probe_args(models["gpt2"], lists, "--output", str(tmp_path / "safe"))) == 0
    assert np.allclose(scores(tmp_path / "bin"), scores(tmp_path / "safe"), rtol=1e-6, atol=0)


def test_a_template_that_writes_the_messages_as_json_or_escaped_is_used(
    models, upstream_word_lists_path, tmp_path, capsys
):
    """Not a false refusal: a template may write the content through ``tojson`` or ``escape``."""
    for name, text in {"json": "{{ messages | map(attribute='content') | list | tojson }}",
                       "escaped": "{% for m in messages %}{{ m.content | e }}{% endfor %}"}.items():  # fmt: skip
        template = tmp_path / f"{name}.jinja"
        template.write_text(text, encoding="utf-8")
        argv = probe_args(models["gpt2"], upstream_word_lists_path, "--chat-template", str(template))
        assert main([*argv, "--system-prompt", SYSTEM, "--output", str(tmp_path / name)]) == 0, (
            capsys.readouterr().err
        )


LONG_PETS = """\
name: longpets
subjects:
  cats: [Tom, Felix]
  dogs: [Rex, Buddy]
attributes:
  - {positive: was very lazy, negated: was never lazy}
templates:
  - {context: "{subject_1} sat next to {subject_2} on the porch. LONG", question: "Who {attribute}?"}
"""


def test_a_chat_template_or_rows_too_long_for_the_model_are_refused_before_anything_is_written(
    models, upstream_word_lists_path, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    template = tmp_path / "long.jinja"
    template.write_text("{% for i in range(40) %}{{ messages[-1].content }}{% endfor %}", encoding="utf-8")
    start = r"unqover: error: the longest prompt with its answer is [\d,]+ tokens, more than the 256 positions of "
    start += re.escape(str(models["gpt2"]))
    argv = probe_args(models["gpt2"], upstream_word_lists_path, "--chat-template", str(template))
    line = refused(argv, capsys, "the longest prompt with its answer is ")
    advice = "pass --chat-template none for shorter plain prompts, or use a model with more positions"
    assert re.fullmatch(f"{start}; {re.escape(advice)}", line), line
    pets = tmp_path / "longpets.yaml"
    pets.write_text(
        LONG_PETS.replace("LONG", " ".join(["They sat quietly in the warm sun."] * 60)), encoding="utf-8"
    )
    argv = [
        "probe",
        str(models["gpt2"]),
        "--probe",
        str(pets),
        "--resamples",
        "0",
        "--quiet",
        "--device",
        "cpu",
    ]
    line = refused(argv, capsys, "the longest prompt with its answer is ")
    advice = "the rows are too long for this model: use one with more positions"
    assert re.fullmatch(f"{start}; {re.escape(advice)}", line), line
    for family in ("qa", "mlm"):  # an extractive QA model's inputs and a masked LM's are checked too
        argv[1] = str(models[family])
        line = refused(argv, capsys, "an input is ")
        expected = rf"unqover: error: an input is \d+ tokens, more than the model's 256; {re.escape(advice)}"
        assert re.fullmatch(expected, line), line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.jinja", "longpets.yaml"]


def test_nli_pairs_longer_than_the_model_s_positions_are_found_before_scoring(tmp_path):
    """The NLI probe's rows scorer checks its longest pairs (the check a run makes before writing anything)."""
    from unqover.probes.nli_rows import NLIRowScorer
    from unqover.scoring.nli import NLIScorer, load_nli_model

    long = " ".join(["The nurse talked with the engineer for a long while."] * 40)
    folder = tiny_models.bert_nli(
        tmp_path / "nli",
        [long, "a woman is a nurse", "a man is a nurse"],
        ["entailment", "neutral", "contradiction"],
    )
    scorer = NLIRowScorer(NLIScorer(load_nli_model(str(folder), device="cpu")))
    rows = pa.table(
        {
            "premise": ["The nurse talked with the engineer.", long],
            "hypothesis_female": ["a woman is a nurse"] * 2,
            "hypothesis_male": ["a man is a nurse"] * 2,
        }
    )
    scorer.check_rows(rows.slice(0, 1))  # short pairs pass
    with pytest.raises(UnqoverError) as refused_pair:
        scorer.check_rows(rows)
    assert re.fullmatch(
        r"a pair is \d+ tokens, more than the model's 256; the rows are too long for this model: use one with "
        r"more positions",
        str(refused_pair.value),
    ), refused_pair.value


@pytest.mark.slow
def test_python_m_unqover_is_the_command_line(tmp_path):
    import os
    import subprocess
    import sys

    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    argv = [sys.executable, "-m", "unqover", "probe", "./nope", "--bias", "religion"]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "unqover: error: no model folder ./nope (it looks like a path, not a Hub id OWNER/NAME)"
    ], done.stderr
