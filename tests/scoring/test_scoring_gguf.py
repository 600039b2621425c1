"""GGUF checkpoints: a file the tests write with the ``gguf`` package, read by transformers through unqover's
loader, scores exactly as the same model saved as a transformers folder; its identity is recorded; bad files
and ambiguous folders are refused in one line."""

from __future__ import annotations

import hashlib
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest

from unqover.errors import UnqoverError
from unqover.scoring.causal import CausalScorer
from unqover.scoring.gguf import gguf_record, readable_architectures
from unqover.scoring.models import load_model, model_source

pytest.importorskip("gguf", reason="the gguf package is in the models extra")


@pytest.fixture(scope="module")
def rows(religion_tables):
    return religion_tables["qa"].slice(0, 48)


def test_a_gguf_file_scores_as_the_same_model_in_a_transformers_folder(gguf_model, rows):
    from_gguf = load_model(str(gguf_model), device="cpu", dtype="float32")
    from_folder = load_model(str(gguf_model.parent / "hf"), device="cpu", dtype="float32")
    assert from_gguf.family == "causal" and from_gguf.tokenizer.chat_template
    ours, theirs = CausalScorer(from_gguf).score(rows), CausalScorer(from_folder).score(rows)
    assert np.array_equal(ours, theirs) and ours.shape == (48, 2) and (ours > 0).all()


def test_the_run_records_the_file_its_sha256_quantization_and_architecture(gguf_model):
    import gguf

    reader, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    loaded = load_model(str(gguf_model), device="cpu", dtype="float32")
    # the header is parsed once while the model loads (unqover.scoring.gguf.parsed_once), the package restored after
    assert (gguf.GGUFReader, gguf.get_tensor_name_map) == (reader, name_map)
    sha = hashlib.sha256(gguf_model.read_bytes()).hexdigest()
    assert loaded.gguf == {
        "file": gguf_model.name,
        "sha256": sha,
        "quantization": "F32",
        "architecture": "llama",
    }
    provenance = loaded.provenance()
    assert provenance["path"] == str(gguf_model.resolve()) and provenance["weights_sha256"] == sha
    assert provenance["gguf"] == loaded.gguf


def test_a_file_a_folder_of_one_file_and_gguf_file_name_the_same_model(gguf_model, tmp_path):
    folder = tmp_path / "one"
    folder.mkdir()
    shutil.copy(gguf_model, folder / gguf_model.name)
    by_file = model_source(str(folder / gguf_model.name))
    by_folder = model_source(str(folder))
    by_name = model_source(str(folder), gguf_file=gguf_model.name)
    assert by_file.gguf_file == by_folder.gguf_file == by_name.gguf_file == gguf_model.name
    assert by_file.path == by_folder.path == by_name.path == str((folder / gguf_model.name).resolve())
    # a transformers folder beside GGUF files stays a transformers folder unless --gguf-file chooses one
    assert model_source(str(gguf_model.parent / "hf")).gguf_file is None
    assert "llama" in readable_architectures() and "general" not in readable_architectures()


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (
            "two",
            r"holds 2 GGUF files \(a\.gguf, b\.gguf\) and no config\.json: choose one with --gguf-file NAME",
        ),
        ("missing", r"no GGUF file c\.gguf in the model folder .* \(it holds a\.gguf, b\.gguf\)"),
        ("bad-name", r"--gguf-file '\.\./a\.gguf' cannot be used: it names a \.gguf file inside"),
        (
            "file-and-name",
            r"--gguf-file names a file inside a model folder or Hub repo, and .* is a file already",
        ),
        (
            "not-gguf-file",
            r"is a file: a model is a folder \(config\.json, weights, tokenizer\), a GGUF file",
        ),
        ("nowhere", r"no GGUF file \./nowhere\.gguf \(it looks like a path"),
    ],
)
def test_ambiguous_or_missing_files_are_refused_in_one_line(
    gguf_model, tmp_path, monkeypatch, make, expected
):
    monkeypatch.chdir(tmp_path)
    for name in ("a.gguf", "b.gguf"):
        shutil.copy(gguf_model, tmp_path / name)
    (tmp_path / "weights.bin").write_bytes(b"x")
    call = {
        "two": lambda: model_source(str(tmp_path)),
        "missing": lambda: model_source(str(tmp_path), gguf_file="c.gguf"),
        "bad-name": lambda: model_source(str(tmp_path), gguf_file="../a.gguf"),
        "file-and-name": lambda: model_source(str(tmp_path / "a.gguf"), gguf_file="a.gguf"),
        "not-gguf-file": lambda: model_source(str(tmp_path / "weights.bin")),
        "nowhere": lambda: model_source("./nowhere.gguf"),
    }[make]
    with pytest.raises(UnqoverError, match=expected):
        call()


def write_gguf(path: Path, architecture: str, *, tokenizer: bool = True) -> Path:
    """A header-only GGUF of ``architecture`` (one tiny tensor), with or without a tokenizer."""
    import gguf

    writer = gguf.GGUFWriter(str(path), architecture)
    writer.add_block_count(1)
    writer.add_context_length(8)
    writer.add_embedding_length(4)
    writer.add_head_count(1)
    if tokenizer:
        writer.add_tokenizer_model("gpt2")
        writer.add_token_list(["a", "b"])
        writer.add_token_types([1, 1])
        writer.add_token_merges([])
    writer.add_tensor("token_embd.weight", np.zeros((2, 4), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        ("not-gguf", r"^cannot load the GGUF file x\.gguf: .*(magic|GGUF)"),
        ("cut-header", r"^cannot load the GGUF file x\.gguf: its header is cut short$"),
        (
            "cut-data",
            r"^cannot load the GGUF file x\.gguf: it is cut short \([\d,]+ bytes, its tensors need [\d,]+\); ",
        ),
        (
            "no-tokenizer",
            r"^cannot load the GGUF file x\.gguf: it holds no tokenizer \(no tokenizer\.ggml\.\* metadata\)",
        ),
        (
            "bert",
            r"^cannot load the GGUF file x\.gguf: .*bert.*; transformers reads GGUF files of these architectures: .*llama",
        ),
    ],
)
def test_bad_files_end_in_one_line(gguf_model, tmp_path, make, expected):
    path = tmp_path / "x.gguf"
    whole = gguf_model.read_bytes()
    if make == "not-gguf":
        path.write_bytes(b"PK\x03\x04" + whole[4:200])
    elif make == "cut-header":
        path.write_bytes(whole[:100])
    elif make == "cut-data":
        path.write_bytes(whole[: len(whole) - 1000])
    elif make == "no-tokenizer":
        write_gguf(path, "llama", tokenizer=False)
    else:
        write_gguf(path, make)
    with pytest.raises(UnqoverError, match=expected) as refused:
        load_model(str(path), device="cpu", dtype="float32")
    assert "\n" not in str(refused.value)


def test_the_header_is_read_without_the_tensor_data(gguf_model):
    """The record reads the header only: a file's tensor bytes changed in place keep its architecture and type
    but change its SHA-256 (the identity a run checks)."""
    record = gguf_record(gguf_model)
    assert record["architecture"] == "llama" and record["quantization"] == "F32"
    assert struct.unpack_from("<I", gguf_model.read_bytes(), 4)[0] == 3  # GGUF v3, as llama.cpp writes
