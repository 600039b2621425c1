"""Command-line options as data: what every run takes, and the checks that turn an argument into a value.

A probe definition lists its own options (:class:`unqover.options.Option`); ``unqover.cli`` adds the shared ones and every
registered probe's to its parser, so adding an option is one line in the definition that owns it. The argument
checks (:func:`positive`, :func:`width`, ...) raise :class:`argparse.ArgumentTypeError`, which a
:class:`CommandParser` prints as one line naming the option. Nothing here imports more than the standard library: the parser is built before
anything heavy is loaded.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from unqover.errors import UnqoverError


class CommandParser(argparse.ArgumentParser):
    """An argument parser whose refusals read like every other refusal of the command line: one line
    ``unqover: error: MESSAGE (see PROG --help)`` on stderr and exit status 2, without argparse's usage block.

    Its subcommands' parsers are of the same class (``add_subparsers`` makes them with the parser's own class).
    """

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"unqover: error: {message} (see {self.prog} --help)\n")

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """argparse's check of a value against an option's choices, naming the closest choice for a mistyped one
        (``--dtype bfloat`` -> bfloat16, ``prob`` -> probe): every command's choices, the commands included."""
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as err:
            hint = did_you_mean(value, action.choices or ()) if isinstance(value, str) else ""
            raise argparse.ArgumentError(action, f"{err.message}{hint}") from None


def did_you_mean(typed: str, choices: Iterable[Any]) -> str:
    """`` (did you mean NAME?)`` for a mistyped value close to one of ``choices`` (``religon`` -> religion), else
    nothing (a three-letter word one letter off is not close: ``gpu`` is not ``cpu``); argparse before Python 3.14
    suggests nothing."""
    import difflib

    close = difflib.get_close_matches(typed, [str(choice) for choice in choices], n=1, cutoff=0.7)
    return f" (did you mean {close[0]}?)" if close else ""


# ---------------------------------------------------------------------------------------------------------------
# argument checks


def whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def output_path(text: str) -> Path:
    """An ``--output``: an empty one would be the working directory (``Path("")`` is ``.``), so it is refused."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            f"expected a file or folder name, got {text!r} (for the working directory, say .)"
        )
    return Path(text)


def real(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if value != value:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}")
    return value


def positive(text: str) -> int:
    value = whole(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text}")
    return value


def non_negative(text: str) -> int:
    value = whole(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def width(text: str) -> float:
    value = real(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"an interval width in (0, 1), got {text}")
    return value


def fraction(text: str) -> float:
    value = real(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text}")
    return value


def fraction_or_one(text: str) -> float:
    value = real(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {text}")
    return value


def shard_spec(text: str) -> tuple[int, int]:
    """Parse ``"i/n"`` (shard ``i`` of ``n``, counting from 0) as given on a command line."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(text))
    if match is None:
        raise UnqoverError(f"shard {text!r} is not of the form i/n, e.g. 0/4 for the first of four shards")
    index, count = int(match[1]), int(match[2])
    if count < 1 or index >= count:
        raise UnqoverError(
            f"shard {text!r} is out of range: i/n needs 0 <= i < n (shards count from 0, e.g. 0/2 and 1/2)"
        )
    return index, count


def shard(text: str) -> tuple[int, int]:
    """``--shard I/N`` (see :func:`shard_spec`)."""
    try:
        return shard_spec(text)
    except UnqoverError as err:
        raise argparse.ArgumentTypeError(str(err)) from err


DURATION_UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600}


def parse_duration(text: str) -> float:
    """Seconds from a duration with its unit: ``90s``, ``30m`` (or ``30min``), ``1h``, ``1.5h``. A number without
    a unit, zero, a negative or anything else is refused with one line."""
    match = re.fullmatch(r"\s*([+-]?(?:\d+\.?\d*|\.\d+))\s*([A-Za-z]*)\s*", str(text))
    if match is None or match.group(2).lower() not in ("", *DURATION_UNITS):
        raise UnqoverError(
            f"--max-time takes a duration with its unit, such as 90s, 30m or 1.5h; got {text!r}"
        )
    number, unit = float(match.group(1)), match.group(2).lower()
    if not unit:
        raise UnqoverError(
            f"--max-time needs a unit (s, m or min, h), such as 90s, 30m or 1.5h; got {text!r}"
        )
    if number <= 0:
        raise UnqoverError(f"--max-time must be a positive duration such as 90s, 30m or 1.5h; got {text!r}")
    return number * DURATION_UNITS[unit]


def label_map(text: str) -> dict[str, int]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"not JSON: {err}") from err
    if not isinstance(value, dict) or not all(isinstance(v, int) for v in value.values()):
        raise argparse.ArgumentTypeError(
            'expected a JSON object of label ids, e.g. {"entailment": 0, "contradiction": 2}'
        )
    return value


def comma_words(text: str) -> tuple[str, ...]:
    """``a,b,c``: the words, stripped (their number and distinctness are the option's to check)."""
    return tuple(word.strip() for word in text.split(","))


def source(text: str) -> tuple[str, str | None]:
    """``NAME=PATH`` or ``NAME=hub``."""
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(
            f"expected NAME=PATH or NAME=hub (e.g. mnli=data/mnli.parquet), got {text!r}"
        )
    return name, None if path == "hub" else path


class ChosenProbes(list):
    """``--bias``'s probe names, in order; :attr:`optional` holds those chosen by ``all`` alone (not named, nor in
    a group named): a model that cannot score one of them leaves it out with a line instead of refusing it."""

    def __init__(self, names: Sequence[str] = (), optional: Sequence[str] = ()) -> None:
        super().__init__(names)
        self.optional = frozenset(optional)


#: the ``--bias`` word for every built-in probe (those the model cannot score left out)
ALL_PROBES = "all"


def probe_list(
    names: Sequence[str], groups: dict[str, list[str]], everything: bool = False
) -> Callable[[str], ChosenProbes]:
    """``--bias``: a comma list of probe names and group names (a group stands for its members, in order), read
    into the probe names, deduplicated in order; an unknown name is refused with the choices. ``everything``:
    ``all`` stands for every probe, those not otherwise named being optional (:class:`ChosenProbes`)."""
    words = [*groups, *([ALL_PROBES] if everything else [])]

    def read(text: str) -> ChosenProbes:
        chosen: list[str] = []
        named: list[str] = []
        for part in text.split(","):
            name = part.strip()
            if name in names:
                named.append(name)
                chosen.append(name)
            elif name in groups:
                named += groups[name]
                chosen += groups[name]
            elif everything and name == ALL_PROBES:
                chosen += names
            else:
                choices = ", ".join(names)
                group_choices = f", or a group: {', '.join(groups)}" if groups else ""
                group_choices += f", or {ALL_PROBES}" if everything else ""
                raise argparse.ArgumentTypeError(
                    f"unknown probe {name!r}{did_you_mean(name, [*names, *words])}; choose from {choices}"
                    f"{group_choices} (several: NAME,NAME)"
                )
        kept = list(dict.fromkeys(chosen))
        return ChosenProbes(kept, [name for name in kept if name not in named])

    return read


#: ``from_pretrained`` keywords unqover sets itself, and the option that sets each (None: never given)
RESERVED_MODEL_ARGS = {
    "trust_remote_code": None,
    "revision": "--revision",
    "token": "--token",
    "use_auth_token": "--token",
    "dtype": "--dtype",
    "torch_dtype": "--dtype",
    "device_map": "--device",
    "use_safetensors": "--allow-pickle",
    "pretrained_model_name_or_path": "MODEL",
}


def model_arg(text: str) -> tuple[str, Any]:
    """``--model-arg KEY=VALUE``: a keyword for the model's ``from_pretrained``; VALUE is read as JSON when it
    parses (``true``, ``4``, ``0.5``, ``{"load_in_4bit": true}``), else kept as text. Keys unqover sets itself are
    refused with the option to use instead."""
    key, sep, value = str(text).partition("=")
    key = key.strip()
    if not sep:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE (e.g. attn_implementation=sdpa), got {text!r}")
    if not key:
        raise argparse.ArgumentTypeError(f"the key before '=' is empty in {text!r}")
    if not key.isidentifier():
        raise argparse.ArgumentTypeError(f"{key!r} is no keyword argument name (in {text!r})")
    if key in RESERVED_MODEL_ARGS:
        instead = RESERVED_MODEL_ARGS[key]
        if instead is None:
            raise argparse.ArgumentTypeError(
                f"{key} cannot be set: unqover never runs a model's own code (trust_remote_code is always False)"
            )
        raise argparse.ArgumentTypeError(f"{key} is set by unqover: use {instead} instead")
    try:
        parsed = json.loads(value)
    except ValueError:
        parsed = value
    bad = not_finite(parsed)
    if bad is not None:
        raise argparse.ArgumentTypeError(
            f"{key}={value}: {bad} is not a finite number, and run.json records every value; give a number, "
            "true, false or text"
        )
    return key, parsed


def not_finite(value: Any) -> str | None:
    """The first NaN or infinity in a JSON value (as JSON writes it), or None: no keyword takes one, and a run's
    record (strict JSON) cannot hold it."""
    if isinstance(value, float) and not math.isfinite(value):
        return json.dumps(value)
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return next((bad for bad in map(not_finite, items) if bad is not None), None)


def model_args(pairs: Sequence[tuple[str, Any]] | None) -> dict[str, Any]:
    """The ``--model-arg`` pairs as keywords; a key given twice is refused."""
    out: dict[str, Any] = {}
    for key, value in pairs or ():
        if key in out:
            raise UnqoverError(f"--model-arg {key} is given twice: give each key once")
        out[key] = value
    return out


def model_arg_text(key: str, value: Any) -> str:
    """``KEY=VALUE`` as a user writes it (text as is, anything else as JSON)."""
    return f"{key}={value if isinstance(value, str) else json.dumps(value)}"


#: the largest ``--chat-template`` file read
MAX_TEMPLATE_BYTES = 1_000_000
TEMPLATE_SUFFIXES = (".jinja", ".j2")


def chat_template_file(text: str) -> tuple[str, str, str]:
    """``--chat-template FILE.jinja``: (resolved path, template text, sha256 of its bytes); one line for a file
    that is missing, unreadable, not UTF-8, empty, too large or not named ``*.jinja`` / ``*.j2``."""
    import hashlib
    from pathlib import Path

    path = Path(text).expanduser()
    choices = "auto, none or a FILE.jinja"
    if path.suffix.lower() not in TEMPLATE_SUFFIXES:
        raise UnqoverError(f"--chat-template takes {choices} (a .jinja or .j2 file), got {text!r}")
    if not path.is_file():
        missing = "is a folder" if path.is_dir() else "not found"
        raise UnqoverError(f"--chat-template {text}: {missing} (it takes {choices})")
    try:
        size = path.stat().st_size
        if size > MAX_TEMPLATE_BYTES:
            raise UnqoverError(
                f"--chat-template {text} is {size:,} bytes: a chat template is at most {MAX_TEMPLATE_BYTES:,}"
            )
        data = path.read_bytes()
    except OSError as err:
        raise UnqoverError(f"--chat-template {text} cannot be read: {err.strerror or err}") from None
    try:
        template = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UnqoverError(f"--chat-template {text} is not UTF-8 text") from None
    if not template.strip():
        raise UnqoverError(f"--chat-template {text} is empty")
    return str(path.resolve()), template, hashlib.sha256(data).hexdigest()
