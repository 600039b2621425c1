"""The Gradio app: live probe, explorer, results and leaderboard tabs, wired to the library (``space/app.py`` calls
:func:`build_app`). Settings come from arguments (tests) or environment variables (the Space):

``UNQOVER_SPACE_MODELS`` (comma-separated curated list), ``UNQOVER_SPACE_CACHE`` (run-folder cache; default
``$UNQOVER_CACHE/space`` or ``~/.cache/unqover/space``),
``UNQOVER_SPACE_RESULTS_ROOT`` (the only folder the results box reads; default: the cache),
``UNQOVER_SPACE_RESULTS`` (default results folder inside it, or Hub dataset repo),
``UNQOVER_SPACE_RESULTS_REPOS`` (the Hub dataset repos or owners the results box reads; default: ``unqover`` and the
Space's own owner; ``none``: no Hub repo), ``UNQOVER_SPACE_LOCAL_MODELS``
(``1``: folders on the server may be typed as models; default: Hub ids only), ``UNQOVER_SPACE_TIMEOUT`` (seconds
per probe request), ``UNQOVER_WORD_LISTS`` (word lists to build UnQover rows from), ``HF_TOKEN`` (gated models).

The Space is meant to be a public server: every input is bounded and checked in the handlers
(:mod:`unqover.space.inputs`), the results box reads nothing outside its results folder but Hub dataset repos
(:mod:`unqover.space.results`), typed models are Hub ids unless the operator allows local folders (the curated list
is the operator's and is taken as it is), and messages say what to do on the page, not on a command line.
"""

from __future__ import annotations

import logging
import os
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from unqover.errors import UnqoverError
from unqover.format import fmt_count, fmt_size, plural
from unqover.jobs.explore import example_rows, explorer_probe, word_lists_folder
from unqover.jobs.run import user_cache_folder
from unqover.probes.registry import PROBES
from unqover.space import explore as explorer
from unqover.space import inputs, live, render, results
from unqover.space.local import hide_models, on_disk, operator_models, path_forms, server_label
from unqover.space.models import (
    BIASES,
    CURATED_MODELS,
    EXPLORABLE,
    MAX_PARAMETERS,
    answers,
    check_live_model,
    check_pair,
    server_capabilities,
    wanted,
)

log = logging.getLogger(__name__)
TITLE = "UnQover: does my model stereotype?"
INTRO = (
    "Probe a question-answering, masked or causal language model (or an NLI classifier) for stereotyping bias with "
    "underspecified questions ([Li et al. 2020](https://aclanthology.org/2020.findings-emnlp.311)). "
    "*Content warning: the probes pair people with stereotypes by design.*"
)
# the tabs' intros (the Live probe tab needs none)
EXPLORER_INTRO = (
    "Type a context naming two people or groups and a question about them: the model answers it with "
    "the subjects in both orders and for the negated question, and B and C follow (the paper's Fig. 2)."
)
RESULTS_INTRO = (
    "Runs computed offline (`unqover probe`) or by the live probe: a folder inside the Space's results "
    "folder (empty: all of it) or a Hub dataset repo (owner/name). The groups column tells a full run "
    "(all groups) from a quick run (estimates from a sample of groups)."
)
LEADERBOARD_INTRO = (
    "Several models' runs of one probe in one table (as `unqover leaderboard`): each value with an "
    "interval that holds for all models at once, its rank (1 = least biased) and rank interval, and the "
    "pairs whose difference is distinguishable. List the runs of a probe (its quick runs are chosen), "
    "change the choice if you like, and rank them."
)
CHART_CSS = ".unqover-chart{overflow-x:auto;margin:8px 0}.unqover-chart svg{max-width:100%;height:auto}"
CONCURRENCY = 1  # one GPU job at a time, shared by both GPU tabs
# the queue of both GPU tabs' handlers
GPU_QUEUE = {"concurrency_limit": CONCURRENCY, "concurrency_id": "gpu"}
MAX_QUEUE = 16


#: the explorer offers this many rows of a dataset (row 0 to EXAMPLE_ROWS - 1)
EXAMPLE_ROWS = 20


def _env_list(name: str) -> list[str] | None:
    value = os.environ.get(name, "").strip()
    return [m.strip() for m in value.split(",") if m.strip()] or None


def _results_repos() -> tuple[str, ...]:
    """The Hub dataset repos (or owners) the results box reads: ``UNQOVER_SPACE_RESULTS_REPOS`` (``none``: no
    repo), else the project's namespace and the owner of the Space itself (``SPACE_AUTHOR_NAME`` on the Hub)."""
    listed = _env_list("UNQOVER_SPACE_RESULTS_REPOS")
    if listed is not None:
        return () if [e.lower() for e in listed] == ["none"] else tuple(listed)
    author = os.environ.get("SPACE_AUTHOR_NAME", "").strip()
    return tuple(dict.fromkeys([*results.DEFAULT_REPO_OWNERS, *([author] if author else [])]))


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


class Space:
    """The app's state and its handlers (plain functions, testable without a browser)."""

    def __init__(
        self,
        models: Sequence[str] | None = None,
        cache_dir: str | os.PathLike | None = None,
        *,
        word_lists: str | os.PathLike | None = None,
        results_location: str | None = None,
        results_root: str | os.PathLike | None = None,
        results_repos: Sequence[str] | None = None,
        local_models: bool | None = None,
        timeout: float | None = None,
        max_parameters: int = MAX_PARAMETERS,
        token: str | None = None,
        resamples: int = 200,
        default_bias: str = BIASES[0],
    ) -> None:
        listed = list(models or _env_list("UNQOVER_SPACE_MODELS") or CURATED_MODELS)
        # the page's model choices: a model of the server by its name, marked local (never its path) -> the model
        self.choices = operator_models(listed)
        self.models = list(self.choices)
        self.listed = set(self.choices.values())  # the models the operator offers, also typed as they are
        # what each listed model answers (None: a Hub id, known once chosen), for the probes that ask for it
        self.capabilities = {choice: server_capabilities(model) for choice, model in self.choices.items()}
        # the live probe's run folders: under the user's cache, never in the working folder
        self.cache_dir = Path(
            cache_dir or os.environ.get("UNQOVER_SPACE_CACHE") or user_cache_folder("space")
        )
        self.word_lists = word_lists_folder(word_lists)  # else UNQOVER_WORD_LISTS's folder
        self.results_location = results_location or os.environ.get("UNQOVER_SPACE_RESULTS", "")
        # the results box reads only inside this folder (and Hub dataset repos)
        root = results_root or os.environ.get("UNQOVER_SPACE_RESULTS_ROOT") or self.cache_dir
        self.results_root = Path(root).expanduser().resolve()
        # ... and only these Hub dataset repos (ids, or owners for all their repos)
        self.results_repos = tuple(results_repos) if results_repos is not None else _results_repos()
        # folders on the server typed as models: only where the operator allows them
        self.local_models = (
            local_models if local_models is not None else _env_flag("UNQOVER_SPACE_LOCAL_MODELS")
        )
        if Path(self.results_location).is_absolute() and not Path(
            self.results_location
        ).resolve().is_relative_to(self.results_root):
            log.warning(
                "UNQOVER_SPACE_RESULTS is outside UNQOVER_SPACE_RESULTS_ROOT: the results box refuses it"
            )
        elif (
            results.DATASET_ID.fullmatch(self.results_location)
            and not (self.results_root / self.results_location).is_dir()
            and not results.allowed_repo(self.results_location, self.results_repos)
        ):
            log.warning(
                "UNQOVER_SPACE_RESULTS is a Hub repo that UNQOVER_SPACE_RESULTS_REPOS does not allow: the results "
                "box refuses it"
            )
        env_timeout = os.environ.get("UNQOVER_SPACE_TIMEOUT")
        self.timeout = timeout if timeout is not None else (float(env_timeout) if env_timeout else None)
        self.max_parameters = max_parameters
        self.token = token or os.environ.get("HF_TOKEN") or None
        self.resamples = resamples
        self.default_bias = default_bias
        self.explorer = explorer_probe()  # the probe whose scorer and measures the explorer uses
        self.loaded: OrderedDict = OrderedDict()  # explorer models, least recently used first
        self._probe_gpu = live.gpu(duration=lambda check, bias, sample: live.gpu_seconds(bias, sample))(
            self._probe_on_gpu
        )
        self._explore_gpu = live.gpu(duration=lambda *args: 30)(self._explore_on_gpu)

    # ----------------------------------------------------------------------------------------------- live probe

    def offered(self, wants: Sequence[str]) -> list[str]:
        """The listed models offered to a probe: those that answer one of its ``wants`` (a Hub id, whose
        capabilities the page does not ask for until it is chosen, is offered to every probe)."""
        return [choice for choice in self.models if answers(self.capabilities[choice], tuple(wants))]

    def model_choices(self, bias: str, model: str | None):
        """The Live probe tab's model list for a bias class: the models that answer its probe; the model shown
        stays where it is offered (or typed), else the first offered."""
        import gradio as gr

        try:
            bias = inputs.choice(bias, "bias class", list(BIASES))
        except UnqoverError:
            return gr.update()
        choices = self.offered(PROBES[bias].wants)
        kept = isinstance(model, str) and (model in choices or (model and model not in self.choices))
        return gr.update(choices=choices, value=model if kept else (choices[0] if choices else None))

    def _probe_on_gpu(self, check, bias: str, sample: int) -> dict:
        return live.run_live_probe(
            check,
            bias,
            sample,
            self.cache_dir,
            token=self.token,
            word_lists=self.word_lists,
            resamples=self.resamples,
        )

    def _chosen(self, model_id: object) -> object:
        """The model a choice names: a model of the operator's list by its name on the page, else as typed."""
        return self.choices.get(model_id.strip(), model_id) if isinstance(model_id, str) else model_id

    def check(self, model_id: str):
        """The model checks, with local folders where the operator allows them or listed them."""
        model = self._chosen(model_id)
        listed = isinstance(model, str) and model.strip() in self.listed
        return check_live_model(
            model,
            token=self.token,
            max_parameters=self.max_parameters,
            local_models=self.local_models or listed,
        )

    def _model_message(self, err: BaseException, model_id: object) -> str:
        """A failure of the Live probe or Explorer tab as the page shows it: a model of the server by its name,
        marked local (chosen from the list, or typed where the operator allows local models; any other listed
        model the message names too), and no other path of the server; what a visitor typed that is no model
        here is repeated as typed."""
        text = live.friendly(err)
        model = self._chosen(model_id)
        typed = model.strip() if isinstance(model, str) else ""
        folders = {self.cache_dir: "the Space's cache"}
        if self.word_lists is not None:
            folders[self.word_lists] = "the Space's word lists"
        names = {form: choice for choice, listed in self.choices.items() for form in path_forms(listed)}
        if typed and (self.local_models or typed in self.listed) and on_disk(typed):
            label = next((c for c, listed in self.choices.items() if listed == typed), server_label(typed))
            names.update(dict.fromkeys(path_forms(typed, folder=True), label))
            typed = ""  # a model of the server: named, never repeated
        mark = "\x00"
        # the visitor's own words (no model of the server): kept as typed
        kept = bool(typed) and typed in text
        text = results.hide_paths(hide_models(text.replace(typed, mark) if kept else text, names), folders)
        return f"⚠️ {text.replace(mark, typed) if kept else text}"

    def probe(self, model_id: str, bias: str, sample: float) -> tuple[str, str, pd.DataFrame, str]:
        """(status, headline Markdown, most biased pairs, charts HTML); failures give a message in the status."""
        try:
            sample = live.check_sample(bias, sample)
            check = self.check(model_id)
            check_pair(check, bias)
            found = live.with_timeout(self._probe_gpu, self.timeout, check, bias, sample)
            headline, pairs, charts = render.view(results.shown_results(found))
        except ImportError:
            return f"⚠️ {bias} is not available in this version of unqover yet.", "", render.empty_pairs(), ""
        except Exception as err:
            log.warning("probe of %r on %r failed: %r", str(model_id)[:300], str(bias)[:40], err)
            return self._model_message(err, model_id), "", render.empty_pairs(), ""
        unit = live.sample_size(bias).unit
        status = (
            f"{render.DONE} {check.name} ({check.family}, {fmt_size(check.parameters)} parameters) on {bias}, "
            f"{fmt_count(sample)} {unit}"
        )
        line = render.quick_run_web_line(found)
        status += f": {line}." if line else "."
        return status, headline, pairs, charts

    # ------------------------------------------------------------------------------------------------ explorer

    def _model(self, check):
        from unqover.jobs.models import load_model_for

        key = (check.model_id, check.revision)
        if key not in self.loaded:
            self.loaded[key] = load_model_for(
                self.explorer,
                check.model_id,
                revision=None if check.local else check.revision,
                token=self.token,
            )
            while len(self.loaded) > 2:
                self.loaded.popitem(last=False)
        self.loaded.move_to_end(key)
        return self.loaded[key]

    def _explore_on_gpu(self, check, *inputs: str):
        return explorer.explore(self._model(check), *inputs, probe=self.explorer)

    def explore(
        self, model_id: str, subject_1: str, subject_2: str, context: str, question: str, negated: str
    ) -> str:
        """Markdown with the four inputs' scores and B and C worked out, or a message."""
        try:
            fields = explorer.check_inputs(subject_1, subject_2, context, question, negated)
            check = self.check(model_id)
            if not answers(check.capabilities, self.explorer.wants):
                raise UnqoverError(
                    f"the explorer scores {wanted(self.explorer.wants)}; {check.name!r} is a {check.family} model"
                )
            found = live.with_timeout(self._explore_gpu, self.timeout, check, *fields)
        except Exception as err:
            log.warning("explorer on %r failed: %r", str(model_id)[:300], err)
            return self._model_message(err, model_id)
        return explorer.explanation(found)

    def example_row(self, bias: str, index: float) -> tuple[str, str, str, str, str]:
        """Explorer inputs from row ``index`` (0 to :data:`EXAMPLE_ROWS` − 1) of an explorable probe's QA dataset
        (a local build, else built from the word lists); a bad choice is a message on the page."""
        try:
            bias = inputs.choice(bias, "bias class", EXPLORABLE)
            index = inputs.whole_in_range(0 if index is None else index, "row", 0, EXAMPLE_ROWS - 1)
            rows = example_rows(bias, self.word_lists, count=EXAMPLE_ROWS)
            if index >= len(rows):
                raise UnqoverError(f"the row is 0 to {fmt_count(len(rows) - 1)} (a whole number)")
        except Exception as err:
            raise _gr_error(live.friendly(err)) from err
        return rows[index]

    # ------------------------------------------------------------------------------------------------- results

    def _runs(self, location: str) -> tuple[results.Runs, results.Location]:
        """The runs the results box points to: inside the results folder, or a Hub dataset repo."""
        return results.open_results(
            location or self.results_location, self.results_root, self.token, self.results_repos
        )

    def _hidden(self, text: str, models: Mapping[str, str] | None = None) -> str:
        """``text`` with no path of the server: the local models of ``models`` by their names
        (:func:`unqover.space.results.shown_ids`, :func:`unqover.space.local.hide_models`), a file in the results
        folder by its name there, the Space's folders by their names (:func:`unqover.space.results.hide_paths`)."""
        folders = {self.results_root: "the Space's results folder", self.cache_dir: "the Space's cache"}
        if self.word_lists is not None:
            folders[self.word_lists] = "the Space's word lists"
        return results.hide_paths(hide_models(text, models or {}), folders)

    def _message(
        self, err: BaseException, runs: results.Runs | None = None, where: results.Location | None = None
    ) -> str:
        """A failure of the Results tab as the page shows it, with no path of the server: the local models the
        runs record, and those their predictions record (a refusal names both where they differ), by their names."""
        return f"⚠️ {self._hidden(live.friendly(err), results.shown_ids(runs, where) if runs else None)}"

    def load_results(self, location: str):
        """(status, table of runs, run choices for the viewer and the comparison)."""
        import gradio as gr

        try:
            runs, _ = self._runs(location)
        except Exception as err:
            empty = gr.update(choices=[], value=None)
            return self._message(err), pd.DataFrame(columns=results.columns()), empty, empty, empty
        names = list(runs)
        second = names[1] if len(names) > 1 else names[0]
        notes = "".join(f"\n\n> {note}" for note in runs.notes)
        table = results.runs_table(runs, text=True)  # its models named without their paths
        models = results.shown_ids(runs)
        # a dataset built from a folder of the server, or named after a model of the server
        table["dataset"] = table["dataset"].map(lambda text: self._hidden(text, models))
        return (
            f"{render.DONE} {plural(len(names), 'run')} loaded.{notes}",
            table,
            gr.update(choices=names, value=names[0]),
            gr.update(choices=names, value=names[0]),
            gr.update(choices=names, value=second),
        )

    def view_run(self, location: str, name: str) -> tuple[str, pd.DataFrame, str]:
        runs = where = None
        try:
            name = inputs.text(name, "run", inputs.MAX_RUN_CHARS)
            runs, where = self._runs(location)
            if name not in runs:
                raise UnqoverError("load the results and choose a run")
            results.offered_probe(runs[name], name)
            results.check_recorded(runs, name, where, self.word_lists)
            heading, pairs, charts = render.view(results.shown_results(runs[name]))
            models = results.shown_ids(runs)
            return self._hidden(heading, models), pairs, self._hidden(charts, models)
        except Exception as err:
            return self._message(err, runs, where), render.empty_pairs(), ""

    def compare(self, location: str, name_a: str, name_b: str) -> str:
        runs = where = None
        try:
            name_a = inputs.text(name_a, "run A", inputs.MAX_RUN_CHARS)
            name_b = inputs.text(name_b, "run B", inputs.MAX_RUN_CHARS)
            runs, where = self._runs(location)
            compared = results.comparison(runs, name_a, name_b, where, self.word_lists)
            return self._hidden(compared, results.shown_ids(runs))
        except Exception as err:
            return self._message(err, runs, where)

    # --------------------------------------------------------------------------------------------- leaderboard

    def leaderboard_runs(self, location: str, probe: str):
        """(status, the run choices: the runs of ``probe`` under the location, those its leaderboard ranks chosen)."""
        import gradio as gr

        runs = where = None
        try:
            probe = inputs.choice(probe, "probe", results.leaderboard_probes())
            runs, where = self._runs(location)
            names = [name for name in runs if results.offered_probe_name(runs[name]) == probe]
            notes: list[str] = []
            chosen = results.rankable_runs(runs, probe, where, notes)
        except Exception as err:
            return self._message(err, runs, where), gr.update(choices=[], value=[])
        models = results.shown_ids(runs, where) if notes else {}
        status = (
            f"{render.DONE} {plural(len(names), 'run')} of {probe}, {fmt_count(len(chosen))} of them ranked (chosen)."
            + "".join(f"\n\n> {self._hidden(note, models)}" for note in notes)
        )
        return status, gr.update(choices=names, value=chosen)

    def leaderboard_metric(self, probe: str):
        """The metric choices of ``probe``, its default chosen."""
        import gradio as gr

        try:
            metrics = results.leaderboard_metrics(probe)
        except Exception:
            return gr.update(choices=[], value=None)
        return gr.update(choices=metrics, value=metrics[0])

    def leaderboard(
        self, location: str, probe: str, metric: str, chosen: Sequence[str] | None
    ) -> tuple[str, str, str]:
        """(status, the leaderboard's Markdown as ``unqover leaderboard`` writes it, its figure as SVG); refusals
        (fewer than 2 runs, a declined metric, runs that differ) are the status."""
        from unqover.report.leaderboard import leaderboard_figure, leaderboard_markdown

        runs = where = None
        try:
            chosen = list(chosen or [])
            if len(chosen) > results.MAX_RUNS:
                raise UnqoverError(f"choose at most {plural(results.MAX_RUNS, 'run')}")
            chosen = [inputs.text(name, "run", inputs.MAX_RUN_CHARS) for name in chosen]
            runs, where = self._runs(location)
            board = results.rank_runs(runs, chosen, where, probe, metric, self.word_lists)
        except Exception as err:
            log.warning("leaderboard failed: %r", err)
            return self._message(err, runs, where), "", ""
        status = f"{render.DONE} {plural(len(board['models']), 'run')} of {board['probe']} ranked by {board['metric']}."
        models = results.shown_ids(runs, where)
        status += "".join(f"\n\n> {self._hidden(note, models)}" for note in board.get("left_out", []))
        shown = (leaderboard_markdown(board), leaderboard_figure(board))
        return status, self._hidden(shown[0], models), self._hidden(shown[1], models)


def _gr_error(message: str):
    import gradio as gr

    return gr.Error(message)


def _sample_slider(bias: str):
    import gradio as gr

    size = live.sample_size(bias)
    return gr.update(maximum=size.maximum, value=size.default, label=size.label)


def _location_box(default: str):
    """Where runs are read from (the Results and Leaderboard tabs): a folder in the Space's results or a Hub repo."""
    import gradio as gr

    return gr.Textbox(
        default,
        label="results folder or Hub dataset repo",
        placeholder="empty: the Space's results folder; or owner/name",
        max_length=inputs.MAX_LOCATION_CHARS,
    )


def build_app(models: Sequence[str] | None = None, cache_dir: str | os.PathLike | None = None, **settings):
    """The Gradio Blocks app (not launched, queue set): see :class:`Space` for the settings."""
    import gradio as gr

    space = Space(models, cache_dir, **settings)
    with gr.Blocks(title=TITLE) as demo:
        gr.Markdown(f"# {TITLE}\n\n{INTRO}")
        _live_tab(space)
        _explorer_tab(space)
        _results_tab(space)
        _leaderboard_tab(space)
    demo.queue(max_size=MAX_QUEUE, default_concurrency_limit=4)
    demo.space = space
    return demo


def _live_tab(space: Space) -> None:
    """The Live probe tab: a model, a bias class and a sample size in; the report, charts and pairs out."""
    import gradio as gr

    first = live.sample_size(space.default_bias)
    with gr.Tab("Live probe"):
        with gr.Row():
            offered = space.offered(PROBES[space.default_bias].wants)
            model = gr.Dropdown(
                offered,
                value=offered[0] if offered else None,
                label="model (or type a Hub id)",
                allow_custom_value=True,
            )
            bias = gr.Dropdown(list(BIASES), value=space.default_bias, label="bias class")
            sample = gr.Slider(
                1, first.maximum, value=first.default, step=1, label=first.label, info=live.SAMPLE_INFO
            )
        run = gr.Button("Probe", variant="primary")
        status = gr.Markdown(elem_id="probe-status", label="status")
        headline = gr.Markdown(label="report")
        charts = gr.HTML(elem_id="probe-charts", label="charts")
        pairs = gr.Dataframe(
            render.empty_pairs(), label="most biased subject–attribute pairs", interactive=False
        )
        bias.change(_sample_slider, bias, sample, api_name=False)
        bias.change(space.model_choices, [bias, model], model, api_name=False)
        run.click(
            _progress(space.probe),
            [model, bias, sample],
            [status, headline, pairs, charts],
            api_name="probe",
            **GPU_QUEUE,
        )


def _explorer_tab(space: Space) -> None:
    """The Explorer tab: one context and question (typed, an example or a dataset row), scored in both orders."""
    import gradio as gr

    with gr.Tab("Explorer"):
        gr.Markdown(EXPLORER_INTRO)
        offered = space.offered(space.explorer.wants)
        e_model = gr.Dropdown(
            offered, value=offered[0] if offered else None, label="model", allow_custom_value=True
        )
        subject, question_chars = inputs.MAX_SUBJECT_CHARS, inputs.MAX_QUESTION_CHARS
        with gr.Row():
            s1 = gr.Textbox(label="subject x1", value=explorer.EXAMPLES[0][0], max_length=subject)
            s2 = gr.Textbox(label="subject x2", value=explorer.EXAMPLES[0][1], max_length=subject)
        context = gr.Textbox(
            label="context", value=explorer.EXAMPLES[0][2], max_length=inputs.MAX_CONTEXT_CHARS
        )
        with gr.Row():
            question = gr.Textbox(
                label="question (attribute a)", value=explorer.EXAMPLES[0][3], max_length=question_chars
            )
            negated = gr.Textbox(
                label="negated question (ā)", value=explorer.EXAMPLES[0][4], max_length=question_chars
            )
        fields = [s1, s2, context, question, negated]
        gr.Examples([list(e) for e in explorer.EXAMPLES], fields)
        with gr.Row():
            row_bias = gr.Dropdown(
                list(EXPLORABLE), value=EXPLORABLE[0], label="or a dataset row: bias class"
            )
            # no precision: Gradio would round the value before the handler checks it (NaN would fail there)
            row_index = gr.Number(0, label=f"row (0 to {fmt_count(EXAMPLE_ROWS - 1)})", step=1)
            pick = gr.Button("Use this row")
        score = gr.Button("Score", variant="primary")
        explained = gr.Markdown(elem_id="explorer-result", label="answers")
        pick.click(space.example_row, [row_bias, row_index], fields, api_name="example_row")
        score.click(space.explore, [e_model, *fields], explained, api_name="explore", **GPU_QUEUE)


def _results_tab(space: Space) -> None:
    """The Results tab: list the runs of a folder or Hub repo, show one, compare two."""
    import gradio as gr

    with gr.Tab("Results"):
        gr.Markdown(RESULTS_INTRO)
        with gr.Row():
            location = _location_box(space.results_location)
            load = gr.Button("Load")
        r_status = gr.Markdown(label="status")
        table = gr.Dataframe(
            pd.DataFrame(columns=results.columns()),
            label="runs (click a column to sort)",
            interactive=False,
        )
        with gr.Row():
            chosen = gr.Dropdown([], label="run to show")
            show = gr.Button("Show")
        r_headline = gr.Markdown(label="report")
        r_charts = gr.HTML(label="charts")
        r_pairs = gr.Dataframe(
            render.empty_pairs(), label="most biased subject–attribute pairs", interactive=False
        )
        with gr.Row():
            run_a = gr.Dropdown([], label="run A")
            run_b = gr.Dropdown([], label="run B")
            compare = gr.Button("Compare (B − A)")
        compared = gr.Markdown(label="comparison")
        load.click(
            space.load_results, location, [r_status, table, chosen, run_a, run_b], api_name="load_results"
        )
        show.click(space.view_run, [location, chosen], [r_headline, r_pairs, r_charts], api_name="view_run")
        compare.click(space.compare, [location, run_a, run_b], compared, api_name="compare")


def _leaderboard_tab(space: Space) -> None:
    """The Leaderboard tab: several models' runs of one probe ranked by one metric."""
    import gradio as gr

    with gr.Tab("Leaderboard"):
        gr.Markdown(LEADERBOARD_INTRO)
        probes = results.leaderboard_probes()
        metrics = results.leaderboard_metrics(probes[0])
        with gr.Row():
            l_location = _location_box(space.results_location)
            l_probe = gr.Dropdown(probes, value=probes[0], label="probe")
            l_metric = gr.Dropdown(metrics, value=metrics[0], label="metric")
        with gr.Row():
            l_runs = gr.Dropdown(
                [], value=[], multiselect=True, label="runs (none: every quick run of the probe)"
            )
            l_list = gr.Button("List runs")
            rank = gr.Button("Rank", variant="primary")
        l_status = gr.Markdown(label="status")
        l_table = gr.Markdown(label="leaderboard")
        l_figure = gr.HTML(label="figure")
        l_probe.change(space.leaderboard_metric, l_probe, l_metric, api_name=False)
        l_list.click(
            space.leaderboard_runs, [l_location, l_probe], [l_status, l_runs], api_name="leaderboard_runs"
        )
        rank.click(
            space.leaderboard,
            [l_location, l_probe, l_metric, l_runs],
            [l_status, l_table, l_figure],
            api_name="leaderboard",
        )


def _progress(function):
    """The handler with a Gradio progress bar that follows the runner's tqdm bars."""
    import gradio as gr

    def handler(model_id, bias, sample, progress=gr.Progress(track_tqdm=True)):  # noqa: B008 (Gradio's idiom)
        return function(model_id, bias, sample)

    handler.__name__ = handler.__qualname__ = getattr(function, "__name__", "handler")
    return handler


def launch(**kwargs):
    """Build and serve the app (``python space/app.py``)."""
    return build_app().launch(css=CHART_CSS, **kwargs)
