"""What a probe asks of a model: the capabilities an engine can have and the requests each answers.

A probe never names a model family, a backend or a file format: it asks for an engine that can do one of a few
*capabilities* for a model, written as requests the way lm-evaluation-harness's ``LM.loglikelihood`` is:

========================  ============================================================  ==========================
capability                a request                                                     the answer
========================  ============================================================  ==========================
``continuations``         token ids of a prompt and of a continuation after it          Σ log p(continuation)
                          (:class:`Continuations`; prompts of one group share a prefix)
``answer-spans``          a context, a question and two subjects' character spans       P(span) of each subject
``fill-in``               a question with a mask and two subjects' surfaces             P(surface) at the mask
``classes``               a premise and a hypothesis                                    the NLI class logits
``sentences``             one sentence                                                  its score (log-likelihood,
                                                                                        pseudo-likelihood, or
                                                                                        Beecher's similarity)
========================  ============================================================  ==========================

The last four are asked as rows of the probe's dataset, the columns each names (``unqover.scoring.qa``,
``unqover.scoring.mlm``, ``unqover.scoring.nli``, ``unqover.scoring.eec``); a continuation is asked as token ids,
so that an engine that holds no model (an OpenAI-compatible server) answers the very requests a local model does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

CONTINUATIONS = "continuations"
ANSWER_SPANS = "answer-spans"
FILL_IN = "fill-in"
CLASSES = "classes"
SENTENCES = "sentences"
CAPABILITIES = (CONTINUATIONS, ANSWER_SPANS, FILL_IN, CLASSES, SENTENCES)


@dataclass(frozen=True)
class Continuations:
    """Continuation log-likelihood requests: continuation ``i`` (``answers[i]``, token ids) follows the prompt
    ``prompts[answer_prompt[i]]``; prompts with one ``groups`` value share their common token prefix (None: no
    sharing). The answer of each is Σ log p(continuation token | prompt, earlier continuation tokens)."""

    prompts: Sequence[Sequence[int]]
    answers: Sequence[Sequence[int]]
    answer_prompt: np.ndarray
    groups: np.ndarray | None = None


@dataclass(frozen=True)
class EngineRequest:
    """What an engine loads a model from: the model argument, the shared loading options of ``unqover probe``,
    the engine's own options (``options``, by their ``dest``), and what the asking probe passes to the load
    (``load``: an NLI classifier's label map, Beecher's scoring mode and vocabulary). ``asker`` is the probe's
    name, for the engine's refusals."""

    model_id: str
    engine: str = "auto"
    revision: str | None = None
    token: str | None = None
    dtype: str = "auto"
    device: str = "auto"
    shard: tuple[int, int] | None = None
    allow_pickle: bool = False
    adapter: str | None = None
    model_args: Mapping[str, Any] = field(default_factory=dict)
    gguf_file: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    load: Mapping[str, Any] = field(default_factory=dict)
    asker: str = "this"


def first_wanted(has: Sequence[str], wants: Sequence[str]) -> str | None:
    """The first capability of ``wants`` (the probe's order of preference) that a model ``has``."""
    return next((capability for capability in wants if capability in has), None)
