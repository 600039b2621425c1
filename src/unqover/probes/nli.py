"""The NLI gender-occupation probe (Sharma, Dey & Sinha 2021): does an NLI model think a premise about an
occupation entails "This text speaks of a female profession" more than the male counterpart?

Models: NLI classifiers (their entailment and contradiction logits), and causal LMs asked by a prompt
(:mod:`unqover.scoring.nli_prompt`: lm-eval's MNLI prompt by default, the label words' log-likelihoods as logits).
Rows: ``--dataset``, else a local build in ``datasets/unqover/nli-gender``, else the project's synthetic premises
made in memory. Each row holds a premise and both hypotheses; ``score_1``/``score_2`` are P_e = sigmoid(z_e − z_c)
for the female and male hypotheses, and with a neutral label its 3-way neutral probabilities are scored too
(``neutral/`` in the run folder). ``--limit N`` keeps N rows per occupation, drawn at random (seeded) within
occupation × template strata with source premises whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from unqover.errors import UnqoverError
from unqover.options import Option
from unqover.probes import options as parse
from unqover.probes.base import Loaded, Measured, Part, ProbeDefinition, QuickRunSize, RunOptions
from unqover.probes.causal_prompt import (
    PROMPT_OPTIONS,
    chat_template_choice,
    check_prompt_model,
    check_prompt_settings,
    prompt_options,
    prompt_record,
)
from unqover.probes.dataset_builder import DatasetBuilder
from unqover.probes.nli_results import NLIResults
from unqover.scoring.requests import CLASSES, CONTINUATIONS, first_wanted

NAME = "nli-gender"
#: ``--source eec=PATH`` belongs to the emotion probe's dataset
SOURCE_EEC = "eec"


class NLIBuilder(DatasetBuilder):
    """The NLI dataset: synthetic premises, and natural-text configs from NLI corpora (``--source``)."""

    def recognises_columns(self, names: Sequence[str]) -> bool:
        from unqover.probes.nli_rows import NLI_COLUMNS

        return set(NLI_COLUMNS) <= set(names)

    def check_dataset_configs(self, name: str, configs: Sequence[str] | None) -> list[str]:
        from unqover.hub.nli_configs import check_nli_configs

        return check_nli_configs(configs, name)

    def check_dataset_settings(self, name: str, settings: dict[str, Any]) -> dict[str, Any]:
        """Keep the ``--source`` entries of the natural-text configs (``eec=PATH`` is the emotion dataset's);
        an unknown source name is refused."""
        from unqover.hub.nli_sources import SOURCES

        own = [(key, path) for key, path in settings.get("source") or [] if key != SOURCE_EEC]
        unknown = [key for key, _ in own if key not in SOURCES]
        if unknown:
            raise UnqoverError(
                f"--source {unknown[0]}=...: unknown source; choose from {', '.join(SOURCES)} (NAME=PATH or NAME=hub)"
            )
        return {**settings, "source": own}

    def build_dataset(self, name: str, output: Path, settings: dict[str, Any]):
        from unqover.hub.nli_dataset import build_nli_dataset

        sources = dict(settings.get("source") or [])
        return build_nli_dataset(
            output,
            name=name,
            probe=self.probe.name,
            sources=sources,
            labels=settings.get("labels") or "paper",
            **self.build_options(settings),
        )


class NLIProbe(ProbeDefinition):
    """The NLI gender-occupation probe: NLI classifiers and prompted causal LMs, S / ΔP / B with premise-cluster
    intervals."""

    name = NAME
    title = "NLI gender-occupation"
    families = ("nli", "causal")
    wants = (CLASSES, CONTINUATIONS)
    lm_eval_unfit = None
    lm_eval_kind = (
        "nli"  # a causal LM asked by lm-eval's MNLI prompt (an NLI classifier has no lm-eval route)
    )
    limit_meaning = "N rows per occupation, drawn at random within occupation x template strata"
    quick_run = QuickRunSize("rows per occupation", 10, 100, 80)
    evaluate_module = "nli_gender_bias"
    options = (
        Option(
            "--label-map",
            'NLI models whose config names labels LABEL_k: JSON such as \'{"entailment": 0, "neutral": 1, '
            '"contradiction": 2}\'',
            type=parse.label_map,
        ),
        Option(
            "--nli-prompt",
            "causal LMs: the prompt of a pair, naming {premise} and {hypothesis} (default: lm-eval's MNLI prompt, "
            "'{premise}\\nQuestion: {hypothesis} True, False or Neither?\\nAnswer:')",
            metavar="TEMPLATE",
        ),
        Option(
            "--label-words",
            "causal LMs: the words answering entailment, neutral and contradiction, comma-separated (default: "
            "True,Neither,False)",
            type=parse.comma_words,
            metavar="E,N,C",
        ),
        *PROMPT_OPTIONS,
    )
    datasets = (NAME,)
    dataset_options = (
        Option(
            "--source",
            "premises from an NLI corpus (mnli, snli, anli, qnli) in a local file, or NAME=hub (repeatable)",
            type=parse.source,
            metavar="NAME=PATH",
            repeat=True,
        ),
        Option(
            "--labels",
            "occupation labels, the paper's (default) or data-driven from the BLS shares",
            choices=("paper", "data"),
            default="paper",
        ),
    )
    table_columns = ("S", "ΔP", "B (NLI)")
    leaderboard_metric = "delta_P"
    leaderboard_method = (
        "the value of each model on the full dataset, from its predictions: a full run's is exact ([value, value]); "
        "a quick run's interval is the probe's bootstrap over source premises at level 1 - alpha/K (Bonferroni over "
        "the K models; percentile with 30 or more premises, a t interval from the bootstrap standard error with "
        "10 to 29, none below 10); rank intervals from them; pairs: the difference resampled jointly over the "
        "premises where the runs share their sample (paired), each run on its own otherwise, a full run's exact "
        "value subtracted, two full runs exactly; p-values Holm-adjusted over the K(K-1)/2 pairs, intervals at "
        "level 1 - alpha/#pairs"
    )
    legacy_card_names = ("NLI gender-occupation probes",)  # the title unqover.hub.nli_card gives the card
    results = Part(NLIResults)
    builder = Part(NLIBuilder)

    def check_settings(self, given) -> dict:
        from unqover.scoring.nli_prompt import (
            MNLI_LABEL_WORDS,
            MNLI_PROMPT,
            check_label_words,
            check_prompt_template,
        )

        settings = super().check_settings(given)
        check_prompt_settings(settings)
        settings["nli_prompt"] = check_prompt_template(settings["nli_prompt"] or MNLI_PROMPT)
        settings["label_words"] = check_label_words(settings["label_words"] or MNLI_LABEL_WORDS)
        return settings

    def engine_load(self, engine, request, run: RunOptions, settings: dict) -> dict:
        """The ``--label-map`` the classifier's labels are read with; the options of one kind of model refused,
        before the weights load, for the other (its engine reads what the model answers from its config)."""
        capabilities = engine.capabilities_of(request) if kind_options(settings) else None
        if capabilities is not None:
            check_nli_options(settings, capabilities, request.model_id)
        return {"label_map": settings["label_map"]}

    def check_source(self, run: RunOptions, settings: dict) -> None:
        from unqover.probes.nli_rows import check_nli_source

        check_nli_source(self.name, run.dataset, run.config or "synthetic")

    def load(self, run: RunOptions, settings: dict, model) -> Loaded:
        from unqover.probes.nli_rows import (
            describe_nli_selection,
            limit_per_occupation,
            load_nli_rows,
            stratum_population,
        )

        config = run.config or "synthetic"
        rows, dataset = load_nli_rows(self.name, run.dataset, config)
        selection, context = None, {"identity": self.identity(model, settings)}
        if run.limit is not None:
            kept = limit_per_occupation(rows, run.limit, run.seed)
            selection = describe_nli_selection(rows, kept, run.limit, run.seed)
            context["population"] = stratum_population(rows)
            rows = kept
        return Loaded(rows, dataset, None, selection, context)

    def identity(self, model, settings: dict) -> dict:
        """What makes a run's scores these (run.json): the label ids, and a prompted model's prompt."""
        check_nli_options(settings, model.capabilities, model.model_id)
        if first_wanted(model.capabilities, self.wants) == CLASSES:
            return {"labels": model.label_ids}
        from unqover.scoring.nli_prompt import LABEL_IDS, question_record

        question = question_record(settings["nli_prompt"], settings["label_words"])
        return {"labels": dict(LABEL_IDS), "prompt": {**prompt_record(settings, model.tokenizer), **question}}

    def prompt_scorer(self, model, settings: dict):
        """The scorer of a causal LM's pairs (:class:`unqover.scoring.nli_prompt.NLIPromptScorer`)."""
        from unqover.scoring.engines import scorer_for
        from unqover.scoring.nli_prompt import NLIPromptScorer

        causal = scorer_for(
            model,
            (CONTINUATIONS,),
            chat_template=chat_template_choice(settings),
            system_prompt=settings.get("system_prompt"),
        )
        return NLIPromptScorer(causal, template=settings["nli_prompt"], label_words=settings["label_words"])

    def scorers(self, model, settings: dict, loaded: Loaded | None = None) -> dict:
        from unqover.probes.nli_rows import NLIPromptRowScorer, NLIRowScorer
        from unqover.scoring.engines import scorer_for

        if first_wanted(model.capabilities, self.wants) == CLASSES:
            scorer = scorer_for(model, self.wants)
            extra = {"neutral": NLIRowScorer(scorer, "neutral")} if "neutral" in model.label_ids else {}
            return {"": NLIRowScorer(scorer), **extra}
        prompted = self.prompt_scorer(model, settings)
        return {"": NLIPromptRowScorer(prompted), "neutral": NLIPromptRowScorer(prompted, "neutral")}

    def measure_run(self, loaded, scores, extra, run, settings) -> Measured:
        from unqover.probes.nli_rows import measure_nli

        population = loaded.context.get("population")
        return Measured(
            measure_nli(loaded.rows, scores, extra.get("neutral"), run, loaded.selection, population)
        )


#: the options that apply to one kind of model only
CLASSIFIER_OPTIONS = (("--label-map", "label_map"),)
PROMPT_ONLY_OPTIONS = (("--nli-prompt", "nli_prompt"), ("--label-words", "label_words"))


def prompting_options(settings: dict) -> list[str]:
    """The options given that apply to causal LMs only (``--nli-prompt``, ``--label-words``, ``--system-prompt``,
    a ``--chat-template`` other than auto)."""
    from unqover.scoring.nli_prompt import MNLI_LABEL_WORDS, MNLI_PROMPT

    defaults = {"nli_prompt": MNLI_PROMPT, "label_words": MNLI_LABEL_WORDS}
    given = [flag for flag, key in PROMPT_ONLY_OPTIONS if settings.get(key) not in (None, defaults[key])]
    return given + prompt_options(settings)


def kind_options(settings: dict) -> list[str]:
    """The options given that apply to one kind of model only."""
    classifier = [flag for flag, key in CLASSIFIER_OPTIONS if settings.get(key) is not None]
    return classifier + prompting_options(settings)


def check_nli_options(settings: dict, capabilities, model_id: str) -> None:
    """``--label-map`` applies to NLI classifiers; the prompt options (``--nli-prompt``, ``--label-words``,
    ``--system-prompt``, ``--chat-template``) to causal LMs: refuse them for the other kind of model."""
    if CLASSES in capabilities:
        given = prompting_options(settings)
        if given:
            verb = "apply" if len(given) > 1 else "applies"
            raise UnqoverError(
                f"{' and '.join(given)} {verb} to causal LMs asked by a prompt; {model_id} is an NLI classifier"
            )
    elif settings.get("label_map") is not None:
        raise UnqoverError(
            f"--label-map applies to NLI classifiers; {model_id} is asked by a prompt (its labels are "
            "--label-words)"
        )
    else:
        check_prompt_model(settings, capabilities, model_id)


#: the NLI probe's definition (the registry loads it by name)
NLI_PROBE = NLIProbe()
