"""Tiny models built locally (no network) for probe tests: BERT QA, BERT/DistilBERT/RoBERTa MLM, GPT-2."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def words_of(texts: Iterable[str]) -> list[str]:
    """Lower-cased words and punctuation of the texts, sorted."""
    found: set[str] = set()
    for text in texts:
        found.update(re.findall(r"\w+|[^\w\s]", text.lower()))
    return sorted(found)


def wordpiece_tokenizer(folder: Path, texts: Iterable[str], drop: Iterable[str] = ()):
    """An uncased WordPiece tokenizer whose vocabulary is every word of ``texts`` minus ``drop``, saved to ``folder``."""
    from transformers import BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    vocab = (
        SPECIAL
        + [w for w in words_of(texts) if w not in set(drop)]
        + [f"##{c}" for c in "abcdefghijklmnopqrstuvwxyz"]
    )
    vocab += list("abcdefghijklmnopqrstuvwxyz")
    vocab = list(dict.fromkeys(vocab))
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tokenizer = BertTokenizerFast(vocab=str(folder / "vocab.txt"), do_lower_case=True)
    tokenizer.save_pretrained(folder)
    return tokenizer


def bpe_tokenizer(folder: Path, texts: list[str], vocab_size: int = 600):
    """A byte-level BPE tokenizer (GPT-2/RoBERTa style) trained on ``texts``, saved to ``folder``."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        texts,
        vocab_size=vocab_size,
        min_frequency=1,
        special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
    )
    tokenizer.save_pretrained(folder)
    return tokenizer


def _small(config_cls, **kwargs):
    base = {
        "hidden_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "intermediate_size": 64,
        "max_position_embeddings": 256,
    }
    return config_cls(**{**base, **kwargs})


def bert_qa(folder: Path, texts: list[str], seed: int = 0) -> Path:
    import torch
    from transformers import BertConfig, BertForQuestionAnswering

    tok = wordpiece_tokenizer(folder, texts)
    torch.manual_seed(seed)
    model = BertForQuestionAnswering(_small(BertConfig, vocab_size=len(tok)))
    _scale(model)
    model.save_pretrained(folder)
    return folder


def bert_mlm(folder: Path, texts: list[str], drop: Iterable[str] = (), seed: int = 0) -> Path:
    import torch
    from transformers import BertConfig, BertForMaskedLM

    tok = wordpiece_tokenizer(folder, texts, drop)
    torch.manual_seed(seed)
    model = BertForMaskedLM(_small(BertConfig, vocab_size=len(tok)))
    _scale(model)
    model.save_pretrained(folder)
    return folder


def distilbert_mlm(folder: Path, texts: list[str], seed: int = 0) -> Path:
    import torch
    from transformers import DistilBertConfig, DistilBertForMaskedLM

    tok = wordpiece_tokenizer(folder, texts)
    torch.manual_seed(seed)
    config = DistilBertConfig(
        vocab_size=len(tok), dim=32, n_layers=2, n_heads=2, hidden_dim=64, max_position_embeddings=256
    )
    model = DistilBertForMaskedLM(config)
    _scale(model)
    model.save_pretrained(folder)
    return folder


def roberta_mlm(folder: Path, texts: list[str], seed: int = 0) -> Path:
    import torch
    from transformers import RobertaConfig, RobertaForMaskedLM

    tok = bpe_tokenizer(folder, texts)
    torch.manual_seed(seed)
    model = RobertaForMaskedLM(
        _small(RobertaConfig, vocab_size=len(tok), pad_token_id=tok.pad_token_id, max_position_embeddings=260)
    )
    _scale(model)
    model.save_pretrained(folder)
    return folder


def gpt2(folder: Path, texts: list[str], seed: int = 0) -> Path:
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    tok = bpe_tokenizer(folder, texts)
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_embd=32, n_layer=2, n_head=2, n_positions=256))
    _scale(model)
    model.save_pretrained(folder)
    return folder


def _scale(model) -> None:
    """Larger random weights so that scores spread out (random init gives near-uniform outputs)."""
    import torch

    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() > 1 and "embeddings" not in name:
                p.mul_(8.0)


def bert_nli(folder: Path, texts: list[str], id2label: list[str], seed: int = 0) -> Path:
    """A tiny sequence-classification NLI model whose labels are ``id2label`` in that id order."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    tok = wordpiece_tokenizer(folder, texts)
    torch.manual_seed(seed)
    labels = dict(enumerate(id2label))
    config = _small(
        BertConfig,
        vocab_size=len(tok),
        num_labels=len(id2label),
        id2label=labels,
        label2id={n: i for i, n in labels.items()},
    )
    model = BertForSequenceClassification(config)
    _scale(model)
    model.save_pretrained(folder)
    return folder
