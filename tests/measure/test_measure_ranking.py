"""The subject ranking across models behind the paper's Figs. 4–5."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from unqover.errors import UnqoverError
from unqover.measure.unqover import rank_subjects


class _Result:
    def __init__(self, ranking: list[str]) -> None:
        self.subject_gamma = pd.DataFrame({"rank": np.arange(1, len(ranking) + 1), "subject": ranking})


def test_mean_and_std_of_ranks():
    table = rank_subjects(
        {"a": _Result(["x", "y", "z"]), "b": _Result(["y", "x", "z"]), "c": _Result(["x", "z", "y"])}
    )
    assert table["subject"].tolist() == ["x", "y", "z"]
    assert table["mean_rank"].tolist() == pytest.approx([4 / 3, 2.0, 8 / 3])
    assert table.loc[0, "std_rank"] == pytest.approx(np.std([1, 2, 1]))
    assert table.loc[2, ["a", "b", "c"]].tolist() == [3, 3, 2]


def test_ranking_needs_the_same_subjects():
    with pytest.raises(UnqoverError, match=r"subjects \['z'\] are not ranked by every model"):
        rank_subjects({"a": _Result(["x", "y", "z"]), "b": _Result(["y", "x"])})
    with pytest.raises(UnqoverError, match="at least one result"):
        rank_subjects({})
