"""What a web request may carry: every input of the Space has a bound, checked here at the boundary (the first
lines of each handler), so that nothing unbounded or non-finite reaches the library.

A request can come from the page or straight from the HTTP API, so a value may be of any JSON type (``NaN`` and
``Infinity`` included): each check refuses what it cannot use with one message a web user can act on, and never
echoes a long or odd value back.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from unqover.errors import UnqoverError
from unqover.format import fmt_count

#: the longest model id or model folder name typed in (Hub ids have at most 96 + 1 + 96 characters)
MAX_MODEL_CHARS = 300
#: the results box: a folder inside the Space's results folder or a Hub dataset repo id
MAX_LOCATION_CHARS = 300
#: a run's name in the results browser (its folder, relative to the folder loaded)
MAX_RUN_CHARS = 500
#: the explorer's fields
MAX_SUBJECT_CHARS = 100
MAX_QUESTION_CHARS = 300
MAX_CONTEXT_CHARS = 1_000


def text(value: object, name: str, limit: int) -> str:
    """``value`` stripped (None is ""), at most ``limit`` characters; anything but text is refused."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise UnqoverError(f"the {name} must be text")
    value = value.strip()
    if len(value) > limit:
        raise UnqoverError(f"the {name} has at most {fmt_count(limit)} characters")
    if "\x00" in value:
        raise UnqoverError(f"the {name} holds a character it cannot hold")
    return value


def whole_in_range(value: object, name: str, low: int, high: int, unit: str = "") -> int:
    """A whole number from ``low`` to ``high``: NaN, infinities, fractions, booleans and non-numbers are refused."""
    bound = f"{fmt_count(low)} to {fmt_count(high)}" + (f" {unit}" if unit else "")
    message = f"the {name} is {bound} (a whole number)"
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise UnqoverError(message)
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError) as err:
        raise UnqoverError(message) from err
    if not math.isfinite(number) or number != int(number) or not low <= number <= high:
        raise UnqoverError(message)
    return int(number)


def choice(value: object, name: str, choices: Sequence[str]) -> str:
    """One of ``choices``, else a message that lists them (the value itself is not repeated)."""
    if not isinstance(value, str) or value not in choices:
        raise UnqoverError(f"choose a {name} from the list: {', '.join(choices)}")
    return value
