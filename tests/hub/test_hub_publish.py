"""Tests for unqover.hub.publish and the publish command (unqover.jobs.publish): local validation, dry runs and
Hub calls, all without the network.

Fake dataset folders are built in tmp_path with pyarrow. Network paths run against a fake HfApi or against
closed/silent sockets on 127.0.0.1, so nothing ever leaves the machine.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import huggingface_hub
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, constants
from huggingface_hub.errors import HfHubHTTPError
from huggingface_hub.utils import _http

from unqover.cli import main
from unqover.errors import UnqoverError
from unqover.hub import publish as pub
from unqover.hub.publish import OFFLINE_MESSAGE, TOKEN_MESSAGE, plan_upload, publish
from unqover.jobs import publish as publish_cli
from unqover.jobs.publish import describe

SCHEMA = pa.schema([("id", pa.string()), ("template_id", pa.int32()), ("context", pa.string())])


def run_publish(argv: list[str]) -> int:
    """The exit status of ``unqover publish ARGV`` (argparse's refusals exit by SystemExit, as the command does)."""
    try:
        return main(["publish", *argv])
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2


def write_shard(path: Path, rows: int, start: int = 0, schema: pa.Schema = SCHEMA) -> None:
    """One Parquet shard with ``rows`` rows (ids ``start``..)."""
    columns: dict[str, list[Any]] = {}
    for f in schema:
        if pa.types.is_integer(f.type):
            columns[f.name] = list(range(start, start + rows))
        else:
            columns[f.name] = [f"{f.name}-{i}" for i in range(start, start + rows)]
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns, schema=schema), path)


def write_card(folder: Path, configs: dict[str, int | None], front_matter: str | None = None) -> None:
    """A dataset card with one ``test`` split per config; ``None`` rows leaves num_examples out."""
    if front_matter is None:
        meta = {
            "license": "apache-2.0",
            "configs": [
                {
                    "config_name": name,
                    **({"default": True} if i == 0 else {}),
                    "data_files": [{"split": "test", "path": f"data/{name}/*.parquet"}],
                }
                for i, name in enumerate(configs)
            ],
            "dataset_info": [
                {
                    "config_name": name,
                    "splits": [{"name": "test", **({} if n is None else {"num_examples": n})}],
                }
                for name, n in configs.items()
            ],
        }
        front_matter = yaml.safe_dump(meta, sort_keys=False)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "README.md").write_text(f"---\n{front_matter}---\n\n# A test dataset\n", encoding="utf-8")


def make_dataset(root: Path, name: str = "gender", shards: dict[str, list[int]] | None = None) -> Path:
    """A built folder ``root/name`` with the given rows per shard for each config, and a matching card."""
    shards = shards if shards is not None else {"qa": [3, 2], "mlm": [4]}
    folder = root / name
    start = 0
    for config, sizes in shards.items():
        for i, rows in enumerate(sizes):
            write_shard(folder / "data" / config / f"test-{i:05d}-of-{len(sizes):05d}.parquet", rows, start)
            start += rows
    write_card(folder, {config: sum(sizes) for config, sizes in shards.items()})
    return folder


@pytest.fixture(autouse=True)
def hub_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Offline, no token, HF_HOME in tmp: the ecosystem's test settings."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "hf_home" / "token"))
    for var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_OIDC_RESOURCE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)  # the CLI's default metrics/ and space/ folders never see the repository's


@pytest.fixture
def online(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let huggingface_hub make requests (tests then only ever point it at 127.0.0.1 or a fake API)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)


def point_hub_at(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    """HF_ENDPOINT is read at import time, so patch the constant as well as the variable."""
    monkeypatch.setenv("HF_ENDPOINT", url)
    monkeypatch.setattr(constants, "ENDPOINT", url)


def closed_port() -> int:
    """A loopback port with nothing listening (bound, read, released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A loopback server that accepts connections and never answers: a hung Hub."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join(2)
    for conn in accepted:
        conn.close()
    server.close()


class FakeApi:
    """Records the HfApi calls publish makes; optionally raises from create_repo."""

    endpoint = "https://hub.example"

    def __init__(self, remote: list[str] | None = None, error: BaseException | None = None) -> None:
        self.calls: list[tuple[str, tuple, dict]] = []
        self.remote = remote or []
        self.error = error

    def create_repo(self, *args: Any, **kwargs: Any) -> str:
        self.calls.append(("create_repo", args, kwargs))
        if self.error is not None:
            raise self.error
        return f"{self.endpoint}/datasets/{args[0]}"

    def list_repo_files(self, *args: Any, **kwargs: Any) -> list[str]:
        self.calls.append(("list_repo_files", args, kwargs))
        return list(self.remote)

    def create_commit(self, *args: Any, **kwargs: Any) -> None:
        self.calls.append(("create_commit", args, kwargs))


# ---------------------------------------------------------------------------------------------------------
# plan_upload


def test_plan_lists_exact_files_sizes_and_rows(tmp_path: Path) -> None:
    folder = make_dataset(tmp_path)
    (folder / "notes.txt").write_text("scratch")
    (folder / "data" / ".cache").mkdir()
    (folder / "data" / ".cache" / "lock").write_text("")
    plan = plan_upload(folder, "unqover/gender")

    assert plan.repo_id == "unqover/gender"
    assert [f.path_in_repo for f in plan.files] == [
        "README.md",
        "data/mlm/test-00000-of-00001.parquet",
        "data/qa/test-00000-of-00002.parquet",
        "data/qa/test-00001-of-00002.parquet",
    ]
    for f in plan.files:
        assert f.local_path == folder / f.path_in_repo
        assert f.size == f.local_path.stat().st_size > 0
    assert plan.total_bytes == sum(f.size for f in plan.files)
    assert [(c.name, c.rows, c.default) for c in plan.configs] == [
        ("qa", {"test": 5}, True),
        ("mlm", {"test": 4}, False),
    ]
    assert plan.configs[0].files == (
        "data/qa/test-00000-of-00002.parquet",
        "data/qa/test-00001-of-00002.parquet",
    )
    assert plan.ignored == ("data/.cache/lock", "notes.txt")  # reported, not uploaded
    text = "\n".join(describe(plan))
    assert "not uploaded" in text and "notes.txt" in text


def test_plan_folder_loads_with_datasets(tmp_path: Path) -> None:
    """The fixture mirrors the real layout: datasets reads what plan_upload accepts."""
    datasets = pytest.importorskip("datasets")
    folder = make_dataset(tmp_path)
    plan = plan_upload(folder, "unqover/gender")
    ds = datasets.load_dataset(str(folder), "qa", split="test", cache_dir=str(tmp_path / "cache"))
    assert len(ds) == plan.configs[0].rows["test"] == 5
    assert ds.column_names == SCHEMA.names


def test_card_without_num_examples_is_accepted(tmp_path: Path) -> None:
    folder = make_dataset(tmp_path, shards={"qa": [2]})
    write_card(folder, {"qa": None})
    assert plan_upload(folder, "unqover/gender").configs[0].rows == {"test": 2}


def test_missing_data_says_to_build(tmp_path: Path) -> None:
    folder = tmp_path / "religion"
    write_card(folder, {"qa": 10})
    with pytest.raises(UnqoverError, match=r"config 'qa'.*matches no files.*unqover build-datasets"):
        plan_upload(folder, "unqover/religion")


def test_missing_card(tmp_path: Path) -> None:
    (tmp_path / "gender").mkdir()
    with pytest.raises(UnqoverError, match=r"no dataset card at .*README\.md"):
        plan_upload(tmp_path / "gender", "unqover/gender")


def test_card_count_mismatch_names_config_and_counts(tmp_path: Path) -> None:
    folder = make_dataset(tmp_path, shards={"qa": [3, 2]})
    write_card(folder, {"qa": 6})
    with pytest.raises(
        UnqoverError, match=r"config 'qa', split 'test': the Parquet files hold 5 rows .*num_examples: 6"
    ):
        plan_upload(folder, "unqover/gender")


def test_schema_mismatch_across_shards_names_file_and_column(tmp_path: Path) -> None:
    folder = make_dataset(tmp_path, shards={"qa": [3, 2]})
    other = pa.schema([("id", pa.string()), ("template_id", pa.int64()), ("context", pa.string())])
    write_shard(folder / "data/qa/test-00001-of-00002.parquet", 2, schema=other)
    with pytest.raises(
        UnqoverError, match=r"test-00001-of-00002\.parquet has a different schema.*'template_id' is int64"
    ):
        plan_upload(folder, "unqover/gender")


def test_extra_column_in_one_shard(tmp_path: Path) -> None:
    folder = make_dataset(tmp_path, shards={"qa": [3, 2]})
    write_shard(
        folder / "data/qa/test-00001-of-00002.parquet", 2, schema=SCHEMA.append(pa.field("x", pa.string()))
    )
    with pytest.raises(UnqoverError, match=r"extra column\(s\) \['x'\]"):
        plan_upload(folder, "unqover/gender")


def test_unparsable_yaml_names_card(tmp_path: Path) -> None:
    folder = make_dataset(tmp_path)
    write_card(folder, {}, front_matter="configs:\n  - config_name: qa\n    data_files: [unclosed\n")
    with pytest.raises(UnqoverError, match=r"front matter of .*README\.md does not parse"):
        plan_upload(folder, "unqover/gender")


def test_card_without_front_matter_or_configs(tmp_path: Path) -> None:
    folder = make_dataset(tmp_path)
    (folder / "README.md").write_text("# no metadata\n")
    with pytest.raises(UnqoverError, match="no YAML front matter"):
        plan_upload(folder, "unqover/gender")
    write_card(folder, {}, front_matter="license: mit\n")
    with pytest.raises(UnqoverError, match="lists no configs"):
        plan_upload(folder, "unqover/gender")


def test_incomplete_shard_set(tmp_path: Path) -> None:
    folder = make_dataset(tmp_path, shards={"qa": [3, 2, 1]})
    (folder / "data/qa/test-00001-of-00003.parquet").unlink()
    write_card(folder, {"qa": 4})
    with pytest.raises(UnqoverError, match=r"missing shard\(s\) test-00001-of-00003\.parquet"):
        plan_upload(folder, "unqover/gender")


def test_shards_of_two_builds(tmp_path: Path) -> None:
    folder = make_dataset(tmp_path, shards={"qa": [3, 2]})
    write_shard(folder / "data/qa/test-00000-of-00001.parquet", 1)
    with pytest.raises(UnqoverError, match="mixes shards of different builds"):
        plan_upload(folder, "unqover/gender")


def test_unreadable_parquet(tmp_path: Path) -> None:
    folder = make_dataset(tmp_path, shards={"qa": [3, 2]})
    (folder / "data/qa/test-00001-of-00002.parquet").write_bytes(b"not parquet")
    with pytest.raises(UnqoverError, match=r"test-00001-of-00002\.parquet is not a readable Parquet file"):
        plan_upload(folder, "unqover/gender")


def test_non_parquet_data_file(tmp_path: Path) -> None:
    folder = make_dataset(tmp_path, shards={"qa": [1]})
    meta = {"configs": [{"config_name": "qa", "data_files": "data/qa/*"}]}
    write_card(folder, {}, front_matter=yaml.safe_dump(meta))
    (folder / "data/qa/rows.csv").write_text("id\n1\n")
    with pytest.raises(UnqoverError, match=r"rows\.csv is not a Parquet file"):
        plan_upload(folder, "unqover/gender")


def test_data_files_outside_folder_rejected(tmp_path: Path) -> None:
    folder = make_dataset(tmp_path, shards={"qa": [1]})
    meta = {"configs": [{"config_name": "qa", "data_files": "../other/*.parquet"}]}
    write_card(folder, {}, front_matter=yaml.safe_dump(meta))
    with pytest.raises(UnqoverError, match="must be relative to the dataset folder"):
        plan_upload(folder, "unqover/gender")


@pytest.mark.parametrize(
    "repo_id", ["gender", "a/b/c", "-bad/gender", "un--qover/gender", "unqover/gen der", "x" * 97 + "/g"]
)
def test_bad_repo_ids(tmp_path: Path, repo_id: str) -> None:
    folder = make_dataset(tmp_path)
    with pytest.raises(UnqoverError, match="invalid"):
        plan_upload(folder, repo_id)


# ---------------------------------------------------------------------------------------------------------
# The command line


def test_dry_run_prints_every_file_and_uploads_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "datasets"
    make_dataset(root, "gender")
    make_dataset(root, "nli-gender", shards={"nli": [2, 2, 2]})
    (root / ".gender.building-x").mkdir()  # an ongoing build's staging folder
    (root / "notes").mkdir()  # no card: not a dataset

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a dry run must not upload")

    monkeypatch.setattr(publish_cli, "publish", refuse)  # what the command calls
    monkeypatch.setattr(huggingface_hub, "HfApi", refuse)
    assert run_publish(["--root", str(root), "--what", "datasets", "--namespace", "me", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "dataset me/gender" in out and "dataset me/nli-gender" in out
    for name in ("gender", "nli-gender"):
        for f in plan_upload(root / name, f"me/{name}").files:
            assert any(
                line.strip().startswith(f.path_in_repo + " ") and f"{f.size:,} bytes" in line
                for line in out.split(f"dataset me/{name} ")[1].split("\ndataset ")[0].splitlines()
            )
    assert "qa (default)  test: 5 rows" in out
    assert "mlm  test: 4 rows" in out
    assert "nli (default)  test: 6 rows" in out
    assert "nothing uploaded" in out
    assert ".gender.building" not in out and "notes" not in out


def test_dry_run_selected_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "datasets"
    make_dataset(root, "gender")
    make_dataset(root, "religion")
    assert run_publish(["religion", "--root", str(root), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "dataset unqover/religion" in out and "unqover/gender" not in out


def test_cli_unknown_name_lists_built(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "datasets"
    make_dataset(root, "gender")
    assert run_publish(["ethnicity", "--root", str(root), "--dry-run"]) == 2
    assert "built under" in capsys.readouterr().err


def test_cli_reports_every_invalid_dataset_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "datasets"
    make_dataset(root, "gender")
    write_card(root / "religion", {"qa": 3})  # card committed, data not built
    write_card(root / "ethnicity", {}, front_matter="configs: [oops\n")
    assert run_publish(["--root", str(root), "--dry-run"]) == 2
    captured = capsys.readouterr()
    assert "nothing was uploaded" in captured.err
    assert "religion: config 'qa'" in captured.err and "unqover build-datasets" in captured.err
    assert "ethnicity:" in captured.err and "does not parse" in captured.err
    assert "Traceback" not in captured.err and captured.out == ""


@pytest.mark.parametrize("namespace", ["", "bad/ns", "-ns", "ns-", "a--b", "with space", "x" * 97])
def test_cli_bad_namespace(tmp_path: Path, namespace: str, capsys: pytest.CaptureFixture[str]) -> None:
    make_dataset(tmp_path / "datasets")
    assert run_publish(["--root", str(tmp_path / "datasets"), f"--namespace={namespace}", "--dry-run"]) == 2
    assert "invalid --namespace" in capsys.readouterr().err


def test_cli_bad_flag_returns_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_publish(["--no-such-flag"]) == 2
    assert "unrecognized arguments" in capsys.readouterr().err


def test_cli_missing_root(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_publish(["--root", str(tmp_path / "nowhere"), "--dry-run"]) == 2
    assert "no datasets folder" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------------------
# publish: offline, token, unreachable and hung endpoints


def test_offline_fails_at_once_without_calls(tmp_path: Path) -> None:
    plan = plan_upload(make_dataset(tmp_path), "unqover/gender")
    api = FakeApi()
    started = time.perf_counter()
    with pytest.raises(UnqoverError) as info:
        publish(plan, token="hf_dummy", api=api)
    assert time.perf_counter() - started < 5
    assert str(info.value) == OFFLINE_MESSAGE and "--dry-run" in OFFLINE_MESSAGE
    assert api.calls == []


def test_offline_cli_exits_2_quickly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_dataset(tmp_path / "datasets")
    started = time.perf_counter()
    assert (
        run_publish(["--root", str(tmp_path / "datasets"), "--what", "datasets", "--token", "hf_dummy"]) == 2
    )
    assert time.perf_counter() - started < 5
    assert "offline mode: set HF_HUB_OFFLINE=0" in capsys.readouterr().err


def test_offline_as_decided_by_huggingface_hub_at_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")  # constant still True, so huggingface_hub would refuse anyway
    with pytest.raises(UnqoverError, match="offline mode"):
        publish(plan_upload(make_dataset(tmp_path), "unqover/gender"), token="hf_dummy", api=FakeApi())


@pytest.mark.usefixtures("online")
def test_missing_token_says_how_to_log_in(tmp_path: Path) -> None:
    api = FakeApi()
    with pytest.raises(UnqoverError) as info:
        publish(plan_upload(make_dataset(tmp_path), "unqover/gender"), api=api)
    assert str(info.value) == TOKEN_MESSAGE
    assert "hf auth login" in TOKEN_MESSAGE and "--token" in TOKEN_MESSAGE and "HF_TOKEN" in TOKEN_MESSAGE
    assert api.calls == []


@pytest.mark.usefixtures("online")
def test_token_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_from_env")
    api = FakeApi()
    publish(plan_upload(make_dataset(tmp_path), "unqover/gender"), api=api)
    assert all(kwargs["token"] == "hf_from_env" for _, _, kwargs in api.calls)


@pytest.mark.usefixtures("online")
def test_unreachable_endpoint_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    point_hub_at(monkeypatch, url)
    plan = plan_upload(make_dataset(tmp_path), "unqover/gender")
    started = time.perf_counter()
    with pytest.raises(UnqoverError, match=rf"cannot reach the Hugging Face Hub at {url} \(ConnectError"):
        publish(plan, token="hf_dummy")  # the real HfApi, endpoint from the (patched) constant
    assert time.perf_counter() - started < 5
    with pytest.raises(UnqoverError, match="cannot reach"):
        publish(plan, token="hf_dummy", endpoint=url)  # and passed explicitly


@pytest.mark.usefixtures("online")
def test_unreachable_endpoint_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    point_hub_at(monkeypatch, f"http://127.0.0.1:{closed_port()}")
    make_dataset(tmp_path / "datasets")
    started = time.perf_counter()
    assert (
        run_publish(["--root", str(tmp_path / "datasets"), "--what", "datasets", "--token", "hf_dummy"]) == 2
    )
    assert time.perf_counter() - started < 5
    err = capsys.readouterr().err
    assert err.startswith("unqover: error: cannot reach the Hugging Face Hub") and "Traceback" not in err


@pytest.mark.usefixtures("online")
def test_hung_endpoint_times_out(tmp_path: Path, silent_server: str) -> None:
    plan = plan_upload(make_dataset(tmp_path), "unqover/gender")
    factory = _http._GLOBAL_CLIENT_FACTORY
    started = time.perf_counter()
    with pytest.raises(UnqoverError, match=r"no answer from the Hugging Face Hub .* within 1 s"):
        publish(plan, token="hf_dummy", endpoint=silent_server, timeout=1)
    assert time.perf_counter() - started < 5
    assert _http._GLOBAL_CLIENT_FACTORY is factory  # the timeout is not left behind


@pytest.mark.usefixtures("online")
@pytest.mark.parametrize(
    ("status", "message"), [(401, "rejected the token"), (403, "may not write"), (500, "HTTP 500")]
)
def test_hub_http_errors_become_clear(tmp_path: Path, status: int, message: str) -> None:
    request = httpx2.Request("POST", "https://hub.example/api/repos/create")
    error = HfHubHTTPError(f"{status} error", response=httpx2.Response(status, request=request))
    with pytest.raises(UnqoverError, match=message):
        publish(
            plan_upload(make_dataset(tmp_path), "unqover/gender"), token="hf_dummy", api=FakeApi(error=error)
        )


# ---------------------------------------------------------------------------------------------------------
# publish: the calls it makes


@pytest.mark.usefixtures("online")
def test_publish_commits_exactly_the_planned_files(tmp_path: Path) -> None:
    folder = make_dataset(tmp_path)
    (folder / "notes.txt").write_text("not uploaded")
    plan = plan_upload(folder, "me/gender")
    remote = [
        ".gitattributes",
        "README.md",
        "LICENSE",
        "data/qa/test-00000-of-00002.parquet",
        "data/qa/test-00000-of-00005.parquet",  # a stale shard of an older build
        "data/old/test-00000-of-00001.parquet",  # a config that no longer exists
    ]
    api = FakeApi(remote=remote)
    url = publish(plan, token="hf_dummy", private=True, api=api)

    assert url == "https://hub.example/datasets/me/gender"
    assert [name for name, _, _ in api.calls] == ["create_repo", "list_repo_files", "create_commit"]
    _, args, kwargs = api.calls[0]
    assert args == ("me/gender",)
    assert kwargs == {"repo_type": "dataset", "exist_ok": True, "private": True, "token": "hf_dummy"}
    assert api.calls[1][2]["repo_type"] == "dataset"

    _, args, kwargs = api.calls[2]
    assert args[0] == "me/gender" and kwargs["repo_type"] == "dataset" and kwargs["token"] == "hf_dummy"
    operations = args[1]
    adds = [op for op in operations if isinstance(op, CommitOperationAdd)]
    deletes = [op for op in operations if isinstance(op, CommitOperationDelete)]
    assert len(adds) + len(deletes) == len(operations)
    assert [(op.path_in_repo, op.path_or_fileobj) for op in adds] == [
        (f.path_in_repo, str(f.local_path)) for f in plan.files
    ]
    assert "notes.txt" not in {op.path_in_repo for op in adds}
    assert sorted(op.path_in_repo for op in deletes) == [
        "data/old/test-00000-of-00001.parquet",
        "data/qa/test-00000-of-00005.parquet",
    ]
    assert "qa: 5 rows" in kwargs["commit_description"]


@pytest.mark.usefixtures("online")
def test_cli_publishes_every_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "datasets"
    make_dataset(root, "gender")
    make_dataset(root, "religion")
    api = FakeApi()
    monkeypatch.setattr(huggingface_hub, "HfApi", lambda **kwargs: api)
    assert run_publish(["--root", str(root), "--what", "datasets", "--token", "hf_dummy", "--private"]) == 0
    created = [args[0] for name, args, kwargs in api.calls if name == "create_repo"]
    assert created == ["unqover/gender", "unqover/religion"]
    assert all(kwargs["private"] for name, _, kwargs in api.calls if name == "create_repo")
    assert (
        "published unqover/religion: https://hub.example/datasets/unqover/religion" in capsys.readouterr().out
    )


# ---------------------------------------------------------------------------------------------------------
# publish against a minimal fake Hub on 127.0.0.1: the real HfApi code path, end to end


@pytest.fixture
def fake_hub(
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[str, list[tuple[str, str, bytes]], dict[str, Any]]]:
    """Serves the five endpoints one small commit needs; records (method, path, body); ``state`` tunes replies."""
    import json
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    requests: list[tuple[str, str, bytes]] = []
    state: dict[str, Any] = {"remote": [], "yaml_errors": []}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def reply(self, obj: Any, code: int = 200) -> None:
            body = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            requests.append(("GET", self.path, b""))
            if "/tree/main" in self.path:
                return self.reply(
                    [{"type": "file", "path": p, "size": 1, "oid": "0" * 40} for p in state["remote"]]
                )
            self.reply({"error": "not found"}, 404)

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            requests.append(("POST", self.path, body))
            base = f"http://127.0.0.1:{self.server.server_address[1]}"
            if self.path == "/api/repos/create":
                return self.reply({"url": f"{base}/datasets/me/gender", "name": "me/gender"})
            if self.path == "/api/validate-yaml":
                errors = state["yaml_errors"]
                return self.reply({"errors": [{"message": m} for m in errors]}, 400 if errors else 200)
            if "/preupload/" in self.path:
                files = json.loads(body)["files"]
                return self.reply(
                    {
                        "files": [
                            {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files
                        ]
                    }
                )
            if "/commit/" in self.path:
                oid = "a" * 40
                return self.reply({"commitUrl": f"{base}/datasets/me/gender/commit/{oid}", "commitOid": oid})
            self.reply({"error": "not found"}, 404)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", requests, state
    server.shutdown()
    server.server_close()
    thread.join(2)


@pytest.mark.usefixtures("online")
def test_publish_through_real_hfapi(
    tmp_path: Path, fake_hub: tuple[str, list[tuple[str, str, bytes]], dict[str, Any]]
) -> None:
    import base64
    import json

    url, requests, state = fake_hub
    state["remote"] = [".gitattributes", "README.md", "data/qa/test-00000-of-00009.parquet"]
    folder = make_dataset(tmp_path)
    (folder / "notes.txt").write_text("not uploaded")
    plan = plan_upload(folder, "me/gender")
    assert publish(plan, token="hf_dummy", private=True, endpoint=url) == f"{url}/datasets/me/gender"

    create = json.loads(next(body for method, path, body in requests if path == "/api/repos/create"))
    assert create == {"name": "gender", "organization": "me", "visibility": "private", "type": "dataset"}
    commit = next(body for method, path, body in requests if path == "/api/datasets/me/gender/commit/main")
    entries = [json.loads(line) for line in commit.decode().splitlines()]
    uploaded = {
        e["value"]["path"]: base64.b64decode(e["value"]["content"]) for e in entries if e["key"] == "file"
    }
    assert uploaded == {f.path_in_repo: f.local_path.read_bytes() for f in plan.files}
    assert [e["value"]["path"] for e in entries if e["key"] == "deletedFile"] == [
        "data/qa/test-00000-of-00009.parquet"
    ]


@pytest.mark.usefixtures("online")
def test_card_rejected_by_hub_is_clear(
    tmp_path: Path, fake_hub: tuple[str, list[tuple[str, str, bytes]], dict[str, Any]]
) -> None:
    url, requests, state = fake_hub
    state["yaml_errors"] = ['"license" must be one of [apache-2.0, mit, ...]']
    plan = plan_upload(make_dataset(tmp_path), "me/gender")
    with pytest.raises(
        UnqoverError,
        match=r"(?s)cannot publish me/gender: Invalid metadata in README.md.*\"license\" must be",
    ):
        publish(plan, token="hf_dummy", endpoint=url)
    assert not any("/commit/" in path for _, path, _ in requests)


# ---------------------------------------------------------------------------------------------------------
# Spaces: evaluate modules and the demo app

REPO = Path(__file__).resolve().parents[2]
MODULE_SOURCE = '''"""A test measurement."""

import datasets
import evaluate


class Helper:
    pass


class {cls}(evaluate.Measurement):
    def _info(self):
        return evaluate.MeasurementInfo(description="", citation="", inputs_description="", features=datasets.Features({{}}))

    def _compute(self):
        return {{}}
'''
APP_SOURCE = "import gradio as gr\n\n\ndef build_app():\n    return gr.Blocks()\n"


def space_meta(**changes: Any) -> dict[str, Any]:
    """Valid Space front matter of an evaluate module; ``None`` values drop a key."""
    meta: dict[str, Any] = {
        "title": "Test bias",
        "colorFrom": "indigo",
        "colorTo": "gray",
        "sdk": "gradio",
        "sdk_version": "6.31.0",
        "app_file": "app.py",
        "short_description": "A test measurement",
        "tags": ["evaluate", "measurement"],
    }
    meta.update(changes)
    return {key: value for key, value in meta.items() if value is not None}


def write_space_card(folder: Path, meta: dict[str, Any] | str) -> None:
    text = meta if isinstance(meta, str) else yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
    (folder / "README.md").write_text(f"---\n{text}---\n\n# Card\n", encoding="utf-8")


def make_module(root: Path, name: str = "test_bias", **meta: Any) -> Path:
    """An evaluate module folder ``root/name`` with the four files, valid unless changed."""
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(MODULE_SOURCE.format(cls="TestBias"))
    (folder / "app.py").write_text(APP_SOURCE)
    (folder / "requirements.txt").write_text(
        "# for the Space\nevaluate>=0.4.6\nunqover @ git+https://example.org/u.git\n"
    )
    write_space_card(folder, space_meta(**meta))
    return folder


def make_space(folder: Path, **meta: Any) -> Path:
    """A demo-app folder with an app, a helper package, requirements and Space front matter."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "app.py").write_text(APP_SOURCE)
    (folder / "ui").mkdir(exist_ok=True)
    (folder / "ui" / "tables.py").write_text("COLUMNS = []\n")
    (folder / "requirements.txt").write_text("unqover[space]\n")
    defaults = {
        "short_description": "Probe a model for stereotyping bias",
        "tags": ["bias"],
        "suggested_hardware": "zero-a10g",
        "datasets": ["unqover/gender", "unqover/religion"],
        "models": ["distilbert-base-uncased"],
    }
    write_space_card(folder, space_meta(**{**defaults, **meta}))
    return folder


def test_plan_module_lists_files_and_the_class(tmp_path: Path) -> None:
    folder = make_module(tmp_path)
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "test_bias.cpython-311.pyc").write_bytes(b"\0")
    (folder / ".DS_Store").write_bytes(b"\0")
    plan = pub.plan_module(folder, "me/test_bias")
    assert plan.repo_type == "space" and plan.kind == "evaluate module"
    assert [f.path_in_repo for f in plan.files] == ["README.md", "app.py", "requirements.txt", "test_bias.py"]
    assert all(f.local_path == folder / f.path_in_repo and f.size > 0 for f in plan.files)
    assert plan.ignored == (".DS_Store", "__pycache__/test_bias.cpython-311.pyc")
    text = "\n".join(describe(plan))
    assert text.startswith("evaluate module me/test_bias  (Gradio Space")
    assert 'TestBias(evaluate.Measurement); load with evaluate.load("me/test_bias")' in text
    assert "gradio 6.31.0: A test measurement" in text and "not uploaded (2" in text


@pytest.mark.parametrize(
    "source",
    [
        "from evaluate import Metric as Base\n\n\nclass A(Base):\n    pass\n",
        "import evaluate as ev\n\n\nclass A(ev.Metric):\n    pass\n",
    ],
)
def test_plan_module_finds_aliased_bases(tmp_path: Path, source: str) -> None:
    folder = make_module(tmp_path)
    (folder / "test_bias.py").write_text(source)
    assert "A(evaluate.Metric)" in pub.plan_module(folder, "me/test_bias").details[0]


def _break(folder: Path, change: str) -> None:
    """Apply one named defect to a valid module folder."""
    name = folder.name
    if change == "no app":
        (folder / "app.py").unlink()
    elif change == "no class":
        (folder / f"{name}.py").write_text("import evaluate\n\n\nclass A:\n    pass\n")
    elif change == "two classes":
        (folder / f"{name}.py").write_text(
            MODULE_SOURCE.format(cls="A") + "\n\nclass B(evaluate.Metric):\n    pass\n"
        )
    elif change == "module syntax":
        (folder / f"{name}.py").write_text("class A(evaluate.Metric:\n")
    elif change == "app syntax":
        (folder / "app.py").write_text("def build_app(:\n")
    elif change == "empty requirements":
        (folder / "requirements.txt").write_text("# nothing\n\n")
    elif change == "bad requirement":
        (folder / "requirements.txt").write_text("evaluate>=>0.4\n")
    elif change == "no front matter":
        (folder / "README.md").write_text("# Card without front matter\n")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("no app", "lacks app.py"),
        ("no class", "exactly one class subclassing evaluate.Metric or evaluate.Measurement .* defines none"),
        ("two classes", r"defines 2 \(A\(evaluate.Measurement\), B\(evaluate.Metric\)\)"),
        ("module syntax", r"test_bias.py does not parse: .* \(line 1\)"),
        ("app syntax", r"app.py does not parse"),
        ("empty requirements", "requirements.txt is empty"),
        ("bad requirement", "'evaluate>=>0.4' is not a valid requirement"),
        ("no front matter", "has no YAML front matter"),
    ],
)
def test_plan_module_rejects_broken_files(tmp_path: Path, change: str, message: str) -> None:
    folder = make_module(tmp_path)
    _break(folder, change)
    with pytest.raises(UnqoverError, match=message):
        pub.plan_module(folder, "me/test_bias")


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        ({"sdk": "streamlit"}, "needs 'sdk: gradio'"),
        ({"sdk_version": None}, "'sdk_version' must be a full Gradio version"),
        ({"sdk_version": 6.3}, "quote it"),
        ({"sdk_version": "5.49.1"}, "sdk_version 5.49.1 is not Gradio 6"),
        ({"app_file": "main.py"}, "needs 'app_file: app.py'"),
        ({"short_description": None}, "needs a 'short_description'"),
        ({"short_description": "x" * 61}, "short_description has 61 characters; the Hub allows at most 60"),
        ({"tags": ["measurement"]}, "tags must include 'evaluate'"),
        ({"tags": None}, "tags must include 'evaluate'"),
        ({"colorFrom": "teal"}, "colorFrom must be one of"),
    ],
)
def test_plan_module_checks_front_matter(tmp_path: Path, meta: dict[str, Any], message: str) -> None:
    folder = make_module(tmp_path, **meta)
    with pytest.raises(UnqoverError, match=message) as info:
        pub.plan_module(folder, "me/test_bias")
    assert str(folder / "README.md") in str(info.value)


def test_plan_module_accepts_60_characters(tmp_path: Path) -> None:
    assert pub.plan_module(make_module(tmp_path, short_description="x" * 60), "me/test_bias")


def test_plan_module_repo_name_must_be_the_folder_name(tmp_path: Path) -> None:
    with pytest.raises(UnqoverError, match=r"must be named 'test_bias' .*downloads test_bias.py"):
        pub.plan_module(make_module(tmp_path), "me/other")


def test_plan_space_lists_every_file_and_details(tmp_path: Path) -> None:
    folder = make_space(tmp_path / "space")
    (folder / "ui" / "__pycache__").mkdir()
    (folder / "ui" / "__pycache__" / "tables.cpython-311.pyc").write_bytes(b"\0")
    plan = pub.plan_space(folder, "me/demo")
    assert plan.repo_type == "space" and plan.kind == "space"
    assert [f.path_in_repo for f in plan.files] == ["README.md", "app.py", "requirements.txt", "ui/tables.py"]
    assert plan.ignored == ("ui/__pycache__/tables.cpython-311.pyc",)
    text = "\n".join(describe(plan))
    assert text.startswith("space me/demo  (Gradio Space")
    assert "suggested_hardware: zero-a10g" in text
    assert "datasets: unqover/gender, unqover/religion" in text and "models: distilbert-base-uncased" in text


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        ({"suggested_hardware": "h100-mega"}, "suggested_hardware 'h100-mega' is not one of"),
        ({"hardware": "zero-a10g"}, "no 'hardware' key .* use 'suggested_hardware'"),
        ({"datasets": "unqover/gender"}, "'datasets' must be a list of Hub repo ids"),
        ({"models": ["me/a/b"]}, "'models': invalid repo id 'me/a/b'"),
        ({"models": ["bad name"]}, "'bad name', which is not a Hub repo id"),
        ({"app_file": "main.py"}, "app_file 'main.py' is not a file in"),
        ({"sdk_version": "6.x"}, "'sdk_version' must be a full Gradio version"),
        ({"short_description": "y" * 80}, "80 characters"),
    ],
)
def test_plan_space_checks_front_matter(tmp_path: Path, meta: dict[str, Any], message: str) -> None:
    with pytest.raises(UnqoverError, match=message):
        pub.plan_space(make_space(tmp_path / "space", **meta), "me/demo")


def test_plan_space_needs_its_files(tmp_path: Path) -> None:
    with pytest.raises(UnqoverError, match="no Space folder at"):
        pub.plan_space(tmp_path / "nowhere", "me/demo")
    folder = make_space(tmp_path / "space")
    (folder / "ui" / "tables.py").write_text("def broken(:\n")
    with pytest.raises(UnqoverError, match=r"tables.py does not parse"):
        pub.plan_space(folder, "me/demo")
    (folder / "ui" / "tables.py").write_text("")
    (folder / "requirements.txt").unlink()
    with pytest.raises(UnqoverError, match=r"missing .*requirements\.txt"):
        pub.plan_space(folder, "me/demo")
    (folder / "README.md").unlink()
    with pytest.raises(UnqoverError, match="no Space card at"):
        pub.plan_space(folder, "me/demo")


def real_modules() -> list[Path]:
    return pub.discover_modules(REPO / "metrics")


def test_real_modules_exist() -> None:
    names = [p.name for p in real_modules()]
    assert {"unqover_bias", "nli_gender_bias"} <= set(names)


@pytest.mark.parametrize("folder", real_modules(), ids=lambda p: p.name)
def test_real_module_folders_validate(folder: Path) -> None:
    plan = pub.plan_module(folder, f"unqover/{folder.name}")
    uploaded = {f.path_in_repo for f in plan.files}
    assert {f"{folder.name}.py", "README.md", "requirements.txt", "app.py"} <= uploaded


def _import_app(folder: Path) -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"{folder.name}_app", folder / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.parametrize("folder", real_modules(), ids=lambda p: p.name)
def test_real_module_apps_build_with_gradio_6(folder: Path) -> None:
    import gradio as gr

    assert gr.__version__.startswith("6.")
    app = _import_app(folder).build_app()
    assert isinstance(app, gr.Blocks)
    endpoints = app.get_api_info()["named_endpoints"]
    assert endpoints, f"{folder.name}/app.py exposes no API endpoint"


@pytest.mark.slow
def test_nli_gender_bias_app_serves_a_measurement(tmp_path: Path) -> None:
    import gradio_client

    app = _import_app(REPO / "metrics" / "nli_gender_bias").build_app()
    rows = ["p_female,p_male,occupation_gender,cluster"]
    rows += [
        f"{0.9 if i % 2 else 0.2},{0.3 if i % 2 else 0.7},{'female' if i % 2 else 'male'},{i}"
        for i in range(8)
    ]
    csv = tmp_path / "scored.csv"
    csv.write_text("\n".join(rows) + "\n")
    app.launch(prevent_thread_lock=True, server_name="127.0.0.1", quiet=True)
    try:
        client = gradio_client.Client(app.local_url, verbose=False)
        headline, by_gender, _ = client.predict(
            gradio_client.handle_file(str(csv)), "half", 0.1, 0, 0, api_name="/measure"
        )
    finally:
        app.close()
    assert "8 instances" in headline and "B = stereotypical hypothesis wins" in headline
    assert {row[0] for row in by_gender["data"]} == {"female", "male"}


# ---------------------------------------------------------------------------------------------------------
# Spaces: the command line and the calls publish makes


def make_tree(root: Path) -> dict[str, Path]:
    """A repository-like tree: built datasets, two modules and a Space folder."""
    make_dataset(root / "datasets", "gender")
    make_module(root / "metrics", "a_bias")
    make_module(root / "metrics", "b_bias")
    make_space(root / "space")
    return {"datasets": root / "datasets", "metrics": root / "metrics", "space": root / "space"}


def tree_args(tree: dict[str, Path]) -> list[str]:
    return ["--root", str(tree["datasets"]), "--metrics", str(tree["metrics"]), "--space", str(tree["space"])]


def test_dry_run_lists_every_repo_and_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = make_tree(tmp_path)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a dry run must not upload")

    monkeypatch.setattr(publish_cli, "publish", refuse)  # what the command calls
    monkeypatch.setattr(huggingface_hub, "HfApi", refuse)
    assert run_publish([*tree_args(tree), "--namespace", "me", "--space-name", "demo", "--dry-run"]) == 0
    out = capsys.readouterr().out
    heads = [line for line in out.splitlines() if not line.startswith(" ")]
    assert [h.split("  (")[0] for h in heads[:-1]] == [
        "dataset me/gender",
        "evaluate module me/a_bias",
        "evaluate module me/b_bias",
        "space me/demo",
    ]
    for plan in (
        pub.plan_module(tree["metrics"] / "a_bias", "me/a_bias"),
        pub.plan_space(tree["space"], "me/demo"),
    ):
        section = out.split(f" {plan.repo_id}  (")[1].split("\nevaluate module ")[0].split("\nspace ")[0]
        for f in plan.files:
            assert any(
                line.strip().startswith(f.path_in_repo + " ") and f"{f.size:,} bytes" in line
                for line in section.splitlines()
            )
    assert heads[-1].startswith("dry run: 1 dataset(s) and 3 Space(s)") and "nothing uploaded" in heads[-1]


def test_what_selects_kinds_and_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = make_tree(tmp_path)
    assert run_publish([*tree_args(tree), "--what", "modules,space", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "dataset " not in out and "unqover/a_bias" in out and "space unqover/unqover " in out
    assert run_publish([*tree_args(tree), "b_bias", "gender", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "dataset unqover/gender" in out and "unqover/b_bias" in out
    assert "a_bias" not in out and "space unqover" not in out
    assert run_publish([*tree_args(tree), "demo", "--space-name", "demo", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "space unqover/demo" in out and "evaluate module" not in out and "dataset " not in out


def test_cli_unknown_name_lists_what_exists(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = make_tree(tmp_path)
    assert run_publish([*tree_args(tree), "c_bias", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "nothing named 'c_bias'" in err
    assert "datasets built under" in err and "evaluate modules under" in err and "a_bias, b_bias" in err
    assert run_publish([*tree_args(tree), "gender", "--what", "modules", "--dry-run"]) == 2  # not a module
    assert "nothing named 'gender'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--what", "models"], "argument --what: 'models': choose from datasets, modules, space or all"),
        (["--what", "datasets,"], None),
        (["--what", ","], "argument --what: ',': choose from"),
        (["--space-name", "a--b"], "invalid --space-name 'a--b'"),
    ],
)
def test_cli_bad_selection(argv: list[str], message: str | None, capsys: pytest.CaptureFixture[str]) -> None:
    if message is None:  # a trailing comma is harmless: datasets only, under the default (missing) root
        assert run_publish([*argv, "--dry-run"]) == 2
        err = capsys.readouterr().err
        assert "no datasets folder" in err and "evaluate modules" not in err
        return
    assert run_publish([*argv, "--dry-run"]) == 2
    assert message in capsys.readouterr().err


def test_cli_all_reports_every_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = make_tree(tmp_path)
    _break(tree["metrics"] / "b_bias", "two classes")
    write_space_card(tree["space"], space_meta(sdk_version="5.0.0"))
    (tmp_path / "metrics" / "half_written").mkdir()  # a module being written: reported, not skipped
    assert run_publish([*tree_args(tree), "--dry-run"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "nothing was uploaded" in captured.err
    assert "b_bias: " in captured.err and "defines 2" in captured.err
    assert "half_written: evaluate module" in captured.err and "lacks half_written.py" in captured.err
    assert "Space unqover: " in captured.err and "is not Gradio 6" in captured.err


def test_cli_all_needs_every_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_dataset(tmp_path / "datasets")
    assert (
        run_publish(["--root", str(tmp_path / "datasets"), "--dry-run"]) == 2
    )  # cwd is tmp_path: no metrics/, space/
    err = capsys.readouterr().err
    assert "no evaluate modules folder at metrics" in err and "no Space folder at space" in err


@pytest.mark.usefixtures("online")
def test_publish_space_mirrors_the_folder(tmp_path: Path) -> None:
    plan = pub.plan_module(make_module(tmp_path), "me/test_bias")
    api = FakeApi(remote=[".gitattributes", "README.md", "app.py", "old_helper.py", ".hidden"])
    url = publish(plan, token="hf_dummy", private=True, api=api)
    assert url == "https://hub.example/spaces/me/test_bias"
    assert [name for name, _, _ in api.calls] == ["create_repo", "list_repo_files", "create_commit"]
    assert api.calls[0][1] == ("me/test_bias",)
    assert api.calls[0][2] == {
        "repo_type": "space",
        "exist_ok": True,
        "private": True,
        "token": "hf_dummy",
        "space_sdk": "gradio",
    }
    assert api.calls[1][2]["repo_type"] == "space"
    args, kwargs = api.calls[2][1], api.calls[2][2]
    assert kwargs["repo_type"] == "space" and "(evaluate module)" in kwargs["commit_message"]
    adds = [op for op in args[1] if isinstance(op, CommitOperationAdd)]
    deletes = [op.path_in_repo for op in args[1] if isinstance(op, CommitOperationDelete)]
    assert [(op.path_in_repo, op.path_or_fileobj) for op in adds] == [
        (f.path_in_repo, str(f.local_path)) for f in plan.files
    ]
    assert deletes == ["old_helper.py"]  # not .gitattributes, not hidden files, not planned ones


def test_publish_space_offline_fails_at_once(tmp_path: Path) -> None:
    api = FakeApi()
    with pytest.raises(UnqoverError) as info:
        publish(pub.plan_space(make_space(tmp_path / "space"), "me/demo"), token="hf_dummy", api=api)
    assert str(info.value) == OFFLINE_MESSAGE and api.calls == []


@pytest.mark.usefixtures("online")
def test_publish_space_without_token(tmp_path: Path) -> None:
    api = FakeApi()
    with pytest.raises(UnqoverError) as info:
        publish(pub.plan_space(make_space(tmp_path / "space"), "me/demo"), api=api)
    assert str(info.value) == TOKEN_MESSAGE and api.calls == []


@pytest.mark.usefixtures("online")
def test_cli_publishes_everything_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = make_tree(tmp_path)
    api = FakeApi()
    monkeypatch.setattr(huggingface_hub, "HfApi", lambda **kwargs: api)
    assert run_publish([*tree_args(tree), "--token", "hf_dummy", "--space-name", "demo"]) == 0
    created = [
        (args[0], kwargs["repo_type"], kwargs.get("space_sdk"))
        for name, args, kwargs in api.calls
        if name == "create_repo"
    ]
    assert created == [
        ("unqover/gender", "dataset", None),
        ("unqover/a_bias", "space", "gradio"),
        ("unqover/b_bias", "space", "gradio"),
        ("unqover/demo", "space", "gradio"),
    ]
    out = capsys.readouterr().out
    assert "published unqover/demo: https://hub.example/spaces/unqover/demo" in out


@pytest.mark.usefixtures("online")
def test_publish_space_unreachable(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    plan = pub.plan_space(make_space(tmp_path / "space"), "me/demo")
    started = time.perf_counter()
    with pytest.raises(UnqoverError, match=rf"cannot reach the Hugging Face Hub at {url}"):
        publish(plan, token="hf_dummy", endpoint=url)
    assert time.perf_counter() - started < 5


@pytest.mark.usefixtures("online")
def test_publish_space_through_real_hfapi(
    tmp_path: Path, fake_hub: tuple[str, list[tuple[str, str, bytes]], dict[str, Any]]
) -> None:
    import base64
    import json

    url, requests, state = fake_hub
    state["remote"] = [".gitattributes", "README.md", "stale.py"]
    plan = pub.plan_module(make_module(tmp_path), "me/test_bias")
    assert publish(plan, token="hf_dummy", endpoint=url) == f"{url}/spaces/me/test_bias"
    create = json.loads(next(body for method, path, body in requests if path == "/api/repos/create"))
    assert create["type"] == "space" and create["sdk"] == "gradio" and create["name"] == "test_bias"
    commit = next(body for method, path, body in requests if path == "/api/spaces/me/test_bias/commit/main")
    entries = [json.loads(line) for line in commit.decode().splitlines()]
    uploaded = {
        e["value"]["path"]: base64.b64decode(e["value"]["content"]) for e in entries if e["key"] == "file"
    }
    assert uploaded == {f.path_in_repo: f.local_path.read_bytes() for f in plan.files}
    assert [e["value"]["path"] for e in entries if e["key"] == "deletedFile"] == ["stale.py"]
