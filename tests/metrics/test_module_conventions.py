"""The three `evaluate` modules follow evaluate's conventions, and their cards' Python runs as written.

evaluate's own check of a module is `tests/test_metric_common.py` of its repository (`LocalModuleTest.test_load`):
from a working directory holding `metrics/<module>/`, it loads each module with evaluate's loader, refuses a
`_compute` taking `**kwargs`, and runs the module's docstring examples as doctests with `evaluate.load(name)`
pointed at `metrics/<name>`, so the examples load a module by its bare name, as evaluate's template writes them.

That file is not in evaluate's wheel or sdist (the 0.4.6 sdist holds `src/` only), and its code is not copied into
this project. So:

- `test_evaluate_common_module_test` runs the file itself, unmodified, from a copy of evaluate's tests at the
  release the project pins: `UNQOVER_EVALUATE_REPO` if set (a `git clone -b v0.4.6` of huggingface/evaluate),
  else `../shared/peer/evaluate-0.4.6` beside the repository (evaluate's `tests/` and its `exact_match` module,
  unmodified). It runs in a subprocess whose working directory holds `metrics/` with links to our three modules
  and to evaluate's own `exact_match`, the control: the same test passes on a module of evaluate's. Where neither
  copy exists it fails under CI (`CI=true`) and skips elsewhere, saying why.
- `test_docstring_examples_run_as_evaluate_runs_them` makes the same checks in every run, with evaluate's own
  loader (`evaluation_module_factory`, `import_main_class`) and `doctest.testmod`. Instead of patching
  `evaluate.load`, it runs the doctests from `metrics/`, where evaluate itself resolves a bare name to the folder of
  that name.

The cards' Python blocks run in order in one namespace, as a reader would paste them, from a directory where
`unqover/<module>` is our module folder: evaluate resolves the Hub id `unqover/<module>` to that local folder before
it would ask the Hub. Blocks written as `>>>` sessions run as doctests, so their printed results are checked too.
"""

import doctest
import importlib
import inspect
import io
import os
import re
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import evaluate
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
METRICS = REPO / "metrics"
MODULES = ("unqover_bias", "nli_gender_bias", "eec_emotion_bias")
PROJECT_CODEBASE = "https://github.com/unqover/unqover"
#: evaluate v0.4.6's tests and its exact_match module, unmodified, kept beside the repository for a run offline
EVALUATE_PEER = REPO.parent / "shared" / "peer" / "evaluate-0.4.6"
COMMON_TEST = Path("tests", "test_metric_common.py")
CONTROL = Path("metrics", "exact_match")
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)
# evaluate's module template (templates/{{ cookiecutter.module_slug }}/README.md), in its order; "Metric" is
# "Measurement" for a measurement.
TEMPLATE_SECTIONS = (
    "## Measurement description",
    "## How to use",
    "### Inputs",
    "### Output values",
    "### Examples",
    "## Limitations and bias",
    "## Citation",
    "## Further references",
)


def test_all_modules_are_covered():
    assert sorted(path.name for path in METRICS.iterdir() if path.is_dir()) == sorted(MODULES)


def evaluate_tests_copy() -> Path:
    """evaluate v0.4.6's repository (or the peer copy of its tests): ``UNQOVER_EVALUATE_REPO``, else
    :data:`EVALUATE_PEER`. Missing, the test fails under CI (``CI=true``) and skips elsewhere, saying why."""
    named = os.environ.get("UNQOVER_EVALUATE_REPO")
    checkout = Path(named) if named else EVALUATE_PEER
    if (checkout / COMMON_TEST).is_file() and (checkout / CONTROL).is_dir():
        return checkout.resolve()
    where = (
        f"UNQOVER_EVALUATE_REPO={named}" if named else "../shared/peer/evaluate-0.4.6 (beside the repository)"
    )
    message = (
        f"evaluate v0.4.6's {COMMON_TEST} and {CONTROL}/ are not in {where}: set UNQOVER_EVALUATE_REPO to a "
        "clone of huggingface/evaluate at v0.4.6 (the file is not in evaluate's wheel or sdist)"
    )
    if named or os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.mark.slow
def test_evaluate_common_module_test(tmp_path):
    """evaluate's `tests/test_metric_common.py` (v0.4.6), unmodified, passes on the three modules and on
    evaluate's own `exact_match` (the control)."""
    checkout = evaluate_tests_copy()
    common = checkout / COMMON_TEST
    (tmp_path / "metrics").mkdir()
    for name in MODULES:
        (tmp_path / "metrics" / name).symlink_to(METRICS / name, target_is_directory=True)
    (tmp_path / "metrics" / "exact_match").symlink_to(checkout / CONTROL, target_is_directory=True)
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "-rA",
            str(common),
            "-k",
            "LocalModuleTest",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    passed = [line for line in done.stdout.splitlines() if line.startswith("PASSED")]
    for name in (*MODULES, "exact_match"):
        assert any(line.endswith(f"::LocalModuleTest::test_load_metric_{name}") for line in passed), (
            done.stdout
        )


@pytest.mark.parametrize(
    ("ci", "named", "outcome"),
    [
        ("true", False, pytest.fail.Exception),
        ("", False, pytest.skip.Exception),
        ("", True, pytest.fail.Exception),  # a copy the user named must be there
    ],
)
def test_a_missing_copy_of_evaluates_tests_fails_under_ci(ci, named, outcome, tmp_path, monkeypatch):
    monkeypatch.setattr(f"{__name__}.EVALUATE_PEER", tmp_path / "absent")
    monkeypatch.setenv("CI", ci)
    if named:
        monkeypatch.setenv("UNQOVER_EVALUATE_REPO", str(tmp_path / "evaluate"))
    else:
        monkeypatch.delenv("UNQOVER_EVALUATE_REPO", raising=False)
    where = f"UNQOVER_EVALUATE_REPO={tmp_path / 'evaluate'}" if named else "../shared/peer/evaluate-0.4.6"
    with pytest.raises(outcome, match=re.escape(f"metrics/exact_match/ are not in {where}")):
        evaluate_tests_copy()


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run_as_evaluate_runs_them(name, monkeypatch):
    monkeypatch.chdir(METRICS)  # evaluate.load("<name>") resolves to ./<name>/<name>.py
    factory = evaluate.loading.evaluation_module_factory(name, module_type="measurement")
    module = importlib.import_module(factory.module_path)
    main_class = evaluate.loading.import_main_class(module.__name__)
    parameters = inspect.signature(main_class._compute).parameters.values()
    assert all(p.kind != p.VAR_KEYWORD for p in parameters), "evaluate refuses a _compute with **kwargs"
    assert '.load("unqover/' not in inspect.getsource(module), (
        "docstring examples load the module by its bare name"
    )
    try:
        results = doctest.testmod(module, raise_on_error=True)
    except doctest.UnexpectedException as error:
        raise error.exc_info[1] from None  # the error the example raised, as evaluate's test re-raises it
    assert results.failed == 0
    assert results.attempted > 1


@pytest.mark.parametrize("name", MODULES)
def test_info_has_license_and_codebase(name):
    module = evaluate.load(str(METRICS / name))
    front_matter = yaml.safe_load((METRICS / name / "README.md").read_text(encoding="utf-8").split("---")[1])
    assert module.info.license == front_matter["license"]
    assert module.info.codebase_urls[0] == PROJECT_CODEBASE
    assert module.info.homepage and module.info.reference_urls


def _run_block(block: str, where: str, namespace: dict) -> None:
    if not any(line.startswith(">>> ") for line in block.splitlines()):
        exec(compile(block, where, "exec"), namespace)
        return
    test = doctest.DocTestParser().get_doctest(block, namespace, where, where, 0)
    runner = doctest.DocTestRunner()
    report = io.StringIO()
    with redirect_stdout(report):
        results = runner.run(test, out=report.write, clear_globs=False)
    assert results.failed == 0, report.getvalue()
    namespace.update(test.globs)


@pytest.mark.parametrize("name", MODULES)
def test_card_python_runs_as_written(name, tmp_path, monkeypatch):
    (tmp_path / "unqover").mkdir()
    (tmp_path / "unqover" / name).symlink_to(METRICS / name, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    card = (METRICS / name / "README.md").read_text(encoding="utf-8")
    blocks = list(PYTHON_BLOCK.finditer(card))
    assert len(blocks) >= 3
    assert sum(">>> " in block.group(1) for block in blocks) >= 1, (
        "the Examples section shows checked results"
    )
    namespace = {"__name__": f"card_{name}"}
    for block in blocks:
        line = card.count("\n", 0, block.start()) + 2
        _run_block(block.group(1), f"metrics/{name}/README.md:{line}", namespace)


@pytest.mark.parametrize("name", MODULES)
def test_card_has_the_template_sections_in_order(name):
    headings = [
        line.strip()
        for line in (METRICS / name / "README.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("##")
    ]
    positions = [headings.index(section) for section in TEMPLATE_SECTIONS]
    assert positions == sorted(positions), headings
