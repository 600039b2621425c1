"""A command-line option as data: its flag, how its text is read and what it means.

The probe definitions (``unqover.probes``) and the model engines (``unqover.scoring.engines``) each declare their
own options; ``unqover.cli`` adds them to its parser, so adding an option is one line in the module that owns it.
Nothing here imports more than the standard library: the parser is built before anything heavy is loaded.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Option:
    """One command-line option: its flag, how its text is read and what it means.

    ``default`` is the value a probe uses when the option is not given (the parser itself records None, so a
    probe can tell "not given" from "given"); options of several probes with the same flag become one argument.
    """

    flag: str  # "--length-rule"
    help: str
    type: Callable[[str], Any] | None = None
    choices: Sequence[str] | None = None
    metavar: str | None = None
    default: Any = None
    flag_only: bool = False  # a switch: present or absent
    repeat: bool = False  # may be given several times: the value is the list of them

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")

    def add_to(
        self, parser: argparse.ArgumentParser, help: str | None = None, choices: Sequence[str] | None = None
    ) -> None:
        """Add the option to ``parser`` (with the ``help`` and ``choices`` of all the probes that share it)."""
        if self.flag_only:
            parser.add_argument(self.flag, action="store_true", default=None, help=help or self.help)
            return
        parser.add_argument(
            self.flag,
            action="append" if self.repeat else "store",
            type=self.type,
            choices=choices if choices is not None else self.choices,
            metavar=self.metavar,
            default=None,
            help=help or self.help,
        )
