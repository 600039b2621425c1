"""The NLI dataset folder: NLI gender-occupation probes (Sharma, Dey & Sinha 2021) as Parquet + card.

Layout, like the UnQover datasets of :mod:`unqover.hub.build` (``load_dataset(folder, config, split="test")``
reads it offline; ``unqover publish`` pushes it); ``name`` is the folder name the caller (the probe's
definition) gives::

    <root>/<name>/README.md                                  the card, YAML ``configs:`` included
    <root>/<name>/data/<config>/test-00000-of-00001.parquet  one shard per config

Configs:

- ``synthetic`` (default), ``synthetic-quoted``, ``synthetic-named``: our own premises
  (:data:`unqover.generate.nli.SYNTHETIC_PREMISES`) with the main templates, the premise-quoted templates and the
  occupation-named templates (paper Appendix A.4). Always built; no corpus, no network.
- ``mnli``, ``snli`` (in-distribution) and ``anli``, ``qnli`` (out-of-distribution): corpus premises that pass
  :func:`unqover.generate.nli_filter.filter_premises`, equalized to ``n_per_occupation`` per occupation
  (:func:`unqover.generate.nli_premises.equalize`), with the main templates. Built only for the sources passed in
  ``sources`` (a local file, or None for the Hub).

The configs are made in :mod:`unqover.hub.nli_configs` from the corpora of :mod:`unqover.hub.nli_sources`; the card
is written by :mod:`unqover.hub.nli_card`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from unqover.generate.ids import dataset_fingerprint
from unqover.hub.folder import BuiltDataset, refuse_existing, staged, write_config_table
from unqover.hub.nli_card import nli_dataset_card
from unqover.hub.nli_configs import NliRequest, make_nli_configs


def build_nli_dataset(
    root: str | os.PathLike,
    *,
    overwrite: bool = False,
    progress: bool = True,
    probe: str | None = None,
    **request: Any,
) -> BuiltDataset:
    """Write ``root/name`` (card + one Parquet shard per config), atomically; card and files record the rows as
    ``probe``'s (default: ``name``).

    ``sources`` maps ``mnli``/``snli``/``anli``/``qnli`` to a local file or folder, or to None to load the
    corpus from the Hub; without it only the synthetic configs are built. ``n_per_occupation`` premises per
    occupation for corpus configs (synthetic configs use all 40 frames unless fewer are asked); ``labels`` is
    ``"paper"`` (default) or ``"data"`` (:func:`unqover.generate.nli_occupations.occupation_labels`). An existing
    ``data/`` folder is an error unless ``overwrite``. ``request``: the fields of
    :class:`unqover.hub.nli_configs.NliRequest` (``name``, ``sources``, ``configs``, ``n_per_occupation``,
    ``labels``, ``seed``), as keywords.
    """
    started = time.perf_counter()
    asked = NliRequest(**request)
    name = asked.name
    target = Path(root) / name
    refuse_existing(target, overwrite)
    builds = make_nli_configs(asked)
    probe = probe or name
    with staged(Path(root), name) as staging:
        for build in tqdm(builds.values(), desc=name, unit="config", disable=not progress):
            fingerprint = dataset_fingerprint(build.table["id"])
            write_config_table(build.table, staging / "data" / build.name, probe, build.name, fingerprint)
        card = nli_dataset_card(builds, asked, probe=probe)
        (staging / "README.md").write_text(card, encoding="utf-8")
    return BuiltDataset(
        target, {config: b.num_rows for config, b in builds.items()}, time.perf_counter() - started
    )
