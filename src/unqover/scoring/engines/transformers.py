"""The transformers engine: a Hub id, a local folder or a GGUF file, loaded with transformers on this process's
device, answering every capability its weights give: extractive QA models answer spans, masked LMs fill-ins and
sentences (pseudo-likelihood), causal LMs continuations and sentences, NLI classifiers classes.

Its loading options are ``unqover probe``'s shared ones (``--revision``, ``--dtype``, ``--device``, ``--adapter``,
``--model-arg``, ``--gguf-file``, ``--allow-pickle``); it declares none of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from unqover.errors import UnqoverError
from unqover.scoring.engines.base import Engine
from unqover.scoring.requests import (
    ANSWER_SPANS,
    CAPABILITIES,
    CLASSES,
    CONTINUATIONS,
    FILL_IN,
    SENTENCES,
    EngineRequest,
    first_wanted,
)

#: a model of each family, in words
FAMILY_WORDS = {
    "qa": "an extractive QA model",
    "mlm": "a masked LM",
    "causal": "a causal LM",
    "nli": "an NLI classifier",
}
FAMILY_PLURALS = {
    "qa": "extractive QA models (…ForQuestionAnswering)",
    "mlm": "masked LMs (…ForMaskedLM)",
    "causal": "causal LMs (…ForCausalLM)",
    "nli": "NLI classifiers (…ForSequenceClassification)",
}


class TransformersEngine(Engine):
    name = "transformers"
    about = "a Hub id, a local folder or a GGUF file, with transformers on this machine (every other model)"
    capabilities = CAPABILITIES
    fallback = True

    def check(self, request: EngineRequest, wants: Sequence[str]) -> None:
        from unqover.scoring.models import model_source

        if request.gguf_file is not None and CONTINUATIONS not in wants and SENTENCES not in wants:
            raise UnqoverError(
                f"--gguf-file cannot be used with {request.asker}: GGUF checkpoints are causal LMs, which the "
                f"{request.asker} probe does not score"
            )
        model_source(request.model_id, gguf_file=request.gguf_file)

    def capabilities_of(self, request: EngineRequest) -> tuple[str, ...] | None:
        """From the model's config (a GGUF file: a causal LM, its header need not be parsed), read without
        loading weights."""
        from unqover.scoring.models import FAMILY_CAPABILITIES

        return FAMILY_CAPABILITIES[self.family(request)]

    def family(self, request: EngineRequest) -> str:
        """The requested model's family, from its config (a GGUF file: a causal LM; its header is not parsed)."""
        from unqover.scoring.models import family_of

        source = self.local_source(request)
        return "causal" if source.gguf_file else family_of(source.config())

    def local_source(self, request: EngineRequest) -> Any | None:
        from unqover.scoring.models import model_source

        return model_source(request.model_id, request.revision, request.token, request.gguf_file)

    def load(self, request: EngineRequest, wants: Sequence[str]) -> tuple[Any, Any]:
        from unqover.scoring.placement import load_placed

        self.check_answers(request, wants)  # from its config, before the weights load
        if self.family(request) == "nli":  # its loader reads the label ids (or refuses the model's labels)
            from unqover.scoring.nli import load_nli_model as loader

            extra = {"label_map": request.load.get("label_map")}
        else:
            from unqover.scoring.models import load_model as loader

            extra = {"gguf_file": request.gguf_file} if request.gguf_file is not None else {}
        if request.adapter is not None:
            extra["adapter"] = request.adapter
        if request.model_args:
            extra["model_args"] = dict(request.model_args)
        return load_placed(
            loader,
            request.model_id,
            shard=request.shard,
            device=request.device,
            revision=request.revision,
            dtype=request.dtype,
            token=request.token,
            allow_pickle=request.allow_pickle,
            **extra,
        )

    def check_answers(self, request: EngineRequest, wants: Sequence[str]) -> None:
        """Refuse a model whose family answers none of ``wants``, naming the families that do."""
        from unqover.scoring.models import FAMILY_CAPABILITIES

        family = self.family(request)
        if first_wanted(FAMILY_CAPABILITIES[family], wants) is None:
            fit = [FAMILY_PLURALS[f] for f, has in FAMILY_CAPABILITIES.items() if first_wanted(has, wants)]
            raise UnqoverError(
                f"{request.model_id} is {FAMILY_WORDS[family]}; the {request.asker} probe scores "
                f"{' and '.join(fit)}"
            )

    def scorer(self, model: Any, capability: str, **how: Any) -> Any:
        scoring = how.get("scoring", "default")
        if capability == ANSWER_SPANS:
            from unqover.scoring.qa import QAScorer

            return QAScorer(model, mode=scoring)
        if capability == FILL_IN:
            from unqover.scoring.mlm import MLMScorer

            return MLMScorer(model, mode=scoring)
        if capability == CONTINUATIONS:
            from unqover.scoring.causal import CausalScorer

            return CausalScorer(
                model, chat_template=how.get("chat_template", "auto"), system_prompt=how.get("system_prompt")
            )
        if capability == CLASSES:
            from unqover.scoring.nli import NLIScorer

            return NLIScorer(model, batch_size=1 << 30)  # the runner chooses the batches
        from unqover.scoring.eec import sentence_scorer

        return sentence_scorer(model)
