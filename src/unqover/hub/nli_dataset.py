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
from collections.abc import Mapping, Sequence
from pathlib import Path

import pyarrow.parquet as pq
from tqdm.auto import tqdm

from unqover.hub.folder import SPLIT, BuiltDataset, refuse_existing, staged
from unqover.hub.nli_card import nli_dataset_card
from unqover.hub.nli_configs import make_nli_configs


def build_nli_dataset(
    root: str | os.PathLike,
    *,
    name: str,
    sources: Mapping[str, str | os.PathLike | None] | None = None,
    configs: Sequence[str] | None = None,
    n_per_occupation: int = 50,
    labels: str = "paper",
    seed: int = 0,
    overwrite: bool = False,
    progress: bool = True,
) -> BuiltDataset:
    """Write ``root/name`` (card + one Parquet shard per config), atomically.

    ``sources`` maps ``mnli``/``snli``/``anli``/``qnli`` to a local file or folder, or to None to load the
    corpus from the Hub; without it only the synthetic configs are built. ``n_per_occupation`` premises per
    occupation for corpus configs (synthetic configs use all 40 frames unless fewer are asked); ``labels`` is
    ``"paper"`` (default) or ``"data"`` (:func:`unqover.generate.nli_occupations.occupation_labels`). An existing
    ``data/`` folder is an error unless ``overwrite``.
    """
    started = time.perf_counter()
    target = Path(root) / name
    refuse_existing(target, overwrite)
    builds = make_nli_configs(
        name=name,
        sources=sources,
        configs=configs,
        n_per_occupation=n_per_occupation,
        labels=labels,
        seed=seed,
    )
    with staged(Path(root), name) as staging:
        for build in tqdm(builds.values(), desc=name, unit="config", disable=not progress):
            folder = staging / "data" / build.name
            folder.mkdir(parents=True)
            pq.write_table(build.table, folder / f"{SPLIT}-00000-of-00001.parquet", compression="zstd")
        card = nli_dataset_card(
            builds, name=name, labels=labels, n_per_occupation=n_per_occupation, seed=seed
        )
        (staging / "README.md").write_text(card, encoding="utf-8")
    return BuiltDataset(
        target, {config: b.num_rows for config, b in builds.items()}, time.perf_counter() - started
    )
