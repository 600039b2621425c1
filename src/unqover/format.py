"""How every report prints numbers, intervals and missing values: the terminal summaries, the Markdown and HTML
reports of all probes, the SVG charts' tooltips, the Space and the evaluate modules' apps.

The rules, in one place:

* **Missing.** ``None``, NaN, ±inf and anything that is not a number print as :data:`MISSING` ("—"), never as 0,
  "nan", "n/a" or "None"; an interval with a missing bound is missing as a whole.
* **Digits.** Bias measures, statistics, effect sizes and their intervals print with :data:`DIGITS` (4) decimals;
  quantities already in percentage points (the NLI probe's S, ΔP, B, gaps, α, β) keep their unit and print with
  :data:`POINTS_DIGITS` (2) decimals, as the paper's tables; shares print as percentages with
  :data:`PERCENT_DIGITS` (1) decimal (:func:`fmt_percent`); counts print as integers with thousands separators.
* **Never a false zero.** A non-zero value too small for its decimals (0 < |v| < 10^-digits) prints with two
  significant digits in scientific notation: a masked LM's μ of 1.5e-5 prints ``1.5e-05``, not ``0.0000``; the
  same holds for each bound of an interval and for signed values (``+1.5e-05``). A share below 10^-digits percent
  prints with two significant digits (``0.031%``).
* **Zero has no sign.** −0.0 prints as ``0.0000``; a signed zero prints ``+0.0000``.
* **p-values** print with 4 decimals, and below 0.0001 as ``< 0.0001`` (:func:`fmt_p`; ``p < 0.0001`` in a
  sentence, :func:`fmt_p_clause`).
* **Plurals**: ``1 premise``, ``2 premises``, ``1 person``, ``3 persons`` (:func:`plural`).

The SVG charts draw the word "missing" beside a hatched swatch as a legend label; any number they print comes
from here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

MISSING = "—"
DIGITS = 4  # bias measures, statistics and intervals
POINTS_DIGITS = 2  # values in percentage points (NLI's S, ΔP, B), as the paper reports them
PERCENT_DIGITS = 1  # shares shown as percentages
P_FLOOR = 1e-4  # p-values below it print as "< 0.0001"
NOISE = 1e-12  # values this close to zero are float noise (e.g. −0.05 + 0.05) and print as zero


def number(value: object) -> float | None:
    """A finite float (−0.0 made 0.0), or None for missing values (None, NaN, ±inf, booleans, non-numbers)."""
    if value is None or type(value).__name__ in ("bool", "bool_"):
        return None
    try:
        out = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    if not math.isfinite(out):
        return None
    return 0.0 if abs(out) < NOISE else out + 0.0


def _fixed(v: float, digits: int, sign: str) -> str:
    """``v`` with ``digits`` decimals, or with two significant digits in scientific notation when those decimals
    would show a non-zero value as zero."""
    if v != 0 and abs(v) < 10.0**-digits:
        return f"{v:{sign}.1e}"
    return f"{v:{sign}.{digits}f}"


def fmt(value: object, digits: int = DIGITS) -> str:
    """``0.2280``; ``1.5e-05`` for a non-zero value below 10^-digits; "—" when missing."""
    v = number(value)
    return MISSING if v is None else _fixed(v, digits, "")


def fmt_signed(value: object, digits: int = DIGITS) -> str:
    """``+0.2280``, ``-0.0500``, ``+1.5e-05``, ``+0.0000``; "—" when missing."""
    v = number(value)
    return MISSING if v is None else _fixed(v, digits, "+")


def fmt_interval(pair: Sequence | None, digits: int = DIGITS, signed: bool = False) -> str:
    """``[low, high]`` (each bound as :func:`fmt` or :func:`fmt_signed`), or "—" when the interval is absent or a
    bound is missing."""
    if pair is None or isinstance(pair, str | bytes | Mapping):
        return MISSING
    try:
        bounds = list(pair)
    except TypeError:
        return MISSING
    if len(bounds) != 2:
        return MISSING
    low, high = number(bounds[0]), number(bounds[1])
    if low is None or high is None:
        return MISSING
    sign = "+" if signed else ""
    return f"[{_fixed(low, digits, sign)}, {_fixed(high, digits, sign)}]"


def fmt_estimate(
    value: object, pair: Sequence | None = None, digits: int = DIGITS, signed: bool = False
) -> str:
    """An estimate with its interval, ``0.2280 [0.2010, 0.2550]``: the value alone without an interval, the
    interval alone without a value, "—" without either."""
    text = fmt_signed(value, digits) if signed else fmt(value, digits)
    interval = fmt_interval(pair, digits, signed)
    if interval == MISSING:
        return text
    return interval if text == MISSING else f"{text} {interval}"


def fmt_percent(fraction: object, digits: int = PERCENT_DIGITS) -> str:
    """A share (0–1) as a percentage with ``digits`` decimals, ``50.0%``, ``7.8%``; a non-zero share too small for
    them with two significant digits, ``0.031%``; "—" when missing."""
    f = number(fraction)
    if f is None:
        return MISSING
    percent = 100 * f + 0.0
    if percent != 0 and abs(percent) < 10.0**-digits:
        return f"{percent:.2g}%"
    return f"{percent:.{digits}f}%"


def fmt_percent_interval(pair: Sequence | None, digits: int = PERCENT_DIGITS) -> str:
    """An interval of shares (0–1) as percentages, ``[3.0%, 40.0%]`` (each bound as :func:`fmt_percent`), or "—"
    when the interval is absent or a bound is missing."""
    if fmt_interval(pair) == MISSING:
        return MISSING
    low, high = list(pair)  # type: ignore[arg-type]
    return f"[{fmt_percent(low, digits)}, {fmt_percent(high, digits)}]"


def fmt_percent_estimate(fraction: object, pair: Sequence | None = None, digits: int = PERCENT_DIGITS) -> str:
    """A share with its interval, ``25.0% [3.0%, 40.0%]``, as :func:`fmt_estimate` does for other values: the
    share alone without an interval, the interval alone without a share, "—" without either."""
    text = fmt_percent(fraction, digits)
    interval = fmt_percent_interval(pair, digits)
    if interval == MISSING:
        return text
    return interval if text == MISSING else f"{text} {interval}"


def fmt_level(confidence: object) -> str:
    """A confidence level as a percentage without trailing zeros: ``95%``, ``97.5%``; "" when missing. A level
    strictly between 0 and 1 keeps the decimals that tell it from 0% and 100% (``99.9999999%``, not ``100%``)."""
    c = number(confidence)
    if c is None:
        return ""
    percent = 100 * c
    for digits in range(4, 18):
        text = f"{percent:.{digits}f}".rstrip("0").rstrip(".")
        if not 0 < c < 1 or 0 < float(text) < 100:
            break
    return f"{text}%"


def fmt_count(value: object) -> str:
    """``1,234``; "—" when missing."""
    v = number(value)
    return MISSING if v is None else f"{round(v):,}"


def fmt_significant(value: object, digits: int = 3) -> str:
    """A measured rate or ratio to ``digits`` significant digits, never in exponent form: ``2,320``, ``45``,
    ``1.1``, ``0.034``; "—" when missing."""
    v = number(value)
    if v is None:
        return MISSING
    if v == 0:
        return "0"
    places = digits - 1 - math.floor(math.log10(abs(v)))
    text = f"{round(v, places):,.{max(places, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def fmt_p(value: object) -> str:
    """A p-value: ``0.0270``, ``1.0000``, ``< 0.0001`` below :data:`P_FLOOR`; "—" when missing."""
    p = number(value)
    if p is None:
        return MISSING
    return f"< {fmt(P_FLOOR)}" if p < P_FLOOR else fmt(p)


def fmt_p_clause(value: object, name: str = "p") -> str:
    """A p-value in a sentence: ``p = 0.0270``, ``p < 0.0001``, ``p = —``."""
    text = fmt_p(value)
    return f"{name} {text}" if text.startswith("<") else f"{name} = {text}"


def fmt_size(n: object) -> str:
    """A count in words of its size: ``350`` , ``4.4k``, ``66.4M``, ``1.5B``."""
    v = number(n)
    if v is None:
        return MISSING
    for scale, unit in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{v / scale:,.1f}{unit}"
    return f"{v:,.0f}"


def fmt_bytes(n: object) -> str:
    """An amount of memory: ``22.9 GB``, ``350 MB``, ``12 kB`` (binary units: 1 GB = 2^30 bytes)."""
    v = number(n)
    if v is None:
        return MISSING
    if abs(v) >= 2**30:
        return f"{v / 2**30:,.1f} GB"
    for scale, unit in ((2**20, "MB"), (2**10, "kB")):
        if abs(v) >= scale:
            return f"{v / scale:,.0f} {unit}"
    return f"{v:,.0f} bytes"


def fmt_seconds(seconds: object) -> str:
    """A wall time: ``0.4 s``, ``12.3 s``, ``1,234.5 s``; "—" when missing."""
    v = number(seconds)
    return MISSING if v is None else f"{v:,.1f} s"


def fmt_duration(seconds: object) -> str:
    """A duration in words at its scale, for an estimate: ``42 s``, ``10 min``, ``1.5 h``, ``17 h``, ``3 days``
    (two significant digits from an hour up); "—" when missing."""
    v = number(seconds)
    if v is None:
        return MISSING
    if v < 60:
        return f"{round(v)} s"
    if v < 3600:
        return f"{round(v / 60)} min"
    value, unit = (v / 3600, "h") if v < 86400 else (v / 86400, "days")
    text = f"{value:.1f}".removesuffix(".0") if value < 10 else f"{round(value):,}"
    return f"{text} {'day' if text == '1' and unit == 'days' else unit}"


def plural(n: object, word: str, plural: str | None = None) -> str:
    """``1 premise``, ``0 premises``, ``1,000 questions``, ``3 persons``; ``plural`` for irregular words."""
    v = number(n)
    many = plural or f"{word}s"
    if v is None:
        return f"{MISSING} {many}"
    return f"{fmt_count(v)} {word if v == 1 else many}"


def declined_reason(declined: Mapping | str | None) -> str:
    """Why a value is declined, in words, from the numbers :mod:`unqover.measure.sampled` and
    :mod:`unqover.measure.shifts` record (``code``: "few_values_per_cell", "few_groups", "few_groups_compared");
    an older results.json's ``reason`` (a sentence), or the sentence itself, as it is."""
    if isinstance(declined, str):
        return declined
    declined = declined or {}
    code, needed = declined.get("code"), fmt_count(declined.get("needed"))
    if code == "few_values_per_cell":
        return (
            f"{declined.get('name')} is a {declined.get('what')} over cells of only "
            f"{plural(declined.get('smallest'), 'value')} in the full dataset; with "
            f"{fmt_count(declined.get('groups'))} of {plural(declined.get('of'), 'group')} a cell expects "
            f"{fmt(declined.get('expected'), 1)} sampled values, too few for an unbiased estimate (at least "
            f"{needed} are needed)"
        )
    if code == "few_groups":
        groups = number(declined.get("groups"))
        sampled = "was sampled" if groups == 1 else "were sampled"
        return f"only {plural(groups, 'group')} {sampled}; a mean needs at least {needed}"
    if code == "few_groups_compared":
        return f"only {plural(declined.get('groups'), 'group')} to compare; a mean needs at least {needed}"
    return str(declined.get("reason") or "too few groups sampled")


def fmt_declined(declined: Mapping | str | None) -> str:
    """``declined: <reason>; about <n> groups needed`` (without the groups when not known); the reason as
    :func:`declined_reason` words it."""
    text = f"declined: {declined_reason(declined)}"
    needed = number(declined.get("groups_needed")) if isinstance(declined, Mapping) else None
    return text + (f"; about {fmt_count(needed)} groups needed" if needed is not None else "")
