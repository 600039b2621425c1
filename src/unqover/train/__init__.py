"""Fine-tuning helpers: NLI debiasing by gender-swap augmentation (Sharma, Dey & Sinha 2021, §4)."""

from unqover.train.nli_debias import (
    DATASET_LABELS,
    HUB_SOURCES,
    augment,
    default_learning_rate,
    finetune,
    load_nli_training_data,
    prepare_trainer,
)

__all__ = [
    "DATASET_LABELS",
    "HUB_SOURCES",
    "augment",
    "default_learning_rate",
    "finetune",
    "load_nli_training_data",
    "prepare_trainer",
]
