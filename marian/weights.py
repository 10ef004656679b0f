"""transformers' names of a MarianMTModel's weights and the engine's, and the layout each multiplies in.

torch's nn.Linear keeps its weight as (out, in) and computes x W^T + b; the engine multiplies on the right, x W, with
per-head weights head-first, (h, d_model, d_k). Marian's q_proj splits its d_model outputs into h heads of d_k
columns each (MarianAttention: view(..., -1, head_dim)), so head i is columns i d_k ... (i + 1) d_k of W^T."""
from __future__ import annotations

import numpy as np

EMBEDDING = "model.shared.weight"
# The same table under the other names a checkpoint may hold it by (tied: Marian shares one table three ways).
TIED_COPIES = ("model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight", "lm_head.weight")
# Computed, not learned: MarianSinusoidalPositionalEmbedding makes them; older checkpoints saved them.
POSITIONS = ("model.encoder.embed_positions.weight", "model.decoder.embed_positions.weight")
ATTENTION = {"enc": {"attn": "self_attn"}, "dec": {"self_attn": "self_attn", "cross_attn": "encoder_attn"}}
LAYER_NORMS = {"enc": {"ln1": "self_attn_layer_norm", "ln2": "final_layer_norm"},
               "dec": {"ln1": "self_attn_layer_norm", "ln2": "encoder_attn_layer_norm", "ln3": "final_layer_norm"}}
STACKS = {"enc": "model.encoder", "dec": "model.decoder"}


def theirs(config) -> dict[str, str]:
    """{transformers' name: the engine's parameter it becomes} of every learned weight but the embedding table."""
    names = {"final_logits_bias": "unembed.b"}
    for stack, prefix in STACKS.items():
        for l in range(config.depth(stack)):
            at, ours = f"{prefix}.layers.{l}", f"{stack}.{l}"
            for block, hf in ATTENTION[stack].items():
                for p in ("q", "k", "v"):
                    names |= {f"{at}.{hf}.{p}_proj.weight": f"{ours}.{block}.W_{p.upper()}",
                              f"{at}.{hf}.{p}_proj.bias": f"{ours}.{block}.b_{p.upper()}"}
                names |= {f"{at}.{hf}.out_proj.weight": f"{ours}.{block}.W_O",
                          f"{at}.{hf}.out_proj.bias": f"{ours}.{block}.b_O"}
            for norm, hf in LAYER_NORMS[stack].items():
                names |= {f"{at}.{hf}.weight": f"{ours}.{norm}.gamma", f"{at}.{hf}.bias": f"{ours}.{norm}.beta"}
            names |= {f"{at}.fc{i}.{part}": f"{ours}.ffn.{'W' if part == 'weight' else 'b'}_{i}"
                      for i in (1, 2) for part in ("weight", "bias")}
    return names


def to_engine(name: str, value: np.ndarray, n_heads: int) -> np.ndarray:
    """A weight in the engine's layout, from transformers' (`name` is the engine's)."""
    kind = name.rsplit(".", 1)[1]
    if kind in ("W_Q", "W_K", "W_V"):
        d_model = value.shape[1]
        return value.T.reshape(d_model, n_heads, -1).transpose(1, 0, 2)  # (d_model, h d_k) -> (h, d_model, d_k)
    if kind in ("b_Q", "b_K", "b_V"):
        return value.reshape(n_heads, -1)  # (h d_k,) -> (h, d_k)
    if kind in ("W_O", "W_1", "W_2"):
        return value.T  # (out, in) -> (in, out)
    if name == "unembed.b":
        return value.reshape(-1)  # (1, V) -> (V,)
    return value
