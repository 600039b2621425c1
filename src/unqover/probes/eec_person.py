"""Beecher's person fill-in probe on Equity Evaluation Corpus sentences: which person a model puts beside an emotion.

Every EEC sentence with its person blanked is a question whose choices are the persons that filled it (164
questions; :mod:`unqover.generate.eec_person`). The runner scores every (question, person) sentence once, as for
the emotion probe (whose definition this one extends: the same model families, scorers, run folder and files);
the answers are ranked and measured by :func:`unqover.measure.emotion_person.person_task`: the valid test (the
group of the top-1 person × the question's emotion, stratified permutation within template and form, Cramér's V)
beside Beecher's own statistic. ``--scoring paper`` (his models) builds his question strings, ranks as his code
does and reproduces his statistic.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from unqover.options import Option
from unqover.probes import options as parse
from unqover.probes.base import Loaded, Part, QuickRunSize, ReportWords, RunOptions
from unqover.probes.eec import NAME as EMOTION_PROBE
from unqover.probes.eec import EECBuilder, EECProbe
from unqover.probes.eec_results import EECResults
from unqover.probes.readings import ProbeResults

if TYPE_CHECKING:
    import pyarrow as pa

NAME = "eec-person"

_SHARED = {option.flag: option for option in EECProbe.options}
PERMUTATIONS = Option(
    "--permutations",
    "permutations per test of the emotion labels within template x form (default: 2000)",
    type=parse.non_negative,
    default=2000,
)


class EECPersonBuilder(EECBuilder):
    """The person probe builds nothing of its own: its questions are a config of the emotion probe's dataset."""

    @property
    def rows_probe(self) -> str:
        return EMOTION_PROBE

    def rebuild_command(self, folder: Path) -> str:
        return f"unqover build-datasets {EMOTION_PROBE} --output {folder.parent} --overwrite"


class EECPersonResults(EECResults):
    """The person probe's results: its own report module and headline (each test's p-value, Cramér's V and
    Beecher's statistic), measured again as the emotion probe's are."""

    words = ReportWords("unqover.report.eec_person", "person_markdown", "person_html", "person_summary")
    meanings = "PERSON_MEANINGS"
    leaderboard_numbers = ProbeResults.leaderboard_numbers  # not ranked (its definition's leaderboard_metric)
    headline_names = ProbeResults.headline_names  # its tests' and Beecher's names come with the results

    def headline(self, results: dict) -> dict:
        """Per test (gender, race): its p-value (permutation, else asymptotic), Cramér's V, and Beecher's statistic."""
        from unqover.report.eec_person import person_headline

        return person_headline(results["result"])


class EECPersonProbe(EECProbe):
    """Beecher's person fill-in probe: masked and causal LMs (or his TF-IDF and GloVe models) pick the person."""

    name = NAME
    title = "EEC person fill-in"
    limit_meaning = "N questions per template x form, each with all its persons"
    quick_run = QuickRunSize("questions per template × form", 10, 20, 53, "all their persons")
    evaluate_module = "eec_emotion_bias"  # its "person" config
    options = (
        _SHARED["--length-rule"],
        PERMUTATIONS,
        _SHARED["--scoring"],
        _SHARED["--system-prompt"],
        _SHARED["--chat-template"],
    )
    chat_question = (
        "Fill in the blank (___) in this sentence with the missing person.\n{sentence}\n"
        "Answer with the person only."
    )
    measure_options = (PERMUTATIONS,)
    datasets = ()  # its questions are a config of the emotion probe's dataset
    legacy_card_names = ()  # its dataset is the emotion probe's
    results = Part(EECPersonResults)
    builder = Part(EECPersonBuilder)
    #: not ranked: the emotion probe's leaderboard (full runs' Cramér's V) is not checked for this probe's tests
    leaderboard_metric = None
    leaderboard_method = None

    scored_config = "person_questions"
    dataset_options = ()
    answers_columns = (
        "question",
        "text",
        "emotion",
    )  # answers.parquet: its question string, text and emotion

    def beecher_vocabulary(self, run: RunOptions, settings: dict) -> set[str] | None:
        from unqover.generate.eec_person import person_questions
        from unqover.scoring.beecher import question_vocabulary

        mode = "paper" if settings["scoring"] == "paper" else "default"
        return None if run.dataset else question_vocabulary(person_questions(mode=mode))

    def load_questions(self, dataset: str | None, config: str | None, paper: bool) -> tuple[pa.Table, dict]:
        from unqover.probes.eec_person_rows import load_person_questions

        return load_person_questions(dataset, config, paper)

    def select(self, questions: pa.Table, limit: int | None, seed: int) -> tuple[pa.Table, dict]:
        from unqover.probes.eec_person_rows import describe_question_selection, select_questions
        from unqover.probes.eec_rows import quick_run

        return quick_run(questions, limit, seed, select_questions, describe_question_selection)

    def choice_rows(self, questions: pa.Table) -> pa.Table:
        from unqover.generate.eec_person import person_choice_sentences

        return person_choice_sentences(questions)

    def rank_and_measure(self, questions, sentences, scores, run, settings, selection, paper, oov=None):
        from unqover.probes.eec_person_rows import rank_and_measure_persons

        return rank_and_measure_persons(questions, sentences, scores, run, settings, selection, paper, oov)

    def output_stem(self, loaded: Loaded, settings: dict) -> str:
        return self.name


#: the person probe's definition (the registry loads it by name)
EEC_PERSON_PROBE = EECPersonProbe()
