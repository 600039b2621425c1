"""Debias an NLI model by gender-swap augmentation and retraining (Sharma, Dey & Sinha 2021, §4 and §3.2.1).

The recipe: read MNLI or SNLI, **add** a gender-swapped copy of every training pair that mentions one of the
probe's occupations and has a gendered word (:func:`unqover.generate.gender_swap.augment_pairs`), and fine-tune
with the paper's hyper-parameters: AdamW (β1 0.9, β2 0.999, weight decay 0.01), learning rate 2e-5 for BERT and
BART and 1e-5 for RoBERTa, 3 epochs. Not reported by the paper, our defaults: batch 32, linear schedule with 6%
warm-up, max length 128, seed 0, label −1 dropped.

Labels: the datasets use 0 entailment, 1 neutral, 2 contradiction. A model that already is an NLI classifier keeps
its own label order; its ids are read **by name** from ``id2label`` (``nli_label_ids``), so ``roberta-large-mnli``
(contradiction at 0) is trained toward the right logits. A config that only says ``LABEL_k`` needs an explicit
``label_map``; the saved config then names its labels. A base checkpoint (no sequence-classification head, e.g.
``bert-base-uncased``) gets a fresh 3-way head in the dataset order, as ``run_glue`` does. Remote code is never run
and only safetensors weights are loaded unless ``allow_pickle`` is set; the result is saved as safetensors.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from unqover.env import offline
from unqover.errors import UnqoverError, first_line, require_models_extra
from unqover.generate.gender_swap import augment_pairs
from unqover.generate.nli_occupations import PROBE_OCCUPATIONS
from unqover.scoring.models import model_source
from unqover.scoring.nli import nli_label_ids

DATASET_LABELS = ("entailment", "neutral", "contradiction")  # ids 0, 1, 2 of MNLI and SNLI
# source -> (Hub id, config); spec §4.2
HUB_SOURCES: dict[str, tuple[str, str]] = {
    "mnli": ("nyu-mll/glue", "mnli"),
    "snli": ("stanfordnlp/snli", "plain_text"),
}
TRAINING_COLUMNS = ("premise", "hypothesis", "label")


def _label_id(value) -> int:
    """A dataset label as 0/1/2 (−1 for 'no gold label'); names such as ``entailment`` are accepted too."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text in DATASET_LABELS:
            return DATASET_LABELS.index(text)
        if text in {"-", "-1", ""}:
            return -1
        try:
            value = int(text)
        except ValueError as err:
            raise UnqoverError(f"unknown NLI label {value!r}: expected 0/1/2 or a label name") from err
    if value is None:
        return -1
    try:
        label = int(value)
    except (TypeError, ValueError) as err:
        raise UnqoverError(f"unknown NLI label {value!r}: expected 0/1/2 or a label name") from err
    if label not in (-1, 0, 1, 2):
        raise UnqoverError(
            f"NLI label {label} is out of range: expected 0 (entailment), 1 (neutral), 2 (contradiction)"
        )
    return label


def _read_local(path: Path) -> list[dict]:
    name = path.name.lower()
    try:
        if name.endswith(".parquet"):
            import pyarrow.parquet as pq

            table = pq.read_table(path)
        elif name.endswith((".jsonl", ".json", ".ndjson")):
            import pyarrow.json as pj

            table = pj.read_json(path)
        elif name.endswith((".csv", ".tsv")):
            import pyarrow.csv as pc

            parse = pc.ParseOptions(delimiter="\t" if name.endswith(".tsv") else ",")
            convert = pc.ConvertOptions(column_types={"premise": "string", "hypothesis": "string"})
            table = pc.read_csv(path, parse_options=parse, convert_options=convert)
        else:
            raise UnqoverError(f"unsupported training file {path.name!r}: use .parquet, .jsonl or .csv")
    except UnqoverError:
        raise
    except Exception as err:  # pyarrow raises ArrowInvalid and friends
        raise UnqoverError(f"cannot read {path}: {first_line(err)}") from err
    missing = [c for c in TRAINING_COLUMNS if c not in table.column_names]
    if missing:
        raise UnqoverError(
            f"{path} lacks the column(s) {', '.join(missing)}: an NLI training file needs premise, hypothesis, label"
        )
    return table.select(list(TRAINING_COLUMNS)).to_pylist()


def _read_hub(source: str, split: str) -> list[dict]:
    hub_id, config = HUB_SOURCES[source]
    if offline():
        raise UnqoverError(
            f"offline mode: cannot download {source.upper()} ({hub_id}, {config}); pass a local file with "
            "premise, hypothesis, label columns (--train-file PATH), or set HF_HUB_OFFLINE=0"
        )
    try:
        import datasets

        data = datasets.load_dataset(hub_id, config, split=split)
    except Exception as err:  # datasets raises many types (network, not found, bad split)
        raise UnqoverError(
            f"cannot load {source.upper()} split {split!r} from {hub_id}: {first_line(err)}; "
            "pass a local file with --train-file PATH"
        ) from err
    return [{c: row[c] for c in TRAINING_COLUMNS} for row in data]


def load_nli_training_data(
    source: str, path: str | os.PathLike | None = None, split: str = "train", limit: int | None = None
) -> list[dict]:
    """Rows ``{"premise", "hypothesis", "label"}`` of MNLI or SNLI, labels 0/1/2, label −1 dropped.

    ``source`` is ``"mnli"`` or ``"snli"``. With ``path`` a local Parquet, JSONL or CSV file with premise,
    hypothesis and label columns is read (``split`` is then ignored); without it the Hub copy (spec §4.2) is
    downloaded, which fails with a clear UnqoverError in offline mode. ``limit`` keeps the first N usable rows.
    """
    source = str(source).strip().lower()
    if source not in HUB_SOURCES:
        raise UnqoverError(f"unknown NLI training source {source!r}: choose one of {', '.join(HUB_SOURCES)}")
    if limit is not None and limit < 1:
        raise UnqoverError(f"limit must be at least 1, got {limit}")
    if path is not None:
        file = Path(path).expanduser()
        if not file.is_file():
            raise UnqoverError(f"training file not found: {file}")
        raw = _read_local(file)
    else:
        raw = _read_hub(source, split)
    rows = []
    for row in raw:
        label = _label_id(row["label"])
        if label < 0 or row["premise"] is None or row["hypothesis"] is None:
            continue
        rows.append({"premise": str(row["premise"]), "hypothesis": str(row["hypothesis"]), "label": label})
        if limit is not None and len(rows) >= limit:
            break
    if not rows:
        raise UnqoverError(f"no labelled NLI pairs in {path or source}")
    return rows


def augment(
    dataset_rows: Sequence[dict], occupations: Iterable[str] | None = PROBE_OCCUPATIONS
) -> tuple[list[dict], dict[str, int]]:
    """The rows plus a gender-swapped copy of each eligible row (paper §4: added, not replacing).

    With ``occupations`` (default: the probe's 38) only rows mentioning one of them are copied; ``None`` copies
    every row with a gendered word. Returns ``(rows, {"original": n, "added": k})``; copies follow the originals.
    """
    rows = list(dataset_rows)
    premises = [r["premise"] for r in rows]
    hypotheses = [r["hypothesis"] for r in rows]
    labels = [r["label"] for r in rows]
    p, h, lab = augment_pairs(premises, hypotheses, labels, occupations=occupations)
    out = rows + [
        {"premise": a, "hypothesis": b, "label": c}
        for a, b, c in zip(p[len(rows) :], h[len(rows) :], lab[len(rows) :], strict=True)
    ]
    return out, {"original": len(rows), "added": len(out) - len(rows)}


def default_learning_rate(model_type: str | None) -> float:
    """The paper's learning rate: 1e-5 for RoBERTa, 2e-5 for BERT, BART and anything else."""
    return 1e-5 if "roberta" in str(model_type or "").lower() else 2e-5


def _is_classifier(config) -> bool:
    architectures = getattr(config, "architectures", None) or []
    return any(a.endswith("ForSequenceClassification") for a in architectures)


def _load(model_name_or_path: str, label_map, allow_pickle: bool, revision, token):
    """(model, tokenizer, label_ids) with the model's config naming its labels."""
    import transformers

    source = model_source(model_name_or_path, revision, token)
    config = source.config()
    if _is_classifier(config):
        id2label = {int(k): str(v) for k, v in (config.id2label or {}).items()}
        label_ids = nli_label_ids(id2label, label_map)
        if "neutral" not in label_ids:
            raise UnqoverError(
                f"{model_name_or_path!r} has no neutral label ({id2label}): it cannot be trained on 3-way MNLI/SNLI"
            )
        names = {i: name for name, i in label_ids.items()}
        extra = {"num_labels": len(id2label)}
    else:  # a base checkpoint: fresh 3-way head in the dataset order, as run_glue does
        if label_map is not None:
            raise UnqoverError("a label map only applies to a model that already has a classification head")
        label_ids = {name: i for i, name in enumerate(DATASET_LABELS)}
        names = dict(enumerate(DATASET_LABELS))
        extra = {"num_labels": 3}
    extra.update(id2label=names, label2id={v: k for k, v in names.items()})
    tokenizer = source.tokenizer()
    fresh = not _is_classifier(config)  # a base checkpoint's new head is trained: not refused as missing
    model = source.weights(
        transformers.AutoModelForSequenceClassification, "float32", allow_pickle, fresh_head=fresh, **extra
    )
    return model, tokenizer, label_ids


def _encode(rows: Sequence[dict], tokenizer, label_ids: dict[str, int], max_length: int):
    """A ``datasets.Dataset`` of token ids and ``labels`` in the **model's** id order (mapped by name)."""
    import datasets

    to_model = [label_ids[name] for name in DATASET_LABELS]  # dataset id -> model id
    enc = tokenizer(
        [r["premise"] for r in rows], [r["hypothesis"] for r in rows], truncation=True, max_length=max_length
    )
    columns = {k: list(v) for k, v in enc.items()}
    columns["labels"] = [to_model[_label_id(r["label"])] for r in rows]
    return datasets.Dataset.from_dict(columns)


def _accuracy(eval_pred) -> dict[str, float]:
    import numpy as np

    logits, labels = eval_pred
    return {"accuracy": float(np.mean(np.argmax(logits, axis=-1) == labels))}


def prepare_trainer(
    model_name_or_path: str,
    train_rows: Sequence[dict],
    *,
    output_dir: str | os.PathLike,
    learning_rate: float | None = None,
    epochs: float = 3,
    batch_size: int = 32,
    warmup_ratio: float = 0.06,
    weight_decay: float = 0.01,
    max_length: int = 128,
    seed: int = 0,
    eval_rows: Sequence[dict] | None = None,
    label_map: dict[str, int] | None = None,
    allow_pickle: bool = False,
    revision: str | None = None,
    token: str | None = None,
):
    """The ``transformers.Trainer`` that :func:`finetune` runs, with ``label_ids`` set on it (for inspection) and
    ``settings``: the warm-up ratio, maximum length (as asked, before the model's limit) and seed."""
    require_models_extra("fine-tuning a model")
    import torch
    import transformers

    if not train_rows:
        raise UnqoverError("no training pairs")
    if batch_size < 1 or epochs <= 0 or max_length < 8:
        raise UnqoverError(f"bad settings: batch size {batch_size}, epochs {epochs}, max length {max_length}")
    if not 0 <= warmup_ratio < 1:
        raise UnqoverError(f"warm-up ratio must be in [0, 1), got {warmup_ratio}")
    settings = {"warmup_ratio": warmup_ratio, "max_length": max_length, "seed": seed}
    transformers.set_seed(seed)  # the fresh head of a base checkpoint is drawn from this seed
    model, tokenizer, label_ids = _load(model_name_or_path, label_map, allow_pickle, revision, token)
    if learning_rate is None:
        learning_rate = default_learning_rate(getattr(model.config, "model_type", None))
    limit = getattr(model.config, "max_position_embeddings", None) or max_length
    max_length = min(max_length, limit)
    train = _encode(train_rows, tokenizer, label_ids, max_length)
    evaluation = _encode(eval_rows, tokenizer, label_ids, max_length) if eval_rows else None
    args = transformers.TrainingArguments(
        output_dir=str(output_dir),
        learning_rate=learning_rate,
        num_train_epochs=epochs,
        per_device_train_batch_size=batch_size,
        per_device_eval_batch_size=batch_size,
        warmup_steps=warmup_ratio,  # transformers 5: a value below 1 is a ratio of the training steps
        weight_decay=weight_decay,
        adam_beta1=0.9,
        adam_beta2=0.999,
        optim="adamw_torch",
        lr_scheduler_type="linear",
        seed=seed,
        data_seed=seed,
        eval_strategy="epoch" if evaluation is not None else "no",
        save_strategy="no",
        logging_strategy="epoch",
        report_to="none",
        disable_tqdm=True,
        dataloader_pin_memory=torch.cuda.is_available(),
    )
    trainer = transformers.Trainer(
        model=model,
        args=args,
        train_dataset=train,
        eval_dataset=evaluation,
        data_collator=transformers.DataCollatorWithPadding(tokenizer),
        processing_class=tokenizer,
        compute_metrics=_accuracy if evaluation is not None else None,
    )
    trainer.label_ids = dict(label_ids)
    trainer.settings = settings
    return trainer


def finetune(
    model_name_or_path: str, train_rows: Sequence[dict], *, output_dir: str | os.PathLike, **settings: Any
) -> dict:
    """Fine-tune an NLI model on ``train_rows`` and save it (safetensors) with its tokenizer to ``output_dir``.

    ``settings`` are :func:`prepare_trainer`'s keywords (hyper-parameters, ``eval_rows``, ``label_map``, loading
    options), with its defaults; ``learning_rate`` None takes the paper's (1e-5 RoBERTa, 2e-5 otherwise). Returns
    the metrics: train loss, runtime, eval accuracy (with ``eval_rows``), the settings used and the model's label
    ids.
    """
    trainer = prepare_trainer(model_name_or_path, train_rows, output_dir=output_dir, **settings)
    result = trainer.train()
    metrics = {k: v for k, v in result.metrics.items() if isinstance(v, (int, float))}
    if trainer.eval_dataset is not None:
        metrics.update(trainer.evaluate())
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    trainer.save_model(str(out))  # weights (safetensors), config and the tokenizer (processing_class)
    (out / "training_args.bin").unlink(missing_ok=True)  # a pickle: the folder holds no pickled files
    args = trainer.args
    metrics.update(
        model=model_name_or_path,
        output_dir=str(out),
        n_train=len(trainer.train_dataset),
        n_eval=len(trainer.eval_dataset) if trainer.eval_dataset is not None else 0,
        learning_rate=args.learning_rate,
        epochs=args.num_train_epochs,
        batch_size=args.per_device_train_batch_size,
        warmup_ratio=trainer.settings["warmup_ratio"],
        weight_decay=args.weight_decay,
        max_length=trainer.settings["max_length"],
        seed=trainer.settings["seed"],
        label_ids=dict(trainer.label_ids),
    )
    (out / "finetune_metrics.json").write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n")
    return metrics
