"""The one exception type that reaches users: its message says what is wrong and how to fix it."""


class UnqoverError(Exception):
    """A problem with the user's input or environment, reported without a traceback by the CLI."""


def first_line(err: BaseException) -> str:
    """The first line of an exception's message: library errors can be pages long."""
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
