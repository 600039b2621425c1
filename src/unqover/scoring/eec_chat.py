"""Beecher's fill-in asked of a chat model: the emotion and person questions as chat prompts.

With a chat template (``--chat-template auto`` on a tokenizer that has one, or a template file), a question is
asked as one user message (after the system message, when ``--system-prompt`` gives one) that shows the sentence
with its blank and asks for the missing words, in the probe's wording (its ``chat_question``, with ``{sentence}``
for the sentence); the prompt ends with the template's generation prompt. Each choice is then scored as the
assistant's reply: the words that fill the blank, as the filled-in sentence has them (a person at the start of a
sentence capitalised). A choice's score is Σ log p of the reply's tokens after the prompt and the number of those
tokens, as :func:`unqover.scoring.causal.encode_pair` tokenizes the pair (whitespace that ends the prompt, such as
the newline after ``assistant``, moves to the reply), so the length rule and the tie rule rank the choices as
they rank whole sentences. No end-of-reply token is scored.

The choices of a question share its prompt: the token tree (:mod:`unqover.scoring.shared_prefix`) runs each
prompt once and only the replies per choice; the runner keeps a question's choices together (``group_key``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from unqover.errors import UnqoverError
from unqover.generate.eec import BLANK
from unqover.scoring.causal import CausalScorer, encode_pair
from unqover.scoring.eec import SENTENCE_BOUNDS
from unqover.scoring.qa import LONGEST_CANDIDATES
from unqover.scoring.requests import Continuations


def filled_words(text: str, sentence: str) -> str:
    """The words of ``sentence`` that fill the blank of the question ``text`` (one :data:`BLANK`)."""
    before, blank, after = text.partition(BLANK)
    fits = blank and len(sentence) > len(before) + len(after)
    if not fits or sentence[: len(before)].lower() != before.lower() or not sentence.endswith(after):
        raise UnqoverError(f"the sentence {sentence!r} is not its question {text!r} with the blank filled")
    return sentence[len(before) : len(sentence) - len(after)]


class ChatFillInScorer:
    """Scores each choice row (``question_id``, ``sentence``) as a chat model's reply to its question.

    ``causal``: the engine's continuation scorer, made with a chat template; ``questions``: the probe's questions
    (``id``, ``text``: the sentence with its blank); ``question``: the probe's wording of the user message.
    """

    method = "causal-LM chat: log-likelihood of the reply that fills the blank"
    score_bounds = SENTENCE_BOUNDS

    def __init__(self, causal: CausalScorer, questions: pa.Table, question: str) -> None:
        if not causal.chat:
            raise UnqoverError("a chat fill-in needs a chat template")
        self.causal = causal
        self.question = question
        self.texts = dict(zip(questions["id"].to_pylist(), questions["text"].to_pylist(), strict=True))

    def prompt(self, text: str) -> str:
        """The chat prompt of the question whose sentence with its blank is ``text``."""
        return self.causal.chat_prompt(self.question.format(sentence=text))

    def _texts(self, rows: pa.Table) -> list[str]:
        return [self.texts[q] for q in rows["question_id"].to_pylist()]

    def replies(self, rows: pa.Table) -> list[str]:
        """Each row's reply: the words that fill its question's blank."""
        texts = self._texts(rows)
        return [filled_words(t, s) for t, s in zip(texts, rows["sentence"].to_pylist(), strict=True)]

    def input_key(self, rows: pa.Table) -> pa.Array:
        """The question's sentence and the reply: the whole input (its prompt follows from the sentence)."""
        keys = [f"{t}\x1f{r}" for t, r in zip(self._texts(rows), self.replies(rows), strict=True)]
        return pa.array(keys, pa.string())

    def group_key(self, rows: pa.Table) -> pa.Array:
        """The question: its choices share its prompt."""
        return rows["question_id"]

    def length_key(self, rows: pa.Table) -> np.ndarray:
        """Characters of the question's sentence, so that a question's choices sort (and batch) together."""
        texts = pa.array(self._texts(rows), pa.string())
        return pc.utf8_length(texts).to_numpy(zero_copy_only=False).astype(np.int64)

    def encode(self, rows: pa.Table) -> Continuations:
        """The requests of ``rows``: each distinct prompt once, each row's reply after its question's prompt."""
        prompts = [self.prompt(t) for t in self._texts(rows)]
        prompt_ids, reply_ids = encode_pair(self.causal.loaded.tokenizer, prompts, self.replies(rows))
        self.causal.check_fit(prompt_ids, reply_ids)
        index: dict[str, int] = {}
        firsts: list[Sequence[int]] = []
        for prompt, ids in zip(prompts, prompt_ids, strict=True):
            if prompt not in index:
                index[prompt] = len(firsts)
                firsts.append(ids)
        answer_prompt = np.array([index[p] for p in prompts], dtype=np.int64)
        groups = np.arange(len(firsts)) if self.causal.share_prefixes else None
        return Continuations(firsts, reply_ids, answer_prompt, groups)

    def score(self, rows: pa.Table) -> np.ndarray:
        """Per row: Σ log p of its reply's tokens after the prompt (≤ 0) and the number of those tokens."""
        requests = self.encode(rows)
        log_p = self.causal.loglikelihoods(requests, rows.num_rows)
        tokens = np.array([len(a) for a in requests.answers], dtype=np.float64)
        return np.stack([np.minimum(np.asarray(log_p, dtype=np.float64), 0.0), tokens], axis=1)

    def check_rows(self, rows: pa.Table) -> None:
        """What scoring ``rows`` would refuse, found before a run writes anything: the chat template renders the
        first question and shows its sentence (and the system prompt), and the longest prompts with their
        replies fit the model's positions."""
        if rows.num_rows == 0:
            return
        first = self._texts(rows.slice(0, 1))[0]
        self.causal.check_shows(self.prompt(first), (("the sentence", first),))
        if rows.num_rows > LONGEST_CANDIDATES:
            size = self.length_key(rows) + pc.utf8_length(rows["sentence"]).to_numpy(zero_copy_only=False)
            rows = rows.take(np.argpartition(-size, LONGEST_CANDIDATES - 1)[:LONGEST_CANDIDATES])
        self.encode(rows)
