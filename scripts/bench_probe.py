"""Benchmark the probe scorers against the usual baselines, on the same model and inputs.

    python scripts/bench_probe.py --word-lists PATH [--rows 1536] [--threads 2]

Models: DistilBERT-base-size (6 layers, hidden 768, vocabulary 30,522) QA and masked-LM models with random
weights, built locally (the Hub is out of reach here; speed does not depend on the weights). Inputs: a stratified
sample of the gender ``qa`` and ``mlm`` rows.

* masked LM, fp32: ``MLMScorer`` against the transformers ``fill-mask`` pipeline with ``targets=`` (every subject
  name), at the pipeline's best batch size among 1, 16, 64, 128, 256; scores must agree to 1e-5.
* QA, fp32: ``QAScorer`` against the original's approach: batches of 100 rows in dataset order, padded to the
  longest, start/end softmax over each full row (the padding masked here too, so that scores agree to 1e-5).
* bf16 (autocast of the same model, softmax in fp32) against the fp32 baseline, with Spearman's rank correlation
  of γ(x, a) between bf16 and fp32 scores.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

BATCHES = (16, 64, 128, 256)


def build_models(folder: Path, texts: list[str]) -> dict[str, Path]:
    """DistilBERT-base-size QA and MLM models (random weights) with a vocabulary covering every probe word."""
    from transformers import (
        BertTokenizerFast,
        DistilBertConfig,
        DistilBertForMaskedLM,
        DistilBertForQuestionAnswering,
    )

    import tiny_models

    words = list(
        dict.fromkeys(tiny_models.SPECIAL + tiny_models.words_of(texts) + list("abcdefghijklmnopqrstuvwxyz"))
    )
    vocab = folder / "vocab.txt"
    folder.mkdir(parents=True, exist_ok=True)
    vocab.write_text("\n".join(words + [f"[unused{i}]" for i in range(30522 - len(words))]) + "\n")
    paths = {}
    for name, cls in (("mlm", DistilBertForMaskedLM), ("qa", DistilBertForQuestionAnswering)):
        paths[name] = folder / name
        BertTokenizerFast(vocab=str(vocab), do_lower_case=True).save_pretrained(paths[name])
        torch.manual_seed(0)
        cls(DistilBertConfig(vocab_size=30522)).save_pretrained(paths[name])
    return paths


def timed(fn, *args):
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def score_all(scorer, rows: pa.Table, batch: int) -> np.ndarray:
    order = np.argsort(scorer.length_key(rows), kind="stable")
    out = np.empty((len(rows), 2))
    for i in range(0, len(rows), batch):
        idx = order[i : i + batch]
        out[idx] = scorer.score(rows.take(pa.array(idx)))
    return out


def pipeline_mlm(model_dir: Path, rows: pa.Table, batch: int) -> np.ndarray:
    from transformers import pipeline

    from unqover.probe.mlm import masked_texts, surfaces

    fill = pipeline("fill-mask", model=str(model_dir), device="cpu")
    names = sorted(set(surfaces(rows, 1)) | set(surfaces(rows, 2)))
    texts = masked_texts(rows, fill.tokenizer.mask_token)
    results = fill(texts, targets=names, top_k=len(names), batch_size=batch)
    lookup = [{r["token_str"]: r["score"] for r in row} for row in results]
    firsts, seconds = surfaces(rows, 1), surfaces(rows, 2)
    return np.array(
        [[lk[a.lower()], lk[b.lower()]] for lk, a, b in zip(lookup, firsts, seconds, strict=True)]
    )


def original_qa(loaded, rows: pa.Table, batch: int = 100) -> np.ndarray:
    """Fixed batches of 100 in dataset order, padded to the longest, softmax over each row's real tokens."""
    from unqover.probe.qa import QAScorer

    scorer = QAScorer(loaded)
    return np.concatenate([scorer.score(rows.slice(i, batch)) for i in range(0, len(rows), batch)])


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def gamma_table(rows: pa.Table, scores: np.ndarray) -> np.ndarray:
    from unqover.measure.unqover import unqover_bias

    return unqover_bias(rows, scores[:, 0], scores[:, 1], n_resamples=0).gamma["gamma"].to_numpy()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--word-lists", type=Path, required=True)
    parser.add_argument("--rows", type=int, default=1536, help="rows per benchmark (whole groups)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--family", choices=("mlm", "qa"), action="append", help="benchmark only this family (repeatable)"
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    from unqover.generate.unqover import make_plan
    from unqover.lexicon import WordLists
    from unqover.probe.mlm import MLMScorer
    from unqover.probe.models import load_model
    from unqover.probe.qa import QAScorer
    from unqover.probe.sampling import select_groups

    lists = WordLists(args.word_lists)
    data = {c: pa.Table.from_batches(list(make_plan(lists, "gender", c).batches())) for c in ("qa", "mlm")}
    rows = {c: select_groups(t, limit=args.rows // 4, seed=0) for c, t in data.items()}
    texts = [
        *rows["qa"]["context"].to_pylist(),
        *rows["qa"]["question"].to_pylist(),
        *rows["mlm"]["question"].to_pylist(),
    ]
    print(
        f"torch {torch.__version__}, {args.threads} threads, {len(rows['qa'])} QA rows, {len(rows['mlm'])} MLM rows"
    )
    with tempfile.TemporaryDirectory() as tmp:
        paths = build_models(Path(tmp), [t.replace("[MASK]", "") for t in texts])
        for family in args.family or ("mlm", "qa"):
            loaded = load_model(str(paths[family]), device="cpu", dtype="float32")
            scorer = MLMScorer(loaded) if family == "mlm" else QAScorer(loaded)
            data_rows = rows[family]
            if family == "mlm":
                data_rows, _ = scorer.single_token_coverage(data_rows)
                base = {b: timed(pipeline_mlm, paths["mlm"], data_rows, b) for b in (1, *BATCHES)}
                best = min(base, key=lambda b: base[b][1])
                reference, base_s = base[best]
                label = f"fill-mask pipeline (targets=, best batch {best})"
            else:
                reference, base_s = timed(original_qa, loaded, data_rows)
                label = "original approach (batches of 100 in order)"
            ours = {b: timed(score_all, scorer, data_rows, b) for b in BATCHES}
            best_ours = min(ours, key=lambda b: ours[b][1])
            fp32, ours_s = ours[best_ours]
            diff = np.abs(fp32 - reference).max()
            n = len(data_rows)
            print(
                f"\n{family} fp32: {label}: {n / base_s:.1f} rows/s; unqover (batch {best_ours}): {n / ours_s:.1f} rows/s "
                f"-> {base_s / ours_s:.2f}x; max |score difference| {diff:.2e}"
            )
            bf16_loaded = load_model(str(paths[family]), device="cpu", dtype="bfloat16")
            bf16_scorer = MLMScorer(bf16_loaded) if family == "mlm" else QAScorer(bf16_loaded)
            bf16 = {b: timed(score_all, bf16_scorer, data_rows, b) for b in BATCHES}
            best_bf16 = min(bf16, key=lambda b: bf16[b][1])
            bf16_scores, bf16_s = bf16[best_bf16]
            rho = spearman(gamma_table(data_rows, bf16_scores), gamma_table(data_rows, fp32))
            print(
                f"{family} bf16 (batch {best_bf16}): {n / bf16_s:.1f} rows/s -> {base_s / bf16_s:.2f}x the fp32 baseline; "
                f"max |score difference| vs fp32 {np.abs(bf16_scores - fp32).max():.2e}; Spearman of gamma(x, a) vs fp32 {rho:.3f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
