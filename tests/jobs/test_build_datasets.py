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
from unqover.probes.unqover_cards import RELIGION

REPO_ROOT = Path(__file__).resolve().parents[2]
#: the card's words for religion, as the religion probe's definition gives them to the hub
WORDS = {"title": RELIGION.title, "summary": RELIGION.summary, "defects": RELIGION.defects}


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


@pytest.mark.slow
def test_committed_cards_match_the_generator(word_lists):
    """The cards in datasets/unqover/ are the builder's output, so building leaves git clean."""
    from unqover.probes.registry import PROBES

    for bias, configs in BIAS_CLASSES.items():
        plans = {config: make_plan(word_lists, bias, config) for config in configs}
        card = PROBES[bias].card
        committed = REPO_ROOT / "datasets" / "unqover" / bias / "README.md"
        text = committed.read_text(encoding="utf-8")
        # the fingerprints take every row to compute: religion's are checked against a build below
        recorded = yaml.safe_load(text.split("---\n")[1])["unqover"]["configs"]
        fingerprints = {config: recorded[config]["fingerprint"] for config in configs}
        expected = dataset_card(
            bias, plans, fingerprints, title=card.title, summary=card.summary, defects=card.defects
        )
        assert text == expected, f"regenerate {committed}"


def test_a_build_gives_the_committed_card(religion_folder):
    committed = REPO_ROOT / "datasets" / "unqover" / "religion" / "README.md"
    assert (religion_folder / "README.md").read_text(encoding="utf-8") == committed.read_text(
        encoding="utf-8"
    )


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

    def fail_on_second_config(plan, folder, *rest):
        calls.append(plan.config.name)
        if len(calls) == 2:
            raise failure
        return real(plan, folder, *rest)

    monkeypatch.setattr(build, "write_parquet_shards", fail_on_second_config)
    with pytest.raises(type(failure)):
        build.build_dataset(word_lists, "religion", tmp_path, **WORDS, configs=["qa", "mlm"], progress=False)
    assert list(tmp_path.iterdir()) == []


def test_nothing_is_written_when_a_later_config_is_invalid(tmp_path, word_lists):
    with pytest.raises(UnqoverError, match="unknown config"):
        build.build_dataset(word_lists, "religion", tmp_path, **WORDS, configs=["qa", "nope"], progress=False)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
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
        built = build.build_dataset(word_lists, "religion", tmp_path, **WORDS, configs=["qa"], progress=False)
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
    imported = graph.find_modules_directly_imported_by("unqover.hub.folder")
    assert "unqover.errors" in imported and not [m for m in imported if m.startswith("unqover.hub")]


# --- the job: build-datasets asks the registry and the definitions ---------------------------------------------


def test_no_names_build_the_default_datasets_and_names_are_checked():
    from unqover.jobs.build_datasets import requested_datasets

    assert requested_datasets([]) == list(BIAS_CLASSES)
    assert requested_datasets(["religion", "nli-gender", "religion"]) == ["religion", "nli-gender"]
    with pytest.raises(UnqoverError, match=r"^unknown dataset martians, venus; choose from gender, "):
        requested_datasets(["martians", "religion", "venus"])


def test_everything_is_checked_before_anything_is_built(tmp_path):
    from unqover.jobs.build_datasets import build_datasets

    with pytest.raises(UnqoverError, match="unknown config 'synthetic' for religion"):
        build_datasets(  # raised by the call itself: nothing is built, not even nli-gender
            ["nli-gender", "religion"],
            tmp_path,
            configs=["synthetic"],
            overwrite=False,
            progress=False,
            given={},
        )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("names", "given", "message"),
    [
        (["religion"], {"labels": "data"}, "--source and --labels apply to the nli-gender dataset"),
        (
            ["nli-gender"],
            {"word_lists": Path("lists")},
            "--word-lists applies to the gender, nationality, ethnicity and religion datasets",
        ),
    ],
)
def test_an_option_no_requested_dataset_takes_is_refused(tmp_path, names, given, message):
    from unqover.jobs.build_datasets import build_datasets

    with pytest.raises(UnqoverError) as error:
        build_datasets(names, tmp_path, configs=None, overwrite=False, progress=False, given=given)
    assert str(error.value) == message
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def toy_registry(monkeypatch):
    """Three toy definitions: ``a`` and ``b`` share the repeatable ``--source`` (each keeps its own entries),
    ``c`` takes no option and is built by default. Builds are recorded, not written."""
    from unqover.hub.folder import BuiltDataset
    from unqover.options import Option
    from unqover.probes import registry
    from unqover.probes.base import Part, ProbeDefinition
    from unqover.probes.dataset_builder import DatasetBuilder

    built: list[tuple[str, dict]] = []
    source = Option("--source", "KEY=PATH", type=str, metavar="KEY=PATH", repeat=True)

    class ToyBuilder(DatasetBuilder):
        def check_dataset_configs(self, name, configs):
            if configs and list(configs) != ["only"]:
                raise UnqoverError(f"{name} has the config only")
            return ["only"]

        def check_dataset_settings(self, name, settings):
            own = [(key, path) for key, path in settings.get("source") or [] if key == name]
            if any(path is None for _, path in own):
                raise UnqoverError(f"--source {name}=hub: {name} needs a local file")
            return {**settings, "source": own}

        def build_dataset(self, name, output, settings):
            built.append((name, settings))
            return BuiltDataset(output / name, {"only": 1}, 0.0)

    class Toy(ProbeDefinition):
        builder = Part(ToyBuilder)

        def __init__(self, name, options=(), by_default=False):
            self.name, self.datasets, self.dataset_options = name, (name,), options
            self.built_by_default = by_default

    toys = [Toy("a", (source,)), Toy("b", (source,)), Toy("c", by_default=True)]
    monkeypatch.setattr(registry, "PROBES", {toy.name: toy for toy in toys})
    return built


def test_each_dataset_gets_its_own_settings_and_is_yielded_as_built(toy_registry, tmp_path):
    from unqover.jobs.build_datasets import build_datasets

    given = {"source": [("a", "x"), ("b", "y")]}
    builds = build_datasets(["a", "b"], tmp_path, configs=None, overwrite=True, progress=False, given=given)
    assert toy_registry == []  # checked, nothing built yet
    assert next(builds).path == tmp_path / "a" and [name for name, _ in toy_registry] == ["a"]
    assert next(builds).path == tmp_path / "b"
    common = {"configs": None, "overwrite": True, "progress": False}
    assert toy_registry == [
        ("a", {**common, "source": [("a", "x")]}),
        ("b", {**common, "source": [("b", "y")]}),
    ]
    toy_registry.clear()
    assert [b.path.name for b in build_datasets([], tmp_path, configs=None, overwrite=False, progress=False, given={})] == ["c"]  # fmt: skip


@pytest.mark.parametrize(
    ("names", "source", "message"),
    [
        (["a"], [("b", "y")], "--source b=y needs the b dataset"),
        (["c"], [("a", "x")], "--source a=x needs the a dataset"),  # c takes no --source
        (["a"], [("z", "x")], "no dataset builds from --source z=x"),
        (["a"], [("b", None)], "--source b=hub: b needs a local file"),  # the definition's own line
        (["b"], [("b", None)], "--source b=hub: b needs a local file"),
    ],
)
def test_an_entry_no_requested_dataset_takes_is_refused(toy_registry, tmp_path, names, source, message):
    from unqover.jobs.build_datasets import build_datasets

    with pytest.raises(UnqoverError) as error:
        build_datasets(
            names, tmp_path, configs=None, overwrite=False, progress=False, given={"source": source}
        )
    assert str(error.value) == message
    assert toy_registry == []


def test_cli_routes_each_source_to_its_dataset(tmp_path, capsys):
    args = ["build-datasets", "--output", str(tmp_path), "--quiet"]
    assert main([*args, "nli-gender", "--source", f"eec={tmp_path / 'eec.csv'}"]) == 2
    assert "--source eec=" in (err := capsys.readouterr().err) and "needs the eec-emotion dataset" in err
    assert main([*args, "religion", "--source", "mnli=hub"]) == 2
    assert "--source mnli=hub needs the nli-gender dataset" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
