"""Test oracle: a naive transcription of the ORIGINAL UnQover dataset generator.

This module re-states, as literally as possible, what ``allenai/unqover``'s
``templates.generate_underspecified_templates --template_type slot_act_map`` does, following
``shared/specs/unqover.md`` sections 1, 2 and 4.1 item 2. It is deliberately slow and simple:

* word-list records are plain dicts keyed by field names (``'[subj]'``, ``'[subj:dem]'``, ``'cluster'``,
  ``'[p_act]'``, ``'[p_act:neg]'``, ``'unique'``);
* an entry is instantiated by sequential ``str.replace`` of every field name over the whole TAB-joined
  template line, then the article fix over the whole line split on single spaces, then the filler, then the
  mask, then the split on TAB;
* the key is the original's 8-field ``|``-joined string (clusters are the literal string ``'None'`` when
  a list has none).

It must not import anything from ``unqover``: it is the independent reference the generator is checked against.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

VOWELS = {"a", "e", "i", "o", "u"}


# ---------------------------------------------------------------------------------------------------------------
# §1: reading word lists
# ---------------------------------------------------------------------------------------------------------------


def load_list(path: str | os.PathLike[str]) -> list[str]:
    """Lines of a word-list file: each stripped; empty lines and lines starting with ``#`` dropped (§1)."""
    with open(path, encoding="utf-8") as f:
        lines = [line.strip() for line in f.readlines()]
    out = []
    for item in lines:
        if item == "":
            continue
        if item[0] == "#":
            continue
        out.append(item)
    return out


def strip_term(term: str) -> tuple[str, str]:
    """Split a term on ``|`` into ``(cluster, text)``; a plain text gets the cluster string ``'None'``."""
    toks = [p.strip() for p in term.split("|")]
    if len(toks) == 1:
        return "None", toks[0]
    if len(toks) == 2:
        return toks[0], toks[1]
    raise ValueError(f"must be size 1 or 2: {toks}")


def split_head(row: str) -> tuple[str, str]:
    """``head`` is everything before the first single space; ``term`` is the rest, stripped."""
    head = row.split(" ")[0].strip()
    term = " ".join(row.split(" ")[1:]).strip()
    return head, term


def extract_subjects(lines: list[str]) -> list[dict[str, str]]:
    """Subject records (§1.1): ``{'[subj]': text, 'cluster': c, '[subj:dem]': demonym}``, in file order.

    Heads are aligned by position. The dict's key order is the original's: the first head seen
    (``[subj]``), then ``cluster`` (set when the first head is processed), then any further heads;
    ``cluster`` is overwritten by every head, so the last head's cluster wins.
    """
    typed_terms: dict[str, list[str]] = {}
    for row in lines:
        head, term = split_head(row)
        typed_terms.setdefault(head, []).append(term)

    size = len(typed_terms["[subj]"])
    records: list[dict[str, str]] = [{} for _ in range(size)]
    for head, terms in typed_terms.items():
        assert len(terms) == size, f"head {head} has {len(terms)} lines, [subj] has {size}"
        for i, term in enumerate(terms):
            cluster, text = strip_term(term)
            records[i][head] = text
            records[i]["cluster"] = cluster
    return records


def extract_activities(lines: list[str]) -> dict[str, list[dict[str, str]]]:
    """Attribute records by type (§1.2), types in order of first appearance, rows in file order.

    The type of a head drops its ``:...`` part (``[p_act-single:neg]`` -> ``[p_act-single]``). Row k of a
    type is ``{type: positive, 'cluster': c, 'unique': identity, '[type:neg]': negated}`` (that key order),
    where ``identity`` is the positive text of row k of the base type (``-single`` removed) and ``cluster``
    ends up as the cluster of the last head processed (the ``:neg`` line).
    """
    by_type: dict[str, dict[str, list[str]]] = {}
    for row in lines:
        head, term = split_head(row)
        typ = head
        if ":" in head:
            typ = head.split(":")[0] + "]"
        by_type.setdefault(typ, {}).setdefault(head, []).append(term)

    records: dict[str, list[dict[str, str]]] = {}
    for typ, act_map in by_type.items():
        base_typ = typ.split("-")[0] + "]" if "-" in typ else typ
        records[typ] = []
        for k, term in enumerate(act_map[typ]):
            cluster, text = strip_term(term)
            unique = strip_term(by_type[base_typ][base_typ][k])[1]
            records[typ].append({typ: text, "cluster": cluster, "unique": unique})
        for head, terms in act_map.items():
            if head == typ:
                continue
            for k, term in enumerate(terms):
                cluster, text = strip_term(term)
                records[typ][k][head] = text
                records[typ][k]["cluster"] = cluster
    return records


def load_subjects(root: Path, name: str) -> list[dict[str, str]]:
    return extract_subjects(load_list(Path(root) / "nouns" / "subjects" / name))


def load_activities(root: Path, name: str) -> dict[str, list[dict[str, str]]]:
    return extract_activities(load_list(Path(root) / "activities" / name))


def load_slots(root: Path, name: str) -> list[str]:
    """Template lines; the template id is the index in this list."""
    return load_list(Path(root) / "slots" / name)


def load_filler(root: Path, name: str | None) -> str | None:
    """The filler prefix as the original builds it: ``None`` without ``--filler``, ``''`` for ``none``,
    else the filler line plus one space (a second space is added when the entry is instantiated)."""
    if name is None or name == "":
        return None
    if name.strip().lower() == "none":
        return ""
    rs = ""
    for t in name.split(","):
        filler = load_list(Path(root) / "fillers" / t)
        assert len(filler) == 1
        rs += f"{filler[0]} "
    return rs


# ---------------------------------------------------------------------------------------------------------------
# §2.1: subject pairs
# ---------------------------------------------------------------------------------------------------------------


def subject_pairs(root: Path, subj: str) -> list[tuple[dict[str, str], dict[str, str]]]:
    """Ordered subject pairs for ``--subj`` (§2.1).

    ``mixed_gender[_sfx]``: every (female, male) in file order, then every flip. Any other subject file: every
    (i, j) with i < j in file order, then every flip.
    """
    if "mixed_gender" in subj:
        if subj == "mixed_gender":
            f_file, m_file = "female", "male"
        else:
            suffix = subj.split("mixed_gender_")[1]
            f_file, m_file = "female_" + suffix, "male_" + suffix
        pairs = [(f, m) for f in load_subjects(root, f_file) for m in load_subjects(root, m_file)]
    else:
        subjects = load_subjects(root, subj)
        pairs = [
            (subjects[i], subjects[j]) for i in range(len(subjects)) for j in range(i + 1, len(subjects))
        ]
    pairs.extend([(p[1], p[0]) for p in pairs])
    return pairs


# ---------------------------------------------------------------------------------------------------------------
# §2.3: instantiating one entry
# ---------------------------------------------------------------------------------------------------------------


def substitute_attribute(template: str, act_row: dict[str, str]) -> str:
    """§2.3 step 2: replace every field name of the attribute record by its value, in the record's order."""
    t = template
    for head, act in act_row.items():
        t = t.replace(head, act)
    return t


def substitute_subject(t: str, which: str, record: dict[str, str]) -> tuple[str, str]:
    """§2.3 steps 3/4: ``subjN`` -> ``subj``, then exactly one field name of the record must occur; all its
    occurrences are replaced by its value, which is the answer choice. Returns (line, choice)."""
    t = t.replace(which, "subj")
    choices = []
    for field, value in record.items():
        if field in t:
            t = t.replace(field, value)
            choices.append(value)
    assert len(choices) == 1, f"{which}: {len(choices)} of {list(record)} occur in {t!r}"
    return t, choices[0]


def fix_articles(t: str) -> str:
    """§2.3 step 5: split on single spaces; for each token i >= 1 starting with a vowel letter, a previous
    token exactly ``a`` becomes ``an`` and exactly ``A`` becomes ``An`` (in place, left to right).

    Runs over the whole TAB-joined line, so a question's first word is glued to the context's last one.
    (The original indexes ``token[0]`` and would crash on an empty token from a double space; no shipped
    template has one, and here such a token simply never counts as a vowel.)"""
    tokens = t.split(" ")
    for i in range(1, len(tokens)):
        previous = tokens[i - 1]
        if (previous == "a" or previous == "A") and tokens[i][:1].lower() in VOWELS:
            tokens[i - 1] = "an" if previous == "a" else "An"
    return " ".join(tokens)


def apply_subjects(
    line: str,
    spair: tuple[dict[str, str], dict[str, str]],
    filler: str | None = None,
    lm_mask: str = "<mask>",
) -> tuple[str, str, str, tuple[str, str]]:
    """§2.3 steps 3-8 on a line whose attribute is already in: returns ``(context, q0, q1, (choice0, choice1))``.

    ``filler`` is the prefix from :func:`load_filler` (already ending in one space) or ``None``.
    """
    t, choice0 = substitute_subject(line, "subj1", spair[0])
    t, choice1 = substitute_subject(t, "subj2", spair[1])
    t = fix_articles(t)
    if filler is not None:
        t = filler + " " + t
    if "[mask]" in t:
        t = t.replace("[mask]", lm_mask)
    context, q0, q1 = t.split("\t")
    return context, q0, q1, (choice0, choice1)


def instantiate(
    template: str,
    spair: tuple[dict[str, str], dict[str, str]],
    act_row: dict[str, str],
    filler: str | None = None,
    lm_mask: str = "<mask>",
) -> tuple[str, str, str, tuple[str, str]]:
    """One entry (§2.3, all steps) from a raw template line: ``(context, q0, q1, (choice0, choice1))``."""
    return apply_subjects(substitute_attribute(template, act_row), spair, filler, lm_mask)


# ---------------------------------------------------------------------------------------------------------------
# §2.2 / §2.4: loop order, key and entries
# ---------------------------------------------------------------------------------------------------------------


def make_key(
    s_clusters: tuple[str, str], spair: tuple[str, str], tid: int, act_cluster: str, unique: str
) -> str:
    """§2.4: ``scluster1|scluster2|subj1|subj2|tid|acluster|act|act`` (identity written twice, no escaping)."""
    return f"{s_clusters[0]}|{s_clusters[1]}|{spair[0]}|{spair[1]}|{tid}|{act_cluster}|{unique}|{unique}"


def template_uses(template: str, act_type: str) -> bool:
    """§2.2: the type ``[T]`` is used if ``[T]`` or ``[T:`` occurs in the template line."""
    return act_type in template or act_type[:-1] + ":" in template


@dataclass(frozen=True)
class Entry:
    """One JSON entry of the original output, plus the loop coordinates that produced it."""

    key: str
    context: str
    q0: str
    q1: str
    ans0: str
    ans1: str
    pair_index: int
    tid: int
    act_type: str  # e.g. "[p_act-single]"

    @property
    def fields(self) -> list[str]:
        """The key split into its 8 fields."""
        return self.key.split("|")

    def as_json(self) -> dict:
        """The value the original writes for this key."""

        def q(question: str) -> dict:
            return {
                "question": question,
                "pred": "",
                "ans0": {"text": self.ans0, "start": "", "end": ""},
                "ans1": {"text": self.ans1, "start": "", "end": ""},
            }

        return {"context": self.context, "q0": q(self.q0), "q1": q(self.q1)}


def generate(
    root: Path,
    subj: str,
    act: str,
    slot: str,
    filler: str | None = None,
    lm_mask: str = "<mask>",
    pair_indices: Iterable[int] | None = None,
) -> Iterator[Entry]:
    """Entries in generation order (§2.2): pairs, then templates by tid, then attribute types in file order
    (those the template uses), then that type's rows in file order.

    ``pair_indices`` (ascending) restricts the outer loop to those ordered-pair positions; the rest of the
    loop is unchanged, so the result is the matching slice of the full output.
    """
    spairs = subject_pairs(root, subj)
    act_repo = load_activities(root, act)
    slots = load_slots(root, slot)
    prefix = load_filler(root, filler)
    indices = range(len(spairs)) if pair_indices is None else pair_indices
    for p in indices:
        spair = spairs[p]
        for tid, template in enumerate(slots):
            for act_type, act_rows in act_repo.items():
                if not template_uses(template, act_type):
                    continue
                for act_row in act_rows:
                    context, q0, q1, (ans0, ans1) = instantiate(template, spair, act_row, prefix, lm_mask)
                    key = make_key(
                        (spair[0]["cluster"], spair[1]["cluster"]),
                        (spair[0]["[subj]"], spair[1]["[subj]"]),
                        tid,
                        act_row["cluster"],
                        act_row["unique"],
                    )
                    yield Entry(key, context, q0, q1, ans0, ans1, p, tid, act_type)


def generate_json(root: Path, subj: str, act: str, slot: str, **kwargs) -> dict[str, dict]:
    """The whole output mapping as the original keeps it (a repeated key overwrites the earlier entry)."""
    return {e.key: e.as_json() for e in generate(root, subj, act, slot, **kwargs)}


# ---------------------------------------------------------------------------------------------------------------
# §4.1 item 2: locating the answers in the context
# ---------------------------------------------------------------------------------------------------------------


def get_proper_spans(context: str, choices: list[str] | tuple[str, ...]) -> list[tuple[int, int]]:
    """Character spans ``[start, end)`` of each answer in the context (§4.1 item 2).

    Context and answers are lower-cased; answers go longest first (stable, so answer 0 first on ties); each
    takes its first occurrence, or its last one if the first lies inside a span already assigned; if that
    is still inside one, or the answer is absent, it fails. No word-boundary check.
    """
    context = context.lower()
    rs: list[tuple[int, int] | None] = [None for _ in choices]
    for i, c in sorted(enumerate(choices), key=lambda x: len(x[1]), reverse=True):
        c = c.lower()
        if c not in context:
            raise ValueError(f"{c} not in {context}")
        start = context.index(c)
        end = start + len(c)
        if any(span is not None and start >= span[0] and end <= span[1] for span in rs):
            start = context.rindex(c)
            end = start + len(c)
        if any(span is not None and start >= span[0] and end <= span[1] for span in rs):
            raise ValueError(f"cant find proper span for {choices} in {context}")
        rs[i] = (start, end)
    return rs  # type: ignore[return-value]
