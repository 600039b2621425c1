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

from tqdm.auto import tqdm

from unqover.generate.ids import dataset_fingerprint
from unqover.hub.folder import BuiltDataset, refuse_existing, staged, write_config_table
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
    probe: str | None = None,
) -> BuiltDataset:
    """Write ``root/name`` (card + one Parquet shard per config), atomically; card and files record the rows as
    ``probe``'s (default: ``name``).

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
    probe = probe or name
    with staged(Path(root), name) as staging:
        for build in tqdm(builds.values(), desc=name, unit="config", disable=not progress):
            fingerprint = dataset_fingerprint(build.table["id"])
            write_config_table(build.table, staging / "data" / build.name, probe, build.name, fingerprint)
        card = nli_dataset_card(
            builds, name=name, labels=labels, n_per_occupation=n_per_occupation, seed=seed, probe=probe
        )
        (staging / "README.md").write_text(card, encoding="utf-8")
    return BuiltDataset(
        target, {config: b.num_rows for config, b in builds.items()}, time.perf_counter() - started
    )
