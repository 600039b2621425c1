"""Every report says what it is: the provenance section (model and its revision or resolved folder, dataset and
fingerprint, selection, library versions) in the UnQover, NLI and emotion reports, Markdown and HTML; run.json
records a local model by its resolved path; the HTML pages render the reports' Markdown; offline, a Hub id that
cannot load says to give a local folder."""

from __future__ import annotations

import hashlib
import json

from tests.probes.test_registry_and_definitions import pets  # noqa: F401  (fixture)
from tests.report.test_report_quick_tables import _eec, _nli, eec_world, nli_world  # noqa: F401  (fixtures)
from unqover.cli import main
from unqover.report.eec import eec_html, eec_markdown
from unqover.report.nli import nli_html, nli_markdown
from unqover.report.page import markdown_page
from unqover.scoring.weights import hub_snapshot, weights_sha256

PROVENANCE = {
    "probe": "x",
    "model": {"id": "org/model", "revision": "abc123", "family": "mlm"},
    "dataset": {"source": "unqover/gender", "config": "mlm", "split": "test", "fingerprint": "f00d"},
    "selection": {"limit": 5, "seed": 0},
    "versions": {"unqover": "0.1.0", "torch": "2.13.0"},
}


def _check_provenance(markdown: str, page: str) -> None:
    section = markdown[markdown.index("## Provenance") :]
    for text in (
        "- model: org/model @ abc123",
        "- dataset: unqover/gender (mlm, test)",
        "f00d",
        "torch 2.13.0",
    ):
        assert text in section, text
    assert "selection" in section and "<h2>Provenance</h2>" in page and "org/model @ abc123" in page


def test_the_nli_report_has_the_provenance_section(nli_world):  # noqa: F811
    results = {**_nli(nli_world, 2), "provenance": PROVENANCE}
    _check_provenance(nli_markdown(results), nli_html(results))


def test_the_emotion_report_has_the_provenance_section(eec_world):  # noqa: F811
    results = {**_eec(eec_world, 20), "provenance": PROVENANCE}
    _check_provenance(eec_markdown(results), eec_html(results))


def test_a_run_records_a_local_model_by_its_resolved_path_and_reports_it(pets, tmp_path, capsys):  # noqa: F811
    path, _, model = pets
    link = tmp_path / "linked-model"
    link.symlink_to(model, target_is_directory=True)
    out = tmp_path / "run"
    assert (
        main(["probe", str(link), "--probe", str(path), "--output", str(out), "--quiet", "--resamples", "0"])
        == 0
    )
    recorded = json.loads((out / "run.json").read_text())["model"]
    assert recorded["id"] == str(link) and recorded["path"] == str(model.resolve())
    # results.json: the weights' SHA-256 (each weight file's name and SHA-256), every row selected
    provenance = json.loads((out / "results.json").read_text())["provenance"]
    files = sorted(model.glob("*.safetensors"))
    expected = hashlib.sha256(
        b"".join(f"{p.name}\0{hashlib.sha256(p.read_bytes()).hexdigest()}\n".encode() for p in files)
    )
    assert files and provenance["model"]["weights_sha256"] == expected.hexdigest()
    assert provenance["selection"]["kind"] == "full"
    markdown, page = (out / "report.md").read_text(), (out / "report.html").read_text()
    assert "## Provenance" in markdown and str(model.resolve()) in markdown[markdown.index("## Provenance") :]
    assert "Provenance" in page and str(model.resolve()) in page


def test_the_html_page_renders_the_reports_markdown():
    page = markdown_page(
        "# T\n\n- **Warning:** a `deadbeef` hash, a\\_b\n- two\n\n| a | b\\|c |\n|---|---|\n| 1 | `x` |", "t"
    )
    assert "<li><strong>Warning:</strong> a <code>deadbeef</code> hash, a_b</li>\n<li>two</li>" in page
    assert '<th class="l">b|c</th>' in page and '<td class="l"><code>x</code></td>' in page
    assert "**" not in page and "`" not in page and "\\_" not in page


def test_offline_a_hub_id_that_cannot_load_says_to_give_a_local_folder(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache
    assert (
        main(
            [
                "probe",
                "some-org/no-such-model",
                "--bias",
                "religion",
                "--limit",
                "2",
                "--output",
                str(tmp_path / "r"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "give a local model folder instead" in err


def test_a_hub_cache_snapshot_s_weights_hash_is_read_from_its_blob_names(tmp_path):
    """A snapshot's files link to blobs named by their SHA-256: the same hash as the bytes', none of them read
    (a blob named by another hash gives that hash); the snapshot names its repo and commit."""
    weights = b"weights" * 1000
    blob = hashlib.sha256(weights).hexdigest()
    repo = tmp_path / "hub" / "models--me--model"
    (repo / "blobs").mkdir(parents=True)
    (repo / "blobs" / blob).write_bytes(weights)
    snapshot = repo / "snapshots" / ("c" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "model.safetensors").symlink_to(repo / "blobs" / blob)
    (snapshot / "config.json").write_text("{}")
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "model.safetensors").write_bytes(weights)
    assert weights_sha256(snapshot) == weights_sha256(plain) is not None
    other = "d" * 64
    (repo / "blobs" / other).write_bytes(weights)
    (snapshot / "model.safetensors").unlink()
    (snapshot / "model.safetensors").symlink_to(repo / "blobs" / other)
    assert weights_sha256(snapshot) == hashlib.sha256(f"model.safetensors\0{other}\n".encode()).hexdigest()
    assert hub_snapshot(snapshot) == ("me/model", "c" * 40) and hub_snapshot(plain) is None
    assert weights_sha256(tmp_path / "hub") is None  # no weight files
