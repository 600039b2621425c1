"""The one interface every model engine answers a probe's requests through (:mod:`unqover.scoring.requests`).

An :class:`Engine` is one module under ``unqover.scoring.engines`` that declares its name, its options, which
model ids it serves and which capabilities it can have, and loads a model for a :class:`EngineRequest`. The
registry (``unqover.scoring.engines.ENGINES``) names them; ``engine_for`` picks one and ``load_for`` has it load.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from unqover.errors import UnqoverError
from unqover.scoring.requests import EngineRequest

if TYPE_CHECKING:
    from unqover.options import Option
    from unqover.scoring.placement import Placement


class Engine:
    """One way to run models. A subclass declares :attr:`name`, :attr:`capabilities` (all it can have; a loaded
    model has those its weights give), its own command-line :attr:`options`, and writes :meth:`load` and
    :meth:`scorer` (and :meth:`serves`, :meth:`check`, :meth:`capabilities_of` where the defaults do not fit)."""

    name: ClassVar[str] = ""
    #: what it runs, in a few words (``unqover probe --help``)
    about: ClassVar[str] = ""
    #: the scoring modes it scores in (``paper``: a paper's own code reproduced, where the engine runs its models)
    modes: ClassVar[tuple[str, ...]] = ("default",)
    #: what the engine can answer for some model (:data:`unqover.scoring.requests.CAPABILITIES`)
    capabilities: ClassVar[tuple[str, ...]] = ()
    #: the engine's own ``unqover probe`` options (``--base-url``), read into ``EngineRequest.options``
    options: ClassVar[tuple[Option, ...]] = ()
    #: picked without ``--engine`` for the model ids it :meth:`serves`; an engine that needs options (a server's
    #: URL) is used only when named
    automatic: ClassVar[bool] = True
    #: serves any model argument no other automatic engine serves (transformers)
    fallback: ClassVar[bool] = False

    def serves(self, model_id: str) -> bool:
        """Whether a model argument names one of this engine's models (asked in the registry's order)."""
        return True

    def check(self, request: EngineRequest, wants: Sequence[str]) -> None:
        """Refuse, before anything loads or downloads, a request this engine cannot load: a model argument that
        cannot name a model, an option that does not apply (one line each). Default: nothing to check."""

    def capabilities_of(self, request: EngineRequest) -> tuple[str, ...] | None:
        """The capabilities the requested model has, from what is cheap to read before it loads (a config);
        None where only loading tells. Default: every capability of the engine."""
        return self.capabilities

    def local_source(self, request: EngineRequest) -> Any | None:
        """The model's files as this engine reads them before it loads (a run folder holding another model's run
        is refused by their content: ``unqover.jobs.folder_check``); None (the default): it reads none here."""
        return None

    def load(self, request: EngineRequest, wants: Sequence[str]) -> tuple[Placement, Any]:
        """(this process's placement, the loaded model) for a probe that can use ``wants``. The model records
        ``engine`` (this engine's name) and ``capabilities`` (those its weights give), and has ``family``,
        ``model_id``, ``revision``, ``device``, ``dtype`` and ``provenance()``."""
        raise NotImplementedError

    def scorer(self, model: Any, capability: str, **how: Any) -> Any:
        """The runner scorer (:class:`unqover.scoring.run_plan.Scorer`) that answers ``capability``'s requests
        with ``model``; ``how``: the probe's scoring settings (``scoring``, ``chat_template``, ``system_prompt``,
        Beecher's ``questions``)."""
        raise NotImplementedError

    def check_options(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """This engine's options with their defaults filled in; an option given that is not its own is refused."""
        own = {option.dest: option.default for option in self.options}
        unknown = sorted(k for k, v in given.items() if v is not None and k not in own)
        if unknown:
            names = ", ".join("--" + k.replace("_", "-") for k in unknown)
            raise UnqoverError(f"{names} do(es) not apply to the {self.name} engine")
        return {k: (given[k] if given.get(k) is not None else default) for k, default in own.items()}
