"""Reader for the upstream UnQover word-list format (``word_lists/`` of allenai/unqover).

Every file is read the same way: each line is stripped, empty lines and ``#`` comments are dropped, and
the remaining lines keep their order (template ids and attribute alignment count these lines only).

* subjects (``nouns/subjects/<name>``): ``[subj] [cluster |] text`` and optional ``[subj:dem]`` demonym
  lines, aligned by position.
* attributes (``activities/<name>``): ``[T] [cluster |] text`` and ``[T:neg] ...`` lines for each slot type
  ``T`` (``p_act``, ``l_act``, ``p_act-single``, ...), aligned by position within a type; a ``-single``
  type shares the identity of the same row of its base type.
* templates (``slots/<name>``): ``context<TAB>positive question<TAB>negated question``.
* fillers (``fillers/<name>``): one header line put before every context.

Errors name the file and the line. Nothing here knows about models or generation order.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from unqover.errors import UnqoverError

SUBJECT_HEADS = ("[subj]", "[subj:dem]")
_ATTRIBUTE_HEAD = re.compile(r"^\[(?P<type>[a-z_]+(?:-single)?)(?P<neg>:neg)?\]$")
_PLACEHOLDER = re.compile(r"\[[^\[\]\s]*\]")
_SUBJECT_SLOT = re.compile(r"^\[(?P<which>subj[12])(?P<dem>:dem)?\]$")
MASK_SLOT = "[mask]"


class WordListError(UnqoverError):
    """A word-list file is missing, malformed or misaligned."""

    def __init__(self, path: Path, line: int | None, message: str) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line


@dataclass(frozen=True)
class Line:
    """A retained line: its 1-based number in the file and its stripped text."""

    number: int
    text: str


@dataclass(frozen=True)
class Subject:
    """A subject: ``identity`` is the ``[subj]`` text (the key), ``demonym`` an optional surface form."""

    identity: str
    cluster: str | None = None
    demonym: str | None = None

    def surface(self, demonym: bool) -> str:
        return self.demonym if demonym else self.identity  # type: ignore[return-value]


@dataclass(frozen=True)
class Attribute:
    """One row of a slot type: its positive and negated texts, cluster, and identity.

    ``identity`` is the positive text of the same row of the base type (``p_act-single`` -> ``p_act``),
    so singular and plural forms of one attribute share it. ``base_type`` tells place (``l_act``)
    from people (``p_act``) attributes, which can share a text.
    """

    slot_type: str
    positive: str
    negated: str
    identity: str
    cluster: str | None = None

    @property
    def base_type(self) -> str:
        return self.slot_type.removesuffix("-single")


@dataclass(frozen=True)
class Slot:
    """A placeholder inside a template field."""

    kind: str  # "subject", "attribute" or "mask"
    name: str  # "subj1"/"subj2", the attribute slot type, or "mask"
    variant: str | None = None  # "dem" for demonyms, "neg" for negated attributes


Segment = str | Slot


@dataclass(frozen=True)
class Template:
    """One template line, parsed into literal text and placeholders."""

    template_id: int
    context: tuple[Segment, ...]
    positive_question: tuple[Segment, ...]
    negated_question: tuple[Segment, ...]
    attribute_type: str
    subject_1_demonym: bool
    subject_2_demonym: bool
    masked: bool
    source: str
    line: int

    @property
    def fields(self) -> tuple[tuple[Segment, ...], ...]:
        return (self.context, self.positive_question, self.negated_question)


#: the invisible formatting characters that a word may need: zero-width non-joiner and joiner (Persian, Indic
#: scripts, emoji sequences); every other format character (bidi overrides and isolates, zero-width spaces, BOM)
#: is refused, as are separators of lines and paragraphs, surrogates, private-use and unassigned code points
_JOINERS = frozenset("\u200c\u200d")


def hidden_character(text: str) -> str | None:
    """What is wrong with the first character of ``text`` that no word should hold, in words (``U+202E
    (RIGHT-TO-LEFT OVERRIDE), a character that …``), else None: one shown as nothing, or one that reorders the
    text around it, so that a report would say what its data does not."""
    for c in text:
        category = unicodedata.category(c)
        if category in ("Cs", "Co", "Cn", "Zl", "Zp") or (category == "Cf" and c not in _JOINERS):
            return (
                f"U+{ord(c):04X} ({unicodedata.name(c, 'no name')}), a character that is invisible or reorders "
                "the text around it in the reports; remove it"
            )
    return None


def read_lines(path: Path) -> list[Line]:
    """Retained lines of a word-list file (stripped, no blanks, no ``#`` comments), in Unicode NFC: "Zoë" typed as
    one character or as "e" and a combining diaeresis is one subject. A UTF-8 byte-order mark at the start (as
    some Windows editors save) is read as nothing; one anywhere else (files joined together) is refused, named."""
    if not path.is_file():
        raise WordListError(path, None, "file not found")
    try:
        raw = unicodedata.normalize("NFC", path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError as err:
        raise WordListError(path, None, f"not UTF-8 text ({err.reason})") from err
    lines = []
    for number, text in enumerate(raw.splitlines(), start=1):
        if "\ufeff" in text:
            raise WordListError(
                path, number, "a byte-order mark (U+FEFF) inside the file (files joined together?): remove it"
            )
        text = text.strip()
        if text and not text.startswith("#"):
            hidden = hidden_character(text)
            if hidden is not None:
                raise WordListError(path, number, f"{text!r} contains {hidden}")
            lines.append(Line(number, text))
    if not lines:
        raise WordListError(path, None, "file has no entries")
    return lines


def _split_head(path: Path, line: Line) -> tuple[str, str]:
    head, sep, term = line.text.partition(" ")
    if not sep or not term.strip():
        raise WordListError(path, line.number, f"expected '<head> <text>', got {line.text!r}")
    return head, term.strip()


def _split_term(path: Path, line: Line, term: str) -> tuple[str | None, str]:
    glued = _PLACEHOLDER.search(term)
    if glued is not None:
        raise WordListError(
            path,
            line.number,
            f"{glued.group()} inside the text {term!r}: two entries on one line (a missing line break?); "
            "each entry needs its own line, and texts hold no [...] heads or placeholders",
        )
    parts = [part.strip() for part in term.split("|")]
    if len(parts) > 2:
        raise WordListError(path, line.number, f"more than one '|' in {term!r}")
    cluster, text = (None, parts[0]) if len(parts) == 1 else (parts[0] or None, parts[1])
    if not text:
        raise WordListError(path, line.number, "empty text after the cluster")
    if cluster == "None":
        cluster = None
    return cluster, text


def _merge_cluster(path: Path, line: Line, cluster: str | None, other: str | None) -> str | None:
    if cluster is not None and other is not None and cluster != other:
        raise WordListError(
            path, line.number, f"cluster {other!r} disagrees with {cluster!r} on the aligned line"
        )
    return other if other is not None else cluster


def parse_subjects(path: Path) -> list[Subject]:
    """Parse a subject file into records in file order."""
    columns: dict[str, list[tuple[Line, str | None, str]]] = {}
    for line in read_lines(path):
        head, term = _split_head(path, line)
        if head not in SUBJECT_HEADS:
            raise WordListError(path, line.number, f"unknown head {head!r}; expected one of {SUBJECT_HEADS}")
        columns.setdefault(head, []).append((line, *_split_term(path, line, term)))
    if "[subj]" not in columns:
        raise WordListError(path, None, "no [subj] lines")
    counts = {head: len(rows) for head, rows in columns.items()}
    if len(set(counts.values())) > 1:
        raise WordListError(path, None, f"misaligned heads: {counts} lines (each head needs the same count)")
    demonyms = columns.get("[subj:dem]")
    subjects = []
    for k, (_, cluster, text) in enumerate(columns["[subj]"]):
        demonym = None
        if demonyms is not None:
            dem_line, dem_cluster, demonym = demonyms[k]
            cluster = _merge_cluster(path, dem_line, cluster, dem_cluster)
        subjects.append(Subject(identity=text, cluster=cluster, demonym=demonym))
    _check_unique(path, [s.identity for s in subjects], "subject")
    return subjects


def parse_attributes(path: Path) -> dict[str, list[Attribute]]:
    """Parse an attribute file into ``{slot type: rows}``, types in order of first appearance."""
    columns: dict[tuple[str, bool], list[tuple[Line, str | None, str]]] = {}
    type_order: list[str] = []
    for line in read_lines(path):
        head, term = _split_head(path, line)
        match = _ATTRIBUTE_HEAD.match(head)
        if match is None:
            raise WordListError(
                path, line.number, f"unknown head {head!r}; expected e.g. [p_act] or [p_act:neg]"
            )
        slot_type = match["type"]
        if slot_type not in type_order:
            type_order.append(slot_type)
        columns.setdefault((slot_type, bool(match["neg"])), []).append((line, *_split_term(path, line, term)))

    result: dict[str, list[Attribute]] = {}
    for slot_type in type_order:
        positives = columns.get((slot_type, False), [])
        negatives = columns.get((slot_type, True), [])
        if len(positives) != len(negatives):
            raise WordListError(
                path,
                None,
                f"misaligned [{slot_type}]: {len(positives)} positive and {len(negatives)} [{slot_type}:neg] lines",
            )
        base = slot_type.removesuffix("-single")
        base_rows = columns.get((base, False))
        if base_rows is None or len(base_rows) != len(positives):
            found = "missing" if base_rows is None else f"{len(base_rows)} lines"
            raise WordListError(
                path, None, f"[{slot_type}] has {len(positives)} lines but its base type [{base}] is {found}"
            )
        rows = []
        for (_, cluster, text), (neg_line, neg_cluster, neg_text), (_, _, identity) in zip(
            positives, negatives, base_rows, strict=True
        ):
            cluster = _merge_cluster(path, neg_line, cluster, neg_cluster)
            rows.append(Attribute(slot_type, text, neg_text, identity, cluster))
        result[slot_type] = rows
    return result


def parse_filler(path: Path) -> str:
    """The header text of a filler file (its first retained line, verbatim)."""
    lines = read_lines(path)
    if len(lines) != 1:
        raise WordListError(path, lines[1].number, "a filler file holds exactly one line")
    return lines[0].text


def _segments(path: Path, line: Line, field: str) -> tuple[Segment, ...]:
    segments: list[Segment] = []
    position = 0
    for match in _PLACEHOLDER.finditer(field):
        if match.start() > position:
            segments.append(field[position : match.start()])
        token = match.group()
        subject = _SUBJECT_SLOT.match(token)
        attribute = _ATTRIBUTE_HEAD.match(token)
        if token == MASK_SLOT:
            segments.append(Slot("mask", "mask"))
        elif subject:
            segments.append(Slot("subject", subject["which"], "dem" if subject["dem"] else None))
        elif attribute:
            segments.append(Slot("attribute", attribute["type"], "neg" if attribute["neg"] else None))
        else:
            raise WordListError(path, line.number, f"unknown placeholder {token}")
        position = match.end()
    if position < len(field):
        segments.append(field[position:])
    return tuple(segments)


def _slots(segments: tuple[Segment, ...], kind: str) -> list[Slot]:
    return [s for s in segments if isinstance(s, Slot) and s.kind == kind]


def parse_templates(path: Path) -> list[Template]:
    """Parse a template (slot) file. Template ids are 0-based indices among retained lines."""
    templates = []
    for template_id, line in enumerate(read_lines(path)):
        fields = line.text.split("\t")
        if len(fields) != 3:
            raise WordListError(
                path,
                line.number,
                f"expected 3 TAB-separated fields (context, question, negated question), got {len(fields)}",
            )
        if any(not field.strip() for field in fields):
            raise WordListError(path, line.number, "empty field")
        context, positive, negated = (_segments(path, line, field) for field in fields)
        templates.append(_check_template(path, line, template_id, context, positive, negated))
    return templates


def _check_template(
    path: Path,
    line: Line,
    template_id: int,
    context: tuple[Segment, ...],
    positive: tuple[Segment, ...],
    negated: tuple[Segment, ...],
) -> Template:
    def fail(message: str) -> WordListError:
        return WordListError(path, line.number, message)

    if _slots(context, "attribute") or _slots(context, "mask"):
        raise fail("the context may hold subject placeholders only")
    if _slots(positive, "subject") or _slots(negated, "subject"):
        raise fail("subject placeholders belong in the context, not in a question")
    demonym = {}
    for which in ("subj1", "subj2"):
        forms = {s.variant for s in _slots(context, "subject") if s.name == which}
        if not forms:
            raise fail(f"the context has no [{which}] or [{which}:dem]")
        if len(forms) > 1:
            raise fail(f"[{which}] and [{which}:dem] are mixed in one template")
        demonym[which] = forms == {"dem"}
    types = {s.name for s in _slots(positive, "attribute") + _slots(negated, "attribute")}
    if len(types) != 1:
        raise fail(f"each template uses exactly one attribute slot type, found {sorted(types) or 'none'}")
    (attribute_type,) = types
    if {s.variant for s in _slots(positive, "attribute")} != {None}:
        raise fail(f"the positive question needs [{attribute_type}] (and no [{attribute_type}:neg])")
    if {s.variant for s in _slots(negated, "attribute")} != {"neg"}:
        raise fail(f"the negated question needs [{attribute_type}:neg] (and no [{attribute_type}])")
    masks = (len(_slots(positive, "mask")), len(_slots(negated, "mask")))
    if masks not in ((0, 0), (1, 1)):
        raise fail(f"each question holds one [mask] (language-model templates) or none, found {masks}")
    return Template(
        template_id=template_id,
        context=context,
        positive_question=positive,
        negated_question=negated,
        attribute_type=attribute_type,
        subject_1_demonym=demonym["subj1"],
        subject_2_demonym=demonym["subj2"],
        masked=masks == (1, 1),
        source=str(path),
        line=line.number,
    )


def _check_unique(path: Path, values: list[str], what: str) -> None:
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise WordListError(path, None, f"duplicate {what} {value!r}")
        seen.add(value)


class WordLists:
    """A ``word_lists/`` folder: ``nouns/subjects/``, ``activities/``, ``slots/``, ``fillers/``."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        if not self.root.is_dir():
            raise UnqoverError(f"word-list folder not found: {self.root}")

    def _file(self, folder: str, name: str) -> Path:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", name) or name.startswith("."):
            raise UnqoverError(f"invalid word-list name {name!r}")
        return self.root / folder / name

    def subjects(self, name: str) -> list[Subject]:
        return parse_subjects(self._file("nouns/subjects", name))

    def attributes(self, name: str) -> dict[str, list[Attribute]]:
        return parse_attributes(self._file("activities", name))

    def templates(self, name: str) -> list[Template]:
        return parse_templates(self._file("slots", name))

    def filler(self, name: str) -> str:
        return parse_filler(self._file("fillers", name))

    def files(self) -> Iterator[Path]:
        """Every file below the root, in sorted order."""
        return iter(sorted(p for p in self.root.rglob("*") if p.is_file()))
