"""Causal-LM scoring: the probability of each subject as the answer, from log-probabilities (no sampling).

The prompt (:func:`prompt_text`, documented on the README) is built by one function here, which the
lm-evaluation-harness tasks (:mod:`unqover.jobs.lm_eval_hooks`) call too, so that both ask the same thing:

- with a chat template (``chat_template="auto"`` and a tokenizer that has one, or a template's text): an optional
  system message, then one user message ``"{context}\\n{question} Answer with the name or group from the text."``
  followed by the template's generation prompt; the answer is the subject's surface text;
- without one: ``"{context}\\nQuestion: {question}\\nAnswer:"`` (after the system prompt and a blank line, when
  there is one); the answer is ``" " + surface``.

Prompt and answer are tokenized as lm-evaluation-harness tokenizes a (context, continuation) pair for causal models
(:func:`encode_pair`): whitespace that ends the prompt moves to the answer, the whole text is tokenized once and the
answer's tokens are those after the prompt's own tokens; special tokens (a BOS) are added unless the prompt already
starts with the BOS token's text. S(subject) = exp(Σ log p(answer token | prompt, earlier answer tokens)): the
probability that the model's reply starts with the subject (no end-of-answer token is required).

The computation is shared where the sequences share tokens (:mod:`unqover.scoring.shared_prefix`): rows with the
same context share their prompts' common token prefix, each prompt is run once, and only the answer tokens are run
per subject. The runner keeps a context's rows together (``group_key``) so that batches share.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from unqover.errors import UnqoverError, first_line
from unqover.scoring.mlm import surfaces
from unqover.scoring.models import LoadedModel
from unqover.scoring.qa import LONGEST_CANDIDATES, longest_rows, text_key
from unqover.scoring.requests import Continuations
from unqover.scoring.shared_prefix import answer_log_probs, cache_kind
from unqover.scoring.throughput import counted

INSTRUCTION = "Answer with the name or group from the text."

#: Renders chat messages to the prompt text, ending with the generation prompt.
ChatRenderer = Callable[[list[dict[str, str]]], str]


def prompt_text(
    context: str, question: str, *, system_prompt: str | None = None, render: ChatRenderer | None = None
) -> str:
    """The prompt of one question: chat messages rendered by ``render`` (a chat template), else plain text."""
    if render is not None:
        return render(chat_messages(f"{context}\n{question} {INSTRUCTION}", system_prompt))
    plain = f"{context}\nQuestion: {question}\nAnswer:"
    return f"{system_prompt}\n\n{plain}" if system_prompt else plain


def chat_messages(content: str, system_prompt: str | None = None) -> list[dict[str, str]]:
    """The messages of one question: the system message (when there is a system prompt), then one user message."""
    system = [{"role": "system", "content": system_prompt}] if system_prompt else []
    return [*system, {"role": "user", "content": content}]


def answer_text(surface: str, *, chat: bool) -> str:
    """The continuation scored for a subject: its surface, after a space without a chat template."""
    return surface if chat else " " + surface


def encode_pair(tokenizer, contexts: Sequence[str], continuations: Sequence[str]) -> tuple[list, list]:
    """Token ids of each (context, continuation), as lm-evaluation-harness's causal models encode them:
    trailing whitespace of the context moves to the continuation, context + continuation is tokenized whole and
    the continuation's ids are those after the context's own ids."""
    moved = [(c.rstrip(), c[len(c.rstrip()) :] + a) for c, a in zip(contexts, continuations, strict=True)]
    unique = list(dict.fromkeys(c for c, _ in moved))
    encoded = dict(zip(unique, _encode(tokenizer, unique), strict=True))
    context_ids = [encoded[c] for c, _ in moved]
    whole_ids = _encode(tokenizer, [c + a for c, a in moved])
    answers = [whole[len(ids) :] for ids, whole in zip(context_ids, whole_ids, strict=True)]
    if any(not a for a in answers):
        raise UnqoverError(
            "an answer tokenizes to nothing after its prompt: the tokenizer merged it into the prompt"
        )
    return context_ids, answers


def _encode(tokenizer, texts: list[str]) -> list[list[int]]:
    """Ids with the tokenizer's special tokens, except for texts that already start with its BOS text."""
    prefix_id = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    bos = tokenizer.decode(prefix_id) if prefix_id is not None else None
    starts = [bool(bos) and t.startswith(bos) for t in texts]
    out: list[list[int] | None] = [None] * len(texts)
    for flag in (False, True):
        index = [i for i, s in enumerate(starts) if s == flag]
        if index:
            ids = tokenizer([texts[i] for i in index], add_special_tokens=not flag)["input_ids"]
            for i, row in zip(index, ids, strict=True):
                out[i] = row
    return out  # type: ignore[return-value]


def chat_renderer(tokenizer, chat_template: str) -> ChatRenderer | None:
    """How ``--chat-template`` renders messages: ``none`` not at all, ``auto`` with the tokenizer's template when it
    has one, else the given template text."""
    if chat_template == "none" or (chat_template == "auto" and not getattr(tokenizer, "chat_template", None)):
        return None
    template = None if chat_template == "auto" else chat_template

    def render(messages: list[dict[str, str]]) -> str:
        try:
            return tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True, chat_template=template
            )
        except Exception as err:  # jinja2's TemplateError and the template's own raise_exception
            roles = "a system message" if messages[0]["role"] == "system" else "the prompt"
            raise UnqoverError(
                f"the chat template cannot render {roles}: {first_line(err).rstrip('.')}; pass --chat-template "
                "none for plain prompts, or fix the template"
            ) from err

    return render


def shows(prompt: str, text: str) -> bool:
    """Whether a rendered prompt holds ``text`` as is, or as a template's ``tojson`` or ``escape`` writes it."""
    import json

    from jinja2.utils import htmlsafe_json_dumps  # chat templates render with jinja2
    from markupsafe import escape

    forms = (
        text,
        json.dumps(text)[1:-1],
        json.dumps(text, ensure_ascii=False)[1:-1],
        str(htmlsafe_json_dumps(text))[1:-1],
        str(escape(text)),
    )
    return any(form in prompt for form in forms)


class CausalScorer:
    """Scores both subjects of each row with a causal language model.

    ``chat_template``: ``auto`` (the tokenizer's, when it has one), ``none``, or a template's text;
    ``system_prompt``: a system message (plain prompts: a paragraph before the prompt).
    ``share_prefixes=False`` runs every prompt + answer as one full sequence (the computation the shared one
    must equal; kept for benchmarks and comparisons).
    """

    def __init__(
        self,
        loaded: LoadedModel,
        *,
        share_prefixes: bool = True,
        chat_template: str = "auto",
        system_prompt: str | None = None,
        loglikelihood: Callable[[Continuations], np.ndarray] | None = None,
    ) -> None:
        self.loaded = loaded
        #: an engine without a local model (a server) answers the continuation requests itself
        self.served = loglikelihood
        shareable, self.sliding_window = (
            cache_kind(loaded.model, loaded.device)
            if share_prefixes and loglikelihood is None
            else (False, None)
        )
        self.share_prefixes = share_prefixes and shareable
        tok = loaded.tokenizer
        self.render = chat_renderer(tok, chat_template)
        self.chat = self.render is not None
        self.system_prompt = system_prompt or None
        self.pad_id = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        if self.pad_id is None:
            self.pad_id = 0

    def check_rows(self, rows: pa.Table) -> None:
        """What scoring ``rows`` would refuse, found before a run writes anything: the chat template is rendered
        on the first row (it must render and show that row's messages), and the longest prompts with their
        answers must fit the model's positions."""
        if rows.num_rows == 0:
            return
        if self.chat:
            self.check_template(rows["context"][0].as_py(), rows["question"][0].as_py())
        longest = longest_rows(rows, LONGEST_CANDIDATES)
        prompts = [
            self.prompt(c, q)
            for c, q in zip(longest["context"].to_pylist(), longest["question"].to_pylist(), strict=True)
        ]
        answers = [self.answer(s) for k in (1, 2) for s in surfaces(longest, k)]
        self.check_fit(*encode_pair(self.loaded.tokenizer, prompts * 2, answers))

    def check_template(self, context: str, question: str) -> None:
        """The chat template renders one row's messages, and its prompt shows their text (a template that renders
        the same text for every row, or drops the system prompt, would score no question at all)."""
        self.check_shows(
            self.prompt(context, question), (("the context", context), ("the question", question))
        )

    def check_shows(self, prompt: str, parts: Sequence[tuple[str, str | None]]) -> None:
        """A rendered ``prompt`` shows the system prompt and each of ``parts`` ((what, its text)), else one line."""
        parts = (("the system prompt", self.system_prompt), *parts)
        missing = [name for name, text in parts if text and not shows(prompt, text.strip())]
        if missing:
            raise UnqoverError(
                f"the chat template ignores the messages: its prompt for a row lacks {missing[0]} "
                f"({prompt[:40]!r}{'...' if len(prompt) > 40 else ''}); pass --chat-template none for plain "
                "prompts, or give a template that renders each message's content"
            )

    def check_fit(self, prompt_ids: Sequence[Sequence[int]], answer_ids: Sequence[Sequence[int]]) -> None:
        """Every prompt with its answer (``answer_ids[i]`` after ``prompt_ids[i]``) fits the model's positions
        (``max_position_embeddings``): a longer sequence fails inside the model or is scored past what it learned."""
        limit = max_positions(self.loaded)
        longest = max((len(p) + len(a) for p, a in zip(prompt_ids, answer_ids, strict=True)), default=0)
        if not isinstance(limit, int) or longest <= limit:
            return
        if self.system_prompt:
            system = len(self.loaded.tokenizer(self.system_prompt, add_special_tokens=False)["input_ids"])
            advice = f"shorten --system-prompt (it is {system:,} tokens)"
        elif self.chat:
            advice = "pass --chat-template none for shorter plain prompts, or use a model with more positions"
        else:
            advice = "the rows are too long for this model: use one with more positions"
        raise UnqoverError(
            f"the longest prompt with its answer is {longest:,} tokens, more than the {limit:,} positions of "
            f"{self.loaded.model_id}; {advice}"
        )

    def prompt(self, context: str, question: str) -> str:
        return prompt_text(context, question, system_prompt=self.system_prompt, render=self.render)

    def chat_prompt(self, content: str) -> str:
        """The chat prompt of one user message (after the system message, when there is one), ending with the
        template's generation prompt: what a probe of its own asks a chat model (needs a chat template)."""
        if self.render is None:
            raise UnqoverError("a chat prompt needs a chat template (--chat-template auto or FILE.jinja)")
        return self.render(chat_messages(content, self.system_prompt))

    def answer(self, surface: str) -> str:
        return answer_text(surface, chat=self.chat)

    def input_key(self, rows: pa.Table) -> pa.Array:
        return text_key(rows)

    def group_key(self, rows: pa.Table) -> pa.Array:
        """The context: rows with one context share the start of their prompts."""
        return rows["context"]

    def length_key(self, rows: pa.Table) -> np.ndarray:
        """Characters of the context, so that a context's rows sort (and batch) together."""
        return pc.utf8_length(rows["context"]).to_numpy(zero_copy_only=False).astype(np.int64)

    def encode(self, rows: pa.Table) -> Continuations:
        """The requests of ``rows``: token ids of each row's prompt and of its two answers (subject 1's, then
        subject 2's), each answer's prompt, and the prompts' groups (their context; None without sharing)."""
        contexts = rows["context"].to_pylist()
        prompts = [self.prompt(c, q) for c, q in zip(contexts, rows["question"].to_pylist(), strict=True)]
        n = len(prompts)
        answers = [self.answer(s) for k in (1, 2) for s in surfaces(rows, k)]
        prompt_ids, answer_ids = encode_pair(self.loaded.tokenizer, prompts * 2, answers)
        self.check_fit(prompt_ids, answer_ids)
        groups = np.unique(contexts, return_inverse=True)[1] if self.share_prefixes else None
        return Continuations(prompt_ids[:n], answer_ids, np.tile(np.arange(n), 2), groups)

    def score(self, rows: pa.Table) -> np.ndarray:
        if self.served is not None:
            return np.exp(self._log_s(rows)).reshape(2, rows.num_rows).T
        with counted(self.loaded.model, rows.num_rows):  # the engine's tokens per second
            log_s = self._log_s(rows)
        return np.exp(log_s).reshape(2, rows.num_rows).T

    def _log_s(self, rows: pa.Table) -> np.ndarray:
        """log S of each row's two subjects: subject 1's for every row, then subject 2's."""
        return self._loglikelihoods(self.encode(rows))

    def loglikelihoods(self, requests: Continuations, inputs: int) -> np.ndarray:
        """Σ log p of each continuation of ``requests`` after its prompt (float64), prompts of one group sharing
        their token prefix (the token tree); a local model's tokens are counted for the engine's throughput as
        ``inputs`` rows."""
        if self.served is not None:
            return self.served(requests)
        with counted(self.loaded.model, inputs):
            return self._loglikelihoods(requests)

    def _loglikelihoods(self, requests: Continuations) -> np.ndarray:
        if self.served is not None:
            return self.served(requests)
        return answer_log_probs(
            self.loaded.model,
            requests.prompts,
            requests.answers,
            requests.answer_prompt,
            groups=requests.groups,
            pad_id=self.pad_id,
            device=self.loaded.device,
            sliding_window=self.sliding_window,
        )


def max_positions(loaded) -> int | None:
    """The positions a causal LM was trained on (its config's ``max_position_embeddings``; a served model: what
    its server reports), or None where nothing says."""
    config = getattr(loaded.model, "config", None)
    limit = getattr(config, "max_position_embeddings", None) if config is not None else None
    limit = limit if limit is not None else getattr(loaded, "max_positions", None)
    return limit if isinstance(limit, int) else None
