"""One model's bias on one page: every probe's headline numbers with their intervals, what each means, each run's
scope and where it ran, as a model card's "Bias" section (Markdown), and the same in the terminal.

``unqover probe MODEL --bias all`` writes it as ``summary.md`` / ``summary.html`` beside its run folders, linking
each run's report; ``unqover publish-results`` writes the same section, without the local links, into the model
card. The numbers come in as the probes word them (``probe.results.headline_text``): nothing is computed here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote

from unqover.report.markdown import HEADLINE_NAMES, md, md_text

#: where a model card's section starts and ends, so that publishing again replaces it
SECTION_START = "<!-- unqover bias section: start -->"
SECTION_END = "<!-- unqover bias section: end -->"


@dataclass(frozen=True)
class CardNumber:
    """One headline number: its key, its words (value and interval, as every surface shows it) and its meaning."""

    key: str
    words: str
    meaning: str

    @property
    def name(self) -> str:
        """The number's name with the reports' symbol (``bias intensity μ``)."""
        return HEADLINE_NAMES.get(self.key, self.key)


@dataclass(frozen=True)
class ProbeCard:
    """One probe's run on the model: its numbers, its scope (a full run, or a quick run and its sample), where and
    how long it ran (None: not recorded), its report (a path relative to the page; None: no link) and its task id
    on the Hub (the ``.eval_results`` files' ``task_id``)."""

    probe: str
    title: str
    numbers: Sequence[CardNumber]
    scope: str
    ran: str | None = None
    report: str | None = None
    task: str | None = None


@dataclass(frozen=True)
class ModelCard:
    """The bias section of one model: its probes' cards and the probes left out (name -> why)."""

    model: str
    version: str
    probes: Sequence[ProbeCard]
    left_out: Mapping[str, str] = field(default_factory=dict)


def _link(path: str) -> str:
    return f"[{md(path)}]({quote(path)})"


def _probe_lines(card: ProbeCard) -> list[str]:
    lines = [f"### {md(card.title)} (`{card.probe}`)", "", f"- Scope: {md_text(card.scope)}"]
    if card.ran:
        lines.append(f"- Ran on: {md_text(card.ran)}")
    if card.task:
        lines.append(f"- Hub task id: `{card.task}`")
    if card.report:
        lines.append(f"- Report: {_link(card.report)}")
    lines += ["", "| Number | Value |", "|---|---:|"]
    lines += [f"| {md(n.name)} | {md_text(n.words)} |" for n in card.numbers]
    return [*lines, ""]


def meanings(probes: Sequence[ProbeCard]) -> dict[str, str]:
    """Each number's name -> its meaning, once; a name whose meaning differs between probes (the emotion and person
    probes' p-values) is listed for each, its probe named."""
    found: dict[str, dict[str, list[str]]] = {}
    for probe in probes:
        for n in probe.numbers:
            if n.meaning:
                found.setdefault(n.name, {}).setdefault(n.meaning, []).append(probe.probe)
    out = {}
    for name, by_meaning in found.items():
        for meaning, owners in by_meaning.items():
            out[name if len(by_meaning) == 1 else f"{name} ({', '.join(owners)})"] = meaning
    return out


def card_section(card: ModelCard) -> str:
    """The "Bias" section (Markdown) between its markers: the model, the probes, each probe's numbers, then what
    each number means."""
    names = ", ".join(f"`{p.probe}`" for p in card.probes)
    lines = [
        SECTION_START,
        "## Bias",
        "",
        f"Stereotyping bias of {md(card.model)} measured by unqover {md(card.version)} on "
        f"{len(card.probes)} probe{'s' if len(card.probes) != 1 else ''}: {names}. Each number reads as in "
        "the run's report: the value with its interval where it has one, or why it is declined.",
        "",
    ]
    if card.left_out:
        lines += [f"Not measured: {md_text('; '.join(f'{k} ({v})' for k, v in card.left_out.items()))}.", ""]
    for probe in card.probes:
        lines += _probe_lines(probe)
    lines += ["### What the numbers mean", ""]
    lines += [f"- {md(name)}: {md_text(meaning)}" for name, meaning in meanings(card.probes).items()]
    return "\n".join([*lines, "", SECTION_END, ""])


def card_text(card: ModelCard, folders: Mapping[str, str]) -> str:
    """The terminal's summary: each probe's numbers, scope and run folder, what the numbers mean, and the probes
    left out."""
    lines = [f"Bias summary: {card.model} (unqover {card.version})"]
    for probe in card.probes:
        lines += ["", f"{probe.title} ({probe.probe}): {probe.scope}"]
        if probe.ran:
            lines.append(f"  ran on {probe.ran}")
        width = max((len(n.name) for n in probe.numbers), default=0)
        lines += [f"  {n.name:<{width}}  {n.words}" for n in probe.numbers]
        if probe.probe in folders:
            lines.append(f"  run folder: {folders[probe.probe]}")
    lines += ["", "What the numbers mean:"]
    lines += [f"  {name}: {meaning}" for name, meaning in meanings(card.probes).items()]
    if card.left_out:
        lines += ["", "Left out:", *(f"  {name}: {why}" for name, why in card.left_out.items())]
    return "\n".join(lines)


def with_section(card: str | None, section: str) -> str:
    """A model card (README.md text; None: none yet) with ``section`` in place of its earlier unqover section, else
    appended at its end."""
    if not card:
        return section
    start, end = card.find(SECTION_START), card.find(SECTION_END)
    if start != -1 and end > start:
        return card[:start] + section.rstrip("\n") + card[end + len(SECTION_END) :]
    return card.rstrip("\n") + "\n\n" + section
