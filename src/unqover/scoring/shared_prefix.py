"""Log-probabilities of answers after prompts with a causal LM, computing each shared token once.

``answer_log_probs`` returns Σ log p(answer token | prompt, earlier answer tokens) for every answer. The plain
computation runs each prompt + answer as one full sequence. The shared computation gives the same numbers with
far fewer token passes, in one forward pass per batch over a *token tree*:

- the tokens every prompt of the batch starts with (e.g. a chat template's header and system prompt) form the
  root, once per packed row;
- the prompts of one group (e.g. one context asked many questions) share their longest common token prefix (at
  most every prompt's length minus one, so each prompt keeps a token): a branch, once per group;
- the rest of each prompt is a branch of its group's prefix, once per prompt: its last token gives the
  distribution of every answer's first token;
- each answer of two or more tokens is a branch of its prompt: its tokens but the last, once per answer.

Groups are packed into rows (first fit, longest first). A 4-D attention mask lets each token see exactly its
ancestors and the earlier tokens of its own branch, and position ids count the positions of its plain full
sequence, so every token sees exactly the tokens and positions it sees there; attention does not depend on the
order of the keys, so each row puts the tokens whose logits are needed last and the model computes logits for
those alone (``logits_to_keep``). The log-softmax is taken in float32 whatever the model's dtype.

There is no key/value cache: no copies of prefixes per prompt or per answer, no passes of one token. Packing
needs an attention that takes such a mask (``sdpa`` or ``eager``), a model whose state is attention alone (a
recurrent state would also carry the other branches), and, for sliding-window layers, sequences within the window
(the mask is used as given); otherwise the plain computation runs. ``cache_kind`` and ``packable`` tell them
apart. The runner's out-of-memory halving of the batch size applies as for every scorer.
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
    longest = max(len(prompts[i]) + len(a) for i, a in zip(answer_prompt.tolist(), answers, strict=True))
    if not packable(model) or (sliding_window is not None and longest >= sliding_window):
        return full_sequence_log_probs(model, prompts, answers, answer_prompt, pad_id=pad_id, device=device)
    prefix_lengths = shared_prefix_lengths(prompts, np.asarray(groups))
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
        shared = _common_prefix([list(prompts[i]) for i in rows])
        for i in rows:
            lengths[i] = shared
    return lengths


def cache_kind(model, device) -> tuple[bool, int | None]:
    """Whether the model's state is attention keys and values alone (so a tree of prefixes can be packed), and
    its smallest sliding window (None without one), from the cache of a two-token forward."""
    import torch
    from transformers.cache_utils import DynamicCache, DynamicLayer, DynamicSlidingWindowLayer

    with torch.inference_mode():
        ids = torch.zeros((1, 2), dtype=torch.long, device=device)
        cache = model(input_ids=ids, use_cache=True, logits_to_keep=1).cache
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


#: Packed rows hold about this many tokens (more when one group needs it): wide enough that the root is a small
#: share of each row, narrow enough that attention (quadratic in the width) stays small beside the layers' matrix
#: products.
ROW_TOKENS = 256

#: attention implementations that take a custom 4-D mask (bool for sdpa, additive float for eager)
MASKED_ATTENTION = ("sdpa", "eager")


def packable(model) -> bool:
    """Whether the model's attention takes the tree's 4-D mask (``sdpa`` or ``eager``)."""
    return getattr(model.config, "_attn_implementation", None) in MASKED_ATTENTION


class _Tree:
    """The tokens of one batch's tree packed into rows: per token its id, position and branch labels (group,
    prompt, answer; -1 where the token belongs to every branch below its level, -2 for padding), and per answer
    token the kept logit that predicts it."""

    def __init__(self, prompts, answers, answer_prompt, groups, prefix_lengths, pad_id: int) -> None:
        root = _common_prefix(prompts)
        members: dict[int, list[int]] = {}
        for i, g in enumerate(groups.tolist()):
            members.setdefault(g, []).append(i)
        answers_of: dict[int, list[int]] = {}
        for j, i in enumerate(answer_prompt.tolist()):
            if len(answers[j]):
                answers_of.setdefault(i, []).append(j)
        # per unit (a group, or part of a large one, with its own copy of the group's prefix): its body (tokens
        # whose logits are not needed), its needed tokens, and what they predict as (index among the needed
        # tokens, target id, answer); the unit's index labels its tokens
        units = []
        for rows in members.values():
            start = prefix_lengths[rows[0]]
            for part in _parts(
                rows, start - root, [len(prompts[i]) - start for i in rows], answers, answers_of
            ):
                g = len(units)
                body = [(t, p, g, -1, -1) for p, t in enumerate(prompts[part[0]][root:start], start=root)]
                needed, targets = [], []
                for i in part:
                    rest = [(t, p, g, i, -1) for p, t in enumerate(prompts[i][start:], start=start)]
                    body += rest[:-1]
                    targets += [(len(needed), answers[j][0], j) for j in answers_of.get(i, [])]
                    needed.append(rest[-1])
                    for j in answers_of.get(i, []):
                        for p, (t, following) in enumerate(
                            zip(answers[j], answers[j][1:], strict=False), start=len(prompts[i])
                        ):
                            targets.append((len(needed), following, j))
                            needed.append((t, p, g, i, j))
                units.append((body, needed, targets))
        head = [(t, p, -1, -1, -1) for p, t in enumerate(prompts[0][:root])]
        packed = _balanced_rows([len(b) + len(n) for b, n, _ in units], len(head))
        bodies = [head + [tok for u in r for tok in units[u][0]] for r in packed]
        needs = [[tok for u in r for tok in units[u][1]] for r in packed]
        body_width, self.kept = max(map(len, bodies)), max(map(len, needs))
        pad = (pad_id, 0, -2, -2, -2)
        # each row: its body, padding, then its needed tokens, last (padded in front to a common width)
        self.tokens = np.array(
            [
                b + [pad] * (body_width - len(b) + self.kept - len(n)) + n
                for b, n in zip(bodies, needs, strict=True)
            ],
            dtype=np.int64,
        )  # (rows, width, 5)
        self.targets = []  # (row, index among the row's kept logits, target id, answer)
        for r, row_units in enumerate(packed):
            offset = self.kept - len(needs[r])
            for u in row_units:
                self.targets += [(r, offset + n, target, j) for n, target, j in units[u][2]]
                offset += len(units[u][1])

    def mask(self):
        """(rows, 1, width, width) bool: a token sees its ancestors and its own branch up to its position."""
        import torch

        tokens = torch.from_numpy(self.tokens)
        position, *labels = (tokens[..., k] for k in range(1, 5))
        query, key = (slice(None), slice(None), None), (slice(None), None, slice(None))
        sees = position[key] <= position[query]
        for label in labels:
            sees &= (label[key] == -1) | (label[key] == label[query])
        real = labels[0] != -2
        sees &= real[key] & real[query]
        sees |= torch.eye(tokens.shape[1], dtype=torch.bool)[None]  # padding sees itself (no empty row)
        return sees[:, None]


def packed_shape(prompts, answers, answer_prompt, groups) -> tuple[int, int]:
    """(rows, width) of the packed tree the shared computation runs for one batch (for benchmarks: the tokens a
    batch costs)."""
    groups = np.asarray(groups)
    tree = _Tree(
        prompts, answers, np.asarray(answer_prompt), groups, shared_prefix_lengths(prompts, groups), 0
    )
    return tree.tokens.shape[0], tree.tokens.shape[1]


def _parts(rows: list[int], prefix: int, rests: list[int], answers, answers_of) -> list[list[int]]:
    """A group's prompts in parts of at most about :data:`ROW_TOKENS` tokens each (its prefix, then each prompt's
    rest and long answers), so that no packed row, and no attention over it, grows with the group: a context asked
    140 questions is several parts, each with a copy of the prefix."""
    parts: list[list[int]] = [[]]
    size = prefix
    for i, rest in zip(rows, rests, strict=True):
        tokens = rest + sum(max(len(answers[j]) - 1, 0) for j in answers_of.get(i, []))
        if parts[-1] and size + tokens > ROW_TOKENS:
            parts.append([])
            size = prefix
        parts[-1].append(i)
        size += tokens
    return parts


def _balanced_rows(sizes: list[int], head: int) -> list[list[int]]:
    """Units (their token counts) packed into rows that each start with ``head`` tokens: as many rows as rows of
    :data:`ROW_TOKENS` (or of the largest unit) need, each unit (largest first) to the row with the fewest tokens
    so far, so that the rows end about level and little padding is run."""
    width = max(ROW_TOKENS, head + max(sizes)) - head
    rows = min(len(sizes), max(1, -(-sum(sizes) // max(1, width))))
    packed: list[list[int]] = [[] for _ in range(rows)]
    load = [0] * rows
    for unit in sorted(range(len(sizes)), key=lambda u: -sizes[u]):
        row = min(range(rows), key=load.__getitem__)
        packed[row].append(unit)
        load[row] += sizes[unit]
    return packed


def _common_prefix(prompts: Sequence[Tokens]) -> int:
    """Tokens every prompt starts with, short of the shortest prompt's last token."""
    prompts = [list(p) for p in prompts]
    first, last = min(prompts), max(prompts)  # lexicographic: every sequence shares what these two share
    common = sum(
        1 for _ in itertools.takewhile(lambda pair: pair[0] == pair[1], zip(first, last, strict=False))
    )
    return max(0, min(common, min(len(p) for p in prompts) - 1))


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

    tree = _Tree(prompts, answers, answer_prompt, groups, prefix_lengths, pad_id)
    mask = tree.mask().to(device)
    if model.config._attn_implementation == "eager":
        blocked = torch.finfo(model.dtype).min
        mask = torch.zeros(mask.shape, dtype=model.dtype, device=device).masked_fill_(~mask, blocked)
    tokens = torch.from_numpy(tree.tokens)
    row, kept, target, answer = torch.tensor(tree.targets, dtype=torch.long, device=device).reshape(-1, 4).T
    with torch.inference_mode():
        logits = model(
            input_ids=tokens[..., 0].to(device),
            attention_mask=mask,
            position_ids=tokens[..., 1].to(device),
            use_cache=False,
            logits_to_keep=tree.kept,
        ).logits
        log_probs = logits.float().log_softmax(-1)[row, kept, target]
        total = torch.zeros(len(answers), dtype=torch.float64, device=device)
        total.index_add_(0, answer, log_probs.double())
        return total.cpu().numpy()


def _token_log_probs(logits, targets):
    """log p(target) at each position, with the softmax in float32 whatever the model's dtype."""
    return logits.float().log_softmax(-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
