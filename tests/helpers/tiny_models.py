"""Tiny models built locally (no network) for probe tests: BERT QA, BERT/DistilBERT/RoBERTa MLM, causal LMs
(GPT-2, Llama, Qwen2, Mistral), BERT NLI."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
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


#: Chat templates in the style of Qwen 2.5 (a default system message) and Llama 3 (BOS, headers, trimmed content).
CHAT_TEMPLATES = {
    "qwen": (
        "{%- if messages[0]['role'] != 'system' %}"
        "{{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{%- endif %}"
        "{%- for message in messages %}"
        "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}{%- endfor %}"
        "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{%- endif %}"
    ),
    "llama": (
        "{{ bos_token }}{% for message in messages %}"
        "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] | trim"
        " + '<|eot_id|>' }}{% endfor %}"
        "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"
    ),
}
CHAT_TOKENS = ["<|im_start|>", "<|im_end|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]


def causal_lm(
    folder: Path,
    texts: list[str],
    arch: str = "gpt2",
    *,
    chat: str | None = None,
    bos: bool = False,
    layers: int = 2,
    sliding_window: int | None = None,
    seed: int = 0,
) -> Path:
    """A tiny causal LM: ``arch`` "gpt2" (learned positions), "llama" or "qwen2" (rotary positions, grouped
    key/value heads) or "mistral" (rotary, sliding window), with a byte-level BPE tokenizer trained on ``texts``;
    ``chat`` names one of :data:`CHAT_TEMPLATES`, ``bos`` makes the tokenizer start every text with ``<s>``."""
    import torch
    from tokenizers.processors import TemplateProcessing
    from transformers import (
        GPT2Config,
        GPT2LMHeadModel,
        LlamaConfig,
        LlamaForCausalLM,
        MistralConfig,
        MistralForCausalLM,
        Qwen2Config,
        Qwen2ForCausalLM,
    )

    tok = bpe_tokenizer(folder, texts)
    if chat is not None:
        tok.add_special_tokens({"additional_special_tokens": CHAT_TOKENS})
        tok.chat_template = CHAT_TEMPLATES[chat]
    if bos:
        tok.backend_tokenizer.post_processor = TemplateProcessing(
            single="<s> $A", special_tokens=[("<s>", tok.bos_token_id)]
        )
    tok.save_pretrained(folder)
    torch.manual_seed(seed)
    size = {"vocab_size": len(tok), "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": layers}
    rotary = {**size, "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 512}
    if arch == "gpt2":
        config = GPT2Config(vocab_size=len(tok), n_embd=32, n_layer=layers, n_head=2, n_positions=256)
        model = GPT2LMHeadModel(config)
    elif arch == "llama":
        model = LlamaForCausalLM(LlamaConfig(**rotary))
    elif arch == "qwen2":
        model = Qwen2ForCausalLM(Qwen2Config(**rotary))
    elif arch == "mistral":
        model = MistralForCausalLM(MistralConfig(**rotary, sliding_window=sliding_window))
    else:
        raise ValueError(f"unknown arch {arch!r}")
    _scale(model)
    model.save_pretrained(folder)
    return folder


def gpt2(folder: Path, texts: list[str], seed: int = 0) -> Path:
    """A tiny GPT-2 (two layers) with its own byte-level BPE tokenizer."""
    return causal_lm(folder, texts, "gpt2", seed=seed)


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


def gguf_causal_lm(folder: Path, texts: list[str], *, chat: str | None = "qwen", seed: int = 0) -> Path:
    """A tiny Llama written as a GGUF file (``folder/tiny-llama.F32.gguf``) with the ``gguf`` package's writer,
    as llama.cpp's ``convert_hf_to_gguf.py`` writes one: llama.cpp's tensor names, the query and key rows
    permuted for its rotary layout, the byte-level BPE vocabulary, merges and special tokens as metadata, and
    the chat template. The same model as a transformers folder is ``folder/hf`` (what the GGUF must load as)."""
    import json

    import gguf
    import numpy as np
    from transformers import AutoModelForCausalLM, AutoTokenizer

    hf = causal_lm(folder / "hf", texts, "llama", chat=chat, seed=seed)
    model = AutoModelForCausalLM.from_pretrained(hf)
    tokenizer = AutoTokenizer.from_pretrained(hf)
    config = model.config
    heads, kv_heads = config.num_attention_heads, config.num_key_value_heads

    def permute(weight: np.ndarray, n_head: int) -> np.ndarray:  # llama.cpp's LlamaModel.permute
        return (
            weight.reshape(n_head, 2, weight.shape[0] // n_head // 2, *weight.shape[1:])
            .swapaxes(1, 2)
            .reshape(weight.shape)
        )

    path = folder / "tiny-llama.F32.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("tiny-llama")
    writer.add_block_count(config.num_hidden_layers)
    writer.add_context_length(config.max_position_embeddings)
    writer.add_embedding_length(config.hidden_size)
    writer.add_feed_forward_length(config.intermediate_size)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_rope_freq_base(float(config.rope_parameters["rope_theta"]))
    writer.add_layer_norm_rms_eps(config.rms_norm_eps)
    writer.add_rope_dimension_count(config.hidden_size // heads)
    writer.add_vocab_size(config.vocab_size)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)

    vocab = tokenizer.get_vocab()
    tokens = [token for token, _ in sorted(vocab.items(), key=lambda item: item[1])]
    special = set(tokenizer.all_special_tokens)
    merges = json.loads((hf / "tokenizer.json").read_text())["model"]["merges"]
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types(
        [gguf.TokenType.CONTROL if t in special else gguf.TokenType.NORMAL for t in tokens]
    )
    writer.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in merges])
    writer.add_bos_token_id(tokenizer.bos_token_id)
    writer.add_eos_token_id(tokenizer.eos_token_id)
    writer.add_pad_token_id(tokenizer.pad_token_id)
    writer.add_add_bos_token(False)
    if tokenizer.chat_template:
        writer.add_chat_template(tokenizer.chat_template)

    names = {
        "model.embed_tokens.weight": "token_embd.weight",
        "model.norm.weight": "output_norm.weight",
        "lm_head.weight": "output.weight",
    }
    layer = {
        "input_layernorm": "attn_norm",
        "self_attn.q_proj": "attn_q",
        "self_attn.k_proj": "attn_k",
        "self_attn.v_proj": "attn_v",
        "self_attn.o_proj": "attn_output",
        "post_attention_layernorm": "ffn_norm",
        "mlp.gate_proj": "ffn_gate",
        "mlp.up_proj": "ffn_up",
        "mlp.down_proj": "ffn_down",
    }
    for name, tensor in model.state_dict().items():
        array = tensor.float().numpy()
        if name in names:
            writer.add_tensor(names[name], array)
            continue
        _, _, index, *rest = name.split(".")
        part = ".".join(rest[:-1])
        if part == "self_attn.q_proj":
            array = permute(array, heads)
        elif part == "self_attn.k_proj":
            array = permute(array, kv_heads)
        writer.add_tensor(f"blk.{index}.{layer[part]}.{rest[-1]}", array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def rewrite_gguf(
    source: Path,
    path: Path,
    *,
    drop: Iterable[str] = (),
    fields: dict | None = None,
    architecture: str | None = None,
    keep: Callable[[str], bool] = lambda name: True,
) -> Path:
    """A copy of the GGUF file ``source`` written to ``path`` with the ``gguf`` package, changed as a broken or
    hostile file would be: metadata keys dropped (``drop``) or set (``fields``: key -> (value, value type, item type
    or None)), another ``general.architecture``, only the tensors ``keep`` keeps."""
    import gguf
    import numpy as np

    reader = gguf.GGUFReader(str(source))
    writer = gguf.GGUFWriter(str(path), architecture or reader.fields["general.architecture"].contents())
    fields = fields or {}
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture" or key in drop or key in fields:
            continue
        writer.add_key_value(
            key, field.contents(), field.types[0], field.types[1] if len(field.types) > 1 else None
        )
    for key, (value, kind, item) in fields.items():
        writer.add_key_value(key, value, kind, item)
    for tensor in reader.tensors:
        if keep(tensor.name):
            shape = [int(size) for size in reversed(tensor.shape)]
            writer.add_tensor(tensor.name, np.array(tensor.data).reshape(shape))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
