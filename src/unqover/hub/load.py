"""Load probe rows from a local dataset folder (Parquet + card) or from the Hub, as one Arrow table."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from unqover.env import HUB_ID, hub_unreachable, quiet_hub_logs
from unqover.errors import UnqoverError, first_line
from unqover.hub.folder import IDENTITY_KEY, SPLIT

#: A Hub dataset id: ``name`` or ``owner/name`` of letters, digits, '-', '_', '.'.


def card_header(folder: Path) -> dict:
    """The YAML header of a dataset folder's card, as a mapping (one line naming the card where it is missing or
    malformed)."""
    header = _raw_header(folder)
    return header if isinstance(header, dict) else {}


def _raw_header(folder: Path) -> object:
    card = folder / "README.md"
    if not card.is_file():
        raise UnqoverError(f"{folder} has no README.md dataset card")
    text = card.read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        raise UnqoverError(f"{card} has no YAML header")
    try:
        header = yaml.safe_load(text.split("---\n", 2)[1])
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)  # its line of the header, which starts on the card's line 2
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(err, "problem", None) or first_line(err)
        raise UnqoverError(
            f"{card}: the YAML header is malformed ({problem}{where}); fix it or build the dataset again"
        ) from None
    return header


def _card_configs(folder: Path) -> list[dict]:
    card = folder / "README.md"
    header = _raw_header(folder)
    configs = header.get("configs", []) if isinstance(header, dict) else None
    if not isinstance(configs, list) or not all(
        isinstance(c, dict)
        and isinstance(c.get("config_name"), str)
        and isinstance(c.get("data_files"), list)
        for c in configs
    ):
        raise UnqoverError(
            f"{card}: the YAML header's configs are not a list of {{config_name, data_files}}; fix it or build "
            "the dataset again"
        )
    return configs


def _patterns(config: dict, split: str) -> list[str]:
    """The file patterns a card's config entry gives for ``split``."""
    patterns = [
        f.get("path") for f in config["data_files"] if isinstance(f, dict) and f.get("split") == split
    ]
    return [p if isinstance(p, str) else p[0] for p in patterns if p]


def _matching(folder: Path, patterns: Sequence[str]) -> list[Path]:
    return sorted({p for pattern in patterns for p in folder.glob(pattern)})


def local_data_files(folder: Path, config: str, split: str = "test") -> list[Path]:
    """The Parquet files of one config and split, as the card's ``configs:`` name them."""
    configs = {c["config_name"]: c for c in _card_configs(folder)}
    if config not in configs:
        raise UnqoverError(f"{folder} has no config {config!r}; it has {', '.join(configs) or 'none'}")
    patterns = _patterns(configs[config], split)
    if not patterns:
        raise UnqoverError(f"config {config!r} of {folder} has no split {split!r}")
    files = _matching(folder, patterns)
    if not files:
        raise UnqoverError(f"no data for {config!r} in {folder}: build it first (unqover build-datasets)")
    return files


def check_parquet_files(files: Sequence[Path]) -> list[pa.Schema]:
    """The schema of each Parquet file, read from its footer (cheap); one line naming the first file that is
    truncated or no Parquet at all."""
    schemas = []
    for file in files:
        try:
            schemas.append(pq.read_schema(file))
        except (pa.ArrowException, OSError) as err:
            raise UnqoverError(
                f"{file} is not a readable Parquet file ({first_line(err)}): it may be truncated; build or "
                "download the dataset again"
            ) from None
    return schemas


def check_local_dataset(source: str | Path | None, config: str | None = None, split: str = "test") -> None:
    """What can be checked of a local dataset folder before a model loads: its card, and the Parquet footers of
    ``config``'s files (of every config the card names when ``config`` is None; a config not built yet is left to
    the run). A missing folder, a file, or a Hub id while the Hub cannot be reached is refused here too
    (:func:`check_dataset_source`)."""
    if source is None:
        return
    check_dataset_source(source, config)
    if not Path(source).is_dir():
        return
    folder = Path(source)
    if config is not None:
        check_parquet_files(local_data_files(folder, config, split))
        return
    for entry in _card_configs(folder):
        check_parquet_files(_matching(folder, _patterns(entry, split)))


def split_files(folder: Path, split: str = SPLIT) -> dict[str, list[Path]]:
    """Each config the card names -> its Parquet files of ``split`` (in order; none for a config not built)."""
    return {
        entry["config_name"]: _matching(folder, _patterns(entry, split)) for entry in _card_configs(folder)
    }


def schema_identity(schema: pa.Schema) -> dict | None:
    """The rows' identity a Parquet file's (or an Arrow table's) schema metadata records (``unqover``: probe,
    config, version, fingerprint), or None."""
    raw = (schema.metadata or {}).get(IDENTITY_KEY.encode())
    try:
        record = json.loads(raw) if raw else None
    except ValueError:
        return None
    return record if isinstance(record, dict) and isinstance(record.get("probe"), str) else None


def recorded_identity(folder: Path) -> dict | None:
    """What a local dataset folder says its rows are: its card's ``unqover:`` entry (probe, version, configs),
    else its Parquet files' schema metadata; None where neither says (a folder built by an earlier version).

    Every Parquet file that records a probe must record the card's (data copied in from another dataset is
    refused in one line)."""
    header = card_header(folder)
    card = header.get(IDENTITY_KEY)
    card = card if isinstance(card, dict) and isinstance(card.get("probe"), str) else None
    files = [
        (config, file, schema_identity(schema))
        for config, config_files in split_files(folder).items()
        for file in config_files
        for schema in check_parquet_files([file])
    ]
    recorded = [(config, file, found) for config, file, found in files if found is not None]
    identity = card or (recorded[0][2] if recorded else None)
    for config, file, found in recorded:
        if found["probe"] != identity["probe"]:
            raise UnqoverError(
                f"{file.relative_to(folder)} of {folder} holds rows of the {found['probe']} probe, but the folder's "
                f"{'card says' if card else 'other files say'} {identity['probe']}: build the dataset again"
            )
        if found.get("config", config) != config:
            raise UnqoverError(
                f"{file.relative_to(folder)} of {folder} holds rows of the {found['config']!r} config, not "
                f"{config!r}: build the dataset again"
            )
    return identity


def hub_identity(repo_id: str) -> dict | None:
    """What a Hub dataset's card says its rows are (its ``unqover:`` entry), read from the card alone (a small
    file, cached); None where it says nothing or cannot be read (offline and not cached: the rows are then
    taken as they are). ``datasets`` keeps no Parquet schema metadata in the tables it loads, so the card is
    what a Hub dataset says of itself."""
    if not HUB_ID.fullmatch(repo_id) or "--" in repo_id or ".." in repo_id:
        return None
    if hub_unreachable() not in (None, "offline mode"):  # not tried: the libraries would retry for 30-50 s
        return None
    try:
        from huggingface_hub import hf_hub_download

        with quiet_hub_logs():
            card = Path(hf_hub_download(repo_id, "README.md", repo_type="dataset"))
        header = yaml.safe_load(card.read_text(encoding="utf-8").split("---\n", 2)[1])
    except Exception:  # offline, not found, no card, no header: nothing is said
        return None
    found = header.get(IDENTITY_KEY) if isinstance(header, dict) else None
    return found if isinstance(found, dict) and isinstance(found.get("probe"), str) else None


def source_name(source: str | Path) -> str:
    """How provenance names a dataset: a local folder as its absolute path (so it is found again from any
    working directory), anything else (a Hub id) as given."""
    folder = Path(source)
    return str(folder.resolve()) if folder.is_dir() else str(source)


class HubUnreachable(UnqoverError):
    """A Hub dataset that cannot be loaded because the Hub cannot be reached (``why``: offline mode, or the
    connection's failure); the message says what to do instead."""

    def __init__(self, dataset: str, config: str | None, why: str) -> None:
        instead = (
            "unset HF_HUB_OFFLINE where the network is up"
            if why == "offline mode"
            else "set HF_HUB_OFFLINE=1 to use a cached copy"
        )
        super().__init__(
            f"could not load dataset {dataset!r}{'' if config is None else f' config {config!r}'}: the Hugging "
            "Face Hub cannot be reached "
            f"({why}): pass --dataset FOLDER (a local dataset folder), or {instead}"
        )
        self.why = why


def cached_on_this_machine(hub_id: str) -> bool:
    """Whether a Hub dataset may be in this machine's caches (the Hub's or the datasets library's): offline,
    ``datasets`` can load it from there."""
    from huggingface_hub import constants

    owner, _, name = hub_id.rpartition("/")
    hub = Path(constants.HF_HUB_CACHE) / f"datasets--{hub_id.replace('/', '--')}"
    datasets_home = Path(os.environ.get("HF_DATASETS_CACHE") or Path(constants.HF_HOME) / "datasets")
    return hub.is_dir() or (datasets_home / f"{owner}___{name}").is_dir()


def check_dataset_source(source: str | Path, config: str | None = None) -> None:
    """Refuse at once a dataset that cannot load: a file, a missing folder (a path, not a Hub id OWNER/NAME), or a
    Hub id while the Hub cannot be reached (offline mode: unless a copy may be cached). Nothing is downloaded."""
    folder, text = Path(source), str(source)
    if folder.is_dir():
        return
    if folder.exists():
        raise UnqoverError(
            f"dataset {text} is a file: a dataset is a folder (README.md card + data/) or a Hub id"
        )
    if text.startswith((".", "/", "~")) or not HUB_ID.fullmatch(text) or "--" in text or ".." in text:
        raise UnqoverError(f"dataset folder not found: {text}")
    why = hub_unreachable()  # not tried when unreachable: the libraries would retry for 30-50 s
    if why is not None and (why != "offline mode" or not cached_on_this_machine(text)):
        raise HubUnreachable(text, config, why)


def load_rows(
    source: str | Path, config: str, split: str = "test", columns: Sequence[str] | None = None
) -> pa.Table:
    """Rows of a dataset config: a local folder is read directly; anything else goes to ``datasets`` (Hub).

    ``columns`` selects the columns to read, skipping those the dataset does not have.
    """
    folder = Path(source)
    if folder.is_dir():
        files = local_data_files(folder, config, split)
        present = check_parquet_files(files)[0].names
        try:
            return pq.read_table(files, columns=[c for c in columns if c in present] if columns else None)
        except (pa.ArrowException, OSError) as err:
            raise UnqoverError(
                f"the {config!r} data of {folder} is unreadable ({first_line(err)}); build or download the "
                "dataset again"
            ) from None
    text = str(source)
    check_dataset_source(text, config)
    from datasets import load_dataset

    try:
        with quiet_hub_logs():
            dataset = load_dataset(text, config, split=split)
    except Exception as err:  # datasets raises many types (offline, not found, bad config)
        reason = first_line(err)
        parent = folder.parent
        if str(parent) not in ("", ".") and parent.is_dir():
            raise UnqoverError(
                f"dataset folder not found: {text} (the folder {parent} holds no {folder.name!r}), and it is no "
                f"dataset on the Hub either ({reason})"
            ) from err
        raise UnqoverError(f"could not load dataset {text!r} config {config!r}: {reason}") from err
    table = dataset.data.table
    return table.select([c for c in columns if c in table.column_names]) if columns else table
