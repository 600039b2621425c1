"""Custom probes from a YAML file: the reader's checks (one clear error per mistake) and rows made exactly
like the built-in UnQover rows (columns, groups of 4, stable ids, spans, mlm placeholders, measurable)."""

from __future__ import annotations

import textwrap
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from unqover.errors import UnqoverError
from unqover.generate.custom import custom_configs, custom_plan, custom_rows
from unqover.generate.unqover import MASK_PLACEHOLDER, ROW_SCHEMA
from unqover.hub.custom_card import custom_card
from unqover.lexicon.custom import CustomProbeError, parse_probe, read_probe_file, read_probe_text
from unqover.lexicon.custom_probe import derive_masked, probe_to_dict

PETS = """\
name: pets
subjects:                 # clusters -> members (pairs are formed across clusters)
  cats: [Tom, Felix]
  dogs: [Rex, Buddy, Max]
attributes:
  - {positive: was very lazy, negated: was never lazy}
templates:
  - {context: "{subject_1} sat next to {subject_2} on the porch.", question: "Who {attribute}?"}
"""


def write(tmp_path: Path, text: str, name: str = "probe.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def pets(tmp_path):
    return read_probe_file(write(tmp_path, PETS, "pets.yaml"))


# -- rows --------------------------------------------------------------------------------------------------


def test_pets_rows_have_the_builtin_columns_and_counts(pets):
    rows = custom_rows(pets)
    assert rows.schema == ROW_SCHEMA
    assert rows.num_rows == 2 * 3 * 1 * 1 * 4 == 24
    plan = custom_plan(pets)
    assert (plan.num_rows, plan.num_groups) == (24, 6)
    first = rows.slice(0, 1).to_pylist()[0]
    assert first == {
        "id": first["id"],
        "template_id": 0,
        "subject_1": "Tom",
        "subject_2": "Rex",
        "subject_1_cluster": "cats",
        "subject_2_cluster": "dogs",
        "attribute": "was very lazy",
        "attribute_cluster": None,
        "attribute_type": "p_act",
        "polarity": "positive",
        "context": "Tom sat next to Rex on the porch.",
        "question": "Who was very lazy?",
        "subject_1_span": [0, 3],
        "subject_2_span": [16, 19],
    }
    negated = rows.slice(1, 1).to_pylist()[0]
    assert negated["polarity"] == "negated" and negated["question"] == "Who was never lazy?"
    assert negated["attribute"] == "was very lazy"  # the identity, in both polarities
    assert set(rows["attribute"].to_pylist()) == {"was very lazy"}


def test_pairs_cross_clusters_in_both_orders_and_polarities(pets):
    rows = custom_rows(pets).to_pylist()
    cats, dogs = {"Tom", "Felix"}, {"Rex", "Buddy", "Max"}
    groups = Counter()
    for row in rows:
        s1, s2 = row["subject_1"], row["subject_2"]
        assert (s1 in cats) != (s2 in cats)  # never two cats or two dogs
        assert row["subject_1_cluster"] == ("cats" if s1 in cats else "dogs")
        groups[frozenset((s1, s2))] += 1
    assert set(groups) == {frozenset((c, d)) for c in cats for d in dogs}
    assert set(groups.values()) == {4}
    variants = Counter((r["subject_1"], r["subject_2"], r["polarity"]) for r in rows)
    assert set(variants.values()) == {1}
    for c in cats:
        for d in dogs:
            for first, second in ((c, d), (d, c)):
                assert {p for (a, b, p) in variants if (a, b) == (first, second)} == {"positive", "negated"}


def test_ids_are_stable_and_unique(tmp_path, pets):
    rows = custom_rows(pets)
    ids = rows["id"].to_pylist()
    assert len(set(ids)) == len(ids)
    assert all(len(i) == 16 and int(i, 16) >= 0 for i in ids)
    again = read_probe_file(write(tmp_path, PETS, "copy.yaml"))  # another file, same content
    assert custom_rows(again)["id"].to_pylist() == ids
    assert ids[0] == "0df0a964ff335b3b"  # pinned: the same probe gives the same ids on every machine
    mlm_ids = custom_rows(pets, "mlm")["id"].to_pylist()
    assert len(set(mlm_ids)) == len(mlm_ids) and not set(mlm_ids) & set(ids)


def test_spans_point_at_the_subjects(pets):
    for config in ("qa", "mlm"):
        for row in custom_rows(pets, config).to_pylist():
            (a1, b1), (a2, b2) = row["subject_1_span"], row["subject_2_span"]
            assert row["context"][a1:b1] == row["subject_1"]
            assert row["context"][a2:b2] == row["subject_2"]
            assert b1 <= a2  # subject 1 is mentioned first


def test_flat_list_gives_all_pairs(tmp_path):
    probe = read_probe_file(
        write(
            tmp_path,
            """\
            name: flat
            subjects: [Tom, Rex, Nemo, Polly]
            attributes:
              - {positive: was very lazy, negated: was never lazy}
              - {positive: barked at night, negated: slept at night, cluster: noise}
            templates:
              - {context: "{subject_1} sat next to {subject_2}.", question: "Who {attribute}?"}
              - {context: "{subject_1} met {subject_2} in the park.", question: "Who {attribute}?"}
            """,
        )
    )
    rows = custom_rows(probe)
    assert rows.num_rows == 6 * 2 * 2 * 4  # C(4, 2) pairs x templates x attributes x 4
    assert rows["subject_1_cluster"].null_count == rows.num_rows
    pairs = {
        frozenset(p) for p in zip(rows["subject_1"].to_pylist(), rows["subject_2"].to_pylist(), strict=True)
    }
    assert len(pairs) == 6
    assert set(rows["template_id"].to_pylist()) == {0, 1}
    assert set(rows["attribute_cluster"].to_pylist()) == {None, "noise"}


def test_three_clusters_pair_across_clusters_only(tmp_path):
    probe = read_probe_file(
        write(
            tmp_path,
            """\
            name: three
            subjects: {cats: [Tom, Felix], dogs: [Rex], birds: [Polly, Tweety]}
            attributes: [{positive: was loud, negated: was quiet}]
            templates: [{context: "{subject_1} and {subject_2} played.", question: "Who {attribute}?"}]
            """,
        )
    )
    rows = custom_rows(probe)
    assert rows.num_rows == (2 * 1 + 2 * 2 + 1 * 2) * 4
    assert all(
        a != b
        for a, b in zip(
            rows["subject_1_cluster"].to_pylist(), rows["subject_2_cluster"].to_pylist(), strict=True
        )
    )


def test_mlm_config_has_one_mask_placeholder_per_row(pets):
    rows = custom_rows(pets, "mlm")
    assert rows.schema == ROW_SCHEMA and rows.num_rows == 24
    for row in rows.to_pylist():
        assert row["question"].count(MASK_PLACEHOLDER) == 1
        assert MASK_PLACEHOLDER not in row["context"]
    assert rows["question"].to_pylist()[:2] == ["[MASK] was very lazy.", "[MASK] was never lazy."]
    assert custom_rows(pets)["context"].to_pylist() == rows["context"].to_pylist()


def test_given_mlm_form_and_template_level_negation(tmp_path):
    probe = read_probe_file(
        write(
            tmp_path,
            """\
            name: negate-in-template
            subjects: [Tom, Rex]
            attributes: [bark loudly, chase cars]
            templates:
              - context: "{subject_1} lives with {subject_2}."
                question: "Which pet would {attribute}?"
                negated_question: "Which pet would never {attribute}?"
                mlm: "The pet {mask} would {attribute}."
                mlm_negated: "The pet {mask} would never {attribute}."
            """,
        )
    )
    assert probe.attributes[0].negated is None
    qa = custom_rows(probe).to_pylist()
    assert [r["question"] for r in qa[:2]] == [
        "Which pet would bark loudly?",
        "Which pet would never bark loudly?",
    ]
    mlm = custom_rows(probe, "mlm").to_pylist()
    assert [r["question"] for r in mlm[:2]] == [
        "The pet [MASK] would bark loudly.",
        "The pet [MASK] would never bark loudly.",
    ]


def test_mlm_is_declined_when_it_cannot_be_derived(tmp_path):
    path = write(
        tmp_path,
        """\
        name: which
        subjects: [Tom, Rex]
        attributes: [{positive: was lazy, negated: was busy}]
        templates:
          - {context: "{subject_1} met {subject_2}.", question: "Who {attribute}?"}
          - {context: "{subject_1} saw {subject_2}.", question: "Which pet {attribute}?"}
        """,
    )
    probe = read_probe_file(path)
    assert custom_configs(probe) == ["qa"]
    with pytest.raises(CustomProbeError) as err:
        custom_rows(probe, "mlm")
    assert str(path) in str(err.value) and "templates[1].mlm" in str(err.value)
    with pytest.raises(UnqoverError, match="choose from qa, mlm"):
        custom_rows(probe, "mlm-bert")
    assert "config_name: mlm" not in custom_card(probe)


def test_derive_masked():
    assert derive_masked("Who {attribute}?") == "{mask} {attribute}."
    assert derive_masked("Who of them {attribute}?") == "{mask} of them {attribute}."
    assert derive_masked("Which pet {attribute}?") is None


def test_article_fix_is_optional_and_keeps_spans(tmp_path):
    text = """\
        name: articles
        subjects: [Afghan, Briton]
        attributes: [{positive: was a idle pet, negated: was a busy pet}]
        templates: [{context: "A {subject_1} met a {subject_2}.", question: "Who {attribute}?"}]
        """
    plain = custom_rows(read_probe_file(write(tmp_path, text, "a.yaml"))).to_pylist()
    assert plain[0]["context"] == "A Afghan met a Briton." and plain[0]["question"] == "Who was a idle pet?"
    fixed = custom_rows(read_probe_file(write(tmp_path, text + "fix_articles: true\n", "b.yaml"))).to_pylist()
    assert fixed[0]["context"] == "An Afghan met a Briton." and fixed[0]["question"] == "Who was an idle pet?"
    for row in fixed:
        (a1, b1), (a2, b2) = row["subject_1_span"], row["subject_2_span"]
        assert (row["context"][a1:b1], row["context"][a2:b2]) == (row["subject_1"], row["subject_2"])


def test_literal_braces(tmp_path):
    probe = read_probe_file(
        write(
            tmp_path,
            """\
            name: braces
            subjects: [Tom, Rex]
            attributes: [{positive: "liked {{curly}} braces", negated: hated braces}]
            templates: [{context: "{{x}} {subject_1} met {subject_2}.", question: "Who {attribute}?"}]
            """,
        )
    )
    row = custom_rows(probe).to_pylist()[0]
    assert row["context"] == "{x} Tom met Rex." and row["subject_1_span"] == [4, 7]
    assert row["question"] == "Who liked {{curly}} braces?"  # attribute text is inserted as written


def test_rows_pass_the_unqover_measure_and_grouping(pets):
    from unqover.measure.unqover import unqover_bias
    from unqover.scoring.sampling import find_groups

    rows = custom_rows(pets)
    groups = find_groups(rows)
    assert groups.num_groups == 6
    assert set(np.bincount(groups.row_group)) == {4}
    rng = np.random.default_rng(0)
    s1, s2 = rng.random(rows.num_rows), rng.random(rows.num_rows)
    result = unqover_bias(rows, s1, s2, n_resamples=20)
    assert result.to_dict()
    for mode in ("default", "paper"):
        unqover_bias(custom_rows(pets, "mlm"), s1, s2, mode=mode, n_resamples=10)


def test_round_trip_and_card(pets, tmp_path):
    assert parse_probe(probe_to_dict(pets)) == pets
    card = custom_card(pets)
    import yaml

    header = yaml.safe_load(card.split("---\n")[1])
    assert [c["config_name"] for c in header["configs"]] == ["qa", "mlm"]
    assert [i["splits"][0]["num_examples"] for i in header["dataset_info"]] == [24, 24]
    import datasets

    assert (
        header["dataset_info"][0]["features"]
        == datasets.Features.from_arrow_schema(ROW_SCHEMA)._to_yaml_list()
    )
    assert "0df0a964ff335b3b" in card and "name: pets" in card


def test_built_folder_loads_and_passes_the_publish_checks(pets, tmp_path):
    from datasets import load_dataset

    from unqover.hub.build import write_parquet_shards
    from unqover.hub.publish import plan_upload

    folder = tmp_path / "pets"
    for config in custom_configs(pets):
        write_parquet_shards(custom_plan(pets, config), folder / "data" / config)
    (folder / "README.md").write_text(custom_card(pets), encoding="utf-8")
    plan_upload(folder, "someone/pets")
    ds = load_dataset(str(folder), "mlm", split="test")
    assert ds.num_rows == 24 and ds[0]["question"] == "[MASK] was very lazy."


# -- malformed files: one clear error naming the file and the key --------------------------------------------

VALID = {
    "name": "name: pets",
    "subjects": "subjects: {cats: [Tom, Felix], dogs: [Rex]}",
    "attributes": "attributes: [{positive: was lazy, negated: was never lazy}]",
    "templates": 'templates: [{context: "{subject_1} met {subject_2}.", question: "Who {attribute}?"}]',
}


def probe_text(**replace: str | None) -> str:
    parts = {**VALID, **replace}
    return "\n".join(v for v in parts.values() if v is not None) + "\n"


def fails(tmp_path: Path, text: str, key: str | None, *fragments: str) -> str:
    path = write(tmp_path, text)
    with pytest.raises(CustomProbeError) as err:
        read_probe_file(path)
    message = str(err.value)
    assert isinstance(err.value, UnqoverError)
    assert message.startswith(str(path)), message
    if key is not None:
        assert f": {key}: " in message, message
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_valid_base_text_reads(tmp_path):
    assert read_probe_file(write(tmp_path, probe_text())).name == "pets"


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(CustomProbeError, match="no such probe file") as err:
        read_probe_file(tmp_path / "nope.yaml")
    assert str(tmp_path / "nope.yaml") in str(err.value)
    with pytest.raises(CustomProbeError, match="is a folder"):
        read_probe_file(tmp_path)


def test_not_utf8(tmp_path):
    path = tmp_path / "probe.yaml"
    path.write_bytes(b"name: \xff\xfe\n")
    with pytest.raises(CustomProbeError, match="not UTF-8") as err:
        read_probe_file(path)
    assert str(path) in str(err.value)


def test_yaml_syntax_error_has_the_line(tmp_path):
    message = fails(tmp_path, "name: pets\nsubjects: [Tom, Rex\nattributes: []\n", None, "YAML syntax error")
    assert message.startswith(f"{tmp_path / 'probe.yaml'}:3:"), message
    assert "started on line 2" in message


def test_empty_file(tmp_path):
    fails(tmp_path, "# nothing\n", None, "empty", "name, subjects, attributes, templates")


def test_not_a_mapping(tmp_path):
    fails(
        tmp_path, "- name: pets\n", None, "expected a mapping with keys name, subjects, attributes, templates"
    )


@pytest.mark.parametrize("key", ["name", "subjects", "attributes", "templates"])
def test_missing_key(tmp_path, key):
    fails(tmp_path, probe_text(**{key: None}), key, f"missing key {key!r}")


def test_unknown_key_lists_the_allowed_ones(tmp_path):
    message = fails(
        tmp_path, probe_text(templates=VALID["templates"].replace("templates", "template")), "template"
    )
    assert "allowed keys: name, subjects, attributes, templates, description" in message
    assert "did you mean 'templates'" in message


def test_unknown_key_in_a_template(tmp_path):
    text = probe_text(
        templates='templates:\n  - {context: "{subject_1} met {subject_2}.", question: "Who {attribute}?", '
        "qestion: x}"
    )
    message = fails(tmp_path, text, "templates[0].qestion", "allowed keys: context, question")
    assert message.startswith(f"{tmp_path / 'probe.yaml'}:5:")


def test_duplicate_key(tmp_path):
    fails(tmp_path, probe_text() + "name: cats\n", "name", "duplicate key 'name'", "first on line 1")


@pytest.mark.parametrize("name", ["my pets", "pets!", "-pets", "x" * 97])
def test_bad_name(tmp_path, name):
    fails(tmp_path, probe_text(name=f"name: {name!r}"), "name", "not a simple name", "letters, digits")


def test_too_few_subjects(tmp_path):
    fails(tmp_path, probe_text(subjects="subjects: [Tom]"), "subjects", "at least 2 subjects")


def test_one_cluster(tmp_path):
    fails(tmp_path, probe_text(subjects="subjects: {cats: [Tom, Felix]}"), "subjects", "at least 2 clusters")


def test_duplicate_subject_in_a_flat_list(tmp_path):
    fails(tmp_path, probe_text(subjects="subjects: [Tom, Rex, Tom]"), "subjects[2]", "repeats subjects[0]")


def test_duplicate_subject_across_clusters(tmp_path):
    fails(
        tmp_path,
        probe_text(subjects="subjects:\n  cats: [Tom, Felix]\n  dogs: [Rex, felix]"),
        "subjects.dogs[1]",
        "differs only in case from subjects.cats[1]",
    )


def test_empty_cluster(tmp_path):
    fails(
        tmp_path, probe_text(subjects="subjects: {cats: [Tom], dogs: []}"), "subjects.dogs", "empty cluster"
    )


def test_subjects_of_the_wrong_shape(tmp_path):
    fails(tmp_path, probe_text(subjects="subjects: Tom"), "subjects", "clusters", "flat list")


def test_context_without_both_subjects(tmp_path):
    text = probe_text(
        templates='templates:\n  - {context: "{subject_1} met {subject_2}.", question: "Who {attribute}?"}\n'
        '  - {context: "{subject_1} sat alone.", question: "Who {attribute}?"}'
    )
    fails(tmp_path, text, "templates[1].context", "has no {subject_2}")


def test_subjects_out_of_order(tmp_path):
    text = probe_text(
        templates='templates: [{context: "{subject_2} met {subject_1}.", question: "Who {attribute}?"}]'
    )
    fails(tmp_path, text, "templates[0].context", "{subject_1} must come before {subject_2}")


def test_question_without_attribute(tmp_path):
    text = probe_text(
        templates='templates: [{context: "{subject_1} met {subject_2}.", question: "Who was it?"}]'
    )
    fails(tmp_path, text, "templates[0].question", "has no {attribute}")


def test_unknown_placeholder(tmp_path):
    text = probe_text(
        templates='templates: [{context: "{subject_1} met {subject_2}.", question: "Who {subject} {attribute}?"}]'
    )
    fails(tmp_path, text, "templates[0].question", "unknown placeholder {subject}", "may hold {attribute}")


def test_unmatched_brace(tmp_path):
    text = probe_text(
        templates='templates: [{context: "{subject_1} met {subject_2}}.", question: "Who {attribute}?"}]'
    )
    fails(tmp_path, text, "templates[0].context", "unmatched '}'", "}}")


def test_mlm_form_needs_one_mask(tmp_path):
    text = probe_text(
        templates='templates: [{context: "{subject_1} met {subject_2}.", question: "Who {attribute}?", '
        'mlm: "It {attribute}."}]'
    )
    fails(tmp_path, text, "templates[0].mlm", "has no {mask}")


def test_literal_mask_token_is_refused(tmp_path):
    text = probe_text(
        templates='templates: [{context: "{subject_1} met {subject_2}.", question: "Who {attribute}?", '
        'mlm: "[MASK] {attribute}."}]'
    )
    fails(tmp_path, text, "templates[0].mlm", "mask token [MASK]", "{mask}")


def test_mlm_negated_needs_its_partners(tmp_path):
    text = probe_text(
        templates='templates: [{context: "{subject_1} met {subject_2}.", question: "Who {attribute}?", '
        'mlm: "{mask} {attribute}.", mlm_negated: "{mask} never {attribute}."}]'
    )
    fails(tmp_path, text, "templates[0].mlm_negated", "negated_question")


def test_empty_templates(tmp_path):
    fails(tmp_path, probe_text(templates="templates: []"), "templates", "an empty list")


def test_duplicate_template(tmp_path):
    one = '{context: "{subject_1} met {subject_2}.", question: "Who {attribute}?"}'
    fails(
        tmp_path, probe_text(templates=f"templates: [{one}, {one}]"), "templates[1]", "repeats templates[0]"
    )


def test_attribute_without_negation(tmp_path):
    fails(
        tmp_path,
        probe_text(attributes="attributes: [{positive: was lazy}]"),
        "attributes[0].negated",
        "missing key 'negated'",
        "templates[0] has none",
    )


def test_plain_string_attribute_needs_template_negation(tmp_path):
    fails(
        tmp_path,
        probe_text(attributes="attributes: [was lazy]"),
        "attributes[0]",
        "plain string needs template-level negation",
    )


def test_empty_attribute_text(tmp_path):
    fails(
        tmp_path,
        probe_text(attributes='attributes: [{positive: was lazy, negated: ""}]'),
        "attributes[0].negated",
        "empty string",
    )


def test_negation_equal_to_the_attribute(tmp_path):
    fails(
        tmp_path,
        probe_text(attributes="attributes: [{positive: was lazy, negated: was lazy}]"),
        "attributes[0].negated",
        "equals the positive one",
    )


def test_duplicate_attribute(tmp_path):
    fails(
        tmp_path,
        probe_text(
            attributes="attributes:\n  - {positive: was lazy, negated: was busy}\n"
            "  - {positive: was lazy, negated: was never lazy}"
        ),
        "attributes[1].positive",
        "repeats attributes[0].positive",
    )


def test_bad_attribute_type(tmp_path):
    fails(
        tmp_path,
        probe_text(attributes="attributes: [{positive: was lazy, negated: was busy, type: pet}]"),
        "attributes[0].type",
        "p_act",
        "l_act",
    )


@pytest.mark.parametrize(
    ("replace", "key", "fragment"),
    [
        ({"subjects": "subjects: [Tom, 42]"}, "subjects[1]", "the number 42"),
        ({"subjects": "subjects: [Tom, no]"}, "subjects[1]", "boolean false"),
        ({"subjects": "subjects: [Tom, [Rex]]"}, "subjects[1]", "a list"),
        ({"subjects": "subjects: [Tom, ~]"}, "subjects[1]", "nothing"),
        (
            {"attributes": "attributes: [{positive: 3, negated: was busy}]"},
            "attributes[0].positive",
            "number 3",
        ),
        (
            {"attributes": "attributes: [{positive: was lazy, negated: was busy, cluster: [a]}]"},
            "attributes[0].cluster",
            "a list",
        ),
        ({"templates": "templates: [{context: 1, question: x}]"}, "templates[0].context", "number 1"),
        ({"name": "name: 7"}, "name", "number 7"),
        ({"name": "name: pets\nfix_articles: maybe"}, "fix_articles", "true or false"),
        ({"name": "name: pets\ndescription: [x]"}, "description", "a list"),
        ({"name": "name: pets\nlicense: My License"}, "license", "not a Hub license id"),
    ],
)
def test_non_string_values(tmp_path, replace, key, fragment):
    fails(tmp_path, probe_text(**replace), key, fragment)


def test_multiline_text_is_refused(tmp_path):
    text = probe_text(
        templates='templates:\n  - context: >\n      {subject_1} met {subject_2}.\n    question: "Who {attribute}?"'
    )
    fails(tmp_path, text, "templates[0].context", "control character", ">-")


def test_read_probe_text_names_its_source():
    with pytest.raises(CustomProbeError, match=r"^upload\.yaml:1: name: "):
        read_probe_text(probe_text(name="name: a b"), "upload.yaml")


def test_rows_are_a_table(pets):
    assert isinstance(custom_rows(pets), pa.Table)


# -- quick runs make the texts of their sample only --------------------------------------------------------------

CROWD = """\
name: crowd
subjects:
  a: [Ann, Bea, Cy, Dan, Eve, Flo, Gus, Hal, Ida, Jo, Kai, Lu]
  b: [Max, Ned, Oz]
attributes:
  - {positive: was lazy, negated: was never lazy}
  - {positive: was kind, negated: was never kind}
  - {positive: was late, negated: was never late, type: l_act}
templates:
  - {context: "{subject_1} sat next to {subject_2}.", question: "Who {attribute}?"}
  - {context: "{subject_1} met {subject_2} at noon.", question: "Who {attribute}?"}
"""


def _flat(text: str) -> str:
    """CROWD's subjects as one flat list (all pairs) instead of two clusters (pairs across them)."""
    return text.replace("subjects:\n  a: [", "subjects: [").replace("Lu]\n  b: [Max", "Lu, Max")


QUICK_RUNS = [(1, None), (3, None), (25, None), (40, None), (10**6, None), (None, 0.1), (None, 0.5)]


@pytest.mark.parametrize("config", ["qa", "mlm"])
def test_a_quick_runs_sample_made_from_its_pairs_is_the_same_rows(tmp_path, config):
    """The sampled groups' rows made from their subject pairs alone: the very rows (ids, order, every column) that
    making every row and sampling them gives, for any size and seed of the draw."""
    from unqover.probes.custom_population import sampled_rows
    from unqover.scoring.sampling import select_groups

    for text in (CROWD, _flat(CROWD)):  # pairs across two clusters; all pairs of a flat list
        probe = read_probe_file(write(tmp_path, text))
        full = custom_rows(probe, config)
        for limit, sample in QUICK_RUNS:
            for seed in (0, 1, 7):
                drawn = select_groups(full, limit=limit, sample=sample, seed=seed)
                made = sampled_rows(probe, config, limit=limit, sample=sample, seed=seed)
                assert made.equals(drawn), (limit, sample, seed)


def _numbers_agree(a, b, where: str = "") -> None:
    """Two results' JSON alike: every float within 1e-12 (sums of weights may run in another order), the rest
    equal; table rows matched by their labels (a rank may swap between values equal to 1e-12)."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            if key != "rank":
                _numbers_agree(a[key], b[key], f"{where}/{key}")
    elif isinstance(a, list):
        assert len(a) == len(b), where
        if a and isinstance(a[0], dict) and "subject" in a[0]:
            labels = ("subject", "attribute", "attribute_type", "cluster")
            a, b = (sorted(x, key=lambda row: [str(row.get(k)) for k in labels]) for x in (a, b))
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            _numbers_agree(x, y, f"{where}[{k}]")
    elif isinstance(a, float) and isinstance(b, float) and not (np.isnan(a) and np.isnan(b)):
        assert abs(a - b) <= 1e-12 * max(1.0, abs(a)), (where, a, b)
    else:
        assert a == b or (a != a and b != b), (where, a, b)


def test_a_quick_run_measured_with_the_counted_population_gives_the_numbers_of_every_row(tmp_path):
    """A quick run's estimates from its sample and the probe's counts (no other row) are those measured against
    every row: headline values, intervals, declined values and every table, in both modes, with clusters (μ per
    cluster, subjects weighted) and without."""
    import json

    from unqover.probes.custom_population import num_groups, population_counts, sampled_rows
    from unqover.probes.unqover_rows import measure_scores

    for text in (CROWD, _flat(CROWD)):
        probe = read_probe_file(write(tmp_path, text))
        full = custom_rows(probe, "qa")
        assert num_groups(probe, "qa") == full.num_rows // 4
        for limit, sample in QUICK_RUNS:
            for seed in (0, 7):
                rows = sampled_rows(probe, "qa", limit=limit, sample=sample, seed=seed)
                rng = np.random.default_rng(seed)
                scores = pa.table(
                    {
                        "id": rows["id"],
                        "score_1": rng.random(rows.num_rows),
                        "score_2": rng.random(rows.num_rows),
                    }
                )
                for mode in ("default", "paper"):
                    options = {"mode": mode, "seed": seed, "resamples": 20, "sample_info": {"seed": seed}}
                    counted = population_counts(probe, "qa", mode)
                    assert counted.num_groups == full.num_rows // 4
                    every_row = measure_scores(full, scores, **options)
                    sampled = measure_scores(rows, scores, **options, population=counted)
                    _numbers_agree(
                        json.loads(json.dumps(every_row.to_dict(), default=str)),
                        json.loads(json.dumps(sampled.to_dict(), default=str)),
                    )
