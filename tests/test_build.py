"""Building Hugging Face dataset folders: layout, loading with `datasets`, cards, and failure safety."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from datasets import load_dataset

from unqover.cli import main
from unqover.errors import UnqoverError
from unqover.generate.unqover import BIAS_CLASSES, ROW_SCHEMA, make_plan
from unqover.hub import build
from unqover.hub.card import dataset_card

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def religion_folder(tmp_path_factory, upstream_word_lists_path) -> Path:
    root = tmp_path_factory.mktemp("datasets")
    code = main(
        [
            "build-datasets",
            "--word-lists",
            str(upstream_word_lists_path),
            "--output",
            str(root),
            "--quiet",
            "religion",
        ]
    )
    assert code == 0
    return root / "religion"


def test_layout_and_card(religion_folder):
    files = sorted(
        p.relative_to(religion_folder).as_posix() for p in religion_folder.rglob("*") if p.is_file()
    )
    assert files == sorted(
        ["README.md"] + [f"data/{c}/test-00000-of-00001.parquet" for c in BIAS_CLASSES["religion"]]
    )
    card = religion_folder.joinpath("README.md").read_text()
    meta = yaml.safe_load(card.split("---\n")[1])
    assert [c["config_name"] for c in meta["configs"]] == list(BIAS_CLASSES["religion"])
    assert meta["configs"][0]["default"] is True
    assert meta["license"] == "apache-2.0" and meta["task_categories"] == ["question-answering", "fill-mask"]
    for heading in (
        "Content warning",
        "## Structure",
        "## How the data was made",
        "## Known defects",
        "## Intended use",
        "## Citation",
    ):
        assert heading in card
    for column in ROW_SCHEMA.names:
        assert f"| `{column}` |" in card


@pytest.mark.parametrize(
    ("config", "rows"), [("qa", 154_000), ("qa-newsqa", 154_000), ("mlm", 154_000), ("mlm-roberta", 126_000)]
)
def test_load_dataset_reads_the_folder(religion_folder, config, rows):
    ds = load_dataset(str(religion_folder), config, split="test")
    assert ds.num_rows == rows
    assert list(ds.features) == ROW_SCHEMA.names
    first = ds[0]
    assert first["context"][slice(*first["subject_1_span"])] == first["subject_1"]
    assert first["polarity"] == "positive" and ds[1]["polarity"] == "negated"
    if config.startswith("mlm"):
        assert "[MASK]" in first["question"]
    if config == "qa-newsqa":
        assert first["context"].startswith("[aug] yes no  [text] (CNN) --  A Christian man")


def test_shards_keep_generation_order(tmp_path, word_lists, monkeypatch):
    monkeypatch.setattr(build, "ROWS_PER_SHARD", 50_000)
    plan = make_plan(word_lists, "ethnicity", "qa")
    assert build.write_parquet_shards(plan, tmp_path) == plan.num_rows
    shards = sorted(p.name for p in tmp_path.iterdir())
    assert (
        shards == [f"test-{i:05d}-of-{len(shards):05d}.parquet" for i in range(len(shards))]
        and len(shards) > 1
    )
    written = pa.concat_tables(pq.read_table(tmp_path / name) for name in shards)
    expected = pa.Table.from_batches(list(plan.batches()))
    assert written.equals(expected)


def test_committed_cards_match_the_generator(word_lists):
    """The cards in datasets/unqover/ are the builder's output, so building leaves git clean."""
    for bias, configs in BIAS_CLASSES.items():
        plans = {config: make_plan(word_lists, bias, config) for config in configs}
        committed = REPO_ROOT / "datasets" / "unqover" / bias / "README.md"
        assert committed.read_text(encoding="utf-8") == dataset_card(bias, plans), f"regenerate {committed}"


def test_existing_output_is_an_error_unless_overwrite(tmp_path, upstream_word_lists_path, capsys):
    args = [
        "build-datasets",
        "--word-lists",
        str(upstream_word_lists_path),
        "--output",
        str(tmp_path),
        "--quiet",
    ]
    assert main([*args, "--config", "qa", "religion"]) == 0
    stamp = (tmp_path / "religion/data/qa/test-00000-of-00001.parquet").stat().st_mtime_ns
    assert main([*args, "--config", "qa", "religion"]) == 2
    assert f"{tmp_path / 'religion' / 'data'} already exists; pass --overwrite" in capsys.readouterr().err
    assert (tmp_path / "religion/data/qa/test-00000-of-00001.parquet").stat().st_mtime_ns == stamp
    assert main([*args, "--overwrite", "--config", "mlm", "religion"]) == 0
    assert sorted(p.name for p in (tmp_path / "religion/data").iterdir()) == ["mlm"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["martians"], "unknown dataset martians; choose from gender, nationality, ethnicity, religion"),
        (
            ["--config", "squad", "religion"],
            "unknown config 'squad' for religion; choose from qa, qa-newsqa, mlm",
        ),
        (
            ["--word-lists", "/nonexistent/word_lists", "religion"],
            "word-list folder not found: /nonexistent/word_lists",
        ),
    ],
)
def test_bad_arguments_give_one_clear_error(tmp_path, capsys, argv, message):
    assert main(["build-datasets", "--output", str(tmp_path), "--quiet", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("unqover: error: ") and message in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_malformed_word_list_names_file_and_line(tmp_path, upstream_word_lists_path, capsys):
    lists = tmp_path / "lists"
    shutil.copytree(upstream_word_lists_path, lists)
    bad = lists / "slots/religion_noact"
    bad.chmod(0o644)
    bad.write_text("A [subj1] met a [subj2].\tWho [p_act-single]?\n")
    out = tmp_path / "out"
    assert (
        main(["build-datasets", "--word-lists", str(lists), "--output", str(out), "--quiet", "religion"]) == 2
    )
    assert f"{bad}:1: expected 3 TAB-separated fields" in capsys.readouterr().err
    assert not (out / "religion").exists()


@pytest.mark.parametrize("failure", [RuntimeError("disk full"), KeyboardInterrupt()])
def test_failure_midway_leaves_nothing_behind(tmp_path, word_lists, monkeypatch, failure):
    real = build.write_parquet_shards
    calls = []

    def fail_on_second_config(plan, folder, progress=None):
        calls.append(plan.config.name)
        if len(calls) == 2:
            raise failure
        return real(plan, folder, progress)

    monkeypatch.setattr(build, "write_parquet_shards", fail_on_second_config)
    with pytest.raises(type(failure)):
        build.build_dataset(word_lists, "religion", tmp_path, configs=["qa", "mlm"], progress=False)
    assert list(tmp_path.iterdir()) == []


def test_nothing_is_written_when_a_later_config_is_invalid(tmp_path, word_lists):
    with pytest.raises(UnqoverError, match="unknown config"):
        build.build_dataset(word_lists, "religion", tmp_path, configs=["qa", "nope"], progress=False)
    assert list(tmp_path.iterdir()) == []


def test_build_script_runs(tmp_path, upstream_word_lists_path):
    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts/build_datasets.py"), "--word-lists", str(upstream_word_lists_path),
         "--output", str(tmp_path), "--config", "qa", "--quiet", "religion"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "religion: qa 154,000 rows" in result.stdout
    assert (tmp_path / "religion/data/qa/test-00000-of-00001.parquet").is_file()


def test_built_files_have_normal_permissions(tmp_path, word_lists):
    previous = os.umask(0o022)
    try:
        built = build.build_dataset(word_lists, "religion", tmp_path, configs=["qa"], progress=False)
    finally:
        os.umask(previous)
    for path in [built.path, *built.path.rglob("*")]:
        expected = 0o755 if path.is_dir() else 0o644  # not the staging folder's private 0700
        assert stat.S_IMODE(path.stat().st_mode) == expected, path
    assert [p.name for p in tmp_path.iterdir()] == ["religion"]  # the staging folder is gone


def test_hub_modules_import_no_cycle():
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("unqover")
    cycles = [
        (module, imported)
        for module in graph.modules
        if module.startswith("unqover.hub")
        for imported in graph.find_modules_directly_imported_by(module)
        if graph.chain_exists(importer=imported, imported=module)
    ]
    assert cycles == []
    assert graph.find_modules_directly_imported_by("unqover.hub.folder") == {"unqover.errors"}
