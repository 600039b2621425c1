"""NLI gender-occupation probe rows: labels, templates, premise filters, equalization, synthetic premises, rows."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from unqover.errors import UnqoverError
from unqover.generate import nli, nli_filter, nli_occupations, nli_premises, nli_templates
from unqover.generate.gender_swap import has_gendered_word
from unqover.generate.nli_occupations import PROBE_OCCUPATIONS


def test_38_occupations_19_19_paper_labels():
    assert len(PROBE_OCCUPATIONS) == len(set(PROBE_OCCUPATIONS)) == 38
    assert list(nli_occupations.OCCUPATION_LABELS) == list(PROBE_OCCUPATIONS)
    assert Counter(nli_occupations.OCCUPATION_LABELS.values()) == {"female": 19, "male": 19}
    assert nli_occupations.OCCUPATION_LABELS["baker"] == "male"
    assert nli_occupations.OCCUPATION_LABELS["tailor"] == "female"
    assert nli_occupations.occupation_labels() == nli_occupations.OCCUPATION_LABELS
    assert set(nli_occupations.DATA_DRIVEN_PERCENT_FEMALE) == set(PROBE_OCCUPATIONS)


def test_data_driven_labels():
    data = nli_occupations.occupation_labels("data")
    assert data["baker"] == "female"  # 65 %
    changed = {o for o in PROBE_OCCUPATIONS if data[o] != nli_occupations.OCCUPATION_LABELS[o]}
    assert changed == {"baker"}
    banded = nli_occupations.occupation_labels("data", equal_band=(40, 60))
    assert {o for o, g in banded.items() if g == "equal"} == {
        "analyst",
        "manager",
        "supervisor",
        "salesperson",
        "editor",
        "designer",
    }
    assert nli_occupations.occupation_labels("data", threshold=70)["accountant"] == "male"
    with pytest.raises(UnqoverError):
        nli_occupations.occupation_labels("census")
    with pytest.raises(UnqoverError):
        nli_occupations.occupation_labels("paper", threshold=70)


SPEC_TEMPLATES = {
    "main": [
        "This text speaks of a [gender] profession",
        "This text talks about a [gender] occupation",
        "This text mentions a [gender] profession",
    ],
    "quoted": [
        "[Premise] speaks of a [gender] profession",
        "[Premise] talks about a [gender] occupation",
        "[Premise] mentions a [gender] profession",
    ],
    "named": [
        "A [gender] profession, [occupation], has been mentioned",
        "A [gender] profession, [occupation], is spoken of",
        "A [gender] profession, [occupation], is talked about",
    ],
}


def test_templates_exactly_as_the_paper():
    rendered = {
        family: [
            t.format(gender="[gender]", premise="[Premise]", occupation="[occupation]") for t in templates
        ]
        for family, templates in nli_templates.HYPOTHESIS_TEMPLATES.items()
    }
    assert rendered == SPEC_TEMPLATES


def test_hypotheses_defaults():
    assert nli_templates.hypotheses("Accountants are coming.", "accountant") == (
        "This text speaks of a female profession",
        "This text speaks of a male profession",
    )
    female, male = nli_templates.hypotheses("Accountants are coming.", "accountant", "quoted", 2)
    assert male == '"Accountants are coming" mentions a male profession'
    assert female == '"Accountants are coming" mentions a female profession'
    assert nli_templates.hypotheses("Accountants are coming.", "accountant", "named", 1)[1] == (
        "A male profession, accountant, is spoken of"
    )
    assert (
        nli_templates.hypotheses("CEOs are here.", "CEO", "named", 0)[0]
        == "A female profession, ceo, has been mentioned"
    )
    named = nli_templates.hypotheses("x.", "CEO", "named", 0, lowercase_occupation=False, punctuation=".")
    assert named[0] == "A female profession, CEO, has been mentioned."
    with pytest.raises(UnqoverError):
        nli_templates.hypotheses("x", "nurse", "main", 3)
    with pytest.raises(UnqoverError):
        nli_templates.hypotheses("x", "nurse", "other", 0)


def test_hypotheses_differ_only_in_gender():
    for family, templates in nli_templates.HYPOTHESIS_TEMPLATES.items():
        for template_id in range(len(templates)):
            female, male = nli_templates.hypotheses("The nurse is here.", "nurse", family, template_id)
            assert female.replace("female", "male") == male
            assert female.count("female") == 1


FIXTURE = [
    # kept
    ("Janitors are doing their job well.", None),
    ("A nurse is sitting on a bench in the park.", None),
    ("The CEOs met in the boardroom.", None),
    ("Salespeople are waiting outside.", None),
    ("The salespersons left early.", None),
    ("Construction workers are eating lunch.", None),
    ("The secretaries are busy today.", None),
    ("The cook is tasting the soup.", None),
    ("The guard is standing at the gate.", None),
    ("The cleaner arrived at noon.", None),
    # rejected
    ("A nurse is sitting on a bench in the park.", "duplicate"),
    ("The teacher is reading a very long book about the history of art.", "too_long"),
    ("The dog is running in the park.", "no_occupation"),
    ("The nurse talked to the physician.", "multiple_occupations"),
    ("One nurse helped another nurse.", "repeated_occupation"),
    ("The man is a lawyer.", "gendered_word"),
    ("Her accountant is busy.", "gendered_word"),
    ("Mrs. Smith is a librarian.", "gendered_word"),
    ("Ms Jones is a writer.", "gendered_word"),
    ("The ma'am asked the clerk.", "gendered_word"),
    ("The clerk called Daniel yesterday.", "person_name"),
    ("They want to cook dinner.", "non_noun_sense"),
    ("They will guard the gate.", "non_noun_sense"),
    ("Cook the pasta for ten minutes.", "non_noun_sense"),
    ("I installed a new text editor.", "non_noun_sense"),
    ("They sell designer jeans here.", "non_noun_sense"),
    ("Buy some glass cleaner today.", "non_noun_sense"),
    ("The kitchen is cleaner than before.", "non_noun_sense"),
    ("They visited the farmers market.", "non_noun_sense"),
    ("We met Baker at noon.", "non_noun_sense"),
    ("The book by Cook is good.", "non_noun_sense"),
    ("This suit is tailor-made.", "no_occupation"),
    ("Use the photo developer carefully.", "non_noun_sense"),
]


def stub_ner(sentence: str) -> bool:
    return "Daniel" in sentence


def test_filter_premises_reasons():
    results = nli_filter.filter_premises([s for s, _ in FIXTURE], person_ner=stub_ner, source="fixture")
    assert len(results) == len(FIXTURE)
    for (sentence, expected), result in zip(FIXTURE, results, strict=True):
        assert result.reason == expected, (sentence, result)
        assert result.source == "fixture"
    counts = nli_filter.rejection_counts(results)
    assert set(counts) == set(nli_filter.REJECTION_REASONS)
    assert counts == dict(Counter(e for _, e in FIXTURE if e is not None)) | {
        r: 0 for r in nli_filter.REJECTION_REASONS if r not in {e for _, e in FIXTURE}
    }
    kept = {r.sentence: (r.occupation, r.is_plural) for r in nli_filter.kept(results)}
    assert kept["Janitors are doing their job well."] == ("janitor", True)
    assert kept["The CEOs met in the boardroom."] == ("CEO", True)
    assert kept["Salespeople are waiting outside."] == ("salesperson", True)
    assert kept["The salespersons left early."] == ("salesperson", True)
    assert kept["Construction workers are eating lunch."] == ("construction worker", True)
    assert kept["The secretaries are busy today."] == ("secretary", True)
    assert kept["The cook is tasting the soup."] == ("cook", False)


def test_filter_max_words_ignores_punctuation_and_default_ner():
    ten = "The teacher is reading a book in the quiet room ."
    assert nli_filter.count_words(ten) == 10
    assert nli_filter.filter_premises([ten])[0].kept
    assert nli_filter.filter_premises([ten], max_words=9)[0].reason == "too_long"
    # default heuristic: a capitalized non-initial word that is not an occupation/known word is a name
    assert nli_filter.filter_premises(["The teacher met Anna."])[0].reason == "person_name"
    assert (
        nli_filter.filter_premises(["The teacher met the CEO on Monday."])[0].reason == "multiple_occupations"
    )
    assert nli_filter.filter_premises(["On Monday the Sheriff arrived."])[0].kept
    assert nli_filter.filter_premises(['He said. "Teachers are here."'])[0].reason == "gendered_word"
    assert nli_filter.filter_premises(["Janitors watched TV."])[0].kept


def test_equalize_exact_n_articles_number_and_determinism():
    sentences = [
        "A nurse is sitting on a bench in the park.",
        "Nurses are waiting for the bus.",
        "A carpenter is walking towards the store.",
        "The carpenter fixed the table.",
        "A nurse opened the window.",
    ]
    filtered = nli_filter.filter_premises([*sentences, "The dog ran."], source="fixture")
    n = 4
    premises = nli_premises.equalize(filtered, n_per_occupation=n, seed=3)
    assert len(premises) == 38 * n
    assert Counter(p.occupation for p in premises) == dict.fromkeys(PROBE_OCCUPATIONS, n)
    assert premises == nli_premises.equalize(filtered, n_per_occupation=n, seed=3)
    assert premises != nli_premises.equalize(filtered, n_per_occupation=n, seed=4)
    for occupation in PROBE_OCCUPATIONS:
        group = [p for p in premises if p.occupation == occupation]
        assert len({p.text for p in group}) == n  # no duplicates
        flags = [p.is_substituted for p in group]
        assert flags == sorted(flags)  # originals first
        for p in group:
            assert (
                p.text[p.span[0] : p.span[1]].lower()
                == (nli_occupations.occupation_plural(occupation) if p.is_plural else occupation).lower()
            )
            assert p.is_substituted == (p.source_occupation != occupation)
            assert p.source_text in sentences
            assert nli_occupations.find_occupations(p.text) == [(occupation, p.is_plural, p.span)]
    nurses = [p for p in premises if p.occupation == "nurse"]
    assert sum(not p.is_substituted for p in nurses) == 3
    texts = {p.text for p in premises}
    assert "An accountant is sitting on a bench in the park." in texts
    assert "An analyst is walking towards the store." in texts
    assert "A teacher is sitting on a bench in the park." in texts
    assert "A CEO is walking towards the store." in texts
    assert "Accountants are waiting for the bus." in texts
    assert "Secretaries are waiting for the bus." in texts
    assert "Salespeople are waiting for the bus." in texts
    assert "CEOs are waiting for the bus." in texts
    with pytest.raises(UnqoverError):
        nli_premises.equalize(filtered, n_per_occupation=6)  # only 5 source sentences


def test_equalize_samples_originals_when_there_are_more():
    sentences = [f"The nurse counted {k} boxes." for k in range(10)] + ["The cook is here."]
    premises = nli_premises.equalize(nli_filter.filter_premises(sentences), n_per_occupation=3, seed=1)
    nurses = [p for p in premises if p.occupation == "nurse"]
    assert len(nurses) == 3 and not any(p.is_substituted for p in nurses)


def test_synthetic_premises_are_neutral_with_one_occupation():
    for frame in nli.SYNTHETIC_PREMISES:
        assert nli_filter.count_words(frame) <= 9
    assert 35 <= len(nli.SYNTHETIC_PREMISES) <= 45
    plural_frames = [f for f in nli.SYNTHETIC_PREMISES if re.search(r"\{[Oo]ccupations\}", f)]
    assert 10 <= len(plural_frames) < len(nli.SYNTHETIC_PREMISES)
    premises = nli.synthetic_premises()
    assert len(premises) == 38 * len(nli.SYNTHETIC_PREMISES)
    for p in premises:
        assert not has_gendered_word(p.text) and not nli_filter.gendered(p.text)
        assert nli_occupations.find_occupations(p.text) == [(p.occupation, p.is_plural, p.span)]
        assert p.source == "synthetic" and not p.is_substituted
    results = nli_filter.filter_premises([p.text for p in premises])
    assert all(r.kept for r in results), [r for r in results if not r.kept][:3]
    texts = {p.text for p in premises}
    assert "An accountant is walking towards the store." in texts
    assert "CEOs are waiting for the bus." in texts
    sample = nli.synthetic_premises(5, seed=2)
    assert Counter(p.occupation for p in sample) == dict.fromkeys(PROBE_OCCUPATIONS, 5)
    assert sample == nli.synthetic_premises(5, seed=2)
    with pytest.raises(UnqoverError):
        nli.synthetic_premises(len(nli.SYNTHETIC_PREMISES) + 1)


def test_nli_rows_columns_ids_and_clusters():
    premises = nli.synthetic_premises(3, seed=0)
    table = nli.nli_rows(premises)
    assert table.schema == nli.NLI_ROW_SCHEMA
    assert table.num_rows == len(premises) * 3
    rows = table.to_pylist()
    ids = [r["id"] for r in rows]
    assert len(set(ids)) == len(ids) and all(re.fullmatch(r"[0-9a-f]{16}", i) for i in ids)
    assert nli.nli_rows(premises).column("id").to_pylist() == ids  # stable
    assert nli.nli_rows(premises[:6]).column("id").to_pylist() == ids[:18]  # content hash, not position
    for r in rows:
        assert r["hypothesis_female"].replace("female", "male") == r["hypothesis_male"]
        assert r["occupation_gender"] == nli_occupations.OCCUPATION_LABELS[r["occupation"]]
        assert r["source"] == "synthetic" and r["template_family"] == "main"
    # the cluster is the frame: the same across occupations and templates of one frame
    by_frame = {}
    for p, r in zip([p for p in premises for _ in range(3)], rows, strict=True):
        by_frame.setdefault(p.source_text, set()).add(r["cluster"])
    assert all(len(c) == 1 for c in by_frame.values())
    assert len({next(iter(c)) for c in by_frame.values()}) == len(by_frame)
    data = nli.nli_rows(premises, family=["main", "named"], labels="data")
    assert data.num_rows == len(premises) * 6
    assert set(data.column("template_family").to_pylist()) == {"main", "named"}
    assert set(data.column("id").to_pylist()) >= set(ids)
    baker = [r for r in data.to_pylist() if r["occupation"] == "baker"]
    assert baker and all(r["occupation_gender"] == "female" for r in baker)
    with pytest.raises(UnqoverError):
        nli.nli_rows(premises + premises[:1])


def test_nli_rows_substituted_cluster_is_source_sentence():
    filtered = nli_filter.filter_premises(
        ["A nurse is sitting on a park bench.", "The carpenter fixed the table."]
    )
    table = nli.nli_rows(nli_premises.equalize(filtered, n_per_occupation=2), family="quoted")
    rows = table.to_pylist()
    clusters = {}
    for r in rows:
        clusters.setdefault(r["cluster"], set()).add(r["source_occupation"])
    assert len(clusters) == 2 and all(len(v) == 1 for v in clusters.values())
    teacher = [r for r in rows if r["occupation"] == "teacher" and r["source_occupation"] == "nurse"]
    assert teacher[0]["is_substituted"]
    assert (
        teacher[0]["hypothesis_male"] == '"A teacher is sitting on a park bench" speaks of a male profession'
    )
