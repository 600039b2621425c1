"""The one exception type that reaches users: its message says what is wrong and how to fix it."""


class UnqoverError(Exception):
    """A problem with the user's input or environment, reported without a traceback by the CLI."""
