"""The light core install (``pip install unqover``, no extras): everything but scoring a model works without torch,
transformers and accelerate, and scoring a model is refused in one line naming the extra to install.

Each check runs in a fresh interpreter whose import system cannot see torch, transformers, accelerate, nor the other
extras' packages (a ``sitecustomize`` on PYTHONPATH hides them from every finder, so ``import torch`` raises
ModuleNotFoundError and ``importlib.util.find_spec("torch")`` is None, as in a venv without them). Its inputs
(predictions, results) are made in this process, with the normal environment, and its outputs are compared with
those this process makes from the same inputs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from unqover.cli import main
from unqover.hub.load import load_rows
from unqover.predictions import write_predictions

pytestmark = pytest.mark.slow  # subprocesses

REPO_ROOT = Path(__file__).resolve().parents[2]
METRICS = REPO_ROOT / "metrics"
#: the ``models`` extra, and the packages of the other extras (lm-eval, peft, beecher, space), absent from a light install
HIDDEN = ("torch", "transformers", "accelerate", "lm_eval", "peft", "sklearn", "gradio", "spaces")
MESSAGE = 'scoring models needs torch, transformers and accelerate: pip install "unqover[models]"'

SITECUSTOMIZE = f'''"""Hide the packages a light install lacks from every import finder (written by tests/test_light_install.py)."""
import sys

HIDDEN = {set(HIDDEN)!r}


class Hiding:
    def __init__(self, finder):
        self.finder = finder

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            return None
        find = getattr(self.finder, "find_spec", None)
        return None if find is None else find(name, path, target)

    def find_distributions(self, *args, **kwargs):
        find = getattr(self.finder, "find_distributions", None)
        found = [] if find is None else find(*args, **kwargs)
        return [d for d in found if (d.metadata["Name"] or "").lower().replace("-", "_") not in HIDDEN]

    def __getattr__(self, name):
        return getattr(self.finder, name)


sys.meta_path[:] = [Hiding(finder) for finder in sys.meta_path]
'''

#: appended to every light run: the hidden packages stayed out (nothing imported them some other way)
NONE_LOADED = f"""
import sys as _sys
_loaded = sorted({{m.partition(".")[0] for m in _sys.modules}} & {set(HIDDEN)!r})
assert not _loaded, f"loaded {{_loaded}}"
"""


@pytest.fixture(scope="module")
def hider(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("light-site")
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    return folder


def light(hider: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``python ARGS`` in a fresh interpreter without the hidden packages (offline, as this process)."""
    path = [str(hider), str(REPO_ROOT / "src"), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in path if p)}
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=600, check=False
    )


def light_code(hider: Path, code: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return light(hider, "-c", code + NONE_LOADED, cwd=cwd)


def light_cli(hider: Path, *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``unqover ARGV`` through ``unqover.cli.main`` in a light interpreter."""
    code = (
        f"import sys\nfrom unqover.cli import main\n_rc = main({list(argv)!r})\n{NONE_LOADED}\nsys.exit(_rc)"
    )
    return light(hider, "-c", code, cwd=cwd)


def ok(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def religion(tmp_path_factory, upstream_word_lists_path) -> Path:
    root = tmp_path_factory.mktemp("datasets")
    args = ["build-datasets", "religion", "--word-lists", str(upstream_word_lists_path), "--config", "qa"]
    assert main([*args, "--output", str(root), "--quiet"]) == 0
    return root / "religion"


@pytest.fixture(scope="module")
def runs(religion, tmp_path_factory) -> dict[str, Path]:
    """Two models' random predictions of every religion row and their results (`unqover measure`), made here."""
    folder = tmp_path_factory.mktemp("runs")
    ids = load_rows(religion, "qa", columns=["id"])["id"]
    made = {}
    for seed, name in enumerate(("a", "b"), start=1):
        rng = np.random.default_rng(seed)
        table = pa.table({"id": ids, "score_1": rng.random(len(ids)), "score_2": rng.random(len(ids))})
        predictions = folder / f"{name}.parquet"
        about = {
            "model": {"id": f"org/model-{name}"},
            "dataset": {"source": str(religion), "config": "qa", "split": "test"},
            "probe": "religion",
        }
        write_predictions(predictions, table, about)
        results = folder / f"{name}.bias.json"
        argv = ["measure", str(predictions), "--resamples", "20", "--seed", "1", "--output", str(results)]
        assert main(argv) == 0
        made[name], made[f"{name}.json"] = predictions, results
    return made


def test_the_hidden_packages_cannot_be_imported(hider):
    done = light(
        hider, "-c", "import importlib.util\nassert importlib.util.find_spec('torch') is None\nimport torch"
    )
    assert done.returncode == 1 and "ModuleNotFoundError: No module named 'torch'" in done.stderr
    done = light(hider, "-c", "import importlib.metadata as m\nm.version('transformers')")
    assert "PackageNotFoundError" in done.stderr


def test_help(hider):
    out = ok(light_cli(hider, "--help"))
    assert all(command in out for command in ("build-datasets", "measure", "compare", "sample", "probe"))


def test_build_datasets(hider, religion, upstream_word_lists_path, tmp_path):
    args = ["build-datasets", "religion", "--word-lists", str(upstream_word_lists_path), "--config", "qa"]
    out = ok(light_cli(hider, *args, "--output", str(tmp_path), "--quiet"))
    assert out.startswith(f"{tmp_path / 'religion'}: qa 154,000 rows")
    built = load_rows(tmp_path / "religion", "qa")
    assert built.equals(load_rows(religion, "qa"))  # the rows this environment builds


def test_measure(hider, runs, tmp_path):
    output = tmp_path / "light.json"
    argv = ["measure", str(runs["a"]), "--resamples", "20", "--seed", "1", "--output", str(output)]
    out = ok(light_cli(hider, *argv))
    assert "bias intensity μ" in out and f"Full results: {output}" in out
    full = json.loads(runs["a.json"].read_text())
    got = json.loads(output.read_text())
    assert got["result"] == full["result"] and got["probe"] == full["probe"] == "religion"
    assert got["provenance"]["model"] == {"id": "org/model-a"}


def test_compare(hider, runs, tmp_path, capsys):
    a, b = str(runs["a.json"]), str(runs["b.json"])
    for suffix in (".json", ".md", ".html"):
        ok(light_cli(hider, "compare", a, b, "--output", str(tmp_path / f"light{suffix}")))
        assert main(["compare", a, b, "--output", str(tmp_path / f"full{suffix}")]) == 0
        light_text, full_text = (
            (tmp_path / f"light{suffix}").read_text(),
            (tmp_path / f"full{suffix}").read_text(),
        )
        assert light_text == full_text
    shifts = json.loads((tmp_path / "light.json").read_text())["shifts"]
    assert set(shifts) == {"mu", "eta", "positional_error", "attributive_error", "mean_score"}
    assert (tmp_path / "light.md").read_text().startswith("# UnQover comparison")
    capsys.readouterr()


def test_sample(hider, religion, tmp_path):
    argv = ["sample", str(religion), "--config", "qa", "--groups", "50", "--seed", "3"]
    out = ok(light_cli(hider, *argv, "--output", str(tmp_path / "light.parquet")))
    assert "200 row ids of 50 of 38,500 groups" in out
    assert main([*argv, "--output", str(tmp_path / "full.parquet")]) == 0
    light_ids = pq.read_table(tmp_path / "light.parquet")
    assert light_ids.num_rows == 200 and light_ids.equals(pq.read_table(tmp_path / "full.parquet"))


def test_lm_eval_tasks(hider, religion, tmp_path):
    argv = ["lm-eval-tasks", "--bias", "religion", "--dataset", str(religion), "--groups", "50"]
    out = ok(light_cli(hider, *argv, "--output", str(tmp_path / "light")))
    assert "unqover_religion (154,000 documents) and unqover_religion_sample (200 documents" in out
    assert main([*argv, "--output", str(tmp_path / "full")]) == 0
    written = sorted(p.name for p in (tmp_path / "light").iterdir())
    assert written == sorted(p.name for p in (tmp_path / "full").iterdir())
    assert {"unqover_religion.yaml", "unqover_religion_sample.yaml", "unqover_tasks.py"} <= set(written)
    for name in ("unqover_religion.yaml", "unqover_religion_sample.yaml"):
        assert (tmp_path / "light" / name).read_text() == (tmp_path / "full" / name).read_text()


def test_publish_results_output(hider, runs, tmp_path):
    argv = ["publish-results", str(runs["a.json"]), "--model-repo", "org/model-a"]
    out = ok(light_cli(hider, *argv, "--output", str(tmp_path)))
    mu = tmp_path / ".eval_results" / "unqover_religion_mu.yaml"
    assert f"wrote {mu}" in out
    entry = yaml.safe_load(mu.read_text())[0]
    assert entry["value"] == json.loads(runs["a.json"].read_text())["result"]["mu"]
    assert entry["dataset"] == {"id": "unqover/religion", "task_id": "unqover_religion"}


def test_reports(hider, runs, tmp_path):
    """The HTML and Markdown reports of a run's results, as `unqover probe` writes them beside results.json."""
    code = (
        "import json, sys\nfrom pathlib import Path\nfrom unqover.probes.registry import get_probe\n"
        f"results = json.loads(Path({str(runs['a.json'])!r}).read_text())\n"
        f"for name, text in get_probe('religion').results.reports(results).items():\n"
        f"    (Path({str(tmp_path)!r}) / name).write_text(text)\n"
    )
    ok(light_code(hider, code))
    from unqover.probes.registry import get_probe

    full = get_probe("religion").results.reports(json.loads(runs["a.json"].read_text()))
    assert set(full) == {"report.md", "report.html"}
    for name, text in full.items():
        assert (tmp_path / name).read_text() == text
    assert "μ" in full["report.md"] and full["report.html"].lstrip().lower().startswith("<!doctype html>")


def test_evaluate_modules(hider):
    """Each evaluate module, loaded from its folder as `evaluate.load` loads a Hub module, computes offline."""
    code = f"""
import json
import evaluate
metrics = {str(METRICS)!r}
base = {{"template_id": 1, "attribute": "was a hunter"}}
rows = [
    {{"subject_1": "Gerald", "subject_2": "Jennifer", "polarity": "positive", **base}},
    {{"subject_1": "Jennifer", "subject_2": "Gerald", "polarity": "positive", **base}},
    {{"subject_1": "Gerald", "subject_2": "Jennifer", "polarity": "negated", **base}},
    {{"subject_1": "Jennifer", "subject_2": "Gerald", "polarity": "negated", **base}},
]
unqover = evaluate.load(metrics + "/unqover_bias").compute(
    predictions=[[0.26, 0.73], [0.45, 0.54], [0.35, 0.62], [0.86, 0.12]], references=rows, n_resamples=0
)
nli = evaluate.load(metrics + "/nli_gender_bias").compute(
    predictions=[[0.9, 0.3, 0.5, 0.2], [0.2, 0.6, 0.1, 0.9]],
    references=[{{"occupation_gender": "female", "cluster": "p1"}}, {{"occupation_gender": "male", "cluster": "p2"}}],
    n_resamples=0,
)
people = [
    {{"gender": "female", "race": "African-American", "person": "Ebony", "form": "feels"}},
    {{"gender": "female", "race": "European", "person": "Amanda", "form": "feels"}},
]
eec = evaluate.load(metrics + "/eec_emotion_bias").compute(
    predictions=[["angry", "sad", "glad"], ["glad", "sad", "angry"]],
    references=people,
    n_permutations=0,
    n_bootstrap=0,
)
print(json.dumps({{"unqover": unqover, "nli": nli, "eec": eec}}))
"""
    got = json.loads(ok(light_code(hider, code)).strip().splitlines()[-1])
    gamma = {r["subject"]: r["gamma"] for r in got["unqover"]["gamma"]}
    assert gamma == pytest.approx({"Gerald": 0.1575, "Jennifer": -0.1575})
    assert got["nli"]["neutral_rate"] == pytest.approx(50.0)
    assert got["eec"]["tests"]["race"]["beecher"]["statistic"] == 2.0


@pytest.mark.parametrize(
    "argv",
    [
        ["probe", "org/model", "--bias", "religion"],
        ["probe", "org/model", "--bias", "religion,gender", "--quiet"],
        ["probe", "./no-such-folder", "--probe", "no-such-file.yaml", "--device", "cuda"],
    ],
)
def test_probe_is_refused_in_one_line_naming_the_extra(hider, argv, tmp_path):
    done = light_cli(hider, *argv, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == f"unqover: error: {MESSAGE}\n" and done.stdout == ""
    assert list(tmp_path.iterdir()) == []  # refused before anything was written


def test_probe_help_needs_no_extra(hider):
    assert "--bias" in ok(light_cli(hider, "probe", "--help"))


def test_fine_tuning_is_refused_in_one_line_naming_the_extra(hider, tmp_path):
    done = light(
        hider, str(REPO_ROOT / "scripts" / "finetune_nli.py"), "model", "--source", "mnli", cwd=tmp_path
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"error: {MESSAGE.replace('scoring models', 'fine-tuning a model')}\n"
