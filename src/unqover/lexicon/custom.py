"""Reader for user-defined UnQover probes: one YAML file of subjects, attributes and templates.

A probe file (``unqover probe MODEL --probe FILE``, ``unqover build-datasets --probe FILE``)::

    name: pets                     # required: letters, digits, '-' and '_'
    description: Lazy pets.        # optional, shown on the dataset card
    license: cc-by-4.0             # optional Hub license id for the card (default: unknown)
    language: en                   # optional language code for the card (default: en)
    fix_articles: false            # optional: the original generator's "a" -> "an" fix (default: false)
    subjects:                      # required: clusters -> members (pairs across clusters) ...
      cats: [Tom, Felix]
      dogs: [Rex, Buddy, Max]
    # subjects: [Tom, Felix, Rex]  # ... or a flat list (every pair)
    attributes:                    # required
      - {positive: was very lazy, negated: was never lazy, cluster: laziness, type: p_act}
    templates:                     # required
      - context: "{subject_1} sat next to {subject_2} on the porch."
        question: "Who {attribute}?"
        mlm: "{mask} {attribute}."  # optional masked-LM form; derived from "Who ...?" questions

Template-level negation: a template may give ``negated_question`` (with ``{attribute}`` standing for the
positive text, e.g. ``"Who never {attribute}?"``) instead of relying on the attributes' ``negated`` texts; when
every template has one, an attribute may be a plain string. ``{{`` and ``}}`` write literal braces.

Validation is strict: the first problem raises :class:`CustomProbeError` naming the file, the line, the key path
(e.g. ``templates[1].context``) and what is expected. The probe it returns is defined in
:mod:`unqover.lexicon.custom_probe`. Nothing here knows about rows or models; the rows are made by
:mod:`unqover.generate.custom`.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from unqover.errors import UnqoverError
from unqover.lexicon.custom_probe import (
    _BRACES,
    ATTRIBUTE_KEYS,
    ATTRIBUTE_TYPES,
    FIELD_PLACEHOLDERS,
    OPTIONAL_KEYS,
    REQUIRED_KEYS,
    TEMPLATE_KEYS,
    CustomAttribute,
    CustomProbeSpec,
    CustomTemplate,
)
from unqover.lexicon.wordlists import hidden_character

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,95}")
_LICENSE = re.compile(r"[a-z0-9][a-z0-9.+-]*")
_LANGUAGE = re.compile(r"[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*")
#: Literal mask tokens are not allowed in probe texts: write ``{mask}`` (the scorers replace the placeholder).
_MASK_TOKENS = ("[MASK]", "<mask>")


class CustomProbeError(UnqoverError):
    """A probe file is unreadable or malformed; the message names the file, line and key path."""

    def __init__(self, source: str, message: str, key: str | None = None, line: int | None = None) -> None:
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {key}: {message}" if key else f"{where}: {message}")
        self.source, self.key, self.line = source, key, line


def read_probe_file(path: str | Path) -> CustomProbeSpec:
    """Read and check a probe file; raise :class:`CustomProbeError` on the first problem."""
    source = str(path)
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise CustomProbeError(source, "no such probe file") from None
    except IsADirectoryError:
        raise CustomProbeError(source, "is a folder; expected a probe file (YAML)") from None
    except UnicodeDecodeError as err:
        raise CustomProbeError(source, f"not UTF-8 text ({err.reason} at byte {err.start})") from None
    except OSError as err:
        raise CustomProbeError(source, f"cannot read the probe file: {err.strerror or err}") from None
    return read_probe_text(text, source)


def read_probe_text(text: str, source: str = "<probe>") -> CustomProbeSpec:
    """Parse and check the YAML text of a probe; ``source`` names it in errors. The text is read in Unicode NFC,
    so that "Zoë" typed as one character or as "e" and a combining diaeresis is one subject."""
    text = unicodedata.normalize("NFC", text)
    try:
        data = yaml.safe_load(text)
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
        problem = getattr(err, "problem", None) or str(err)
        context = getattr(err, "context", None)
        detail = f"{context}, {problem}" if context else problem
        started = getattr(err, "context_mark", None)
        if started is not None and mark is not None and started.line != mark.line:
            detail += f" (the construct started on line {started.line + 1})"
        line = mark.line + 1 if mark is not None else None
        column = f", column {mark.column + 1}" if mark is not None else ""
        raise CustomProbeError(source, f"YAML syntax error{column}: {detail}", line=line) from None
    return _Reader(source, root).probe(data)


def parse_probe(data: Any, source: str = "<probe>") -> CustomProbeSpec:
    """Check an already-loaded probe mapping (e.g. from :func:`probe_to_dict`)."""
    return _Reader(source, None).probe(data)


Path_ = tuple[str | int, ...]


def key_path(path: Path_) -> str:
    """``("templates", 1, "context")`` -> ``templates[1].context``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part):
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return out


def _describe(value: Any) -> str:
    if value is None:
        return "nothing (an empty value)"
    if isinstance(value, bool):
        return (
            f"the boolean {str(value).lower()} (YAML reads yes/no/on/off/true/false as booleans; quote text)"
        )
    if isinstance(value, int | float):
        return f"the number {value!r} (quote it to make it text)"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"{type(value).__name__} {value!r}"


class _Reader:
    """Checks the loaded YAML; ``root`` (the composed node tree, when read from text) gives line numbers."""

    def __init__(self, source: str, root: yaml.Node | None) -> None:
        self.source, self.root = source, root

    # -- errors ------------------------------------------------------------------------------------------

    def _node(self, path: Path_) -> yaml.Node | None:
        node, found = self.root, self.root
        for part in path:
            if isinstance(node, yaml.MappingNode):
                node = next((v for k, v in node.value if getattr(k, "value", None) == str(part)), None)
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
                node = node.value[part]
            else:
                node = None
            if node is None:
                break
            found = node
        return found

    def error(self, path: Path_, message: str) -> CustomProbeError:
        node = self._node(path)
        line = node.start_mark.line + 1 if node is not None else None
        return CustomProbeError(self.source, message, key_path(path) or None, line)

    # -- generic checks ----------------------------------------------------------------------------------

    def _duplicate_keys(self) -> None:
        seen: set[int] = set()

        def walk(node: yaml.Node, path: Path_) -> None:
            if id(node) in seen:
                return
            seen.add(id(node))
            if isinstance(node, yaml.MappingNode):
                keys: dict[str, yaml.Node] = {}
                for k, v in node.value:
                    name = getattr(k, "value", None)
                    if isinstance(name, str):
                        if name in keys:
                            line = k.start_mark.line + 1
                            raise CustomProbeError(
                                self.source,
                                f"duplicate key {name!r} (first on line {keys[name].start_mark.line + 1}); "
                                "each key may appear once",
                                key_path((*path, name)),
                                line,
                            )
                        keys[name] = k
                    walk(v, (*path, name if isinstance(name, str) else str(name)))
            elif isinstance(node, yaml.SequenceNode):
                for i, item in enumerate(node.value):
                    walk(item, (*path, i))

        if self.root is not None:
            walk(self.root, ())

    def mapping(self, value: Any, path: Path_, what: str) -> dict:
        if not isinstance(value, dict):
            raise self.error(path, f"expected {what}, got {_describe(value)}")
        bad = [k for k in value if not isinstance(k, str)]
        if bad:
            raise self.error(path, f"keys must be text, got {_describe(bad[0])}")
        return value

    def keys(self, value: dict, path: Path_, required: Sequence[str], optional: Sequence[str]) -> None:
        allowed = [*required, *optional]
        for key in value:
            if key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise self.error(
                    (*path, key), f"unknown key {key!r}; allowed keys: {', '.join(allowed)}{hint}"
                )
        for key in required:
            if key not in value:
                raise self.error((*path, key), f"missing key {key!r} (required: {', '.join(required)})")

    def text(self, value: Any, path: Path_, what: str) -> str:
        if not isinstance(value, str):
            raise self.error(path, f"expected {what} as text, got {_describe(value)}")
        if not value.strip():
            raise self.error(path, f"expected {what}, got an empty string")
        bad = next((c for c in value if unicodedata.category(c) == "Cc"), None)
        if bad is not None:
            raise self.error(
                path,
                f"{what} contains the control character {bad!r}; write it on one line "
                "(a YAML '>' or '|' block adds a line break: use '>-')",
            )
        hidden = hidden_character(value)
        if hidden is not None:
            raise self.error(path, f"{what} {value!r} contains {hidden}")
        if value != value.strip():
            raise self.error(path, f"{what} {value!r} has leading or trailing spaces; remove them")
        token = next((t for t in _MASK_TOKENS if t in value), None)
        if token is not None:
            raise self.error(
                path, f"{what} contains the mask token {token}; write {{mask}} in an mlm form instead"
            )
        return unicodedata.normalize("NFC", value)  # one spelling of "Zoë" (a mapping given to parse_probe)

    def unique(self, values: Sequence[str], paths: Sequence[Path_], what: str) -> None:
        """Case-insensitive: the paper mode lower-cases subjects and attributes when it pairs rows."""
        first: dict[str, int] = {}
        for i, value in enumerate(values):
            key = value.casefold()
            if key in first:
                j = first[key]
                same = "repeats" if values[j] == value else "differs only in case from"
                raise self.error(
                    paths[i],
                    f"{what} {value!r} {same} {key_path(paths[j])} ({values[j]!r}); each {what} once",
                )
            first[key] = i

    # -- the probe ---------------------------------------------------------------------------------------

    def probe(self, data: Any) -> CustomProbeSpec:
        if data is None:
            raise CustomProbeError(
                self.source, f"the probe file is empty; expected a mapping with {', '.join(REQUIRED_KEYS)}"
            )
        self._duplicate_keys()
        if not isinstance(data, dict):
            raise self.error(
                (), f"expected a mapping with keys {', '.join(REQUIRED_KEYS)}, got {_describe(data)}"
            )
        self.mapping(data, (), "a mapping")
        self.keys(data, (), REQUIRED_KEYS, OPTIONAL_KEYS)
        name = self.text(data["name"], ("name",), "the probe name")
        if not NAME_PATTERN.fullmatch(name):
            raise self.error(
                ("name",),
                f"{name!r} is not a simple name; use letters, digits, '-' and '_' (at most 96, starting with a "
                "letter or digit), e.g. pets or gender-jobs",
            )
        description = None
        if data.get("description") is not None:
            description = self.text(data["description"], ("description",), "the description")
        license_ = None
        if "license" in data:
            license_ = self.text(data["license"], ("license",), "the license")
            if not _LICENSE.fullmatch(license_):
                raise self.error(
                    ("license",),
                    f"{license_!r} is not a Hub license id; e.g. cc-by-4.0, apache-2.0, mit, other",
                )
        language = "en"
        if "language" in data:
            language = self.text(data["language"], ("language",), "the language")
            if not _LANGUAGE.fullmatch(language):
                raise self.error(("language",), f"{language!r} is not a language code; e.g. en, de, pt-BR")
        fix = data.get("fix_articles", False)
        if not isinstance(fix, bool):
            raise self.error(("fix_articles",), f"expected true or false, got {_describe(fix)}")
        subjects, clusters = self.subjects(data["subjects"])
        templates = self.templates(data["templates"])
        attributes = self.attributes(data["attributes"], templates)
        return CustomProbeSpec(
            name=name,
            subjects=subjects,
            clusters=clusters,
            attributes=attributes,
            templates=templates,
            description=description,
            license=license_,
            language=language,
            fix_articles=fix,
            source=self.source,
        )

    def subjects(self, value: Any) -> tuple[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...] | None]:
        path: Path_ = ("subjects",)
        if isinstance(value, list):
            names = tuple(self.text(v, (*path, i), "a subject") for i, v in enumerate(value))
            if len(names) < 2:
                raise self.error(path, f"expected at least 2 subjects to pair, got {len(names)}")
            self.unique(names, [(*path, i) for i in range(len(names))], "subject")
            return names, None
        if not isinstance(value, dict):
            raise self.error(
                path,
                "expected clusters (a mapping of cluster name -> list of subjects; pairs are formed across "
                f"clusters) or a flat list of subjects (every pair), got {_describe(value)}",
            )
        self.mapping(value, path, "clusters")
        clusters = []
        names, paths = [], []
        for cluster, members in value.items():
            cluster = self.text(cluster, path, "a cluster name")
            where = (*path, cluster)
            if not isinstance(members, list):
                raise self.error(where, f"expected a list of subjects, got {_describe(members)}")
            if not members:
                raise self.error(where, "empty cluster; give at least one subject")
            group = tuple(self.text(v, (*where, i), "a subject") for i, v in enumerate(members))
            names += group
            paths += [(*where, i) for i in range(len(group))]
            clusters.append((cluster, group))
        if len(clusters) < 2:
            raise self.error(
                path,
                f"expected at least 2 clusters (pairs are formed across clusters), got {len(clusters)}; "
                "give a flat list to pair every subject with every other",
            )
        self.unique(names, paths, "subject")
        return tuple(names), tuple(clusters)

    def field_text(self, value: Any, path: Path_, name: str) -> str:
        text = self.text(value, path, f"the {name}")
        allowed = FIELD_PLACEHOLDERS[name]
        shown = ", ".join("{" + p + "}" for p in allowed)
        counts = dict.fromkeys(allowed, 0)
        order = []
        for match in _BRACES.finditer(text):
            token = match.group()
            if token in ("{{", "}}"):
                continue
            if token in ("{", "}"):
                raise self.error(
                    path, f"unmatched {token!r} in {text!r}; write {token * 2} for a literal brace"
                )
            if match[1] not in allowed:
                raise self.error(
                    path, f"unknown placeholder {token} in {text!r}; the {name} may hold {shown}"
                )
            counts[match[1]] += 1
            order.append(match[1])
        missing = [p for p in allowed if counts[p] == 0]
        if missing:
            what = " and ".join("{" + p + "}" for p in missing)
            raise self.error(path, f"the {name} {text!r} has no {what}; it needs {shown}")
        if name == "context" and order.index("subject_1") > order.index("subject_2"):
            raise self.error(
                path,
                f"{{subject_1}} must come before {{subject_2}} in {text!r} (subject_1 is mentioned first)",
            )
        if "mask" in allowed:
            if counts["mask"] != 1:
                raise self.error(
                    path, f"the {name} {text!r} needs exactly one {{mask}}, has {counts['mask']}"
                )
            at = text.index("{mask}")
            if at > 0 and text[at - 1] != " ":
                raise self.error(
                    path, f"{{mask}} must start the {name} or follow a space (a subject is scored as a word)"
                )
        return text

    def templates(self, value: Any) -> tuple[CustomTemplate, ...]:
        path: Path_ = ("templates",)
        if not isinstance(value, list) or not value:
            got = "an empty list" if value == [] else _describe(value)
            raise self.error(
                path, f"expected a list of templates ({{context, question}} mappings), got {got}"
            )
        templates = []
        for i, item in enumerate(value):
            where = (*path, i)
            self.mapping(item, where, "a template mapping with context and question")
            self.keys(item, where, TEMPLATE_KEYS[:2], TEMPLATE_KEYS[2:])
            texts = {
                name: self.field_text(item[name], (*where, name), name)
                for name in TEMPLATE_KEYS
                if name in item
            }
            if "mlm_negated" in texts and ("negated_question" not in texts or "mlm" not in texts):
                raise self.error(
                    (*where, "mlm_negated"),
                    "mlm_negated is the masked form of negated_question; give it with negated_question and mlm",
                )
            if "mlm" in texts and "negated_question" in texts and "mlm_negated" not in texts:
                raise self.error(
                    where,
                    "missing key 'mlm_negated': a template with negated_question and mlm needs the masked "
                    "negated form too",
                )
            node = self._node(where)
            line = node.start_mark.line + 1 if node is not None and self.root is not None else None
            templates.append(CustomTemplate(**texts, line=line))
        keys = [(t.context, t.question, t.negated_question) for t in templates]
        for i, key in enumerate(keys):
            if key in keys[:i]:
                raise self.error(
                    (*path, i), f"repeats templates[{keys.index(key)}] (same context and questions)"
                )
        return tuple(templates)

    def attributes(self, value: Any, templates: Sequence[CustomTemplate]) -> tuple[CustomAttribute, ...]:
        path: Path_ = ("attributes",)
        if not isinstance(value, list) or not value:
            got = "an empty list" if value == [] else _describe(value)
            raise self.error(
                path, f"expected a list of attributes ({{positive, negated}} mappings), got {got}"
            )
        plain = next((i for i, t in enumerate(templates) if t.negated_question is None), None)
        attributes = []
        for i, item in enumerate(value):
            where = (*path, i)
            if isinstance(item, str) and plain is None:
                item = {"positive": item}
            if not isinstance(item, dict):
                need = "a mapping {positive: ..., negated: ...}"
                if isinstance(item, str):
                    need += (
                        f" (a plain string needs template-level negation: templates[{plain}] has no "
                        "negated_question)"
                    )
                raise self.error(where, f"expected {need}, got {_describe(item)}")
            self.mapping(item, where, "an attribute mapping")
            self.keys(item, where, ("positive",), ATTRIBUTE_KEYS[1:])
            positive = self.text(item["positive"], (*where, "positive"), "the positive attribute")
            negated = None
            if "negated" in item:
                negated = self.text(item["negated"], (*where, "negated"), "the negated attribute")
                if negated == positive:
                    raise self.error((*where, "negated"), "the negated attribute equals the positive one")
            elif plain is not None:
                raise self.error(
                    (*where, "negated"),
                    f"missing key 'negated' (the attribute's negation, e.g. positive: was lazy, negated: was "
                    f"never lazy); it may be left out only when every template has a negated_question, and "
                    f"templates[{plain}] has none",
                )
            cluster = None
            if item.get("cluster") is not None:
                cluster = self.text(item["cluster"], (*where, "cluster"), "the attribute cluster")
            kind = item.get("type", "p_act")
            if kind not in ATTRIBUTE_TYPES:
                got = repr(kind) if isinstance(kind, str) else _describe(kind)
                raise self.error(
                    (*where, "type"),
                    f"expected p_act (an attribute of the subjects) or l_act (of places), got {got}",
                )
            attributes.append(CustomAttribute(positive, negated, cluster, kind))
        self.unique(
            [a.positive for a in attributes],
            [(*path, i, "positive") for i in range(len(attributes))],
            "attribute",
        )
        return tuple(attributes)


__all__ = [
    "CustomProbeError",
    "parse_probe",
    "read_probe_file",
    "read_probe_text",
]
