"""The one exception type that reaches users: its message says what is wrong and how to fix it."""


class UnqoverError(Exception):
    """A problem with the user's input or environment, reported without a traceback by the CLI."""


class NotAtHand(UnqoverError):
    """Something a command needs is not on this machine (e.g. the word lists a run was generated from): no
    fallback (a comparison without intervals, a run left unchecked) may hide it; the command refuses."""


def first_line(err: BaseException) -> str:
    """The first line of an exception's message: library errors can be pages long."""
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


#: what scoring or training a model needs beyond the light core (the ``models`` extra of pyproject.toml)
MODELS_EXTRA = ("torch", "transformers", "accelerate")


def require_models_extra(what: str = "scoring models") -> None:
    """Refuse at once, in one line naming the extra to install, where torch, transformers or accelerate is missing:
    the light core (``pip install unqover``) builds datasets and measures without them, and a deep import error
    mid-run would say neither why nor what to install."""
    import importlib.util
    import sys

    def installed(name: str) -> bool:
        if name in sys.modules:
            return True
        try:
            return importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            return False

    if not all(installed(name) for name in MODELS_EXTRA):
        raise UnqoverError(f'{what} needs torch, transformers and accelerate: pip install "unqover[models]"')
