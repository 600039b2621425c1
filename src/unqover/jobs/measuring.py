"""``unqover measure``: a predictions file measured by the probe that wrote it, against its dataset."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from unqover.errors import UnqoverError
from unqover.files import check_writable
from unqover.probes.base import ProbeDefinition, RunOptions
from unqover.probes.result_identity import lm_eval_model, measured_selection
from unqover.results import results_of, write_results


def measure_predictions(
    predictions: Path,
    run: RunOptions,
    *,
    output: Path | None = None,
    bias: str | None = None,
    probe_file: Path | None = None,
    given: Mapping[str, Any] | None = None,
    split: str | None = None,
) -> tuple[ProbeDefinition, Any, Path]:
    """``unqover measure``: the probe that wrote ``predictions`` (its provenance, else ``bias``, else
    ``probe_file``, else the probe whose rows ``run.dataset`` or the recorded dataset holds) measures them against
    their dataset; results.json-like JSON goes to ``output`` (default: PREDICTIONS.bias.json). ``given``: the
    measure options as given (None where not), checked by the probe."""
    from unqover.predictions import read_provenance
    from unqover.probes.registry import get_probe, probe_of, recorded_probe
    from unqover.probes.row_identity import check_rows_of, reader_of, rows_probe_of

    output = output or predictions.with_name(predictions.stem + ".bias.json")
    check_writable(output, folder=False)
    recorded = read_provenance(predictions)
    if run.seed is None:  # a sample's own seed, as `unqover probe --limit N --seed S` measures with S
        seed = (recorded.get("selection") or {}).get("seed")
        run = replace(
            run, seed=seed if isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0 else 0
        )
    named = recorded_probe(recorded)
    if not named and bias is None and probe_file is None:
        # a file that records no probe is its rows' probe's: those of --dataset, else of the dataset it records
        source = run.dataset or (recorded.get("dataset") or {}).get("source")
        reader = reader_of(rows_probe_of(source)) if source else None
        if reader is None:
            raise UnqoverError(
                f"{predictions} does not record which probe scored it: pass --bias NAME, the probe of its "
                "dataset's rows (or --probe FILE.yaml)"
            )
        bias = reader.name
    if probe_file is not None:
        probe = get_probe(probe_file=probe_file)
    else:
        probe = probe_of(recorded, default=bias)
        if bias is not None and probe.name != bias:
            raise UnqoverError(
                f"{predictions} was written by the {probe.name} probe, not {bias}: leave out --bias {bias}"
            )
    # the rows must be the probe's: a bare file's --bias is checked against them, a run's against --dataset
    fix = f"give --dataset a dataset of {probe.name} rows" if named else None
    check_rows_of(probe, run.dataset or (recorded.get("dataset") or {}).get("source"), fix)
    options = probe.results.check_measure_options(given or {}) | ({"split": split} if split else {})
    result, provenance = probe.results.measure_file(predictions, run, **options)
    # the probe that measured, whatever the file recorded (a file without provenance: --bias), and the file
    # (`unqover compare` reads both from the provenance)
    provenance = {**provenance, "probe": probe.name, "predictions": str(predictions.resolve())}
    measured = result.to_dict()
    provenance["selection"] = measured_selection(probe, measured, provenance.get("selection"))
    if not isinstance(provenance.get("model"), Mapping) and isinstance(provenance.get("lm_eval"), Mapping):
        model = lm_eval_model(provenance["lm_eval"])  # logged samples: the model lm-eval's results file names
        if model is not None:
            provenance["model"] = model
    write_results(output, results_of(probe.name, provenance, measured))
    return probe, result, output
