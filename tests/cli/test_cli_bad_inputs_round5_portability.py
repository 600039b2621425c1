"""Issue 45, items 3, 4 and 13 through the real command line, offline, on tiny local models:

* runs are portable: a run generated from word lists records their content (one SHA-256); copied elsewhere with
  its word-list folder gone, ``compare``, ``leaderboard`` and ``measure`` find that content from
  ``--word-lists``, ``UNQOVER_WORD_LISTS`` or the cached upstream lists, and refuse in one line naming the
  content wanted where none holds it; a folder holding other lists is never used. The kept example runs in
  ``docs/examples/`` work the same from any checkout;
* a folder that holds another run is refused before the model loads (another system prompt, dtype or model), and
  a run interrupted before it scored anything says so, with no promise to resume;
* a model is its bytes: the same GGUF file under another name is the same run in a run folder and one model in a
  leaderboard.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.cli.test_cli_bad_data import refused
from tests.jobs.test_run_validates_before_writing import models, religion  # noqa: F401 (fixtures)
from unqover.cli import main
from unqover.lexicon.upstream import UPSTREAM_COMMIT

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = REPO_ROOT / "docs" / "examples"


def quick_run(model: Path, lists: Path, output: Path, *extra: str) -> list[str]:
    return ["probe", str(model), "--bias", "religion", "--word-lists", str(lists), "--limit", "2",
            "--resamples", "0", "--quiet", "--device", "cpu", "--output", str(output), *extra]  # fmt: skip


@pytest.fixture
def offline_cache(tmp_path, monkeypatch) -> Path:
    """An empty cache of upstream word lists, downloads off, UNQOVER_WORD_LISTS unset."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("UNQOVER_CACHE", str(cache))
    monkeypatch.setenv("UNQOVER_OFFLINE", "1")
    monkeypatch.delenv("UNQOVER_WORD_LISTS", raising=False)
    return cache


@pytest.fixture(scope="module")
def moved_runs(models, upstream_word_lists_path, tmp_path_factory) -> dict:  # noqa: F811
    """Two quick runs (30 groups, seeds 0 and 1) generated from a copy of the upstream word lists, then moved to another
    folder with that copy deleted: runs copied to another machine."""
    root = tmp_path_factory.mktemp("moved")
    lists = shutil.copytree(upstream_word_lists_path, root / "lists")
    for seed in ("0", "1"):
        run = quick_run(models["gpt2"], lists, root / f"made/seed{seed}", "--seed", seed, "--limit", "30")
        assert main(run) == 0
    shutil.copytree(root / "made", root / "elsewhere")
    shutil.rmtree(root / "made")
    shutil.rmtree(lists)
    return {"a": root / "elsewhere/seed0", "b": root / "elsewhere/seed1", "gone": lists}


def test_a_run_records_its_word_lists_by_content(moved_runs):
    generator = json.loads((moved_runs["a"] / "results.json").read_text())["provenance"]["dataset"][
        "generator"
    ]
    assert generator["word_lists"] == str(moved_runs["gone"])
    assert len(generator["word_lists_sha256"]) == 64
    assert json.loads((moved_runs["a"] / "run.json").read_text())["dataset"]["generator"] == generator


#: each command that reads runs again, with its options for two quick runs of 30 groups (μ is declined: a
#: leaderboard ranks them by δ)
READERS = {"compare": [], "leaderboard": ["--metric", "positional_error"]}


@pytest.mark.parametrize("command", READERS)
def test_moved_runs_read_with_word_lists_from_the_option_or_the_variable(
    command, moved_runs, upstream_word_lists_path, offline_cache, monkeypatch, capsys
):
    runs = [str(moved_runs["a"]), str(moved_runs["b"]), *READERS[command]]
    capsys.readouterr()
    assert main([command, *runs, "--word-lists", str(upstream_word_lists_path)]) == 0
    given = capsys.readouterr().out
    assert "cannot read the runs' predictions" not in given and "not found" not in given
    monkeypatch.setenv("UNQOVER_WORD_LISTS", str(upstream_word_lists_path))
    assert main([command, *runs]) == 0
    assert capsys.readouterr().out == given


def test_moved_runs_read_with_the_cached_upstream_lists(
    moved_runs, upstream_word_lists_path, offline_cache, capsys
):
    shutil.copytree(upstream_word_lists_path, offline_cache / "word_lists" / UPSTREAM_COMMIT)
    capsys.readouterr()
    assert main(["leaderboard", str(moved_runs["a"]), str(moved_runs["b"]), *READERS["leaderboard"]]) == 0
    assert "rank" in capsys.readouterr().out


def test_moved_runs_without_their_word_lists_are_refused_naming_the_content(
    moved_runs, offline_cache, capsys
):
    digest = json.loads((moved_runs["a"] / "run.json").read_text())["dataset"]["generator"][
        "word_lists_sha256"
    ]
    wanted = (
        f"the word lists of {moved_runs['a'] / 'predictions.parquet'} are not found: it wants the upstream UnQover "
        f"word lists at commit "
        f"{UPSTREAM_COMMIT[:7]} (sha256 {digest[:16]}) (the recorded folder {moved_runs['gone']} is not here; the "
        "upstream lists: the UnQover word lists are not cached and downloads are disabled (offline mode)): pass "
        "--word-lists PATH or set UNQOVER_WORD_LISTS to a folder holding them"
    )
    for command, options in READERS.items():
        line = refused([command, str(moved_runs["a"]), str(moved_runs["b"]), *options], capsys, wanted)
        assert line == f"unqover: error: {wanted}"
    refused(["measure", str(moved_runs["a"] / "predictions.parquet"), "--output", str(offline_cache / "m.json")],
            capsys, f"it wants the upstream UnQover word lists at commit {UPSTREAM_COMMIT[:7]}")  # fmt: skip


def test_word_lists_with_other_content_are_never_used(
    moved_runs, upstream_word_lists_path, offline_cache, tmp_path, monkeypatch, capsys
):
    """An edited copy given by --word-lists is refused naming it; named by UNQOVER_WORD_LISTS it is passed over
    (and the refusal says why)."""
    edited = shutil.copytree(upstream_word_lists_path, tmp_path / "edited")
    with open(edited / "nouns/subjects/religion", "a", encoding="utf-8") as lines:
        lines.write("Zoroastrian\n")
    runs = [str(moved_runs["a"]), str(moved_runs["b"])]
    refused(["compare", *runs, "--word-lists", str(edited)], capsys,
            f"(sha256 {json.loads((moved_runs['a'] / 'run.json').read_text())['dataset']['generator']['word_lists_sha256'][:16]}): "
            f"--word-lists {edited} holds other lists")  # fmt: skip
    monkeypatch.setenv("UNQOVER_WORD_LISTS", str(edited))
    refused(
        ["leaderboard", *runs, *READERS["leaderboard"]],
        capsys,
        f"UNQOVER_WORD_LISTS {edited} holds other lists;",
    )


def test_moved_runs_measure_with_the_option(moved_runs, upstream_word_lists_path, offline_cache, capsys):
    out = offline_cache / "m.json"
    argv = ["measure", str(moved_runs["a"] / "predictions.parquet"), "--output", str(out)]
    assert main([*argv, "--word-lists", str(upstream_word_lists_path)]) == 0
    measured = json.loads(out.read_text())["result"]
    assert (
        measured["positional_error"]
        == json.loads((moved_runs["a"] / "results.json").read_text())["result"]["positional_error"]
    )


def example_copy(name: str, target: Path, gone: Path) -> Path:
    """A kept example run copied to ``target``, its recorded word-list folder moved to ``gone`` (absent): the run
    as another checkout or machine sees it."""
    run = shutil.copytree(EXAMPLES / name, target / name)
    results = json.loads((run / "results.json").read_text())
    dataset = results["provenance"]["dataset"]
    dataset["source"] = f"generated from {gone}"
    dataset["generator"]["word_lists"] = str(gone)
    (run / "results.json").write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
    return run


@pytest.mark.parametrize("command", ["compare", "leaderboard"])
def test_the_kept_example_runs_work_from_any_checkout(
    command, upstream_word_lists_path, offline_cache, tmp_path, monkeypatch, capsys
):
    gone = tmp_path / "no-such-checkout" / "word_lists"
    runs = [str(example_copy(name, tmp_path, gone)) for name in ("smollm2-fp32", "smollm2-bf16")]
    # the fp32 run records its word lists' checksum (it names the lists it wants), the bf16 run only their folder
    refused([command, *runs], capsys, "it wants the upstream UnQover word lists at commit 3e47969 (sha256 ")
    refused(
        [command, *reversed(runs)], capsys, f"it records only the folder {gone} (the recorded folder {gone}"
    )
    assert main([command, *runs, "--word-lists", str(upstream_word_lists_path)]) == 0
    given = capsys.readouterr().out
    assert "cannot read the runs' predictions" not in given and "[" in given  # intervals
    monkeypatch.setenv("UNQOVER_WORD_LISTS", str(upstream_word_lists_path))
    assert main([command, *runs]) == 0
    assert capsys.readouterr().out == given


# --- the run folder, checked before the model loads -----------------------------------------------------------


def flipped(data: bytes) -> bytes:
    """``data`` with its last bit flipped: other bytes, the same size."""
    return data[:-1] + bytes([data[-1] ^ 1])


@pytest.fixture
def no_loading(monkeypatch):
    """Loading a model fails the test: what is refused must be refused before."""

    def loaded(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr("unqover.scoring.engines.transformers.TransformersEngine.load", loaded)


@pytest.fixture(scope="module")
def gguf_run(gguf_model, upstream_word_lists_path, tmp_path_factory) -> Path:
    """A quick run of the session's tiny GGUF file into its default folder (runs/<file>/religion-...)."""
    work = tmp_path_factory.mktemp("gguf-work")
    cwd = os.getcwd()
    os.chdir(work)
    try:
        argv = quick_run(gguf_model, upstream_word_lists_path, work / "x")[:-2]  # the default folder
        assert main(argv) == 0
    finally:
        os.chdir(cwd)
    (run,) = [p.parent for p in (work / "runs").rglob("run.json")]
    return run


def test_a_folder_holding_another_run_is_refused_before_the_model_loads(
    gguf_run, gguf_model, upstream_word_lists_path, tmp_path, no_loading, capsys
):
    folder = shutil.copytree(gguf_run, tmp_path / "run")
    for extra, field in ((["--system-prompt", "Be fair."], "prompt.system_prompt"), (["--dtype", "bfloat16"], "dtype"),
                         (["--seed", "3"], "selection.seed")):  # fmt: skip
        refused(quick_run(gguf_model, upstream_word_lists_path, folder, *extra), capsys,
                f"{folder} holds another run (it differs in {field}); choose another --output or remove that folder")  # fmt: skip
    other = tmp_path / "other.gguf"
    other.write_bytes(flipped(gguf_model.read_bytes()))  # other bytes: another model
    refused(
        quick_run(other, upstream_word_lists_path, folder),
        capsys,
        f"{folder} holds another run (it differs in model)",
    )


def test_the_default_folder_is_checked_before_the_model_loads(
    gguf_run, gguf_model, upstream_word_lists_path, no_loading, monkeypatch, capsys
):
    monkeypatch.chdir(gguf_run.parents[2])
    argv = [*quick_run(gguf_model, upstream_word_lists_path, Path("x"))[:-2], "--system-prompt", "Be fair."]
    folder = gguf_run.relative_to(gguf_run.parents[2])
    refused(argv, capsys, f"{folder} holds another run (it differs in prompt.system_prompt)")


def test_the_same_bytes_under_another_name_are_the_same_run(
    gguf_run, gguf_model, upstream_word_lists_path, tmp_path, capsys
):
    """The renamed file resumes the run in its folder (nothing left to score: the same predictions), and its own
    run is one model with the first in a leaderboard."""
    renamed = tmp_path / "renamed.gguf"
    shutil.copyfile(gguf_model, renamed)
    folder = shutil.copytree(gguf_run, tmp_path / "run")
    assert main(quick_run(renamed, upstream_word_lists_path, folder)) == 0
    assert (folder / "predictions.parquet").read_bytes() != b""
    second = tmp_path / "second"
    assert main(quick_run(renamed, upstream_word_lists_path, second)) == 0
    refused(["leaderboard", str(gguf_run), str(second)], capsys,
            f"{second} is the same run as {gguf_run} (the same model and predictions): give each run once")  # fmt: skip


def test_a_run_interrupted_before_scoring_promises_no_resume(
    gguf_run, gguf_model, upstream_word_lists_path, tmp_path, monkeypatch, capsys
):
    """Ctrl-C before the run folder is claimed: nothing is kept, and the line says so; after a folder of this very
    run (with its scores) is claimed, the resume is promised."""

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("unqover.jobs.run.claim", interrupt)
    capsys.readouterr()
    assert main(quick_run(gguf_model, upstream_word_lists_path, tmp_path / "new")) == 130
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == "unqover: interrupted before any scores were kept: there is nothing to resume"
    monkeypatch.undo()
    monkeypatch.setattr("unqover.jobs.run.run_shard", interrupt)
    folder = shutil.copytree(gguf_run, tmp_path / "run")
    assert main(quick_run(gguf_model, upstream_word_lists_path, folder)) == 130
    assert "run the same command again to resume" in capsys.readouterr().err


def test_a_run_without_checksums_reads_its_own_folder_first(
    upstream_word_lists_path, offline_cache, tmp_path, monkeypatch, capsys
):
    """A kept example run records only its folder: where that folder is, it is read, even with
    UNQOVER_WORD_LISTS naming other lists."""
    lists = shutil.copytree(upstream_word_lists_path, tmp_path / "lists")
    runs = [str(example_copy(name, tmp_path, lists)) for name in ("smollm2-fp32", "smollm2-bf16")]
    assert main(["compare", *runs]) == 0
    expected = capsys.readouterr().out
    edited = shutil.copytree(upstream_word_lists_path, tmp_path / "edited")
    with open(edited / "nouns/subjects/religion", "a", encoding="utf-8") as lines:
        lines.write("Zoroastrian\n")
    monkeypatch.setenv("UNQOVER_WORD_LISTS", str(edited))
    assert main(["compare", *runs]) == 0
    assert capsys.readouterr().out == expected


def test_a_model_folder_under_another_name_is_the_same_run(
    models,  # noqa: F811
    upstream_word_lists_path,
    tmp_path,
    capsys,
):
    """A transformers folder is its weights: run.json records their SHA-256, and a copy under another name runs
    into the first one's folder as the same run."""
    folder = tmp_path / "run"
    assert main(quick_run(models["gpt2"], upstream_word_lists_path, folder)) == 0
    assert len(json.loads((folder / "run.json").read_text())["model"]["weights_sha256"]) == 64
    renamed = shutil.copytree(models["gpt2"], tmp_path / "renamed")
    assert main(quick_run(renamed, upstream_word_lists_path, folder)) == 0
    changed = shutil.copytree(models["gpt2"], tmp_path / "changed")
    (changed / "model.safetensors").write_bytes(flipped((changed / "model.safetensors").read_bytes()))
    refused(
        quick_run(changed, upstream_word_lists_path, folder),
        capsys,
        f"{folder} holds another run (it differs in model)",
    )


def test_a_hub_gguf_run_is_its_own_run_and_another_file_of_its_repo_is_not(tmp_path):
    """A Hub GGUF run records its file's name and SHA-256 (no path): the same repo and file resume it before the
    model loads; another file of the repo, or another repo, is another run."""
    from unqover.errors import UnqoverError
    from unqover.jobs.folder_check import check_folder_before_load
    from unqover.jobs.run import engine_request
    from unqover.probes.base import RunOptions
    from unqover.probes.registry import get_probe
    from unqover.scoring.engines import engine_named

    record = {"id": "owner/repo", "gguf": {"file": "m.gguf", "sha256": "ab" * 32}, "family": "causal"}
    (tmp_path / "run.json").write_text(json.dumps({"probe": "religion", "model": record}))
    probe, engine = get_probe("religion"), engine_named("transformers")
    run = RunOptions(output=tmp_path, gguf_file="m.gguf")
    settings = probe.check_settings(run.settings)

    def check(model_id: str, run: RunOptions) -> None:
        request = engine_request(model_id, probe, run)
        check_folder_before_load(engine, request, probe, run, settings, None, lambda *a: tmp_path)

    check("owner/repo", run)  # the same run: no refusal
    for model_id, gguf_file in (("owner/repo", "other.gguf"), ("owner/other", "m.gguf")):
        other = RunOptions(output=tmp_path, gguf_file=gguf_file)
        with pytest.raises(UnqoverError, match=r"holds another run \(it differs in model\)"):
            check(model_id, other)


def test_several_probes_check_their_folders_before_the_model_loads(
    gguf_run, gguf_model, upstream_word_lists_path, tmp_path, no_loading, capsys
):
    """`--bias religion,ethnicity` into a folder whose religion run is another run's: refused before the load."""
    shutil.copytree(gguf_run, tmp_path / "out" / "religion")
    argv = quick_run(gguf_model, upstream_word_lists_path, tmp_path / "out", "--dtype", "bfloat16")
    argv[argv.index("religion")] = "religion,ethnicity"
    refused(argv, capsys, f"{tmp_path / 'out' / 'religion'} holds another run (it differs in dtype)")
