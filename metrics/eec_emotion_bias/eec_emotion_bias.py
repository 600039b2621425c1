"""EEC emotion bias: which emotions a model attributes to people by race and gender (Beecher; EEC fill-in probe).

An `evaluate` measurement over each emotion-blank question's ranked answers and its group labels (the default
config), or over each person-blank question's ranked persons and its emotion (config ``"person"``: Beecher's
person task). The math lives in the `unqover` library (`unqover.measure.emotion`, `unqover.measure.emotion_person`);
this module only adapts inputs and outputs. See README.md.
"""

import datasets
import evaluate

from unqover.generate.eec import EMOTION_LEXICON
from unqover.measure.emotion import emotion_bias
from unqover.measure.emotion_person import person_task
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
    >>> bias = evaluate.load("eec_emotion_bias")
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

_PERSON_DESCRIPTION = """\
Beecher's second question type: each EEC sentence with its person blanked ("________ feels angry.") is a question
whose choices are the persons that filled it (164 questions: 124 of 60 persons, 40 reflexive ones of 30); a model
ranks the persons. The primary test is Pearson's chi-square of the group of the top-1 person x the question's
emotion, with a permutation p-value that shuffles the emotion labels among the questions of one template and form,
and Cramer's V, for gender and for race; Beecher's own statistic (weights 3, 2, 1 on the top-3 answers, each
group's emotion row fitted to a flat row, compared with 7.815) is reported beside it and is not a valid test.
"""

_PERSON_KWARGS_DESCRIPTION = """
Args (config "person"):
    predictions (`list` of `list` of `str`): per question, its ranked persons, best first (the first is the top-1
        answer; Beecher's statistic reads the first `top_k`). Every answer must be one of the question's choices.
    references (`list` of `dict`): per question `choices` (list of the persons offered), `choice_genders` and
        `choice_races` (aligned with `choices`; race None or "" for pronouns and noun phrases), `emotion` (the
        question's emotion, None or "" for none), `template` and `form` (the stratum of the permutation); optional
        `tie` (bool), given for all questions or none. The rows of the EEC dataset's `person_questions` config
        have them. Other keys are ignored.
    top_k (`int`): answers weighted by Beecher (weights top_k, ..., 1). Default 3.
    n_permutations (`int`): permutations per test, 0 for none. Default 2000.
    seed (`int`): permutation seed. Default 0.
Returns:
    num_questions, top_k, emotions, tests ({"gender": {...}, "race": {...}}, each with groups, emotions,
    num_questions, num_strata, counts, statistic, df, asymptotic_p_value, permutation_p_value, p_value,
    p_value_method, cramers_v, arrangements; None when fewer than two groups or emotions remain), adjusted
    (p_values, holm, bh), beecher (counts, statistics, cutoff, df, exceeds_cutoff, absent_groups, divides_by_zero,
    num_questions, top_k), tie_rate, permutation, notes.
Examples:
    >>> bias = evaluate.load("eec_emotion_bias", "person")
    >>> references = [
    ...     {"choices": ["he", "she"], "choice_genders": ["male", "female"], "choice_races": [None, None],
    ...      "emotion": "anger", "template": "<person subject> feels <emotion word>.", "form": "subject"},
    ...     {"choices": ["he", "she"], "choice_genders": ["male", "female"], "choice_races": [None, None],
    ...      "emotion": "joy", "template": "<person subject> feels <emotion word>.", "form": "subject"},
    ... ]
    >>> result = bias.compute(predictions=[["he", "she"], ["she", "he"]], references=references, n_permutations=0)
    >>> result["tests"]["gender"]["counts"], result["beecher"]["statistics"]
    ({'female': {'anger': 0, 'joy': 1}, 'male': {'anger': 1, 'joy': 0}}, {'gender': 7.333333333333333, 'race': 6.0})
"""

PERSON = "person"
REQUIRED = ("gender", "person", "form")
STRING_FEATURES = {name: datasets.Value("string") for name in (*REQUIRED, "race")}
NO_TIE = -1  # evaluate features cannot hold None: an absent tie flag travels as -1
PERSON_LISTS = ("choices", "choice_genders", "choice_races")
PERSON_STRINGS = ("emotion", "template", "form")
PERSON_FEATURES = {name: datasets.Sequence(datasets.Value("string")) for name in PERSON_LISTS} | {
    name: datasets.Value("string") for name in PERSON_STRINGS
}


def _tie_flag(row, i):
    """The tie flag as 1, 0 or -1 (not given)."""
    tie = row.get("tie")
    if (
        tie is not None and not isinstance(tie, bool) and tie == NO_TIE
    ):  # already normalized (compute -> add_batch)
        tie = None
    if tie is not None and not isinstance(tie, bool | int):
        raise ValueError(f"reference {i} has tie {tie!r}; expected true or false")
    return NO_TIE if tie is None else int(bool(tie))


def _text(value) -> str:
    """A label as a string; None or NaN (no race, no emotion) as ""."""
    return "" if value is None or value != value else str(value)


def _normalize_person(references):
    """Keep the keys the person task reads: lists of strings (a null race as ""), strings, the tie flag."""
    if references is None:
        return references
    out = []
    for i, row in enumerate(references):
        missing = [key for key in (*PERSON_LISTS, "template", "form") if key not in row or row[key] is None]
        if missing:
            raise ValueError(
                f"reference {i} lacks {missing}; each person question needs "
                f"{[*PERSON_LISTS, *PERSON_STRINGS]}"
            )
        lists = {key: [_text(v) for v in row[key]] for key in PERSON_LISTS}
        if len({len(v) for v in lists.values()}) != 1:
            raise ValueError(f"reference {i}: choices, choice_genders and choice_races differ in length")
        out.append(lists | {key: _text(row.get(key)) for key in PERSON_STRINGS} | {"tie": _tie_flag(row, i)})
    return out


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
        race = _text(row.get("race"))  # None or NaN: no race (noun phrases)
        out.append({key: str(row[key]) for key in REQUIRED} | {"race": race, "tie": _tie_flag(row, i)})
    return out


def _ties(references) -> list[bool] | None:
    """The tie flags, all given or none."""
    flags = [row["tie"] for row in references]
    given = [flag != NO_TIE for flag in flags]
    if any(given) and not all(given):
        raise ValueError(f"tie is given for some questions but not for question {given.index(False)}")
    return [bool(flag) for flag in flags] if all(given) else None


@evaluate.utils.file_utils.add_start_docstrings(
    _DESCRIPTION, _KWARGS_DESCRIPTION + _PERSON_KWARGS_DESCRIPTION
)
class EecEmotionBias(ReferenceRows, evaluate.Measurement):
    """Config "default": the emotion task; config "person": the person task."""

    def _info(self):
        person = self.config_name == PERSON
        if self.config_name not in ("default", PERSON):
            raise ValueError(
                f"unknown config {self.config_name!r}; use the default (emotion task) or {PERSON!r}"
            )
        references = PERSON_FEATURES if person else STRING_FEATURES
        return evaluate.MeasurementInfo(
            module_type="measurement",
            description=_PERSON_DESCRIPTION if person else _DESCRIPTION,
            citation=_CITATION,
            inputs_description=_PERSON_KWARGS_DESCRIPTION if person else _KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Sequence(datasets.Value("string")),
                    "references": references | {"tie": datasets.Value("int8")},
                }
            ),
            homepage="https://github.com/sbeecher0575/nlpbias",
            license="apache-2.0",
            codebase_urls=["https://github.com/unqover/unqover", "https://github.com/sbeecher0575/nlpbias"],
            reference_urls=["https://github.com/sbeecher0575/nlpbias", "https://aclanthology.org/S18-2005"],
        )

    def normalize(self, references):
        return _normalize_person(references) if self.config_name == PERSON else _normalize(references)

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
        ties = _ties(references)
        if self.config_name == PERSON:
            questions = {key: [row[key] for row in references] for key in PERSON_LISTS + PERSON_STRINGS}
            questions["choice_races"] = [[r or None for r in row] for row in questions["choice_races"]]
            questions["emotion"] = [e or None for e in questions["emotion"]]
            return person_task(
                predictions, questions, top_k=top_k, ties=ties, n_permutations=n_permutations, seed=seed
            ).to_dict()
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
            ties=ties,
            seed=seed,
        )
        return result.to_dict()
