"""A run's plan before anything is scored (``unqover probe ... --plan-only``): its rows, the model inputs they
make, the tokens a causal LM runs for them (:mod:`unqover.jobs.run_size`), and a projected time where an earlier
run into the same folder measured this host's rate. It needs only the model's tokenizer and config: the weights
are not loaded, and the token tree is assumed (an ``sdpa`` or ``eager`` attention model, as most are).
"""

from __future__ import annotations

from unqover.errors import UnqoverError
from unqover.jobs.folder_check import planned_capabilities
from unqover.jobs.run import default_output, plan_run
from unqover.jobs.run_size import RunSize, measured_rate, run_size
from unqover.probes.base import ProbeDefinition, RunOptions, output_name
from unqover.probes.causal_prompt import chat_template_choice
from unqover.scoring.requests import CONTINUATIONS, first_wanted
from unqover.scoring.runner import automatic_batch_size


def weightless_model(plan):
    """The model as its config and tokenizer describe it, without its weights (a transformers-engine model)."""
    from unqover.scoring.models import FAMILY_CAPABILITIES, LoadedModel, family_of, model_source

    request = plan.request
    if plan.engine.name != "transformers":
        raise UnqoverError(
            f"--plan-only plans runs of the transformers engine, not the {plan.engine.name} engine"
        )
    source = model_source(request.model_id, request.revision, request.token, request.gguf_file)
    family = "causal" if source.gguf_file else family_of(source.config())
    dtype = "float32" if request.dtype == "auto" else request.dtype
    return LoadedModel(
        None, source.tokenizer(), family, request.model_id, request.revision, "cpu", dtype,
        capabilities=FAMILY_CAPABILITIES[family],
    )  # fmt: skip


def plan_text(model_id: str, probe: ProbeDefinition, run: RunOptions) -> str:
    """``--plan-only``: the run's plan, from its rows and the model's tokenizer (no weights loaded)."""
    from unqover.scoring.causal import CausalScorer

    plan = plan_run(model_id, probe, run)
    model = weightless_model(plan)
    loaded = probe.load(plan.run, plan.settings, model)
    scorer = None
    if (
        first_wanted(model.capabilities, probe.wants) == CONTINUATIONS
        and "context" in loaded.rows.column_names
    ):
        settings = plan.settings
        scorer = CausalScorer(
            model, share_prefixes=False, chat_template=chat_template_choice(settings),
            system_prompt=settings.get("system_prompt"),
        )  # fmt: skip
    if scorer is None:
        size = RunSize(loaded.rows.num_rows, None)
    else:
        size = run_size(
            loaded.rows, scorer, run.batch_size or automatic_batch_size(), run.chunk_rows, shared=True
        )
    capabilities = planned_capabilities(plan.engine, plan.request)
    name = output_name(probe, loaded, plan.settings) if capabilities is not None else None
    folder = run.output or (default_output(model_id, name) if name else None)
    rate = None if folder is None else measured_rate(folder)
    return f"Plan of {probe.name} on {model_id}: {size.text(rate)}"
