"""Bad data, each through the real command line (``unqover.cli.main``), offline: predictions, dataset folders, word
lists, probe files, vector files and results that are wrong in a way a reader would not see. Each ends in exit
code 2 and one clear error line naming what is wrong (before any model loads, where it can be checked), or is read
the one right way; beside each refusal, the good input it must not catch.

The catalogue of bad options, outputs and models is ``tests/cli/test_cli_bad_inputs.py``.
"""

from __future__ import annotations

import json
import shutil
import unicodedata
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from unqover.cli import main
from unqover.errors import UnqoverError

ERROR_LINE = r"^unqover: error: "
ZOE_NFC = unicodedata.normalize("NFC", "Zoë")
ZOE_NFD = unicodedata.normalize("NFD", "Zoë")


def refused(argv: list[str], capsys, message: str) -> str:
    """Run the command line: exit code 2, exactly one error line holding ``message``, no traceback."""
    import re

    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as exit:  # argparse
        code = exit.code
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if re.match(ERROR_LINE, line)]
    assert code == 2, err
    assert len(errors) == 1 and message in errors[0], err
    assert "Traceback" not in err and not any(line.startswith("usage:") for line in err.splitlines()), err
    return errors[0]


def files(*roots: Path) -> set[Path]:
    return {p for root in roots for p in root.rglob("*")}


@pytest.fixture(scope="module")
def data(built_datasets) -> dict[str, Path]:
    """Built dataset folders (religion qa, NLI synthetic, EEC) and a scored sample of the religion rows
    (``root / "bare.parquet"``, no provenance): the session's, read-only."""
    return built_datasets


def religion_measure(data: dict, predictions: Path, *extra: str) -> list[str]:
    return ["measure", str(predictions), "--dataset", str(data["religion"]), "--config", "qa", "--resamples", "5",
            *extra]  # fmt: skip


def no_model(monkeypatch) -> None:
    """Loading a model is an error here: what is refused must be refused before (by any engine)."""
    from unqover.scoring.engines import ENGINES, engine_named

    def load(self, *args, **kwargs):
        raise UnqoverError("a model was loaded")

    for name in ENGINES:
        monkeypatch.setattr(type(engine_named(name)), "load", load)


# --------------------------------------------------------------------------------------------------- 1. ids


def test_an_integer_id_column_is_refused_with_its_name_and_type(data, tmp_path, capsys):
    """Row ids are the dataset's 16-hex-digit strings: integers (positions? hashes without leading zeros?) name no
    row unambiguously, so they are refused, not cast."""
    bare = pq.read_table(data["root"] / "bare.parquet")
    numbered = bare.set_column(0, "id", pa.array(np.arange(bare.num_rows), pa.int64()))
    pq.write_table(numbered, tmp_path / "int.parquet")
    line = refused(
        religion_measure(data, tmp_path / "int.parquet", "--bias", "religion"),
        capsys,
        "the column 'id' holds int64",
    )
    assert "expected text" in line and str(tmp_path / "int.parquet") in line
    assert not list(tmp_path.glob("*.json"))
    # the same scores with the ids as text are measured (large strings and integer scores are read too)
    text = bare.cast(
        pa.schema([("id", pa.large_string()), ("score_1", pa.float64()), ("score_2", pa.float64())])
    )
    pq.write_table(text, tmp_path / "text.parquet")
    out = tmp_path / "text.json"
    assert (
        main(religion_measure(data, tmp_path / "text.parquet", "--bias", "religion", "--output", str(out)))
        == 0
    )


# ------------------------------------------------------------------------------- 2. a truncated dataset file


def _truncated(data: dict, tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "religion"
    shutil.copytree(data["religion"], folder)
    parquet = next((folder / "data" / "qa").glob("*.parquet"))
    parquet.write_bytes(parquet.read_bytes()[: parquet.stat().st_size // 2])
    return folder, parquet


def test_a_truncated_dataset_file_is_named_before_the_model_loads(data, tmp_path, monkeypatch, capsys):
    folder, parquet = _truncated(data, tmp_path)
    no_model(monkeypatch)
    before = files(tmp_path)
    for config in ([], ["--config", "qa"]):
        argv = ["probe", "some-model", "--bias", "religion", "--dataset", str(folder), *config]
        line = refused([*argv, "--output", str(tmp_path / "run"), "--quiet"], capsys, str(parquet))
        assert "not a readable Parquet file" in line and "truncated" in line
    sample = [
        "sample",
        str(folder),
        "--config",
        "qa",
        "--groups",
        "5",
        "--output",
        str(tmp_path / "ids.parquet"),
    ]
    refused(sample, capsys, f"{parquet} is not a readable Parquet file")
    measure = ["measure", str(data["root"] / "bare.parquet"), "--bias", "religion", "--dataset", str(folder)]
    refused([*measure, "--config", "qa", "--output", str(tmp_path / "m.json")], capsys, str(parquet))
    assert files(tmp_path) == before


# ------------------------------------------------------------------------------ 3. a malformed dataset card


def test_a_malformed_card_header_is_one_line(data, tmp_path, monkeypatch, capsys):
    folder = tmp_path / "religion"
    shutil.copytree(data["religion"], folder)
    card = folder / "README.md"
    lines = card.read_text(encoding="utf-8").splitlines(keepends=True)
    card.write_text(lines[0] + "configs: [unclosed\n" + "".join(lines[1:]), encoding="utf-8")
    no_model(monkeypatch)
    probe = [
        "probe",
        "some-model",
        "--bias",
        "religion",
        "--dataset",
        str(folder),
        "--output",
        str(tmp_path / "r"),
    ]
    line = refused([*probe, "--quiet"], capsys, f"{card}: the YAML header is malformed")
    assert "at line 3" in line  # the line of the card where the parser stopped
    measure = ["measure", str(data["root"] / "bare.parquet"), "--bias", "religion", "--dataset", str(folder)]
    refused(
        [*measure, "--config", "qa", "--output", str(tmp_path / "m.json")], capsys, "YAML header is malformed"
    )
    refused(
        ["sample", str(folder), "--config", "qa", "--groups", "5", "--output", str(tmp_path / "ids.parquet")],
        capsys,
        "YAML header is malformed",
    )


# ------------------------------------------------------------------------------- 4. GloVe: a value too many


def _vectors(path: Path, extra: str = "") -> Path:
    rng = np.random.default_rng(0)
    words = ["alonzo", "feels", "angry", "happy"]
    lines = [f"{w} " + " ".join(f"{x:.6f}" for x in rng.normal(size=3)) for w in words]
    path.write_text("\n".join(lines) + "\n" + extra, encoding="utf-8")
    return path


def test_a_vector_line_with_a_value_too_many_is_refused_with_its_number(tmp_path, capsys):
    """Read as the word ``alonzo 0.5``, the line would cost alonzo its vector without a word; it is refused."""
    bad = _vectors(tmp_path / "bad.txt", "alonzo 0.5 0.1 0.2 0.3\n")
    argv = ["probe", f"glove:{bad}", "--bias", "eec-emotion", "--output", str(tmp_path / "run"), "--quiet"]
    line = refused(
        argv, capsys, f"{bad}, line 5: 4 fields after 'alonzo' where the file's vectors have 3 values"
    )
    assert "'0.5' is a number" in line and "inconsistent dimensions" in line
    assert not (tmp_path / "run").exists()


def test_words_with_spaces_are_still_read(tmp_path):
    """GloVe 840B writes a few words with no-break spaces (one field) and may hold words with ASCII spaces: those
    whose last part is no number are words, with their vectors."""
    from unqover.scoring.beecher_glove import GloveVectors

    nbsp = ".\u00a0.\u00a0."
    path = _vectors(tmp_path / "spaced.txt", f"{nbsp} 1 2 3\nat name@domain.com 4 5 6\n")
    vectors = GloveVectors.from_path(path)
    assert vectors.dim == 3 and vectors.stats["words_with_spaces"] == 1
    assert vectors.vector(nbsp).tolist() == [1.0, 2.0, 3.0]
    assert vectors.vector("at name@domain.com").tolist() == [4.0, 5.0, 6.0]
    assert vectors.vector("alonzo") is not None and {"feels", "angry", "happy"} <= set(vectors.words)


# ------------------------------------------------------------------------- 5. emotion predictions with NaN


@pytest.mark.slow
def test_emotion_log_likelihoods_that_are_nan_are_refused(data, tmp_path, monkeypatch, capsys):
    from unqover.generate.eec import choice_sentences
    from unqover.predictions import write_predictions
    from unqover.probes.eec_rows import SENTENCE_SCORE_SCHEMA

    questions = pq.read_table(next((data["eec"] / "data" / "questions").glob("*.parquet")))
    sentences = choice_sentences(questions)
    n = sentences.num_rows
    scores = -np.random.default_rng(0).random(n) * 10
    scores[[3, 17]] = np.nan
    table = pa.table(
        [
            sentences["id"],
            sentences["question_id"],
            sentences["choice"],
            pa.array(scores),
            pa.array(np.full(n, 5.0)),
        ],
        schema=SENTENCE_SCORE_SCHEMA,
    )
    about = {
        "probe": "eec-emotion",
        "dataset": {"source": str(data["eec"]), "config": "questions", "split": "test"},
    }
    predictions = write_predictions(tmp_path / "nan.parquet", table, about, schema=SENTENCE_SCORE_SCHEMA)
    line = refused(
        ["measure", str(predictions), "--resamples", "5", "--output", str(tmp_path / "m.json")],
        capsys,
        f"{predictions}: 2 rows have a NaN log_likelihood",
    )
    assert repr(sentences["id"][3].as_py()) in line
    assert not (tmp_path / "m.json").exists()
    # a scorer that returns NaN in a run is refused the same way, before anything is measured
    from unqover.scoring.beecher import TfidfScorer

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("alonzo feels angry today.\namanda feels happy.\n", encoding="utf-8")
    monkeypatch.setattr(TfidfScorer, "_raw", lambda self, rows: np.full(rows.num_rows, np.nan))
    argv = [
        "probe",
        f"tfidf:{corpus}",
        "--bias",
        "eec-emotion",
        "--limit",
        "1",
        "--output",
        str(tmp_path / "run"),
    ]
    refused([*argv, "--quiet"], capsys, "scores must be finite")
    assert not (tmp_path / "run" / "results.json").exists()


# --------------------------------------------------------------------------- 6. NLI predictions of part of the rows


def _nli_predictions(data: dict, path: Path, rows: pa.Table, selection: dict | None = None) -> Path:
    from unqover.predictions import write_predictions

    rng = np.random.default_rng(1)
    about = {
        "probe": "nli-gender",
        "dataset": {"source": str(data["nli"]), "config": "synthetic", "split": "test"},
        "selection": selection,
    }
    table = pa.table(
        {"id": rows["id"], "score_1": rng.random(rows.num_rows), "score_2": rng.random(rows.num_rows)}
    )
    return write_predictions(path, table, about)


def test_nli_predictions_of_part_of_the_rows_are_refused_with_the_count_missing(data, tmp_path, capsys):
    """Half the rows (the first half: no male occupations) measured as complete printed "estimated from 40 of 40
    source premises"; like the emotion probe, the NLI measure needs every row, or a --limit run's whole selection,
    which it estimates the full dataset from."""
    from unqover.probes.nli_rows import describe_nli_selection, limit_per_occupation

    rows = pq.read_table(next((data["nli"] / "data" / "synthetic").glob("*.parquet")))
    half = _nli_predictions(data, tmp_path / "half.parquet", rows.slice(0, rows.num_rows // 2))
    measure = ["measure", str(half), "--resamples", "5", "--output", str(tmp_path / "half.json")]
    line = refused(
        measure, capsys, f"scores {rows.num_rows // 2:,} of the {rows.num_rows:,} 'synthetic' NLI rows"
    )
    assert f"({rows.num_rows - rows.num_rows // 2:,} missing)" in line and "--limit" in line
    kept = limit_per_occupation(rows, 2, 0)
    selection = describe_nli_selection(rows, kept, 2, 0)
    part = _nli_predictions(data, tmp_path / "part.parquet", kept.slice(1), selection)
    measure = ["measure", str(part), "--resamples", "5", "--output", str(tmp_path / "part.json")]
    refused(measure, capsys, f"scores {kept.num_rows - 1:,} of the {kept.num_rows:,} rows that its --limit 2")
    assert not list(tmp_path.glob("*.json"))
    # every row of the selection: measured, as an estimate of the full dataset
    quick = _nli_predictions(data, tmp_path / "quick.parquet", kept, selection)
    assert main(["measure", str(quick), "--resamples", "5", "--output", str(tmp_path / "quick.json")]) == 0
    assert json.loads((tmp_path / "quick.json").read_text())["result"]["selection"]["limit"] == 2
    full = _nli_predictions(data, tmp_path / "full.parquet", rows)
    assert main(["measure", str(full), "--resamples", "5", "--output", str(tmp_path / "full.json")]) == 0


# -------------------------------------------------------------------- 7. --bias is the probe that is recorded


def test_the_probe_given_by_bias_is_the_one_recorded(data, tmp_path, capsys):
    from unqover.probes.registry import results_probe
    from unqover.results import load_results

    out = tmp_path / "m.json"
    assert (
        main(
            religion_measure(data, data["root"] / "bare.parquet", "--bias", "religion", "--output", str(out))
        )
        == 0
    )
    written = json.loads(out.read_text())
    assert written["probe"] == written["provenance"]["probe"] == "religion"
    assert results_probe(load_results(out)).name == "religion"  # what `unqover compare` and the Space read
    # a file that records its probe is measured by that probe: another --bias is refused
    from unqover.predictions import write_predictions

    recorded = write_predictions(
        tmp_path / "recorded.parquet",
        pq.read_table(data["root"] / "bare.parquet"),
        {"probe": "religion", "dataset": {"source": str(data["religion"]), "config": "qa", "split": "test"}},
    )
    refused(
        ["measure", str(recorded), "--bias", "gender", "--output", str(tmp_path / "g.json")],
        capsys,
        "was written by the religion probe, not gender",
    )


# ------------------------------------------------------------------------------------ 8. one spelling of Zoë


def test_nfc_and_nfd_spellings_are_one_subject(tmp_path, upstream_word_lists_path, capsys):
    from unqover.lexicon import WordLists
    from unqover.lexicon.custom import read_probe_text

    assert ZOE_NFC != ZOE_NFD
    lists = tmp_path / "lists"
    shutil.copytree(upstream_word_lists_path, lists)
    subjects = lists / "nouns" / "subjects" / "religion"
    text = subjects.read_text(encoding="utf-8")
    subjects.write_text(text.replace("[subj] Christian", f"[subj] {ZOE_NFD}"), encoding="utf-8")
    assert ZOE_NFC in [s.identity for s in WordLists(lists).subjects("religion")]
    subjects.write_text(text.rstrip("\n") + f"\n[subj] {ZOE_NFD}\n[subj] {ZOE_NFC}\n", encoding="utf-8")
    build = [
        "build-datasets",
        "religion",
        "--word-lists",
        str(lists),
        "--output",
        str(tmp_path / "out"),
        "--quiet",
    ]
    refused(build, capsys, f"duplicate subject {ZOE_NFC!r}")

    def probe(names: list[str]) -> str:
        return (
            "name: names\nsubjects: [" + ", ".join(names) + "]\n"
            "attributes:\n  - {positive: was lazy, negated: was never lazy}\n"
            'templates:\n  - {context: "{subject_1} sat next to {subject_2}.", question: "Who {attribute}?"}\n'
        )

    assert (
        read_probe_text(probe([ZOE_NFD, "Max"])).subjects == read_probe_text(probe([ZOE_NFC, "Max"])).subjects
    )
    assert read_probe_text(probe([ZOE_NFD, "Max"])).subjects == (ZOE_NFC, "Max")
    both = tmp_path / "both.yaml"
    both.write_text(probe([ZOE_NFC, ZOE_NFD, "Max"]), encoding="utf-8")
    refused(
        ["build-datasets", "--probe", str(both), "--output", str(tmp_path / "b"), "--quiet"],
        capsys,
        "repeats",
    )


# -------------------------------------------------------------------------- 9. compare: hand-edited results


def test_compare_refuses_results_whose_numbers_are_text_or_whose_probe_is_unknown(data, tmp_path, capsys):
    out = tmp_path / "m.json"
    assert (
        main(
            religion_measure(data, data["root"] / "bare.parquet", "--bias", "religion", "--output", str(out))
        )
        == 0
    )
    results = json.loads(out.read_text())
    assert main(["compare", str(out), str(out)]) == 0

    def edited(name: str, change) -> Path:
        copy = json.loads(json.dumps(results))
        change(copy)
        path = tmp_path / name
        path.write_text(json.dumps(copy), encoding="utf-8")
        return path

    text = edited("text.json", lambda r: r["result"].update(positional_error="0.12"))
    line = refused(
        ["compare", str(out), str(text)], capsys, 'positional_error is "0.12", not a number or null'
    )
    assert str(text) in line
    interval = edited("interval.json", lambda r: r["result"]["intervals"].update(positional_error="overlap"))
    refused(["compare", str(interval), str(out)], capsys, 'intervals.positional_error is "overlap"')
    cell = edited("cell.json", lambda r: r["result"]["subject_gamma"][0].update(gamma="high"))
    refused(["compare", str(out), str(cell)], capsys, 'subject_gamma[0].gamma is "high"')
    martian = edited(
        "martian.json", lambda r: [r.update(probe="martian"), r["provenance"].update(probe="martian")]
    )
    line = refused(["compare", str(out), str(martian)], capsys, "written by the probe 'martian'")
    assert "neither a built-in probe" in line
    inside = edited("inside.json", lambda r: r["provenance"].update(probe="martian"))
    refused(["compare", str(out), str(inside)], capsys, "names two probes, 'religion' and 'martian'")
