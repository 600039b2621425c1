"""Beecher's own models for the emotion probes: ``tfidf:CORPUS`` (a TF-IDF model of a text corpus) and
``glove:VECTORS`` (word vectors), scoring sentences on the CPU in one process (:mod:`unqover.scoring.beecher`).

The probe passes its scoring mode (``load["mode"]``: ``paper`` reproduces his code) and the words a GloVe load
keeps (``load["vocabulary"]``, or a function that gives them, called only here); a scorer takes the questions
(``how["questions"]``), whose strings paper mode fills as he did.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from unqover.errors import UnqoverError
from unqover.scoring.choices import BEECHER_FAMILIES, BEECHER_MODES
from unqover.scoring.engines.base import Engine
from unqover.scoring.requests import SENTENCES, EngineRequest


class BeecherEngine(Engine):
    name = "beecher"
    about = "Beecher's own models, tfidf:CORPUS and glove:VECTORS (by their prefix)"
    capabilities = (SENTENCES,)
    modes = BEECHER_MODES

    def serves(self, model_id: str) -> bool:
        return model_id.partition(":")[0] in BEECHER_FAMILIES

    def check(self, request: EngineRequest, wants: Sequence[str]) -> None:
        if request.gguf_file is not None:
            raise UnqoverError(
                f"--gguf-file applies to transformers models, not to Beecher's own {request.model_id}"
            )
        given = [
            flag
            for flag, value in (("--adapter", request.adapter), ("--model-arg", request.model_args))
            if value
        ]
        if given:
            raise UnqoverError(
                f"{' and '.join(given)} appl{'y' if len(given) > 1 else 'ies'} to transformers models, not to "
                f"Beecher's own {request.model_id}"
            )
        if SENTENCES not in wants:
            raise UnqoverError(
                f"{request.model_id} is one of Beecher's own models, which score sentences: the {request.asker} "
                "probe cannot use it"
            )

    def load(self, request: EngineRequest, wants: Sequence[str]) -> tuple[Any, Any]:
        from unqover.scoring.beecher import load_beecher_model
        from unqover.scoring.placement import place

        vocabulary = request.load.get("vocabulary")
        vocabulary = vocabulary() if callable(vocabulary) else vocabulary
        loaded, _ = load_beecher_model(
            request.model_id, request.load.get("mode", "default"), vocabulary=vocabulary
        )
        return place(request.shard, "cpu")[0], loaded

    def scorer(self, model: Any, capability: str, **how: Any) -> Any:
        from unqover.scoring.beecher import SCORERS

        return SCORERS[model.family](model, how.get("questions"))
