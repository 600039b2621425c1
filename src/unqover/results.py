"""The results file: what ``unqover measure`` and ``unqover probe`` write as ``results.json``, ``{"probe",
"provenance", "result"}``, and what every surface reads back (the reports, ``unqover compare``, ``unqover
leaderboard``, ``unqover verify``, the Space). Reading and writing it, splitting it into its result and its
provenance, checking its numbers, the predictions file it names, the dataset, model and selection it records, and
whether two runs' numbers are comparable (different datasets, configs, splits or modes are refused; what cannot be
verified is a warning). The predictions file is :mod:`unqover.predictions`'s."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from unqover.errors import UnqoverError
from unqover.files import write_json_atomic
from unqover.format import fmt, fmt_count, fmt_level, fmt_percent, number

RESULTS_FILE = "results.json"
PREDICTIONS_FILE = "predictions.parquet"


# ---------------------------------------------------------------------------------------------------------------
# reading, writing, splitting


def results_of(probe: str, provenance: Mapping, result: Mapping, extra: Mapping | None = None) -> dict:
    """The results dict of a run: ``{"probe", "provenance", **extra, "result"}`` (``extra``: a probe's own
    top-level fields)."""
    return {"probe": probe, "provenance": provenance, **(extra or {}), "result": result}


def write_results(path: str | os.PathLike, results: Mapping) -> Path:
    """Write a results dict (:func:`results_of`) as JSON, atomically: a crash never leaves half a file."""
    return write_json_atomic(path, results)


def split_results(results: Mapping) -> tuple[dict, dict]:
    """(result, provenance) of a results dict ``{"provenance", "result"}`` or of a bare ``to_dict()``."""
    if not isinstance(results, Mapping):
        raise UnqoverError(f"expected a results dict, got {type(results).__name__}")
    if isinstance(results.get("result"), Mapping):
        result, provenance = results["result"], results.get("provenance") or {}
    elif "mu" in results and "subject_gamma" in results:
        result, provenance = results, {}
    else:
        raise UnqoverError(
            "not an UnQover results dict: expected {'provenance': ..., 'result': ...} as written by "
            f"`unqover measure` (keys found: {sorted(results)[:8]})"
        )
    if not isinstance(provenance, Mapping):
        provenance = {}
    return dict(result), dict(provenance)


def sample_of(result: Mapping) -> dict | None:
    """The quick run's ``sample`` (groups, of, fraction, seed, design, ...), or None for a full run."""
    sample = result.get("sample")
    if (
        not isinstance(sample, Mapping)
        or number(sample.get("groups")) is None
        or number(sample.get("of")) is None
    ):
        return None
    return dict(sample)


def load_results(path: str | os.PathLike) -> dict:
    """The results dict of a run folder (its ``results.json``) or of a results JSON file, checked for its shape."""
    path = Path(path)
    if path.is_dir():
        folder, path = path, path / RESULTS_FILE
        if not path.is_file():
            others = sorted(p.name for p in folder.glob("*.json"))
            hint = f"; JSON files there: {', '.join(others[:5])}" if others else ""
            raise UnqoverError(f"no {RESULTS_FILE} in the run folder {folder}{hint}")
    elif not path.exists():
        raise UnqoverError(
            f"{path} not found: pass a run folder holding {RESULTS_FILE} or a results JSON file"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise UnqoverError(f"cannot read {path}: {err}") from err
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise UnqoverError(
            f"{path} is not valid JSON ({err.msg} at line {err.lineno}, column {err.colno})"
        ) from err
    try:
        result, provenance = split_results(data)
    except UnqoverError as err:
        raise UnqoverError(f"{path}: {err}") from err
    check_result_numbers(result, str(path))
    loaded = {"provenance": provenance, "result": result}
    # the probe that wrote it, which ``unqover.jobs.compare`` checks against the registry
    if isinstance(data, Mapping) and "probe" in data:
        if not isinstance(data["probe"], str):
            raise UnqoverError(f"{path}: probe is {json.dumps(data['probe'])}, not a probe's name")
        loaded["probe"] = data["probe"]
    return loaded


# ---------------------------------------------------------------------------------------------------------------
# numbers: a hand-edited "0.12" is no number


#: top-level values of a result that are numbers (or null) wherever a probe writes them
RESULT_NUMBERS = (
    "mu", "eta", "subject_mu", "subject_eta", "positional_error", "attributive_error", "mean_score", "num_groups",
)  # fmt: skip
#: tables of records, and the fields of a record that are numbers (or null); ``interval`` fields are intervals
RESULT_TABLES = ("gamma", "cluster_gamma", "subject_gamma", "most_biased")
RECORD_NUMBERS = ("gamma", "eta", "count", "rank", "gamma_low", "gamma_high", "eta_low", "eta_high")


def _is_number(value: object) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


def _is_interval(value: object) -> bool:
    return value is None or (
        isinstance(value, list | tuple) and len(value) == 2 and all(_is_number(v) for v in value)
    )


def _not_a(what: str, where: str, name: str, value: object) -> UnqoverError:
    return UnqoverError(
        f"{where}: {name} is {json.dumps(value)}, not {what}; restore what `unqover measure` wrote or measure "
        "the predictions again"
    )


def check_numbers(numbers: Mapping[str, tuple[object, object]], where: str) -> None:
    """Refuse, in one line, the first of ``numbers`` (name -> (value, interval), a probe's headline) whose value
    is neither a number nor null or whose interval is not null or [low, high] of such."""
    for name, (value, interval) in numbers.items():
        if not _is_number(value):
            raise _not_a("a number or null", where, name, value)
        if not _is_interval(interval):
            raise _not_a("an interval [low, high] or null", where, f"the interval of {name}", interval)


def check_result_numbers(result: Mapping, where: str) -> None:
    """The numbers every probe's result holds in the same places: the headline values of :data:`RESULT_NUMBERS`,
    ``intervals``, and the numbers and intervals of the records of :data:`RESULT_TABLES`."""
    check_numbers({name: (result[name], None) for name in RESULT_NUMBERS if name in result}, where)
    intervals = result.get("intervals")
    if intervals is not None and not isinstance(intervals, Mapping):
        raise _not_a("a mapping of intervals", where, "intervals", intervals)
    for name, interval in (intervals or {}).items():
        if not _is_interval(interval):
            raise _not_a("an interval [low, high] or null", where, f"intervals.{name}", interval)
    for table in RESULT_TABLES:
        records = result.get(table)
        if records is None:
            continue
        if not isinstance(records, list) or not all(isinstance(r, Mapping) for r in records):
            raise _not_a("a list of records", where, table, records)
        for i, record in enumerate(records):
            check_numbers(
                {
                    f"{table}[{i}].{k}": (record[k], record.get("interval"))
                    for k in RECORD_NUMBERS
                    if k in record
                },
                where,
            )


def predictions_of(path: str | os.PathLike, provenance: Mapping) -> Path:
    """The predictions file of a run: the one ``unqover measure`` recorded, else the run folder's
    ``predictions.parquet``; an error saying why when there is none."""
    path = Path(path)
    recorded = provenance.get("predictions")
    if isinstance(recorded, str) and recorded:
        if Path(recorded).is_file():
            return Path(recorded)
        raise UnqoverError(f"the predictions file {recorded} that {path.name} records is not there")
    folder = path if path.is_dir() else path.parent if path.name == RESULTS_FILE else None
    if folder is not None:
        if (folder / PREDICTIONS_FILE).is_file():
            return folder / PREDICTIONS_FILE
        raise UnqoverError(f"the run folder {folder} has no {PREDICTIONS_FILE}")
    raise UnqoverError(
        f"{path.name} does not record its predictions file (`unqover measure` records it since this version: "
        "measure the predictions again)"
    )


# ---------------------------------------------------------------------------------------------------------------
# checking


def dataset_of(provenance: Mapping) -> dict:
    dataset = provenance.get("dataset") if isinstance(provenance.get("dataset"), Mapping) else {}
    out = {
        k: (None if dataset.get(k) in (None, "") else str(dataset[k])) for k in ("source", "config", "split")
    }
    out["fingerprint"] = dataset.get("fingerprint") or provenance.get("fingerprint")
    return out


def _same_source(a: str, b: str) -> bool:
    def norm(text: str) -> str:
        local = Path(text).expanduser()
        return str(local.resolve()) if local.exists() else os.path.normpath(text.rstrip("/\\"))

    return a == b or norm(a) == norm(b)


def model_of(provenance: Mapping) -> str | None:
    model = provenance.get("model")
    if isinstance(model, Mapping):
        name = model.get("id") or model.get("name")
        return None if not name else f"{name}" + (f" @ {model['revision']}" if model.get("revision") else "")
    return None if model is None else str(model)


def _quoted(text: object, most: int = 40) -> str:
    """``"text"`` shortened to ``most`` characters (a long system prompt), every character that prints as nothing
    or reorders the text (a line break, U+202E) escaped."""
    shown = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in str(text))
    return f'"{shown[: most - 1]}…"' if len(shown) > most else f'"{shown}"'


def _settings(provenance: Mapping, result: Mapping) -> dict[str, str]:
    """Each setting of a run that changes its numbers, in words: the model's file, revision and adapter beyond
    its name, the weights' dtype, the causal prompt (system prompt, chat template), the scoring method and mode,
    and the rows kept (a quick run's budget and seed)."""
    model = provenance.get("model") if isinstance(provenance.get("model"), Mapping) else {}
    gguf = model.get("gguf") if isinstance(model.get("gguf"), Mapping) else {}
    adapter = model.get("adapter") if isinstance(model.get("adapter"), Mapping) else {}
    prompt = provenance.get("prompt") if isinstance(provenance.get("prompt"), Mapping) else {}
    template = prompt.get("chat_template")
    if isinstance(template, Mapping):
        template = f"{Path(str(template.get('file'))).name} ({str(template.get('sha256'))[:12]})"
    dtype = provenance.get("dtype") or model.get("dtype")
    system = prompt.get("system_prompt")
    selection = provenance.get("selection") if isinstance(provenance.get("selection"), Mapping) else {}
    quick = any(number(selection.get(k)) is not None for k in ("limit", "sample", "precision", "groups"))
    return {
        "gguf": f"{gguf['file']} (sha256 {str(gguf.get('sha256'))[:12]})" if gguf.get("file") else "",
        "adapter": f"adapter {model_of({'model': adapter}) or adapter}" if adapter else "",
        "dtype": f"dtype {dtype}" if dtype else "",
        "system_prompt": "no system prompt" if system is None else f"system prompt {_quoted(system)}",
        "chat_template": f"chat template {template}" if template else "",
        "scoring": f"{provenance['scoring']} scoring" if provenance.get("scoring") else "",
        "mode": f"{result['mode']} mode" if result.get("mode") else "",
        "selection": selection_text(selection) if quick else "all rows",  # a full run's seed draws nothing
    }


def run_settings(runs: Iterable[Mapping]) -> list[str]:
    """What tells runs of one model apart: for each run (a results dict), its settings that change the numbers
    (:func:`_settings`) where the runs differ in them, in words (``dtype bfloat16``, ``system prompt "Be
    fair."``); "" for each run when they differ in none. A label beside each run's model."""
    settings = [_settings(*reversed(split_results(run))) for run in runs]
    differing = [key for key in (settings[0] if settings else {}) if len({s[key] for s in settings}) > 1]
    return [", ".join(s[key] for key in differing if s[key]) for s in settings]


def check_comparable(ra: Mapping, pa: Mapping, rb: Mapping, pb: Mapping, names: tuple[str, str]) -> list[str]:
    """Raise when the runs measured different things; return warnings for what cannot be verified."""
    warnings: list[str] = []
    mode_a, mode_b = ra.get("mode", "default"), rb.get("mode", "default")
    if mode_a != mode_b:
        raise UnqoverError(
            f"{names[0]} was measured in {mode_a} mode and {names[1]} in {mode_b} mode: re-measure one of them "
            f"with `unqover measure --mode {mode_a}` to compare"
        )
    da, db = dataset_of(pa), dataset_of(pb)
    for key in ("config", "split"):
        if da[key] and db[key] and da[key] != db[key]:
            raise UnqoverError(
                f"the runs measured different dataset {key}s: {names[0]} {da[key]!r}, {names[1]} {db[key]!r}"
            )
    same_fingerprint = bool(
        da["fingerprint"] and db["fingerprint"] and da["fingerprint"] == db["fingerprint"]
    )
    if da["source"] and db["source"] and not _same_source(da["source"], db["source"]):
        if not same_fingerprint:
            raise UnqoverError(
                f"the runs measured different datasets: {names[0]} {da['source']!r}, {names[1]} {db['source']!r}; "
                "their numbers are not comparable"
            )
        warnings.append(
            f"the dataset sources differ ({da['source']}, {db['source']}) but their fingerprints match"
        )
    elif (
        da["fingerprint"]
        and db["fingerprint"]
        and not same_fingerprint
        and pa.get("selection") != pb.get("selection")
    ):
        warnings.append(
            f"the runs kept different rows of the same dataset (selections: {selection_text(pa.get('selection'))}; "
            f"{selection_text(pb.get('selection'))}): quick-run numbers are estimates of the full dataset, with "
            "intervals"
        )
    elif da["fingerprint"] and db["fingerprint"] and not same_fingerprint:
        warnings.append(
            f"same dataset source, different fingerprints ({da['fingerprint']}, {db['fingerprint']}): the data "
            "changed between the runs"
        )
    for key in ("source", "config"):
        missing = [n for n, d in zip(names, (da, db), strict=True) if not d[key]]
        if missing:
            warnings.append(
                f"the dataset {key} of {' and '.join(missing)} is not recorded: cannot check it matches"
            )
    if ra.get("mu_unit") != rb.get("mu_unit"):
        warnings.append(
            f"μ and η average over different units ({ra.get('mu_unit')}, {rb.get('mu_unit')}): compare the "
            "per-subject values"
        )
    for key, what in (("selection", "row selections (limit/sample)"), ("scoring", "scoring methods")):
        if pa.get(key) != pb.get(key) and pa.get(key) is not None and pb.get(key) is not None:
            texts = [selection_text(p.get(key)) if key == "selection" else str(p.get(key)) for p in (pa, pb)]
            warnings.append(f"the runs used different {what}: {texts[0]}; {texts[1]}")
    ca = number((ra.get("bootstrap") or {}).get("confidence"))
    cb = number((rb.get("bootstrap") or {}).get("confidence"))
    if ca is not None and cb is not None and ca != cb:
        warnings.append(f"the intervals have different confidence levels ({fmt_level(ca)}, {fmt_level(cb)})")
    return warnings


def selection_text(selection: object) -> str:
    """A run's row selection in words: ``2,000 groups, seed 0``, ``a 20.0% sample, seed 3``, ``all rows``."""
    if not isinstance(selection, Mapping):
        return "all rows" if selection is None else str(selection)
    parts = []
    if number(selection.get("limit")) is not None:
        parts.append(f"{fmt_count(selection['limit'])} groups")
    if number(selection.get("sample")) is not None:
        parts.append(f"a {fmt_percent(selection['sample'])} sample")
    if number(selection.get("precision")) is not None:
        parts.append(f"precision target {fmt(selection['precision'])}")
    if number(selection.get("groups")) is not None:
        of = number(selection.get("of"))
        parts.append(
            f"{fmt_count(selection['groups'])}"
            + (f" of {fmt_count(of)}" if of is not None else "")
            + " groups"
        )
    if isinstance(selection.get("stopped"), str):
        parts.append(f"stopped: {selection['stopped']}")
    if number(selection.get("seed")) is not None:
        parts.append(f"seed {fmt_count(selection['seed'])}")
    return ", ".join(parts) or "all rows"


# ---------------------------------------------------------------------------------------------------------------
# a result's records


def attribute_key(record: Mapping) -> tuple[str, str | None]:
    """The identity of an attribute: its text and, when recorded, its slot type (nationality has two kinds)."""
    kind = record.get("attribute_type")
    return str(record.get("attribute")), (None if kind is None else str(kind))


def interval_of(record: Mapping) -> tuple[float, float] | None:
    """(gamma_low, gamma_high) of a record when both are present."""
    low, high = number(record.get("gamma_low")), number(record.get("gamma_high"))
    return None if low is None or high is None else (low, high)


def attribute_labels(keys: Iterable[tuple[str, str | None]]) -> dict[tuple[str, str | None], str]:
    """Display labels: the attribute text, with its type in brackets only where the text alone is ambiguous."""
    keys = list(dict.fromkeys(keys))
    kinds: dict[str, set[str]] = {}
    for text, kind in keys:
        kinds.setdefault(text, set())
        if kind is not None:
            kinds[text].add(kind)
    return {
        key: f"{key[0]} [{key[1]}]" if key[1] is not None and len(kinds[key[0]]) > 1 else key[0]
        for key in keys
    }
