"""Probing tiny local models: scores against straightforward computations, invariances, resume, shards, CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

import tiny_models
from unqover.cli import main
from unqover.errors import UnqoverError
from unqover.generate.unqover import MASK_PLACEHOLDER, make_plan
from unqover.predictions import read_predictions
from unqover.scoring.causal import CausalScorer
from unqover.scoring.mlm import MLMScorer, mask_logits
from unqover.scoring.models import detect_family, load_model
from unqover.scoring.qa import QAScorer


def _rows(word_lists, bias: str, config: str, pairs: int = 2) -> pa.Table:
    plan = make_plan(word_lists, bias, config)
    return pa.Table.from_batches([next(plan.batches(pairs_per_batch=pairs))])


@pytest.fixture(scope="module")
def religion_qa(word_lists) -> pa.Table:
    return _rows(word_lists, "religion", "qa").slice(0, 96)


@pytest.fixture(scope="module")
def religion_mlm(word_lists) -> pa.Table:
    return _rows(word_lists, "religion", "mlm").slice(0, 96)


@pytest.fixture(scope="module")
def models(tmp_path_factory, religion_tables) -> dict[str, Path]:
    """Tiny models whose vocabularies cover every religion text (so nothing is [UNK])."""
    qa = religion_tables["qa"]
    mlm = religion_tables["mlm"]
    texts = sorted(
        set(qa["context"].to_pylist()) | set(qa["question"].to_pylist()) | set(mlm["question"].to_pylist())
    )
    texts = [t.replace(MASK_PLACEHOLDER, "") for t in texts]
    root = tmp_path_factory.mktemp("models")
    return {
        "qa": tiny_models.bert_qa(root / "bert-qa", texts),
        "mlm": tiny_models.bert_mlm(root / "bert-mlm", texts),
        "mlm-no-hindu": tiny_models.bert_mlm(root / "bert-mlm-no-hindu", texts, drop=["hindu"]),
        "distilbert": tiny_models.distilbert_mlm(root / "distilbert-mlm", texts),
        "roberta": tiny_models.roberta_mlm(root / "roberta-mlm", texts[:400]),
        "gpt2": tiny_models.gpt2(root / "gpt2", texts[:400]),
    }


def test_qa_scores_match_a_straightforward_computation(models, religion_qa):
    loaded = load_model(str(models["qa"]))
    scores = QAScorer(loaded).score(religion_qa)
    tok, model = loaded.tokenizer, loaded.model
    for i in (0, 1, 17, 95):
        row = religion_qa.slice(i, 1).to_pylist()[0]
        enc = tok(row["question"], row["context"], return_tensors="pt")
        with torch.no_grad():
            out = model(**enc)
        p_start, p_end = out.start_logits[0].softmax(-1), out.end_logits[0].softmax(-1)  # one row: no padding
        for k in (1, 2):
            start, end = row[f"subject_{k}_span"]
            first, last = (
                enc.char_to_token(0, start, sequence_index=1),
                enc.char_to_token(0, end - 1, sequence_index=1),
            )
            expected = float(torch.sqrt(p_start[first] * p_end[last]))
            assert scores[i, k - 1] == pytest.approx(expected, rel=1e-5, abs=1e-9)


@pytest.mark.parametrize("kind", ["qa", "mlm", "gpt2"])
def test_scores_do_not_depend_on_batch_size_or_neighbours(models, religion_qa, religion_mlm, kind):
    loaded = load_model(str(models[kind]))
    scorer = {"qa": QAScorer, "mlm": MLMScorer, "gpt2": CausalScorer}[kind](loaded)
    rows = religion_mlm if kind == "mlm" else religion_qa
    whole = scorer.score(rows)
    tolerance = 1e-7 if kind in ("qa", "mlm") else 1e-6  # README: QA scores agree across batch sizes to 1e-7
    for size in (1, 7, 32, 64):
        parts = np.concatenate([scorer.score(rows.slice(i, size)) for i in range(0, len(rows), size)])
        assert np.abs(parts - whole).max() < tolerance
    reversed_rows = rows.take(pa.array(np.arange(len(rows))[::-1]))
    assert np.abs(scorer.score(reversed_rows)[::-1] - whole).max() < 1e-6
    assert ((whole > 0) & (whole <= 1)).all()


@pytest.mark.parametrize("kind", ["mlm", "distilbert", "roberta"])
def test_mlm_probabilities_are_exact(models, religion_mlm, kind):
    """Head-only-at-the-mask probabilities equal the full model's softmax over the whole vocabulary."""
    loaded = load_model(str(models[kind]))
    scorer = MLMScorer(loaded)
    rows, _ = scorer.single_token_coverage(religion_mlm)
    scores = scorer.score(rows)
    tok = loaded.tokenizer
    for i in (0, 5, len(rows) - 1):
        row = rows.slice(i, 1).to_pylist()[0]
        text = row["context"] + " " + row["question"].replace(MASK_PLACEHOLDER, tok.mask_token)
        enc = tok(text, return_tensors="pt")
        position = int((enc["input_ids"][0] == tok.mask_token_id).nonzero()[0, 0])
        with torch.no_grad():
            probs = loaded.model(**enc).logits[0, position].softmax(-1)
        for k in (1, 2):
            start, end = row[f"subject_{k}_span"]
            (token,) = tok(" " + row["context"][start:end], add_special_tokens=False)["input_ids"]
            assert scores[i, k - 1] == pytest.approx(float(probs[token]), rel=1e-5)
    enc = tok(
        [
            rows["context"][0].as_py()
            + " "
            + rows["question"][0].as_py().replace(MASK_PLACEHOLDER, tok.mask_token)
        ],
        return_tensors="pt",
    )
    where = (enc["input_ids"] == tok.mask_token_id).nonzero(as_tuple=True)
    # the last encoder layer never runs whole: it is computed at the mask only
    base = loaded.model.base_model
    layers = base.encoder.layer if hasattr(base, "encoder") else base.transformer.layer
    whole_runs = []
    handle = layers[-1].register_forward_hook(lambda *_: whole_runs.append(1))
    with torch.no_grad():
        fast = mask_logits(loaded, dict(enc), *where)
    handle.remove()
    assert whole_runs == []
    with torch.no_grad():
        assert torch.allclose(fast, loaded.model(**enc).logits[where], atol=1e-5)


def test_coverage_report_drops_whole_groups(models, word_lists):
    rows = pa.Table.from_batches(list(make_plan(word_lists, "religion", "mlm").batches()))
    scorer = MLMScorer(load_model(str(models["mlm-no-hindu"])))
    kept, coverage = scorer.single_token_coverage(rows)
    assert coverage.multi_token == ["Hindu"]
    assert coverage.rows_total == 154_000 and coverage.rows_kept == 154_000 - 10 * 14 * 50 * 4 * 2 // 2
    assert "Hindu" not in set(kept["subject_1"].to_pylist()) | set(kept["subject_2"].to_pylist())
    with pytest.raises(UnqoverError, match="not a single token"):
        scorer.score(rows.filter(pa.compute.equal(rows["subject_1"], "Hindu")).slice(0, 4))


def test_causal_scores_match_a_straightforward_computation(models, religion_qa):
    loaded = load_model(str(models["gpt2"]))
    scorer = CausalScorer(loaded)
    scores = scorer.score(religion_qa.slice(0, 8))
    tok = loaded.tokenizer
    row = religion_qa.slice(3, 1).to_pylist()[0]
    prompt = tok(f"{row['context']}\nQuestion: {row['question']}\nAnswer:")["input_ids"]
    for k in (1, 2):
        start, end = row[f"subject_{k}_span"]
        answer = tok(" " + row["context"][start:end], add_special_tokens=False)["input_ids"]
        ids = torch.tensor([prompt + answer])
        with torch.no_grad():
            log_probs = loaded.model(ids).logits[0].log_softmax(-1)
        expected = sum(float(log_probs[len(prompt) - 1 + j, t]) for j, t in enumerate(answer))
        assert scores[3, k - 1] == pytest.approx(np.exp(expected), rel=1e-5)


def test_family_detection_and_unsupported_models(tmp_path):
    assert detect_family(["BertForQuestionAnswering"], "bert") == "qa"
    assert detect_family(["RobertaForMaskedLM"], "roberta") == "mlm"
    assert detect_family(["GPT2LMHeadModel"], "gpt2") == "causal"
    with pytest.raises(UnqoverError, match="unsupported model"):
        detect_family(["BertForSequenceClassification"], "bert")
    from transformers import BertConfig, BertForSequenceClassification

    tiny_models.wordpiece_tokenizer(tmp_path, ["a b c"])
    BertForSequenceClassification(
        BertConfig(
            vocab_size=40, hidden_size=8, num_hidden_layers=1, num_attention_heads=1, intermediate_size=8
        )
    ).save_pretrained(tmp_path)
    with pytest.raises(
        UnqoverError, match=r"unsupported model \(architectures: BertForSequenceClassification"
    ):
        load_model(str(tmp_path))


def test_missing_models_and_slow_tokenizers(models, monkeypatch):
    with pytest.raises(UnqoverError, match="cannot load model 'no-such-org/no-such-model'"):
        load_model("no-such-org/no-such-model")
    with pytest.raises(UnqoverError, match=r"no model folder \./nowhere \(it looks like a path"):
        load_model("./nowhere")
    import transformers

    real = transformers.AutoTokenizer.from_pretrained

    def slow(*args, **kwargs):
        tokenizer = real(*args, **kwargs)
        monkeypatch.setattr(type(tokenizer), "is_fast", property(lambda self: False))
        return tokenizer

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", slow)
    with pytest.raises(UnqoverError, match="has no fast tokenizer: QA scoring needs character offsets"):
        load_model(str(models["qa"]))


def _probe(model: Path, output: Path, word_lists: Path, *extra: str) -> int:
    return main(
        [
            "probe",
            str(model),
            "--bias",
            "religion",
            "--word-lists",
            str(word_lists),
            "--output",
            str(output),
            "--quiet",
            "--resamples",
            "20",
            "--top",
            "2",
            *extra,
        ]
    )


def test_cli_end_to_end(models, upstream_word_lists_path, tmp_path, capsys):
    out = tmp_path / "run"
    assert _probe(models["qa"], out, upstream_word_lists_path, "--limit", "40") == 0
    printed = capsys.readouterr().out
    assert "UnQover bias: estimated from 40 of 38,500 groups" in printed and f"Run folder: {out}" in printed
    assert {p.name for p in out.iterdir()} >= {
        "run.json",
        "predictions.parquet",
        "results.json",
        "report.md",
        "report.html",
    }
    scores, provenance = read_predictions(out / "predictions.parquet")
    assert scores.num_rows == 160
    assert provenance["model"]["family"] == "qa" and provenance["dataset"]["rows"] == 160
    assert len(provenance["dataset"]["fingerprint"]) == 32 and provenance["versions"]["transformers"]
    results = json.loads((out / "results.json").read_text())
    assert results["result"]["num_groups"] == 40
    assert (
        _probe(models["qa"], out, upstream_word_lists_path, "--limit", "40") == 0
    )  # a finished run re-measures


@pytest.mark.parametrize("kind", ["mlm", "gpt2"])
def test_cli_other_families(models, upstream_word_lists_path, tmp_path, kind):
    out = tmp_path / kind
    assert _probe(models[kind], out, upstream_word_lists_path, "--limit", "30") == 0
    assert json.loads((out / "run.json").read_text())["dataset"]["config"] == (
        "mlm" if kind == "mlm" else "qa"
    )


def test_resume_after_interruption_gives_the_uninterrupted_result(
    models, upstream_word_lists_path, tmp_path, monkeypatch
):
    args = ("--limit", "120", "--batch-size", "16")
    assert _probe(models["qa"], tmp_path / "whole", upstream_word_lists_path, *args) == 0
    calls = {"n": 0}
    real = QAScorer.score

    def dying(self, rows):
        calls["n"] += 1
        if calls["n"] == 20:
            raise KeyboardInterrupt
        return real(self, rows)

    monkeypatch.setattr(QAScorer, "score", dying)
    from unqover.jobs.run import run_probe
    from unqover.probes.base import RunOptions
    from unqover.probes.registry import get_probe

    options = RunOptions(
        output=tmp_path / "resumed",
        limit=120,
        batch_size=16,
        progress=False,
        resamples=20,
        chunk_rows=64,
        settings={"word_lists": upstream_word_lists_path},
    )
    with pytest.raises(KeyboardInterrupt):
        run_probe(str(models["qa"]), get_probe("religion"), options)
    assert not (tmp_path / "resumed" / "predictions.parquet").exists()
    monkeypatch.setattr(QAScorer, "score", real)
    run_probe(str(models["qa"]), get_probe("religion"), options)
    whole = pq.read_table(tmp_path / "whole" / "predictions.parquet")
    resumed = pq.read_table(tmp_path / "resumed" / "predictions.parquet")
    assert resumed.select(["id", "score_1", "score_2"]).equals(whole.select(["id", "score_1", "score_2"]))


def test_sharded_runs_merge_to_the_unsharded_result(models, upstream_word_lists_path, tmp_path, capsys):
    from unqover.jobs.run import run_probe
    from unqover.probes.base import RunOptions
    from unqover.probes.registry import get_probe

    def options(output: Path, shard=None) -> RunOptions:
        return RunOptions(output=output, limit=60, batch_size=8, progress=False, resamples=20, chunk_rows=32,
                          shard=shard, settings={"word_lists": upstream_word_lists_path})  # fmt: skip

    religion = get_probe("religion")
    whole = run_probe(str(models["mlm"]), religion, options(tmp_path / "whole"))
    shared = tmp_path / "shared"
    assert run_probe(str(models["mlm"]), religion, options(shared, (0, 2))) is None
    assert "shard 0/2 is done" in capsys.readouterr().out
    assert not (shared / "predictions.parquet").exists()
    merged = run_probe(str(models["mlm"]), religion, options(shared, (1, 2)))
    assert merged is not None
    expected = pq.read_table(whole.folder / "predictions.parquet").select(["id", "score_1", "score_2"])
    assert pq.read_table(shared / "predictions.parquet").select(["id", "score_1", "score_2"]).equals(expected)
    assert merged.result.to_dict() == whole.result.to_dict()


def test_bad_input_gives_one_clear_error(models, upstream_word_lists_path, tmp_path, capsys):
    out = tmp_path / "run"
    assert _probe(models["qa"], out, upstream_word_lists_path, "--limit", "10") == 0
    capsys.readouterr()
    assert _probe(models["mlm"], out, upstream_word_lists_path, "--limit", "10") == 2
    err = capsys.readouterr().err
    assert f"{out} holds another run (it differs in model)" in err  # told before the other model loads
    assert (out / "predictions.parquet").is_file()  # the finished run is untouched
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    assert _probe(models["qa"], other, upstream_word_lists_path, "--limit", "10") == 2
    assert "exists and is not an unqover run folder" in capsys.readouterr().err
    broken = tmp_path / "broken"
    shutil.copytree(tmp_path / "run", broken / "unused")
    table = pa.table({"id": ["a"], "subject_1": ["x"]})
    (broken / "data" / "qa").mkdir(parents=True)
    pq.write_table(table, broken / "data" / "qa" / "test-00000-of-00001.parquet")
    (broken / "README.md").write_text(
        "---\nconfigs:\n- config_name: qa\n  data_files:\n  - split: test\n    path: data/qa/*.parquet\n"
        "unqover:\n  probe: religion\n---\n"  # religion's rows, as the card says (tests/cli/test_cli_dataset_identity.py)
    )
    assert (
        main(
            [
                "probe",
                str(models["qa"]),
                "--bias",
                "religion",
                "--dataset",
                str(broken),
                "--output",
                str(tmp_path / "r2"),
                "--quiet",
            ]
        )
        == 2
    )
    assert "lacks the columns" in capsys.readouterr().err
    assert main(["probe", "no-such-org/no-such-model", "--bias", "religion", "--quiet"]) == 2
    assert "cannot load model 'no-such-org/no-such-model'" in capsys.readouterr().err


@pytest.mark.slow
def test_accelerate_launch_with_two_cpu_processes(models, upstream_word_lists_path, tmp_path):
    """Each process scores its shard; the main process merges, measures and reports: the single-process result."""
    import socket
    import subprocess
    import sys

    args = [
        "--bias",
        "religion",
        "--word-lists",
        str(upstream_word_lists_path),
        "--limit",
        "40",
        "--batch-size",
        "8",
        "--resamples",
        "20",
        "--quiet",
    ]
    assert main(["probe", str(models["qa"]), *args, "--output", str(tmp_path / "single")]) == 0
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    launcher = Path(sys.executable).with_name("accelerate")
    command = [str(launcher), "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no",
               "--dynamo_backend", "no", "--main_process_port", str(port), "-m", "unqover.cli", "probe", str(models["qa"]), *args,
               "--output", str(tmp_path / "launched")]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("UnQover bias:") == 1  # only the main process reports
    assert sorted(p.name for p in (tmp_path / "launched" / "shards").iterdir()) == ["0-of-2", "1-of-2"]
    single = pq.read_table(tmp_path / "single" / "predictions.parquet").select(["id", "score_1", "score_2"])
    launched = pq.read_table(tmp_path / "launched" / "predictions.parquet").select(
        ["id", "score_1", "score_2"]
    )
    assert launched["id"].equals(single["id"])
    assert np.abs(launched["score_1"].to_numpy() - single["score_1"].to_numpy()).max() < 1e-6


def test_paper_qa_scoring_reproduces_the_original_rules(models, religion_qa):
    """[CLS] q [SEP] c [SEP], batches padded to the longest with an unmasked softmax, and the max heuristics."""
    loaded = load_model(str(models["qa"]))
    scorer = QAScorer(loaded, mode="paper")
    batch = religion_qa.slice(0, 12)
    scores = scorer.score(batch)
    assert (
        np.abs(scorer.score(batch.slice(0, 3)) - scores[:3]).max() > 0
    )  # the quirk: padding enters the softmax
    tok = loaded.tokenizer
    rows = batch.to_pylist()
    sequences = [[tok.cls_token_id, *tok(r["question"], add_special_tokens=False)["input_ids"], tok.sep_token_id,
                  *tok(r["context"], add_special_tokens=False)["input_ids"], tok.sep_token_id] for r in rows]  # fmt: skip
    width = max(map(len, sequences))
    ids = torch.tensor([s + [0] * (width - len(s)) for s in sequences])
    mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in sequences])
    with torch.no_grad():
        out = loaded.model(input_ids=ids, attention_mask=mask)
    p_start, p_end = out.start_logits.softmax(-1), out.end_logits.softmax(-1)
    for i, row in enumerate(rows):
        # "A Christian man got off the flight to visit a Hindu man.": "a"/"A" before each subject, "man" after
        context_ids = tok(row["context"], add_special_tokens=False)
        shift = len(tok(row["question"], add_special_tokens=False)["input_ids"]) + 2
        for k in (1, 2):
            start, end = row[f"subject_{k}_span"]
            first, last = context_ids.char_to_token(start) + shift, context_ids.char_to_token(end - 1) + shift
            assert (
                tok.convert_ids_to_tokens(int(ids[i, first - 1])) == "a"
                and tok.convert_ids_to_tokens(int(ids[i, last + 1])) == "man"
            )
            ps = max(p_start[i, first], p_start[i, first - 1])
            pe = max(p_end[i, last], p_end[i, last + 1])
            assert scores[i, k - 1] == pytest.approx(float(torch.sqrt(ps * pe)), rel=1e-5)


def test_paper_mlm_scoring_uses_the_top_ten_and_the_pronoun_maximum(tmp_path, word_lists):
    rows = _rows(word_lists, "gender", "mlm-bert", pairs=3).slice(0, 60)
    texts = [
        *rows["context"].to_pylist(),
        *[q.replace(MASK_PLACEHOLDER, "") for q in rows["question"].to_pylist()],
        "he she",
    ]
    loaded = load_model(str(tiny_models.bert_mlm(tmp_path / "bert-mlm", texts, seed=3)))
    scores = MLMScorer(loaded, mode="paper").score(rows)
    tok = loaded.tokenizer
    he, she = tok.convert_tokens_to_ids("he"), tok.convert_tokens_to_ids("she")
    for i, row in enumerate(rows.to_pylist()):
        text = row["context"] + " " + row["question"].replace(MASK_PLACEHOLDER, tok.mask_token)
        enc = tok(text, return_tensors="pt")
        position = int((enc["input_ids"][0] == tok.mask_token_id).nonzero()[0, 0])
        with torch.no_grad():
            probs = loaded.model(**enc).logits[0, position].softmax(-1)
        top = dict(zip(probs.topk(10).indices.tolist(), probs.topk(10).values.tolist(), strict=True))
        for k in (1, 2):
            start, end = row[f"subject_{k}_span"]
            name = tok.convert_tokens_to_ids(row["context"][start:end].lower())
            pronoun = she if row[f"subject_{k}_cluster"] == "female" else he
            assert scores[i, k - 1] == pytest.approx(
                max(top.get(name, 0.0), top.get(pronoun, 0.0)), rel=1e-5, abs=1e-12
            )


def test_precision_rounds_through_the_command_line(models, upstream_word_lists_path, tmp_path, capsys):
    out = tmp_path / "precise"
    extra = ("--precision", "0.05", "--max-rows", "4000", "--batch-size", "64")
    assert _probe(models["qa"], out, upstream_word_lists_path, *extra) == 0
    printed = capsys.readouterr().out
    assert "round 0: 1,000 of 38,500 groups" in printed and "stopped: --max-rows 4,000 reached" in printed
    results = json.loads((out / "results.json").read_text())
    assert results["provenance"]["selection"]["stopped"] == "--max-rows 4,000 reached"
    assert results["result"]["sample"]["groups"] == 1000 and results["result"]["sample"]["of"] == 38_500
    assert pq.read_table(out / "predictions.parquet").num_rows == 4000
    assert (out / "rounds" / "00").is_dir()
