"""The model engines, by name: adding an engine is its module and one line of :data:`ENGINES`.

Without ``--engine``, a model argument goes to the first automatic engine (in this order) that serves it:
Beecher's own ``tfidf:``/``glove:`` models, else transformers (the fallback, which serves any other model). An engine that needs its own
options (a server's URL) is used only when named.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from unqover.errors import UnqoverError
from unqover.scoring.engines.base import Engine
from unqover.scoring.requests import EngineRequest

#: engine name -> "module:attr" of its :class:`~unqover.scoring.engines.base.Engine` (imported when first asked)
ENGINES: dict[str, str] = {
    "beecher": "unqover.scoring.engines.beecher:BeecherEngine",
    "openai": "unqover.scoring.engines.openai:OpenAIEngine",
    "transformers": "unqover.scoring.engines.transformers:TransformersEngine",
}


def engine_named(name: str) -> Engine:
    """The engine registered as ``name`` (one line naming the engines for another name)."""
    if name not in ENGINES:
        raise UnqoverError(f"no engine {name!r}: the engines are {', '.join(ENGINES)}")
    module, _, attr = ENGINES[name].partition(":")
    return getattr(importlib.import_module(module), attr)()


def engine_for(request: EngineRequest) -> Engine:
    """The engine ``request`` names, or (``engine`` "auto") the first automatic engine that serves its model."""
    if request.engine != "auto":
        return engine_named(request.engine)
    engines = [engine_named(name) for name in ENGINES]
    serving = [e for e in engines if e.automatic and e.serves(request.model_id)]
    if serving:  # a fallback serves what no other engine does
        return min(serving, key=lambda engine: engine.fallback)
    raise UnqoverError(
        f"no engine serves {request.model_id!r}: name one with --engine ({', '.join(ENGINES)})"
    )


def load_for(engine: Engine, request: EngineRequest, wants: Sequence[str]) -> tuple[Any, Any]:
    """(placement, model): ``engine`` loads the model, which must answer one of ``wants`` (one line if not)."""
    from unqover.scoring.requests import first_wanted

    placement, model = engine.load(request, wants)
    if first_wanted(model.capabilities, wants) is None:
        raise UnqoverError(
            f"{request.model_id} is a {model.family} model, which the {request.asker} probe cannot score (it asks "
            f"for {' or '.join(wants)}; the model answers {', '.join(model.capabilities) or 'none of them'})"
        )
    return placement, model


def engines_help() -> str:
    """Each engine's name and what it runs, for ``--engine``'s help."""
    return "; ".join(f"{name}: {engine_named(name).about}" for name in ENGINES)


def engine_options() -> list:
    """Every engine's own options (:class:`unqover.options.Option`), for the command line."""
    return [option for name in ENGINES for option in engine_named(name).options]


def scorer_for(model: Any, wants: Sequence[str], **how: Any) -> Any:
    """The runner scorer of the first capability of ``wants`` the loaded ``model`` has, from the engine that
    loaded it (:meth:`Engine.scorer`)."""
    from unqover.scoring.requests import first_wanted

    capability = first_wanted(model.capabilities, wants)
    if capability is None:
        raise UnqoverError(f"{model.model_id} cannot answer {' or '.join(wants)} requests")
    return engine_named(model.engine).scorer(model, capability, **how)
