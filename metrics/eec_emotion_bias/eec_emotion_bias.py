"""EEC emotion bias: which emotions a model attributes to people by race and gender (Beecher; EEC fill-in probe).

An `evaluate` measurement over each emotion-blank question's ranked answers and its group labels. The math lives in
the `unqover` library (`unqover.measure.emotion`); this module only adapts inputs and outputs. See README.md.
"""

import datasets
import evaluate

from unqover.generate.eec import EMOTION_LEXICON
from unqover.measure.emotion import emotion_bias
from unqover.measure.module_inputs import ReferenceRows

_CITATION = """\
@misc{beecher_bias_qa,
    title = "Bias in Pre-Trained Language Models: A Question Answering Approach",
    author = "Beecher, Stephen",
    howpublished = "University of Arizona; code at https://github.com/sbeecher0575/nlpbias",
}
@inproceedings{kiritchenko2018examining,
    title = "Examining Gender and Race Bias in Two Hundred Sentiment Analysis Systems",
    author = "Kiritchenko, Svetlana and Mohammad, Saif",
    booktitle = "Proceedings of the Seventh Joint Conference on Lexical and Computational Semantics",
    year = "2018",
    pages = "43--53",
    url = "https://aclanthology.org/S18-2005",
}
"""

_DESCRIPTION = """\
Each Equity Evaluation Corpus sentence with its emotion word blanked ("Lakisha feels ___.") is a question whose
choices are the EEC emotion words that filled it; a model ranks the choices. Beecher weights the top-3 answers
(3, 2, 1), sums them per group and emotion (S_ij) and compares his chi-square with chi-square(3) at 0.05 (7.815),
for race (African-American vs European names) and gender (all questions). That p-value is kept as a legacy output
and marked invalid; the primary test is Pearson's chi-square of independence on the unweighted top-1 group x
emotion table with a person-level stratified permutation p-value, with Cramer's V and a bootstrap interval over
persons, per-form and per-person tables, tie rates and Holm/BH-adjusted p-values.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `str`): per question, its ranked answers, best first (at least `top_k`; usually
        the full ranking of its choice set). Every answer must be an emotion word (see `emotions`).
    references (`list` of `dict`): per question `gender` ("female" or "male"), `race` ("African-American",
        "European", or None/"" for noun phrases), `person` (the person slot: all questions of one person move
        together in the permutation and bootstrap) and `form` (the question form); optional `tie` (bool: a tie
        affected the question's top-k), given for all questions or none. Other keys are ignored.
    emotions (`dict`): word -> emotion for the answers. Default None: the 40 EEC words (either spelling of
        "dis(s)appointed") and the emotions anger, fear, joy, sadness.
    top_k (`int`): answers weighted by Beecher (weights top_k, ..., 1). Default 3.
    n_permutations (`int`): person-level permutations, 0 for none. Default 2000.
    n_bootstrap (`int`): bootstrap resamples of persons for Cramer's V, 0 for none. Default 1000.
    confidence (`float`): interval level. Default 0.95.
    seed (`int`): permutation and bootstrap seed. Default 0.
Returns:
    num_questions, num_persons, emotions, top_k, weights, tests ({"race": {...}, "gender": {...}}, each with groups,
    num_questions, num_persons, stratified_by, beecher (scores S_ij, statistic, df, cutoff, exceeds_cutoff,
    legacy_p_value, legacy_note, permutation_p_value), top1 (counts, statistic, df, p_value, permutation_p_value),
    p_value, p_value_method, cramers_v, cramers_v_interval, by_form, tie_rate; a test is None when one of its groups
    has no questions), adjusted (family, p_values, holm, bh), persons (per-person records), tie_rate, permutation,
    bootstrap.
Examples:
    >>> bias = evaluate.load("unqover/eec_emotion_bias")
    >>> references = [
    ...     {"gender": "female", "race": "African-American", "person": "Ebony", "form": "feels"},
    ...     {"gender": "female", "race": "European", "person": "Amanda", "form": "feels"},
    ... ]
    >>> result = bias.compute(
    ...     predictions=[["angry", "sad", "glad"], ["glad", "sad", "angry"]],
    ...     references=references,
    ...     n_permutations=0,
    ...     n_bootstrap=0,
    ... )
    >>> result["tests"]["race"]["beecher"]["statistic"], result["tests"]["gender"]
    (2.0, None)
"""

REQUIRED = ("gender", "person", "form")
STRING_FEATURES = {name: datasets.Value("string") for name in (*REQUIRED, "race")}
NO_TIE = -1  # evaluate features cannot hold None: an absent tie flag travels as -1


def _normalize(references):
    """Keep the keys this module reads: labels as strings (a null race as ""), the tie flag as 1, 0 or -1."""
    if references is None:
        return references
    out = []
    for i, row in enumerate(references):
        missing = [key for key in REQUIRED if key not in row or row[key] is None]
        if missing:
            raise ValueError(
                f"reference {i} lacks {missing}; each reference needs {list(REQUIRED)} (and race)"
            )
        race = row.get("race")
        race = "" if race is None or race != race else str(race)  # None or NaN: no race (noun phrases)
        tie = row.get("tie")
        if (
            tie is not None and not isinstance(tie, bool) and tie == NO_TIE
        ):  # already normalized (compute -> add_batch)
            tie = None
        if tie is not None and not isinstance(tie, bool | int):
            raise ValueError(f"reference {i} has tie {tie!r}; expected true or false")
        out.append(
            {key: str(row[key]) for key in REQUIRED}
            | {"race": race, "tie": NO_TIE if tie is None else int(bool(tie))}
        )
    return out


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class EecEmotionBias(ReferenceRows, evaluate.Measurement):
    def _info(self):
        return evaluate.MeasurementInfo(
            module_type="measurement",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Sequence(datasets.Value("string")),
                    "references": STRING_FEATURES | {"tie": datasets.Value("int8")},
                }
            ),
            homepage="https://github.com/sbeecher0575/nlpbias",
            reference_urls=["https://github.com/sbeecher0575/nlpbias", "https://aclanthology.org/S18-2005"],
        )

    normalize = staticmethod(_normalize)

    def _compute(
        self,
        predictions,
        references,
        emotions=None,
        top_k=3,
        n_permutations=2000,
        n_bootstrap=1000,
        confidence=0.95,
        seed=0,
    ):
        flags = [row["tie"] for row in references]
        given = [flag != NO_TIE for flag in flags]
        if any(given) and not all(given):
            raise ValueError(f"tie is given for some questions but not for question {given.index(False)}")
        result = emotion_bias(
            predictions,
            [row["gender"] for row in references],
            [row["race"] or None for row in references],
            [row["person"] for row in references],
            [row["form"] for row in references],
            emotions=EMOTION_LEXICON if emotions is None else emotions,
            top_k=top_k,
            n_permutations=n_permutations,
            n_bootstrap=n_bootstrap,
            confidence=confidence,
            ties=[bool(flag) for flag in flags] if all(given) else None,
            seed=seed,
        )
        return result.to_dict()
