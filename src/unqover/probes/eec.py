"""The emotion fill-in probe (Beecher) on Equity Evaluation Corpus sentences.

Every choice of every question is one sentence (``choice_sentences``); the runner scores each distinct sentence
once (resumable, shardable), :func:`unqover.scoring.eec.rank_choices` ranks each question's choices, and
:func:`unqover.measure.emotion.emotion_bias` tests whether the chosen emotions depend on race or gender. The run
folder holds ``predictions.parquet`` (per sentence: id, question_id, choice, log_likelihood, tokens) and
``answers.parquet`` (per question: its ranked choices and tie flag) beside results and reports.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from unqover.errors import UnqoverError
from unqover.options import Option
from unqover.probes import options as parse
from unqover.probes.base import Loaded, Measured, Part, ProbeDefinition, QuickRunSize, RunOptions
from unqover.probes.causal_prompt import (
    PROMPT_OPTIONS,
    check_prompt_engine,
    check_prompt_settings,
    plain_prompts,
)
from unqover.probes.dataset_builder import DatasetBuilder
from unqover.probes.eec_results import EECResults
from unqover.scoring.choices import BEECHER_FAMILIES, BEECHER_MODES, LENGTH_RULES
from unqover.scoring.requests import SENTENCES

if TYPE_CHECKING:
    import pyarrow as pa

NAME = "eec-emotion"
#: ``build-datasets --source eec=PATH``: the sentences from the user's copy of the EEC CSV
SOURCE = "eec"


class EECBuilder(DatasetBuilder):
    """The emotion dataset: the EEC sentences, the emotion questions and the person questions (its configs)."""

    def recognises_columns(self, names: Sequence[str]) -> bool:
        """The emotion questions' or the person questions' columns (both configs of this probe's dataset)."""
        from unqover.probes.eec_person_rows import PERSON_QUESTION_COLUMNS as PERSON_COLUMNS
        from unqover.probes.eec_rows import QUESTION_COLUMNS

        return set(QUESTION_COLUMNS) <= set(names) or set(PERSON_COLUMNS) <= set(names)

    def check_dataset_configs(self, name: str, configs: Sequence[str] | None) -> list[str]:
        from unqover.hub.eec_dataset import check_eec_configs

        return check_eec_configs(configs, name)

    def check_dataset_settings(self, name: str, settings: dict[str, Any]) -> dict[str, Any]:
        """Keep the ``--source eec=PATH`` entry (other sources are the NLI dataset's); the EEC has no Hub copy
        to read, and one CSV is read at most."""
        own = [(key, path) for key, path in settings.get("source") or [] if key == SOURCE]
        if any(path is None for _, path in own):
            raise UnqoverError(f"--source {SOURCE}=hub: {name} needs a local EEC CSV (there is no hub copy)")
        if len(own) > 1:
            raise UnqoverError(f"--source {SOURCE}=PATH given {len(own)} times; {name} reads one EEC CSV")
        return {**settings, "source": own}

    def build_dataset(self, name: str, output: Path, settings: dict[str, Any]):
        from unqover.hub.eec_dataset import build_eec_dataset

        csv = dict(settings.get("source") or []).get(SOURCE)
        return build_eec_dataset(
            output,
            name=name,
            probe=self.probe.name,
            csv=None if csv is None else Path(csv),
            **self.build_options(settings),
        )


class EECProbe(ProbeDefinition):
    """Beecher's emotion fill-in probe: masked and causal LMs score every choice sentence."""

    name = NAME
    title = "EEC emotion fill-in"
    families = ("mlm", "causal", *BEECHER_FAMILIES)
    wants = (SENTENCES,)
    limit_meaning = "N persons per gender x race cell, all their questions"
    quick_run = QuickRunSize("persons per gender × race cell", 1, 5, 840)
    options = (
        Option(
            "--length-rule",
            "rank sentences by log-probability per token (mean, the default) or in total",
            choices=LENGTH_RULES,
            default="mean",
        ),
        Option(
            "--permutations",
            "person-level permutations per test (default: 2000)",
            type=parse.non_negative,
            default=2000,
        ),
        Option(
            "--scoring",
            "paper reproduces Beecher's own code for his models (tfidf:CORPUS, glove:VECTORS)",
            choices=BEECHER_MODES,
            default="default",
        ),
        *PROMPT_OPTIONS,
    )
    #: a chat model's question (``unqover.scoring.eec_chat``): one user message, ``{sentence}`` the sentence with
    #: its blank; run.json's ``prompt`` records it
    chat_question = (
        "Fill in the blank (___) in this sentence with one word.\n{sentence}\nAnswer with the word only."
    )
    datasets = (NAME,)
    lm_eval_unfit = None
    lm_eval_kind = "sentences"
    evaluate_module = "eec_emotion_bias"
    leaderboard_metric = "gender: Cramér's V"
    leaderboard_ranks_samples = (
        False  # V from a sample overstates the full set's and has no covering interval
    )
    leaderboard_method = (
        "full runs only: a test's Cramér's V over every person of the set is exact for its model ([value, value]); "
        "two runs differ surely (p-value 0) or tie; quick runs are refused (V from a sample of persons overstates "
        "the full set's, and no interval of it covers that)"
    )
    #: the config of the emotion dataset whose questions this probe scores
    scored_config = "questions"
    dataset_options = (
        Option(
            "--source",
            f"{SOURCE}=PATH reads the sentences from your copy of the EEC CSV",
            type=parse.source,
            metavar=f"{SOURCE}=PATH",
            repeat=True,
        ),
    )
    legacy_card_names = ("EEC emotion fill-in probe",)  # the title unqover.hub.eec_dataset gives the card
    results = Part(EECResults)
    builder = Part(EECBuilder)

    def check_settings(self, given) -> dict:
        settings = super().check_settings(given)
        if settings["length_rule"] not in LENGTH_RULES:
            raise UnqoverError(
                f"--length-rule must be one of {', '.join(LENGTH_RULES)}, got {settings['length_rule']!r}"
            )
        if settings["scoring"] not in BEECHER_MODES:
            raise UnqoverError(
                f"--scoring must be one of {', '.join(BEECHER_MODES)}, got {settings['scoring']!r}"
            )
        check_prompt_settings(settings)
        if settings["system_prompt"] is not None and plain_prompts(settings):
            raise UnqoverError(self.plain_system_prompt("--chat-template none"))
        return settings

    def plain_system_prompt(self, why: str) -> str:
        """The one line refusing ``--system-prompt`` where no chat template asks the questions (``why``)."""
        return (
            f"--system-prompt needs a chat template with {self.name}: with {why} each filled-in sentence is scored "
            "on its own, after BOS; leave out --system-prompt, or give --chat-template FILE.jinja"
        )

    def beecher_vocabulary(self, run: RunOptions, settings: dict) -> set[str] | None:
        """The words a GloVe load keeps (None: every vector): those of the generated questions, unless the
        questions come from ``--dataset``."""
        from unqover.generate.eec import eec_questions
        from unqover.scoring.beecher import question_vocabulary

        return None if run.dataset else question_vocabulary(eec_questions())

    def engine_load(self, engine, request, run: RunOptions, settings: dict) -> dict:
        """The scoring mode, which the engine must score in (``--scoring paper`` reproduces Beecher's code: his
        own models' engine alone does), and the words a word-vector load keeps (read when that load asks)."""
        if settings["scoring"] not in engine.modes:
            raise UnqoverError(
                "--scoring paper applies to Beecher's own models (tfidf:CORPUS, glove:VECTORS)"
            )
        check_prompt_engine(settings, engine, request)
        return {
            "mode": settings["scoring"],
            "vocabulary": functools.partial(self.beecher_vocabulary, run, settings),
        }

    # the rows of a run, as hooks a probe of the same kind (the person task) replaces

    def paper_mode(self, family: str | None, settings: dict) -> bool:
        """Whether Beecher's own code is reproduced: his models (tfidf, glove) with ``--scoring paper``."""
        return family in BEECHER_FAMILIES and settings.get("scoring") == "paper"

    def load_questions(self, dataset: str | None, config: str | None, paper: bool) -> tuple[pa.Table, dict]:
        """The questions (``--dataset``'s config, else a local build, else generated) and where they came from."""
        from unqover.probes.eec_rows import load_eec_questions

        return load_eec_questions(self.name, dataset, config)

    def select(self, questions: pa.Table, limit: int | None, seed: int) -> tuple[pa.Table, dict]:
        """A quick run's questions and its ``selection`` record (all questions when ``limit`` is None)."""
        from unqover.probes.eec_rows import describe_eec_selection, quick_run, select_persons

        return quick_run(questions, limit, seed, select_persons, describe_eec_selection)

    def choice_rows(self, questions: pa.Table) -> pa.Table:
        """One row per (question, choice): the sentences the model scores."""
        from unqover.generate.eec import choice_sentences

        return choice_sentences(questions)

    def rank_and_measure(self, questions, sentences, scores, run, settings, selection, paper, oov=None):
        """(result, ranked choices): each question's choices ranked from the sentence scores, and the measures."""
        from unqover.probes.eec_rows import rank_and_measure

        return rank_and_measure(questions, sentences, scores, run, settings, selection, paper, oov)

    #: the questions' columns answers.parquet keeps beside each question's ranked choices and tie flag
    answers_columns: tuple[str, ...] = ("text",)

    def answers_table(self, questions: pa.Table, ranked) -> pa.Table:
        """answers.parquet: per question its id, its :attr:`answers_columns`, its ranked choices and tie flag."""
        import pyarrow as pa

        return pa.table(
            {
                "question_id": ranked.question_id,
                **{name: questions[name] for name in self.answers_columns},
                "answers": pa.array(ranked.answers, type=pa.list_(pa.string())),
                "tie": ranked.ties,
            }
        )

    def load(self, run: RunOptions, settings: dict, model) -> Loaded:
        from unqover.probes.causal_prompt import prompt_record
        from unqover.scoring.eec_chat import ChatFillInScorer

        paper = self.paper_mode(model.family, settings)
        questions, dataset = self.load_questions(run.dataset, run.config, paper)
        questions, selection = self.select(questions, run.limit, run.seed)
        scorer = self.sentence_scorer(model, settings, questions)
        context = {"questions": questions, "family": model.family, "scorer": scorer}
        context["scoring"] = self.scoring(model, settings, scorer.method)
        if isinstance(scorer, ChatFillInScorer):  # a chat model, asked as one: run.json says how
            prompt = {**prompt_record(settings, model.tokenizer), "question": scorer.question}
            context["identity"] = {"prompt": prompt}
        return Loaded(self.choice_rows(questions), dataset, None, selection, context)

    def sentence_scorer(self, model, settings: dict, questions: pa.Table):
        """The scorer of the choice rows: with a chat template, a causal LM's reply to each question
        (:class:`unqover.scoring.eec_chat.ChatFillInScorer`, in :attr:`chat_question`'s words); else each
        sentence's own score (Beecher's models read the question strings: paper mode fills exactly his)."""
        from unqover.probes.causal_prompt import chat_template_choice, check_prompt_model
        from unqover.scoring.engines import scorer_for
        from unqover.scoring.requests import CONTINUATIONS

        check_prompt_model(settings, model.capabilities, model.model_id)
        if CONTINUATIONS in model.capabilities:
            causal = scorer_for(
                model,
                (CONTINUATIONS,),
                chat_template=chat_template_choice(settings),
                system_prompt=settings["system_prompt"],
            )
            if causal.chat:
                from unqover.scoring.eec_chat import ChatFillInScorer

                return ChatFillInScorer(causal, questions, self.chat_question)
            if settings["system_prompt"] is not None:
                why = f"{model.model_id}'s tokenizer (it has no chat template)"
                raise UnqoverError(self.plain_system_prompt(why))
        return scorer_for(model, self.wants, questions=questions)

    def scorers(self, model, settings: dict, loaded: Loaded | None = None) -> dict:
        from unqover.scoring.engines import scorer_for

        if loaded is not None:  # the scorer its rows were loaded with
            return {"": loaded.context["scorer"]}
        return {"": scorer_for(model, self.wants)}

    def scoring(self, model, settings: dict, method: str) -> dict:
        """run.json's ``scoring``: how the sentences were scored (``method``) and ranked."""
        if model.family in BEECHER_FAMILIES:
            return {"sentence": method, "mode": settings["scoring"], "length_rule": settings["length_rule"]}
        return {"sentence": method, "length_rule": settings["length_rule"]}

    def output_stem(self, loaded: Loaded, settings: dict) -> str:
        return f"{self.name}-questions"

    def predictions(self, loaded: Loaded, scores: pa.Table) -> pa.Table:
        import pyarrow as pa

        from unqover.probes.eec_rows import SENTENCE_SCORE_SCHEMA

        sentences = loaded.rows
        return pa.table(
            [
                sentences["id"],
                sentences["question_id"],
                sentences["choice"],
                scores["score_1"],
                scores["score_2"],
            ],
            schema=SENTENCE_SCORE_SCHEMA,
        )

    def measure_run(self, loaded, scores, extra, run, settings) -> Measured:
        from unqover.scoring.beecher import DEFAULT_FIXES, oov_rates

        questions = loaded.context["questions"]
        family = loaded.context["family"]
        paper = self.paper_mode(family, settings)
        oov = None
        if family in BEECHER_FAMILIES:
            oov = oov_rates(questions, loaded.rows, loaded.context["scorer"].known(loaded.rows))
        result, ranked = self.rank_and_measure(
            questions, loaded.rows, scores, run, settings, loaded.selection, paper, oov
        )
        scoring = {
            **loaded.context["scoring"],
            "tie_rate": ranked.tie_rate(),
            "questions": questions.num_rows,
        }
        if family in BEECHER_FAMILIES:
            scoring["oov"] = oov
            scoring["fixes"] = [] if paper else list(DEFAULT_FIXES[family])
        return Measured(
            result, {"scoring": scoring}, {"answers.parquet": self.answers_table(questions, ranked)}
        )

    def check_config(self, run: RunOptions, settings: dict[str, Any]) -> None:
        """Only the questions config this probe scores, refused before any model loads."""
        if run.config not in (None, self.scored_config):
            raise UnqoverError(
                f"the {self.name} probe scores the {self.scored_config!r} config of its dataset, not {run.config!r}"
            )


#: the emotion probe's definition (the registry loads it by name)
EEC_PROBE = EECProbe()
