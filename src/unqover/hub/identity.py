"""What a built dataset folder says its rows are, written where its builder did not (a new probe's builder).

``unqover build-datasets`` stamps every folder it builds: the card's ``unqover:`` entry (probe, unqover version,
each config's rows and fingerprint) and every Parquet file's schema metadata (:func:`unqover.hub.folder.
with_identity`). The builders of this project write both as they build; a folder whose builder wrote neither
gets them here, from its files, so that a new probe's datasets are checked as the built-in ones are.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from unqover.errors import UnqoverError
from unqover.generate.ids import dataset_fingerprint
from unqover.hub.folder import IDENTITY_KEY, card_identity, with_identity
from unqover.hub.load import card_header, schema_identity, split_files


def stamp_identity(folder: Path, probe: str) -> None:
    """Record ``probe`` as the probe of ``folder``'s rows where the card or a Parquet file does not say it yet
    (a folder that says it already is left as it is; one without a card holds no dataset to read)."""
    if not (folder / "README.md").is_file():
        return
    configs = {config: files for config, files in split_files(folder).items() if files}
    unstamped = [
        file for files in configs.values() for file in files if schema_identity(pq.read_schema(file)) is None
    ]
    if not unstamped and card_header(folder).get(IDENTITY_KEY) is not None:
        return  # this project's builders write both as they build
    fingerprints = {}
    for config, files in configs.items():
        if any("id" not in pq.read_schema(file).names for file in files):
            raise UnqoverError(f"the {config!r} rows of {folder} have no 'id' column: every row needs its id")
        ids = pa.chunked_array(
            [chunk for file in files for chunk in pq.read_table(file, columns=["id"])["id"].chunks],
            type=pa.string(),
        )
        fingerprints[config] = (len(ids), dataset_fingerprint(ids))
        for file in files:
            if file in unstamped:
                _rewrite(file, probe, config, fingerprints[config][1])
    if card_header(folder).get(IDENTITY_KEY) is None:
        card = folder / "README.md"
        _, header, body = card.read_text(encoding="utf-8").split("---\n", 2)
        entry = yaml.safe_dump({IDENTITY_KEY: card_identity(probe, fingerprints)}, sort_keys=False)
        card.write_text(f"---\n{header.rstrip(chr(10))}\n{entry}---\n{body}", encoding="utf-8")


def _rewrite(file: Path, probe: str, config: str, fingerprint: str) -> None:
    """``file`` written again with the rows' identity in its schema metadata (atomically)."""
    table = pq.read_table(file)
    table = table.replace_schema_metadata(with_identity(table.schema, probe, config, fingerprint).metadata)
    staged = file.with_name(f".{file.name}.stamping")
    pq.write_table(table, staged)
    staged.replace(file)
