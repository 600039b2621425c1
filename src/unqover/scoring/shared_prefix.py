"""Log-probabilities of answers after prompts with a causal LM, computing each shared token once.

``answer_log_probs`` returns Σ log p(answer token | prompt, earlier answer tokens) for every answer. The plain
computation runs each prompt + answer as one full sequence. The shared computation gives the same numbers with
far fewer token passes, in three passes over a key/value cache:

1. **Prefixes.** Prompts of one group (e.g. one context asked many questions) share their longest common token
   prefix; it is run once per group (at most every prompt's length minus one, so each prompt keeps a token).
2. **Prompts.** The cache of each group's prefix is expanded to its prompts, and the rest of each prompt is run
   once; its last position gives the distribution of every answer's first token.
3. **Answers.** The cache of each prompt is expanded to its answers of two or more tokens, and their tokens but
   the last are run (a one-token answer needs no pass of its own).

Layout: prefixes are left-padded, the rest of each prompt is left-padded after its prefix, answers are
right-padded after their prompt; padding is masked and position ids count only real tokens, so every real token
sees exactly the tokens and positions of its plain full sequence. Logits are kept only where they are needed and
the log-softmax is taken in float32 whatever the model's dtype.

Memory: the cache is expanded in place, layer by layer, so a batch of ``n`` prompts holds one cache at a time:
first its ``n`` prompts, then at most ``2n`` answers (two per prompt here), each as long as the padded prompt plus
answer; the keys and values of the plain computation's ``2n`` full sequences, no more. The runner's
out-of-memory halving of the batch size applies as for every scorer.

Sharing needs a cache of attention keys and values (a recurrent state would also carry the padding between a
prefix and the rest of its prompt) and, for sliding-window layers, a padded width within the window (gaps would
count against it); otherwise the plain computation runs. ``cache_kind`` tells them apart.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from unqover.scoring.padding import pad_sequences

#: Input ids of one token sequence.
Tokens = Sequence[int]


def answer_log_probs(
    model,
    prompts: Sequence[Tokens],
    answers: Sequence[Tokens],
    answer_prompt: np.ndarray,
    *,
    groups: np.ndarray | None,
    pad_id: int,
    device,
    sliding_window: int | None = None,
) -> np.ndarray:
    """Σ log p(answer tokens | its prompt) for each answer, float64 (0 for an empty answer).

    ``answer_prompt[j]`` is the prompt of ``answers[j]``. ``groups[i]`` labels prompt ``i``: prompts with one label
    share the computation of their common token prefix; ``None`` runs every prompt + answer as a full sequence.
    ``sliding_window``: the model's smallest window, if it has one (sharing only where everything fits in it).
    """
    answer_prompt = np.asarray(answer_prompt, dtype=np.int64)
    if len(answer_prompt) != len(answers):
        raise ValueError(f"{len(answers)} answers but {len(answer_prompt)} prompt indices")
    if not len(answers):
        return np.zeros(0)
    if groups is None:
        return full_sequence_log_probs(model, prompts, answers, answer_prompt, pad_id=pad_id, device=device)
    prefix_lengths = shared_prefix_lengths(prompts, np.asarray(groups))
    width = max(prefix_lengths) + max(len(p) - k for p, k in zip(prompts, prefix_lengths, strict=True))
    width += max(len(a) for a in answers)
    if sliding_window is not None and width >= sliding_window:
        return full_sequence_log_probs(model, prompts, answers, answer_prompt, pad_id=pad_id, device=device)
    return _shared_log_probs(
        model,
        prompts,
        answers,
        answer_prompt,
        np.asarray(groups),
        prefix_lengths,
        pad_id=pad_id,
        device=device,
    )


def shared_prefix_lengths(prompts: Sequence[Tokens], groups: np.ndarray) -> list[int]:
    """Per prompt, the tokens its group shares: the group's common prefix, short of every member's last token."""
    members: dict[int, list[int]] = {}
    for i, g in enumerate(groups.tolist()):
        members.setdefault(g, []).append(i)
    lengths = [0] * len(prompts)
    for rows in members.values():
        seqs = [list(prompts[i]) for i in rows]
        first, last = min(seqs), max(seqs)  # lexicographic: every sequence shares what these two share
        common = sum(
            1 for _ in itertools.takewhile(lambda pair: pair[0] == pair[1], zip(first, last, strict=False))
        )
        shared = max(0, min(common, min(len(s) for s in seqs) - 1))
        for i in rows:
            lengths[i] = shared
    return lengths


def cache_kind(model, device) -> tuple[bool, int | None]:
    """Whether the model's cache holds only attention keys and values (so prefixes can be shared), and its
    smallest sliding window (None without one), from the cache of a two-token forward."""
    import torch
    from transformers.cache_utils import DynamicCache, DynamicLayer, DynamicSlidingWindowLayer

    with torch.inference_mode():
        ids = torch.zeros((1, 2), dtype=torch.long, device=device)
        cache = model(input_ids=ids, use_cache=True, logits_to_keep=1).past_key_values
    layers = getattr(cache, "layers", None)
    if not isinstance(cache, DynamicCache) or not layers:
        return False, None
    if any(type(layer) not in (DynamicLayer, DynamicSlidingWindowLayer) for layer in layers):
        return False, None
    windows = [layer.sliding_window for layer in layers if isinstance(layer, DynamicSlidingWindowLayer)]
    return True, min(windows) if windows else None


def full_sequence_log_probs(
    model,
    prompts: Sequence[Tokens],
    answers: Sequence[Tokens],
    answer_prompt: np.ndarray,
    *,
    pad_id: int,
    device,
) -> np.ndarray:
    """The plain computation: each prompt + answer as one left-padded sequence, logits at the answer only."""
    import torch

    sequences = [list(prompts[i]) + list(a) for i, a in zip(answer_prompt.tolist(), answers, strict=True)]
    ids, mask = pad_sequences(sequences, pad_id, left=True)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    keep = max(len(a) for a in answers) + 1
    with torch.inference_mode():
        logits = model(
            input_ids=ids.to(device),
            attention_mask=mask.to(device),
            position_ids=positions.to(device),
            use_cache=False,
            logits_to_keep=keep,
        ).logits[:, -keep:]
        targets = ids[:, ids.shape[1] - keep + 1 :].to(device)  # position t predicts token t + 1
        token_lp = _token_log_probs(logits[:, :-1], targets)
        lengths = torch.tensor([len(a) for a in answers], device=device)
        in_answer = torch.arange(keep - 1, device=device)[None, :] >= (keep - 1 - lengths)[:, None]
        return (token_lp * in_answer).sum(-1).double().cpu().numpy()


def _shared_log_probs(
    model,
    prompts: Sequence[Tokens],
    answers: Sequence[Tokens],
    answer_prompt: np.ndarray,
    groups: np.ndarray,
    prefix_lengths: list[int],
    *,
    pad_id: int,
    device,
) -> np.ndarray:
    import torch

    n = len(prompts)
    with torch.inference_mode():
        # 1. one prefix per group (groups that share nothing get an empty, fully masked one)
        slot_of_group: dict[int, int] = {}
        prefixes: list[Tokens] = []
        for i, g in enumerate(groups.tolist()):
            if prefix_lengths[i] and g not in slot_of_group:
                slot_of_group[g] = len(prefixes)
                prefixes.append(prompts[i][: prefix_lengths[i]])
        slot = torch.tensor([slot_of_group.get(g, 0) for g in groups.tolist()], device=device)
        cache = None
        if prefixes:
            ids, mask = pad_sequences(prefixes, pad_id, left=True)
            mask, ids = mask.to(device), ids.to(device)
            cache = model(
                input_ids=ids,
                attention_mask=mask,
                position_ids=(mask.cumsum(-1) - 1).clamp(min=0),
                use_cache=True,
                logits_to_keep=1,
            ).past_key_values
            cache.reorder_cache(slot)
            prefix_mask = mask[slot] * torch.tensor([k > 0 for k in prefix_lengths], device=device)[:, None]
        else:
            prefix_mask = torch.zeros((n, 0), dtype=torch.long, device=device)
        # 2. the rest of every prompt, once: its last position predicts every answer's first token
        ids, mask = pad_sequences(
            [p[k:] for p, k in zip(prompts, prefix_lengths, strict=True)], pad_id, left=True
        )
        ids, mask = ids.to(device), mask.to(device)
        start = torch.tensor(prefix_lengths, device=device)[:, None]
        prompt_mask = torch.cat([prefix_mask, mask], dim=1)
        out = model(
            input_ids=ids,
            attention_mask=prompt_mask,
            position_ids=(start + mask.cumsum(-1) - 1).clamp(min=0),
            past_key_values=cache,
            use_cache=True,
            logits_to_keep=1,
        )
        chosen = torch.as_tensor(answer_prompt, device=device)
        first = torch.tensor([a[0] if len(a) else pad_id for a in answers], device=device)
        log_probs = out.logits[:, -1].float().log_softmax(-1)
        total = log_probs[chosen, first] * torch.tensor([len(a) > 0 for a in answers], device=device)
        del log_probs
        # 3. the answers' further tokens, from each prompt's cache expanded to its long answers
        long = [j for j, a in enumerate(answers) if len(a) > 1]
        if long:
            cache = out.past_key_values
            del out
            rows = chosen[long]
            cache.reorder_cache(rows)
            ids, mask = pad_sequences([answers[j][:-1] for j in long], pad_id, left=False)
            ids, mask = ids.to(device), mask.to(device)
            lengths = torch.tensor([len(prompts[i]) for i in answer_prompt[long].tolist()], device=device)
            logits = model(
                input_ids=ids,
                attention_mask=torch.cat([prompt_mask[rows], mask], dim=1),
                position_ids=lengths[:, None] + torch.arange(ids.shape[1], device=device)[None, :],
                past_key_values=cache,
                use_cache=True,
                logits_to_keep=0,
            ).logits
            targets, _ = pad_sequences([answers[j][1:] for j in long], pad_id, left=False)
            token_lp = _token_log_probs(logits, targets.to(device)) * mask
            total[torch.tensor(long, device=device)] += token_lp.sum(-1)
        return total.double().cpu().numpy()


def _token_log_probs(logits, targets):
    """log p(target) at each position, with the softmax in float32 whatever the model's dtype."""
    return logits.float().log_softmax(-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
