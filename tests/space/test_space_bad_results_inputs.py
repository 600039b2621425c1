"""Bad inputs of the Space's Results tab (issue 29, item 4): the Space opens only files under its results folder
and those it wrote itself. A results.json that names its predictions elsewhere (``/etc/passwd``,
``/proc/self/environ``, a Parquet file outside the results folder, a link out of it, ``..``) gets a comparison
without intervals and a message that names the run, not the file; the dataset rows are the Space's own, whatever
folder a results file names; Hub dataset repos are read only from the owners the operator allows; and no message
holds a path of the server. Driven through the Space's handlers (:class:`unqover.space.app.Space`), as a page
calls them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import tiny_models
from unqover.space import render, results
from unqover.space.app import Space

#: how every refusal of a predictions file ends (spelled out: the test checks the words, not the constant)
READS = (
    "the Space reads a run's predictions only inside its results folder (the run folder's predictions.parquet, or "
    "a path relative to the results folder)"
)
#: a comparison whose shifts have intervals from both runs' predictions says so
WITH_INTERVALS = "- shifts: paired over the 12 groups both runs scored"
WITHOUT_INTERVALS = "- shifts: no intervals (see the warning)"


@pytest.fixture(scope="module")
def world(tmp_path_factory, word_lists, religion_tables, upstream_word_lists_path) -> dict:
    """A results folder (``root``) whose cache holds two live-probe runs of two tiny QA models (12 groups of
    religion), and, outside it, a Parquet file of predictions that differ from both runs'."""
    base = tmp_path_factory.mktemp("space_files")
    rows = religion_tables["qa"]
    vocabulary = sorted(set(rows["context"].to_pylist()) | set(rows["question"].to_pylist()))
    models = [tiny_models.bert_qa(base / "models" / f"qa{seed}", vocabulary, seed=seed) for seed in (0, 1)]
    root = base / "root"
    space = Space([str(m) for m in models], root / "cache", word_lists=upstream_word_lists_path, resamples=20)
    for model in models:
        assert space.probe(str(model), "religion", 12)[0].startswith(render.DONE)
    run_a, run_b = sorted(p.parent for p in (root / "cache").rglob("results.json"))
    outside = base / "outside"
    outside.mkdir()
    scores = pq.read_table(run_b / "predictions.parquet")
    flipped = scores.set_column(
        scores.schema.get_field_index("score_1"), "score_1", scores["score_2"]
    )  # other predictions of the same rows: used, they would give other numbers and intervals
    pq.write_table(flipped, outside / "predictions.parquet")
    return {
        "base": base,
        "root": root,
        "a": str(run_a.relative_to(root)),
        "b": run_b,
        "outside": outside,
        "lists": upstream_word_lists_path,
    }


@pytest.fixture
def space(world) -> Space:
    """The Space as its operator runs it in public: its results folder, no local models, default Hub owners."""
    return Space(
        None,
        world["root"] / "cache",
        word_lists=world["lists"],
        results_root=world["root"],
        local_models=False,
        resamples=20,
    )


@pytest.fixture
def evil(world):
    """Make a run folder ``evil/NAME`` inside the results folder: a copy of run B whose results.json ``edit``
    changes (its provenance); returns the run's name. Removed after the test."""
    made = []

    def make(name: str, edit=None) -> str:
        folder = world["root"] / "evil" / name
        shutil.copytree(world["b"], folder, symlinks=True)
        made.append(folder)
        data = json.loads((folder / "results.json").read_text())
        if edit is not None:
            edit(data["provenance"], folder)
        (folder / "results.json").write_text(json.dumps(data))
        return f"evil/{name}"

    yield make
    shutil.rmtree(world["root"] / "evil", ignore_errors=True)


def assert_no_server_path(text: str, world: dict) -> None:
    """No path of the server in ``text``: not the test's folders (also as Markdown escapes them), not the word
    lists, nothing a results file named."""
    for folder in (world["base"], world["base"].resolve(), world["lists"], Path("/etc"), Path("/proc")):
        for form in (str(folder), str(folder).replace("_", "\\_")):
            assert form not in text, (form, text)
    assert "/tmp/" not in text and "passwd" not in text and "self/environ" not in text, text


def compared(space: Space, world: dict, name: str) -> str:
    """The comparison of run A with the run ``name`` as the page shows it, checked for server paths."""
    text = space.compare("", world["a"], name)
    assert text.startswith("# UnQover comparison"), text
    assert_no_server_path(text, world)
    return text


def recording(path):
    """An edit that makes a results.json record ``path`` as its predictions file."""

    def edit(provenance: dict, folder: Path) -> None:
        provenance["predictions"] = path

    return edit


# ------------------------------------------------------------------------------------------- predictions files


def test_the_runs_own_predictions_give_intervals(space, world, evil):
    """The control: the run folder's predictions.parquet, and a path recorded relative to the results folder."""
    assert WITH_INTERVALS in compared(space, world, evil("plain"))
    relative = str((world["b"] / "predictions.parquet").relative_to(world["root"]))
    assert WITH_INTERVALS in compared(space, world, evil("relative", recording(relative)))


@pytest.mark.parametrize(
    "recorded",
    [
        "/etc/passwd",
        "/proc/self/environ",
        "/nonexistent/predictions.parquet",
        "~/predictions.parquet",
        "C:\\p.parquet",
    ],
    ids=["passwd", "environ", "nonexistent", "home", "drive"],
)
def test_an_absolute_predictions_path_is_refused_without_saying_whether_it_exists(
    space, world, evil, recorded
):
    name = evil("absolute", recording(recorded))
    text = compared(space, world, name)
    assert WITHOUT_INTERVALS in text
    assert (
        f"no intervals for the shifts: the run '{name}' names its predictions file by an absolute path; {READS}"
        in text
    )


def test_a_parquet_outside_the_results_folder_is_not_used(space, world, evil):
    """Predictions of the same rows outside the folder, named by their absolute path: not read, so no intervals
    (used, they would give intervals and other shifts)."""
    name = evil("outside", recording(str(world["outside"] / "predictions.parquet")))
    text = compared(space, world, name)
    assert WITHOUT_INTERVALS in text and WITH_INTERVALS not in text
    assert f"the run '{name}' names its predictions file by an absolute path; {READS}" in text


@pytest.mark.parametrize(
    "recorded",
    ["../outside/predictions.parquet", "cache/../../outside/predictions.parquet", "evil\\..\\..\\x.parquet"],
    ids=["up", "in-and-up", "backslashes"],
)
def test_dot_dot_in_a_predictions_path_is_refused(space, world, evil, recorded):
    name = evil("dots", recording(recorded))
    text = compared(space, world, name)
    assert WITHOUT_INTERVALS in text
    assert (
        f"no intervals for the shifts: the run '{name}' names its predictions file with '..'; {READS}" in text
    )


@pytest.mark.parametrize("target", ["outside", "/etc/passwd", "/nonexistent"])
def test_a_link_out_of_the_results_folder_is_not_followed(space, world, evil, target):
    """The run folder's predictions.parquet, or a recorded relative path, that is a link leading out: one
    message, whatever is (or is not) at the other end."""
    to = world["outside"] / "predictions.parquet" if target == "outside" else Path(target)

    def link(provenance: dict, folder: Path) -> None:
        (folder / "predictions.parquet").unlink()
        (folder / "predictions.parquet").symlink_to(to)

    name = evil("linked", link)
    text = compared(space, world, name)
    leads_out = f"the run '{name}' names a predictions file that leads outside the results folder; {READS}"
    assert WITHOUT_INTERVALS in text and f"no intervals for the shifts: {leads_out}" in text

    def linked_elsewhere(provenance: dict, folder: Path) -> None:
        (folder / "elsewhere.parquet").symlink_to(to)
        provenance["predictions"] = str((folder / "elsewhere.parquet").relative_to(world["root"]))

    name = evil("recorded-link", linked_elsewhere)
    text = compared(space, world, name)
    assert f"the run '{name}' names a predictions file that leads outside the results folder; {READS}" in text


def test_missing_predictions_are_named_by_the_run(space, world, evil):
    name = evil("missing", recording("evil/missing/nothing-here.parquet"))
    assert f"the predictions of the run '{name}' are missing; {READS}" in compared(space, world, name)

    def remove(provenance: dict, folder: Path) -> None:
        (folder / "predictions.parquet").unlink()

    name = evil("removed", remove)
    assert f"the predictions of the run '{name}' are missing; {READS}" in compared(space, world, name)


def test_unreadable_predictions_inside_the_folder_are_named_without_the_servers_path(space, world, evil):
    def corrupt(provenance: dict, folder: Path) -> None:
        (folder / "predictions.parquet").write_text("not parquet")

    name = evil("corrupt", corrupt)
    text = compared(space, world, name)
    assert WITHOUT_INTERVALS in text
    assert (
        f"no intervals for the shifts: cannot read the runs' predictions and dataset ({name}/predictions.parquet is "
        "not a readable Parquet predictions file"
    ) in text


def test_predictions_that_are_no_path_are_refused(space, world, evil):
    def number(provenance: dict, folder: Path) -> None:
        provenance["predictions"] = 42

    name = evil("number", number)
    text = compared(space, world, name)
    assert f"the run '{name}' names its predictions file with something that is no path; {READS}" in text


def test_the_page_gets_the_same_answers_over_http(world, evil):
    """The served app (gradio_client, as a web user calls it): a run naming /etc/passwd, and a link out."""
    import socket

    from gradio_client import Client

    from unqover.space.app import build_app

    passwd = evil("passwd", recording("/etc/passwd"))

    def link(provenance: dict, folder: Path) -> None:
        (folder / "predictions.parquet").unlink()
        (folder / "predictions.parquet").symlink_to("/etc/passwd")

    linked = evil("linked", link)
    demo = build_app(
        None,
        world["root"] / "cache",
        word_lists=world["lists"],
        results_root=world["root"],
        local_models=False,
    )
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        client = Client(f"http://127.0.0.1:{port}/", verbose=False)
        assert client.predict("", api_name="/load_results")[0].startswith(render.DONE)
        text = client.predict("", world["a"], passwd, api_name="/compare")
        assert f"the run '{passwd}' names its predictions file by an absolute path; {READS}" in text
        text = client.predict("", world["a"], linked, api_name="/compare")
        assert (
            f"the run '{linked}' names a predictions file that leads outside the results folder; {READS}"
            in text
        )
        assert_no_server_path(text, world)
        status, *_ = client.predict("someone/results", api_name="/load_results")
        assert status.startswith("⚠️ the Space reads results only from the Hub dataset repos of unqover")
        client.close()
    finally:
        demo.close()


# ------------------------------------------------------------------------------------------------ dataset rows


@pytest.mark.parametrize(
    "dataset",
    [
        {"generator": {"bias": "religion", "word_lists": "/etc"}, "source": "generated from /etc"},
        {"generator": {}, "source": "/proc/self"},
        {"generator": {"word_lists": "../../outside"}, "source": "../outside"},
    ],
    ids=["etc", "proc", "dots"],
)
def test_the_rows_are_the_spaces_own_whatever_folder_a_results_file_names(space, world, evil, dataset):
    """Read, those folders would fail (or give other rows); the Space's own rows give the intervals, and the
    comparison names none of the folders."""

    def elsewhere(provenance: dict, folder: Path) -> None:
        provenance["dataset"] = {**provenance["dataset"], **dataset}

    text = compared(space, world, evil("dataset", elsewhere))
    assert WITH_INTERVALS in text


def test_dataset_paths_are_compared_as_text_not_looked_up(space, world, evil, monkeypatch, tmp_path):
    """Two runs whose dataset folders differ as text but are one folder on the server (a link): the Space does
    not look them up (it would tell where the link leads), so they are different datasets; equal texts compare."""
    folder = tmp_path / "data"
    folder.mkdir()
    (tmp_path / "link").symlink_to(folder)

    def source(text: str):
        def edit(provenance: dict, run: Path) -> None:
            provenance["dataset"] = {**provenance["dataset"], "source": text, "fingerprint": None}

        return edit

    first = evil("first", source(str(folder)))
    linked = evil("linked", source(str(tmp_path / "link")))
    text = space.compare("", first, linked)
    assert text == (
        f"⚠️ the runs measured different datasets: {first} 'folder a path on the server', {linked} 'folder a path on "
        "the server'; their numbers are not comparable"
    )
    same = evil("same", source(str(folder) + "/"))
    text = space.compare("", first, same)
    assert text.startswith("# UnQover comparison") and WITH_INTERVALS in text, text
    assert_no_server_path(text, world)


# ------------------------------------------------------------------------------------------------ Hub repos


def test_hub_repos_are_read_only_from_the_allowed_owners(space, world):
    status, *_ = space.load_results("someone/results")
    assert status == (
        "⚠️ the Space reads results only from the Hub dataset repos of unqover: type one of those (owner/name) or "
        "a folder inside its results folder"
    )
    assert space.compare("someone/results", "a", "b") == status
    assert space.view_run("someone/results", "a")[0] == status
    # an allowed owner's repo goes to the Hub (offline here: the Hub's reason)
    status, *_ = space.load_results("unqover/no-such-results")
    assert status.startswith("⚠️ cannot download the dataset repo 'unqover/no-such-results'")
    assert_no_server_path(status, world)
    closed = Space(None, world["root"] / "cache", results_root=world["root"], results_repos=())
    status, *_ = closed.load_results("unqover/results")
    assert status == "⚠️ this Space reads no results from the Hub: type a folder inside its results folder"


def test_the_allowed_repos_come_from_the_operator(world, monkeypatch, caplog):
    def repos() -> tuple[str, ...]:
        return Space(None, world["root"] / "cache", results_root=world["root"]).results_repos

    monkeypatch.delenv("UNQOVER_SPACE_RESULTS_REPOS", raising=False)
    monkeypatch.delenv("SPACE_AUTHOR_NAME", raising=False)
    assert repos() == ("unqover",)
    monkeypatch.setenv("SPACE_AUTHOR_NAME", "me")  # set by the Hub on a Space: its owner
    assert repos() == ("unqover", "me")
    monkeypatch.setenv("UNQOVER_SPACE_RESULTS_REPOS", "lab, other/results")
    assert repos() == ("lab", "other/results")
    monkeypatch.setenv("UNQOVER_SPACE_RESULTS_REPOS", "none")
    assert repos() == ()
    monkeypatch.setenv("UNQOVER_SPACE_RESULTS_REPOS", "lab")
    with caplog.at_level("WARNING", logger="unqover.space.app"):
        Space(None, world["root"] / "cache", results_root=world["root"], results_location="someone/results")
    assert (
        "UNQOVER_SPACE_RESULTS is a Hub repo that UNQOVER_SPACE_RESULTS_REPOS does not allow" in caplog.text
    )
    allowed = ("lab", "other/results", "third/*")
    assert results.allowed_repo("Lab/anything", allowed) and results.allowed_repo("other/Results", allowed)
    assert results.allowed_repo("third/x", allowed)
    assert not results.allowed_repo("other/else", allowed) and not results.allowed_repo("labs/x", allowed)


# ------------------------------------------------------------------------------------------------ messages


def test_messages_of_the_results_tab_hold_no_server_path(space, world, evil):
    """A location typed as an absolute path inside the results folder, a results folder with no runs, a run
    chosen that is not there: the page names the folder by its name there."""
    empty = world["root"] / "empty"
    empty.mkdir(exist_ok=True)
    try:
        status, *_ = space.load_results(str(empty))
        assert status.startswith("⚠️ no results.json in empty:"), status
        assert_no_server_path(status, world)
    finally:
        empty.rmdir()
    status, *_ = space.load_results(str(world["root"] / "no-such"))
    assert status == (
        "⚠️ no folder 'no-such' in the Space's results folder, and no Hub dataset repo id (owner/name)"
    )


def test_the_runs_table_names_no_folder_of_the_server(space, world, evil):
    name = evil(
        "elsewhere", lambda provenance, folder: provenance["dataset"].update(source="/srv/data/religion")
    )
    _, table, *_ = space.load_results("")
    datasets = dict(zip(table["run"], table["dataset"], strict=True))
    assert datasets[world["a"]] == "generated from the Space's word lists / qa"
    assert datasets[name] == "a path on the server / qa"


def test_hide_paths_names_folders_by_their_names_and_hides_the_rest():
    folders = {"/srv/results": "the Space's results folder", "/srv/lists": "the Space's word lists"}
    text = (
        "read /srv/results/cache/run/predictions.parquet and /srv/lists and /srv/results, /srv/results2/x "
        "'/etc/passwd' (~/x) see https://aclanthology.org/2020.findings-emnlp.311 for B/A 1/2 and owner/name"
    )
    assert results.hide_paths("from / to /etc", {"/": "the root"}) == "from / to a path on the server"
    kept = "S(x1)/S(x2), a/b, μ/η, [0.1, 0.2]/2, https://huggingface.co/datasets/unqover/religion"
    assert results.hide_paths(kept) == kept
    assert results.hide_paths("(/etc/passwd) [/proc/self] =/x '~/.cache/hf'") == (
        "(a path on the server) [a path on the server] =a path on the server 'a path on the server'"
    )
    assert results.hide_paths(text, folders) == (
        "read cache/run/predictions.parquet and the Space's word lists and the Space's results folder, a path on "
        "the server "
        "'a path on the server' (a path on the server) see https://aclanthology.org/2020.findings-emnlp.311 for "
        "B/A 1/2 and owner/name"
    )
