"""bf16 on a CPU: the matrix products in bfloat16, the residual stream and the output head in float32.

A CPU with bf16 matrix units (AMX, AVX-512 BF16) runs a linear layer's product about twice as fast in bfloat16 as
in float32. A model held all in bf16 also rounds its residual stream to 8 bits of mantissa at every layer, and
the output head's logits with it: on SmolLM2-135M-Instruct's religion quick run (docs/speed.md) that moved the
γ(x, a) ranking against fp32 to a rank correlation of 0.987, below the 0.99 a bf16 run must keep.

So with ``--dtype bfloat16`` on a CPU a causal LM is loaded in float32 and :func:`bfloat16_products` holds each
linear layer but the output head in bf16, casting its input to bf16; the layer's bf16 output, added to the
float32 residual stream, is promoted back to float32 there. What runs between two products inside a block
(activation, attention, rotary positions) runs in bf16 as in a bf16 model; the embeddings, norms, residual stream
and output head stay float32. QA and masked-LM models (an encoder's logits are not summed over answer tokens;
their rank correlations held at 0.999 and 1.000 all in bf16, docs/speed.md) and GPUs keep a model held in bf16.
"""

from __future__ import annotations


def bfloat16_products(model) -> int:
    """Hold each plain linear layer (``torch.nn.Linear``, transformers' ``Conv1D``) of a float32 ``model`` but
    its output head in bfloat16, computing on bf16 inputs; returns how many layers changed."""
    import torch
    from transformers.pytorch_utils import Conv1D

    head = model.get_output_embeddings()
    changed = 0
    for module in model.modules():
        # the exact types: a quantized or adapter layer subclasses them and stays as it is
        if type(module) in (torch.nn.Linear, Conv1D) and module is not head:
            module.to(torch.bfloat16)
            module.register_forward_pre_hook(_to_bfloat16)
            changed += 1
        elif type(module).__name__.endswith("RotaryEmbedding"):
            # cos and sin come in the residual stream's dtype; the queries and keys they turn are bf16
            module.register_forward_hook(lambda module, args, output: _to_bfloat16(module, output))
    return changed


def _to_bfloat16(module, tensors: tuple) -> tuple:
    """The floating tensors of ``tensors`` in bf16, the rest as they are."""
    import torch

    return tuple(t.to(torch.bfloat16) if torch.is_tensor(t) and t.is_floating_point() else t for t in tensors)
