"""The NLI dataset's configs: their names, and the rows of each (synthetic premises, or corpus premises filtered
and equalized per occupation) with the numbers the card reports."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from unqover.errors import UnqoverError
from unqover.generate.nli import SYNTHETIC_PREMISES, nli_rows, synthetic_premises
from unqover.generate.nli_filter import filter_premises, kept, rejection_counts
from unqover.generate.nli_occupations import occupation_labels
from unqover.generate.nli_premises import equalize
from unqover.hub.folder import chosen_configs
from unqover.hub.nli_sources import SOURCES, load_source_sentences

#: Synthetic configs: name -> template family of :data:`unqover.generate.nli_templates.HYPOTHESIS_TEMPLATES`.
#: ``synthetic`` is the default.
SYNTHETIC_CONFIGS: dict[str, str] = {
    "synthetic": "main",
    "synthetic-quoted": "quoted",
    "synthetic-named": "named",
}

#: corpus configs: ``<source>`` (main templates) and ``<source>-quoted`` / ``<source>-named`` (appendix templates)
CORPUS_CONFIGS: dict[str, tuple[str, str]] = {
    f"{source}{suffix}": (source, family)
    for source in SOURCES
    for suffix, family in (("", "main"), ("-quoted", "quoted"), ("-named", "named"))
}
ALL_CONFIGS: tuple[str, ...] = (*SYNTHETIC_CONFIGS, *CORPUS_CONFIGS)


@dataclass(frozen=True)
class NliConfigBuild:
    """One config's rows and how they were made (the card's numbers)."""

    name: str
    family: str
    source: str
    table: pa.Table
    premises: int
    substituted: int
    candidates: int | None = None
    kept: int | None = None
    rejections: dict[str, int] = field(default_factory=dict)

    @property
    def num_rows(self) -> int:
        return self.table.num_rows


def check_nli_configs(configs: Sequence[str] | None, name: str) -> list[str]:
    """Validate the config names of the NLI dataset ``name``; ``None`` means the synthetic configs."""
    return chosen_configs(configs, name, ALL_CONFIGS, list(SYNTHETIC_CONFIGS))


def synthetic_count(n_per_occupation: int) -> int | None:
    """Frames per occupation for the synthetic configs: all of them (None) unless fewer are asked."""
    if n_per_occupation < 1:
        raise UnqoverError("n_per_occupation must be at least 1")
    return None if n_per_occupation >= len(SYNTHETIC_PREMISES) else n_per_occupation


@dataclass(frozen=True)
class NliRequest:
    """What an NLI dataset build asks for: the dataset's ``name``, its premise ``sources``, ``configs``, premises
    per occupation, label scheme and seed (meanings: :func:`unqover.hub.nli_dataset.build_nli_dataset`); the
    configs are made from it, and the card describes it."""

    name: str
    sources: Mapping[str, str | os.PathLike | None] | None = None
    configs: Sequence[str] | None = None
    n_per_occupation: int = 50
    labels: str = "paper"
    seed: int = 0


def make_nli_configs(request: NliRequest) -> dict[str, NliConfigBuild]:
    """Generate the rows of every requested config of the dataset ``request.name`` in memory (see
    :func:`unqover.hub.nli_dataset.build_nli_dataset`)."""
    name, configs, labels = request.name, request.configs, request.labels
    n_per_occupation, seed = request.n_per_occupation, request.seed
    sources = dict(request.sources or {})
    for source in sources:
        if source not in SOURCES:
            raise UnqoverError(f"unknown premise source {source!r}: use one of {', '.join(SOURCES)}")
    occupation_labels(labels)  # validates the scheme
    if configs is None:
        wanted = [*SYNTHETIC_CONFIGS, *(c for c, (s, _) in CORPUS_CONFIGS.items() if s in sources)]
    else:
        wanted = check_nli_configs(configs, name)
        missing = [c for c in wanted if c in CORPUS_CONFIGS and CORPUS_CONFIGS[c][0] not in sources]
        if missing:
            raise UnqoverError(
                f"config {', '.join(missing)} needs a premise source: pass sources={{'{missing[0]}': PATH}} "
                "(or None to load it from the Hub)"
            )
    out: dict[str, NliConfigBuild] = {}
    prepared: dict[str, tuple] = {}
    synthetic = None
    for config in wanted:
        if config in SYNTHETIC_CONFIGS:
            if synthetic is None:
                synthetic = synthetic_premises(synthetic_count(n_per_occupation), seed=seed)
            family = SYNTHETIC_CONFIGS[config]
            out[config] = NliConfigBuild(
                config, family, "synthetic", nli_rows(synthetic, family, labels), len(synthetic), 0
            )
            continue
        source, family = CORPUS_CONFIGS[config]
        if (
            source not in prepared
        ):  # one filtering and equalization per corpus, shared by its template families
            sentences = load_source_sentences(source, sources[source])
            verdicts = filter_premises(sentences, source=source)
            accepted = kept(verdicts)
            try:
                prepared[source] = (
                    sentences,
                    verdicts,
                    accepted,
                    equalize(accepted, n_per_occupation, seed=seed),
                )
            except UnqoverError as exc:
                raise UnqoverError(f"{config}: {exc}") from None
        sentences, verdicts, accepted, premises = prepared[source]
        out[config] = NliConfigBuild(
            config,
            family,
            source,
            nli_rows(premises, family, labels),
            len(premises),
            sum(p.is_substituted for p in premises),
            candidates=len(sentences),
            kept=len(accepted),
            rejections=rejection_counts(verdicts),
        )
    return out
