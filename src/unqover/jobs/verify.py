"""A run's numbers checked against what it claims, and a run told apart from another by what it holds.

Every surface that ranks, compares or publishes runs (``unqover leaderboard``, a sweep's leaderboards, ``unqover
compare``, ``unqover publish-results``, the Space's tabs) shows a run's headline numbers only after
:func:`verify_run` has measured its predictions again with the probe that wrote it, on the rows its results
record and with the options they record (:meth:`~unqover.probes.base.ProbeDefinition.recorded_measure`): a number
edited by hand (a headline value or interval, and every other number the probe checks: an UnQover run's mean score,
γ tables, groups and sample, :meth:`~unqover.probes.base.ProbeDefinition.checked_result`), or a results file copied
beside another run's predictions, is refused in one line naming both values. The measures are deterministic (seeded), so an honest run gives its numbers again exactly.

A run's identity (:func:`run_identity`) is its model as its predictions record it (by the SHA-256 of its weights
where recorded: :func:`unqover.scoring.run_record.model_key`) and a fingerprint of its predictions' contents (their
columns, not their path or metadata): a copy of a run folder, a folder of links to one, or a run of the same model
file under another name, is the same run (:func:`check_distinct`).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from unqover.errors import NotAtHand, UnqoverError
from unqover.format import fmt, fmt_interval, fmt_level
from unqover.probes.base import ProbeDefinition
from unqover.results import model_of, predictions_of, split_results
from unqover.scoring.run_record import model_key

__all__ = ["NumbersDiffer", "RunIdentity", "check_distinct", "run_identity", "verify_found", "verify_run"]

#: two numbers agree when they differ by at most this, relative to the larger (the same seeded measure gives the
#: same numbers; JSON keeps every digit of a float)
TOLERANCE = 1e-9


class NumbersDiffer(UnqoverError):
    """A run's results record a number, or a model, that its predictions do not give."""


@dataclass(frozen=True)
class RunIdentity:
    """What a run is: the model its predictions record (None: none recorded) and its predictions' fingerprint."""

    model: str | None
    predictions: str


def predictions_fingerprint(path: Path) -> str:
    """BLAKE2b of a predictions file's contents: each column's name and values, in order (Parquet), or the
    file's bytes (lm-eval's logged samples); the provenance kept in the file's metadata is left out."""
    digest = hashlib.blake2b(digest_size=16)
    if path.suffix != ".parquet":
        digest.update(path.read_bytes())
        return digest.hexdigest()
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    for name in table.column_names:
        column = table[name].combine_chunks()
        digest.update(name.encode() + b"\0" + str(column.type).encode() + b"\0")
        numeric = pa.types.is_integer(column.type) or pa.types.is_floating(column.type)
        if numeric and column.null_count == 0:
            digest.update(column.to_numpy(zero_copy_only=False).tobytes())
        else:
            digest.update("\n".join(map(str, column.to_pylist())).encode())
    return digest.hexdigest()


def run_identity(results: Mapping, predictions: Path) -> RunIdentity:
    """A run's identity: the model its predictions record (else its results'), by the SHA-256 of its weights where
    recorded (the same bytes under another file name are one model), and its predictions' fingerprint."""
    from unqover.predictions import read_provenance

    recorded = read_provenance(predictions), split_results(results)[1]
    model = next(filter(None, (model_key(p.get("model")) for p in recorded)), None)
    model = model or model_of(recorded[0]) or model_of(recorded[1])
    return RunIdentity(model, predictions_fingerprint(predictions))


def check_distinct(identities: Sequence[RunIdentity], names: Sequence[str]) -> None:
    """Refuse two runs that are one: the same model and the same predictions (a copied or linked run folder)."""
    for k, identity in enumerate(identities):
        if identity in identities[:k]:
            first = names[identities.index(identity)]
            raise UnqoverError(
                f"{names[k]} is the same run as {first} (the same model and predictions): give each run once"
            )


def _shown(found: float, recorded: float) -> tuple[str, str]:
    """Both numbers with as many digits as it takes to tell them apart."""
    for digits in (4, 6, 9, 12):
        texts = fmt(found, digits), fmt(recorded, digits)
        if texts[0] != texts[1]:
            return texts
    return repr(float(found)), repr(float(recorded))


def _differ(a: object, b: object) -> bool:
    """Whether two recorded numbers (or None) differ beyond :data:`TOLERANCE`."""
    if a is None or b is None:
        return (a is None) != (b is None)
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) != math.isnan(b)
    return abs(a - b) > TOLERANCE * max(1.0, abs(a), abs(b))


def _interval_differs(a: object, b: object) -> bool:
    pair_a = list(a) if isinstance(a, list | tuple) else [None, None]
    pair_b = list(b) if isinstance(b, list | tuple) else [None, None]
    return any(_differ(x, y) for x, y in zip(pair_a, pair_b, strict=True))


def check_headline(
    probe: ProbeDefinition, recorded: Mapping, measured: Mapping, name: str, level: object = None
) -> None:
    """Refuse, in one line naming both, the first headline value or interval of ``recorded`` (a run's results)
    that ``measured`` (its predictions measured again) does not give; ``level``: the confidence the results
    record, which the predictions were measured at again (an edited level changes every interval)."""
    found = probe.headline(measured)
    for key, (value, interval) in probe.headline(recorded).items():
        again, again_interval = found.get(key, (None, None))
        if _differ(again, value):
            if again is None or value is None:
                said = (
                    "no value" if again is None else fmt(again),
                    "no value" if value is None else fmt(value),
                )
            else:
                said = _shown(again, value)
            raise NumbersDiffer(
                f"the predictions of {name} give {key} {said[0]}, but its results say {said[1]}"
            )
        if _interval_differs(again_interval, interval):
            at = f" at the {fmt_level(level)} level its results record" if fmt_level(level) else ""
            raise NumbersDiffer(
                f"the predictions of {name} give the interval of {key} {fmt_interval(again_interval, 6)}{at}, but "
                f"its results say {fmt_interval(interval, 6)}"
            )


#: the fields that tell a record of a result's tables apart (a subject, a cluster, an attribute and its type)
_RECORD_KEYS = ("subject", "cluster", "attribute", "attribute_type")


def _record_label(record: object, index: int) -> str:
    """``[Sikh, evil]``: a table record by its subject (or cluster) and attribute, else by its place."""
    named = [
        str(record[k]) for k in _RECORD_KEYS if isinstance(record, Mapping) and record.get(k) is not None
    ]
    return f"[{', '.join(named)}]" if named else f"[{index}]"


def _first_difference(recorded: object, measured: object, label: str) -> tuple[str, object, object] | None:
    """The first place (a dotted label) where ``recorded`` and ``measured`` differ beyond :data:`TOLERANCE`, with
    both values there (None: the place is missing); None when they agree."""
    if isinstance(recorded, Mapping) and isinstance(measured, Mapping):
        for key in dict.fromkeys([*recorded, *measured]):
            where = f"{label}.{key}" if label else str(key)
            if key not in recorded or key not in measured:
                return where, recorded.get(key), measured.get(key)
            found = _first_difference(recorded[key], measured[key], where)
            if found:
                return found
        return None
    if isinstance(recorded, list | tuple) and isinstance(measured, list | tuple):
        if len(recorded) != len(measured):
            return f"{label} (its length)", len(recorded), len(measured)
        for k, (a, b) in enumerate(zip(recorded, measured, strict=True)):
            found = _first_difference(a, b, label + _record_label(a, k))
            if found:
                return found
        return None
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (recorded, measured))
    if _differ(recorded, measured) if numbers else recorded != measured:
        return label, recorded, measured
    return None


def check_result(probe: ProbeDefinition, recorded: Mapping, measured: Mapping, name: str) -> None:
    """Refuse, in one line naming the place and both values, the first number (or word) of a run's result beyond
    its headline (:meth:`~unqover.probes.base.ProbeDefinition.checked_result`: a mean score, a γ(x), the groups
    measured, ...) that its predictions measured again do not give."""
    found = _first_difference(probe.checked_result(recorded), probe.checked_result(measured), "")
    if found is None:
        return
    where, said, again = found

    def text(value: object) -> str:
        if value is None:
            return "no value"
        if isinstance(value, int | float) and not isinstance(value, bool):
            return fmt(value) if isinstance(value, float) else f"{value:,}"
        if isinstance(value, Mapping) and {"groups", "of"} <= value.keys():  # a quick run's sample
            return f"{text(value['groups'])} of {text(value['of'])} groups"
        return repr(value) if isinstance(value, str | bool) else "another value"

    if all(isinstance(v, float) for v in (said, again)):
        shown = _shown(again, said)
    else:
        shown = text(again), text(said)
    raise NumbersDiffer(f"the predictions of {name} give {where} {shown[0]}, but its results say {shown[1]}")


def check_scored_model(results: Mapping, predictions: Path, name: str) -> None:
    """Refuse results that name another model than the one their predictions record (where both record one)."""
    from unqover.predictions import read_provenance

    scored = model_of(read_provenance(predictions))
    claimed = model_of(split_results(results)[1])
    if scored and claimed and scored != claimed:
        raise NumbersDiffer(
            f"the results of {name} name the model {claimed}, but its predictions were scored by {scored}"
        )


def verify_run(
    probe: ProbeDefinition, results: Mapping, path: str | Path, name: str, *, results_rows: bool = True
) -> RunIdentity:
    """Check a run's recorded numbers against its predictions, and give its identity: its predictions (the file
    its results record, else its run folder's) measured again by ``probe`` with the options its results record
    must give every headline value and interval they record (and the rest of the probe's ``checked_result``), and
    be scored by the model they name. The rows are the dataset the results record (``results_rows``: the rows a leaderboard or a comparison reads, the Space's
    own), else the one the predictions record. Raises :class:`UnqoverError` naming both values where they
    differ, or saying why the run cannot be checked (no predictions, a probe that measures no predictions
    file)."""
    if not probe.measures_files:
        raise UnqoverError(
            f"{name}: the {probe.name} probe cannot measure its predictions again, so its numbers cannot be checked"
        )
    result, provenance = split_results(dict(results))
    predictions = predictions_of(path, provenance)
    check_scored_model(results, predictions, name)
    run, options = probe.recorded_measure(result)
    dataset = provenance.get("dataset") if isinstance(provenance.get("dataset"), Mapping) else None
    dataset = dataset if results_rows else None
    try:
        measured, _ = probe.measure_file(predictions, run, dataset=dataset, **options)
    except (ValueError, KeyError) as err:
        raise UnqoverError(f"cannot measure the predictions of {name} again: {err}") from err
    again = {"result": measured.to_dict(), "provenance": provenance}
    check_headline(
        probe, {"result": result, "provenance": provenance}, again, name, options.get("confidence")
    )
    check_result(probe, result, again["result"], name)
    return run_identity(results, predictions)


def verify_found(probe: ProbeDefinition, results: Mapping, path: str | Path, name: str) -> RunIdentity | None:
    """:func:`verify_run` where it can be made; None (nothing checked) where the run's predictions cannot be
    found or measured again (a results file alone; predictions of other rows than the ones read: ``unqover
    compare`` then sets the numbers side by side without intervals, as recorded). Numbers or a model the
    predictions contradict are refused (:class:`NumbersDiffer`)."""
    if not probe.measures_files:
        return None
    try:
        return verify_run(probe, results, path, name)
    except (NumbersDiffer, NotAtHand):
        raise
    except UnqoverError:
        return None
