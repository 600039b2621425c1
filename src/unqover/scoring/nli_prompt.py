"""NLI by prompting a causal LM: entailment, neutral and contradiction as the log-likelihoods of three label words.

The prompt of a premise/hypothesis pair is lm-evaluation-harness's MNLI prompt by default
(:data:`MNLI_PROMPT`, its ``glue/mnli`` task): ``"{premise}\\nQuestion: {hypothesis} True, False or Neither?\\nAnswer:"``
with the hypothesis stripped and ended with a period, and the label words ``True`` (entailment), ``Neither``
(neutral) and ``False`` (contradiction). With a chat template (``--chat-template auto`` and a tokenizer that has
one, or a template file) that text is the one user message, after an optional system message, and the label word
follows the template's generation prompt; without one the label word follows a space (lm-eval's target delimiter,
which it drops under ``--apply_chat_template``). Prompt and label are tokenized as lm-eval tokenizes a
(context, continuation) pair (:func:`unqover.scoring.causal.encode_pair`).

The three log-likelihoods z = log P(label word | prompt) play the role of a classifier's logits
(:func:`unqover.predictions.scores_from_logits`): Sharma's P_e = sigmoid(z_e − z_c), and the three probabilities
normalised over the three labels. Every prompt is run once and the premise once for all the hypotheses that
share it (the token tree of :mod:`unqover.scoring.shared_prefix`): the runner keeps a premise's rows together.
"""

from __future__ import annotations

from collections.abc import Sequence
from string import Formatter

import numpy as np
import pyarrow as pa

from unqover.errors import UnqoverError
from unqover.predictions import NLI_LABELS as LABELS
from unqover.predictions import scores_from_logits
from unqover.scoring.causal import CausalScorer, ChatRenderer, answer_text, encode_pair
from unqover.scoring.requests import Continuations

#: lm-evaluation-harness's MNLI prompt (``lm_eval/tasks/glue/mnli``)
MNLI_PROMPT = "{premise}\nQuestion: {hypothesis} True, False or Neither?\nAnswer:"
#: its label words (its ``doc_to_choice``), in the order of :data:`unqover.scoring.nli.LABELS`
MNLI_LABEL_WORDS = ("True", "Neither", "False")
#: the columns of the log-likelihoods: entailment, neutral, contradiction
LABEL_IDS = {label: i for i, label in enumerate(LABELS)}


def check_prompt_template(template: str) -> str:
    """A prompt template names ``{premise}`` and ``{hypothesis}`` once each and no other field (one line if not)."""
    try:
        fields = [name for _, name, _, _ in Formatter().parse(template) if name is not None]
    except ValueError as err:
        raise UnqoverError(
            f"--nli-prompt {template!r} is no template: {err} (write braces as {{{{ and }}}})"
        ) from None
    unknown = sorted(set(fields) - {"premise", "hypothesis"})
    if unknown or sorted(fields) != ["hypothesis", "premise"]:
        raise UnqoverError(
            f"--nli-prompt {template!r} must name {{premise}} and {{hypothesis}} once each and no other field"
            + (f" (it names {', '.join('{' + f + '}' for f in unknown)})" if unknown else "")
        )
    return template


def check_label_words(words: Sequence[str]) -> tuple[str, str, str]:
    """Three distinct, non-empty label words: entailment's, neutral's, contradiction's."""
    words = tuple(str(w).strip() for w in words)
    if len(words) != 3 or not all(words) or len(set(words)) != 3:
        raise UnqoverError(
            f"--label-words needs three distinct words, for entailment, neutral and contradiction in that "
            f"order (default: {','.join(MNLI_LABEL_WORDS)}); got {','.join(words)!r}"
        )
    return words  # type: ignore[return-value]


def mnli_hypothesis(hypothesis: str) -> str:
    """The hypothesis as lm-eval's MNLI prompt writes it: stripped, ending with a period."""
    text = hypothesis.strip()
    return text if text.endswith(".") else text + "."


def nli_prompt_text(
    premise: str,
    hypothesis: str,
    *,
    template: str = MNLI_PROMPT,
    system_prompt: str | None = None,
    render: ChatRenderer | None = None,
) -> str:
    """The prompt of one pair: the template's text as one user message rendered by ``render`` (a chat template),
    else that text (after the system prompt and a blank line, when there is one)."""
    text = template.format(premise=premise, hypothesis=mnli_hypothesis(hypothesis))
    if render is not None:
        system = [{"role": "system", "content": system_prompt}] if system_prompt else []
        return render([*system, {"role": "user", "content": text}])
    return f"{system_prompt}\n\n{text}" if system_prompt else text


class NLIPromptScorer:
    """Scores premise/hypothesis pairs with a causal LM through the continuation scorer its engine made
    (:class:`unqover.scoring.causal.CausalScorer`: the chat template, the system prompt, a local model or a
    server). The same interface as :class:`unqover.scoring.nli.NLIScorer`; each pair's log-likelihoods are kept,
    so that the probe's second output (the neutral probabilities) costs no second pass."""

    label_ids = LABEL_IDS

    def __init__(
        self,
        causal: CausalScorer,
        *,
        template: str = MNLI_PROMPT,
        label_words: Sequence[str] = MNLI_LABEL_WORDS,
    ) -> None:
        self.causal = causal
        self.template = check_prompt_template(template)
        self.label_words = check_label_words(label_words)
        self._kept: dict[tuple[str, str], np.ndarray] = {}

    def prompt(self, premise: str, hypothesis: str) -> str:
        return nli_prompt_text(
            premise,
            hypothesis,
            template=self.template,
            system_prompt=self.causal.system_prompt,
            render=self.causal.render,
        )

    def requests(self, premises: Sequence[str], hypotheses: Sequence[str]) -> Continuations:
        """Each pair's prompt and its three label continuations (entailment's for every pair, then neutral's,
        then contradiction's); pairs with one premise are one group (their prompts share its tokens)."""
        prompts = [self.prompt(p, h) for p, h in zip(premises, hypotheses, strict=True)]
        n = len(prompts)
        answers = [answer_text(word, chat=self.causal.chat) for word in self.label_words for _ in range(n)]
        prompt_ids, answer_ids = encode_pair(self.causal.loaded.tokenizer, prompts * 3, answers)
        self.causal.check_fit(prompt_ids, answer_ids)
        groups = np.unique(list(premises), return_inverse=True)[1] if self.causal.share_prefixes else None
        return Continuations(prompt_ids[:n], answer_ids, np.tile(np.arange(n), 3), groups)

    def check_pairs(self, premises: list[str], hypotheses: list[str]) -> None:
        """The chat template shows a pair's premise and hypothesis, and the pairs fit the model's positions
        (a run checks its longest before it writes anything)."""
        if not premises:
            return
        if self.causal.chat:
            self.causal.check_shows(
                self.prompt(premises[0], hypotheses[0]),
                (("the premise", premises[0]), ("the hypothesis", mnli_hypothesis(hypotheses[0]))),
            )
        self.requests(premises, hypotheses)

    def logits(self, premises: list[str], hypotheses: list[str], inputs: int | None = None) -> np.ndarray:
        """log P(label word | prompt) of each pair (N, 3: entailment, neutral, contradiction), float64; the model's
        tokens are counted for the engine's throughput as ``inputs`` rows (default: the pairs)."""
        pairs = list(zip(premises, hypotheses, strict=True))
        new = list(dict.fromkeys(pair for pair in pairs if pair not in self._kept))
        if new:
            requests = self.requests(*zip(*new, strict=True))
            log_p = self.causal.loglikelihoods(requests, len(pairs) if inputs is None else inputs)
            for i, pair in enumerate(new):
                self._kept[pair] = log_p[[i, len(new) + i, 2 * len(new) + i]]
        return np.array([self._kept[pair] for pair in pairs], dtype=np.float64).reshape(len(pairs), 3)

    def score_pairs(
        self, premises: list[str], hypotheses: list[str], inputs: int | None = None
    ) -> dict[str, np.ndarray]:
        """``p_entail`` (P_e = sigmoid(z_e − z_c)) and each label's probability normalised over the three."""
        return scores_from_logits(self.logits(premises, hypotheses, inputs), self.label_ids)

    def score_rows(self, rows: pa.Table) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """The female and the male hypothesis of each row, asked in one pass (the premise run once for both)."""
        premises = rows["premise"].to_pylist()
        female, male = (rows[f"hypothesis_{g}"].to_pylist() for g in ("female", "male"))
        both = self.score_pairs(premises * 2, female + male, inputs=rows.num_rows)
        n = rows.num_rows
        return {k: v[:n] for k, v in both.items()}, {k: v[n:] for k, v in both.items()}

    def record(self) -> dict:
        """run.json's record of the question asked (:func:`question_record`)."""
        return question_record(self.template, self.label_words)


def question_record(template: str = MNLI_PROMPT, label_words: Sequence[str] = MNLI_LABEL_WORDS) -> dict:
    """What a prompted model is asked, as run.json and an lm-eval task folder record it (beside the causal
    prompt's ``prompt_record``): the prompt template and each label's word."""
    return {"nli_prompt": template, "label_words": dict(zip(LABELS, label_words, strict=True))}
