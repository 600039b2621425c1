"""More bad inputs (issue 29, item 6), each through the real command line (``unqover.cli.main``), offline: every one
ends in exit code 2 and one ``unqover: error: ...`` line (the exact message checked), or works.

The catalogues these join: ``tests/test_bad_inputs.py`` (options, outputs, models), ``tests/test_bad_inputs_run.py``
(runs) and ``tests/test_bad_inputs_data.py`` (data), whose shared ``refused`` check this module uses.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

from test_bad_inputs_data import refused
from unqover.probes import precision

# ---------------------------------------------------------------------------------------------------------------
# --precision: a width too narrow to be seen met is refused before the model; the next round's size cannot overflow


def test_a_precision_too_narrow_to_be_seen_is_refused_before_the_model(tmp_path, capsys):
    argv = ["probe", str(tmp_path / "no-model"), "--bias", "religion", "--precision", "1e-300"]
    line = refused([*argv, "--output", str(tmp_path / "run")], capsys, "")
    assert line == (
        "unqover: error: --precision 1e-300 is narrower than the results show (4 digits): give a width of at least "
        "0.0001, or leave out --precision to score every group"
    )
    assert not (tmp_path / "run").exists()


def test_the_next_round_of_a_tiny_target_grows_by_the_largest_step_without_overflow():
    result = SimpleNamespace(
        intervals={name: (0.1, 0.4) for name in precision.HEADLINE}, declined={}, sample={}
    )
    assert precision.next_budget(1000, result, 1e-300, 10**9) == 4000
    assert (
        precision.next_budget(1000, result, 0.3, 10**9) == 1250
    )  # (0.3 / 0.3)² · 1.2 < 1.25: the smallest step
    assert precision.next_budget(1000, result, 0.2, 10**9) == math.ceil(1000 * ((0.4 - 0.1) / 0.2) ** 2 * 1.2)
    declined = {"eta": {"groups_needed": math.inf}}
    result = SimpleNamespace(intervals={}, declined=declined, sample={})
    assert precision.next_budget(1000, result, 1e-300, 10**9) == 4000
