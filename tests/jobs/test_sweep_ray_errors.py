"""`--ray` refused in one line: without the ray extra, or at an address where no cluster answers; and Ray is never
imported by a command that does not ask for it."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from unqover.cli import main
from unqover.jobs.sweep_ray import sweep_ray_address


def test_the_address_comes_from_the_option_then_ray_address_then_auto(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert sweep_ray_address("") == "auto"
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.5:6379")
    assert sweep_ray_address("") == "10.0.0.5:6379"
    assert sweep_ray_address("head:6380") == "head:6380"


def _argv(religion_qa_model, tmp_path, upstream_word_lists_path, *ray) -> list[str]:
    return [
        *("probe", str(religion_qa_model), "--bias", "religion", "--limit", "400", "--quiet"),
        *("--word-lists", str(upstream_word_lists_path), "--output", str(tmp_path / "sweep"), *ray),
    ]


def test_without_the_ray_extra_one_line_names_it(
    religion_qa_model, tmp_path, upstream_word_lists_path, monkeypatch, capsys
):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as it does where ray is not installed
    assert main(_argv(religion_qa_model, tmp_path, upstream_word_lists_path, "--ray", "127.0.0.1:9")) == 2
    assert capsys.readouterr().err == 'unqover: error: --ray needs Ray: pip install "unqover[ray]"\n'


def test_no_cluster_at_the_address_is_refused_at_once(
    religion_qa_model, tmp_path, upstream_word_lists_path, capsys
):
    started = time.monotonic()
    assert main(_argv(religion_qa_model, tmp_path, upstream_word_lists_path, "--ray", "127.0.0.1:9")) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("unqover: error: no Ray cluster answers at 127.0.0.1:9 (")
        and "ray start --head" in err
    )
    assert time.monotonic() - started < 30  # not Ray's own minutes of retries
    assert not (tmp_path / "sweep").exists()  # nothing written before the cluster is joined


@pytest.mark.slow
def test_a_sweep_without_ray_never_imports_it(religion_qa_model, tmp_path, upstream_word_lists_path):
    code = (
        "import sys; from unqover.cli import main; "
        f"code = main({_argv(religion_qa_model, tmp_path, upstream_word_lists_path)!r}); "
        "print(code, 'ray' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.stdout.split()[-2:] == ["0", "False"], done.stderr[-2000:]
