"""One look across the reports (issue 30, item 7): the HTML pages render their Markdown with markdown-it-py, and
text from the data (model, dataset, word-list words) is escaped, never markup."""

from __future__ import annotations

import numpy as np
import pyarrow.compute as pc
import pytest

from unqover.generate.eec import eec_questions
from unqover.generate.nli import nli_rows, synthetic_premises
from unqover.measure.emotion import emotion_bias
from unqover.measure.nli import nli_gender_bias
from unqover.report.eec import eec_html
from unqover.report.nli import nli_html
from unqover.report.page import markdown_page

SCRIPT = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"
PROVENANCE = {
    "model": {"id": f"org/{SCRIPT}", "revision": "abc123", "family": "nli"},
    "dataset": {"source": f"data/{SCRIPT}", "config": "main", "split": "test", "fingerprint": "f00d"},
    "selection": {"kind": "design", "limit": 2, "seed": 0},
}


@pytest.fixture(scope="module")
def nli_results() -> dict:
    """An NLI result from random scores on the synthetic premises, its first occupation renamed to a script tag."""
    rows = nli_rows(synthetic_premises(), family="main")
    rng = np.random.default_rng(0)
    result = nli_gender_bias(
        rng.uniform(size=rows.num_rows), rng.uniform(size=rows.num_rows), rows["occupation_gender"],
        rows["cluster"], occupation=rows["occupation"], template_id=rows["template_id"], n_resamples=50,
        n_permutations=0,
    ).to_dict()  # fmt: skip
    result["by_occupation"][0]["occupation"] = SCRIPT
    return {"probe": "nli-gender", "result": result, "provenance": PROVENANCE}


@pytest.fixture(scope="module")
def eec_results() -> dict:
    """An emotion result from random answers to the EEC questions, its first person renamed to a script tag."""
    questions = eec_questions()
    words = pc.list_flatten(questions["choices"]).to_pylist()
    emotions = dict(zip(words, pc.list_flatten(questions["choice_emotions"]).to_pylist(), strict=True))
    rng = np.random.default_rng(1)
    answers = [list(rng.permutation(choices)[:3]) for choices in questions["choices"].to_pylist()]
    result = emotion_bias(
        answers, questions["gender"].to_pylist(), questions["race"].to_pylist(),
        questions["person_slot"].to_pylist(), questions["form"].to_pylist(), emotions=emotions,
        n_permutations=0, n_bootstrap=50,
    ).to_dict()  # fmt: skip
    result["persons"][0]["person"] = SCRIPT
    return {"probe": "eec-emotion", "result": result, "provenance": PROVENANCE}


def test_markdown_is_rendered_by_a_commonmark_parser_with_raw_html_escaped():
    page = markdown_page(
        f"# Title {SCRIPT}\n\nText <b>bold?</b> and *em*.\n\n| a | b |\n|---|---:|\n| x | 1 |", "t"
    )
    assert "<script" not in page and ESCAPED in page and "&lt;b&gt;bold?&lt;/b&gt;" in page
    assert "<em>em</em>" in page and '<td class="l">x</td>' in page and "<td>1</td>" in page


def test_a_word_with_a_script_tag_renders_escaped_in_the_nli_and_emotion_pages(nli_results, eec_results):
    for page in (nli_html(nli_results), eec_html(eec_results)):
        assert "<script" not in page
        assert ESCAPED in page  # the occupation / person, the model and the dataset, as text
        assert f"org/{ESCAPED}" in page and f"data/{ESCAPED}" in page
