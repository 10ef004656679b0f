"""Incremental decoding: the next token's probabilities from the newest position's row alone, as generation needs them.

The forward pass (Model.run_ids) computes every position of the decoder, and generation would run it again each time
the prefix grows by one token. But the decoder's self-attention is causal: row t of every decoder step depends on the
positions up to t only, so appending a token changes no earlier row. And cross-attention's keys and values come from
the encoder's output, which does not depend on the prefix at all. So generation keeps a cache, per decoder layer:

    K_self, V_self   the self-attention keys and values of the positions read so far, one row more per token;
    K_cross, V_cross the cross-attention keys and values of the encoder's output, computed once;

and for each new token computes only its own row through the same equations (engine/attention.py and the rest): its
embedding, its query against every cached key (no mask is needed, since no later position exists yet), the
feed-forward network and LayerNorm of that row, and its logits. The numbers are the full pass's last row up to
rounding, the order of a few sums (tests/test_incremental.py holds tokens equal and probabilities within 1e-12).

    cache, scores = incremental.begin(model, model.run_ids(src_ids, [model.start_id]))
    cache, scores = incremental.read(model, cache, token_id)   # scores.probs: (V,) the next token's

A cache is never changed, only replaced: beam search keeps one per beam, and a kept beam continues from its parent's.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from . import attention as att
from . import feed_forward as ff
from . import positional as pe
from .config import ConfigError
from .layer_norm import layer_norm
from .model import vocab_mask


@dataclass(frozen=True)
class LayerCache:
    """What one decoder layer keeps of the positions it has read."""
    self_k: np.ndarray  # (h, t, d_k) self-attention keys of positions 0 .. t-1
    self_v: np.ndarray  # (h, t, d_v)
    cross_k: np.ndarray | None  # (h, n, d_k) cross-attention keys of the encoder's output; None: decoder-only
    cross_v: np.ndarray | None  # (h, n, d_v)


@dataclass(frozen=True)
class DecoderCache:
    """The decoder's state after reading `length` tokens: one LayerCache per layer."""
    layers: tuple  # LayerCache, layer 0 first
    length: int  # the positions read: the next token's position


class NextToken(NamedTuple):
    """The last row of the output steps: what the decoder says of the token after those it has read."""
    logits: np.ndarray  # (V,) y W_out + b_out
    masked_logits: np.ndarray  # (V,) with the never-next token(s) at -inf
    probs: np.ndarray  # (V,)


def begin(model, trace) -> tuple[DecoderCache, NextToken]:
    """The cache after reading the decoder input of `trace` (a forward pass, lazy: only its encoder is run, once, for
    its output), and what comes next. A decoder-only model's input is the source, then the start token."""
    c = model.config
    memory = None if c.decoder_only else trace["enc.out"]  # (n, d_model)
    cache = DecoderCache(tuple(_layer_cache(model, f"dec.{l}", memory) for l in range(c.depth("dec"))), 0)
    for token_id in trace.tgt_ids:
        cache, scores = read(model, cache, token_id)
    return cache, scores


def _layer_cache(model, prefix, memory) -> LayerCache:
    """A layer's empty self-attention cache and, but in a decoder-only model, the keys and values of the memory."""
    c = model.config
    empty_k, empty_v = np.zeros((c.n_heads, 0, c.d_k)), np.zeros((c.n_heads, 0, c.d_v))  # (h, 0, d_k), (h, 0, d_v)
    if memory is None:
        return LayerCache(empty_k, empty_v, None, None)
    block = f"{prefix}.cross_attn"
    return LayerCache(empty_k, empty_v, _projected(model, block, "K", memory), _projected(model, block, "V", memory))


def read(model, cache: DecoderCache, token_id: int) -> tuple[DecoderCache, NextToken]:
    """Read one more token at position cache.length: the new cache, and the next token's logits and probabilities."""
    high = model.config.max_len
    if cache.length >= high:  # as the full pass refuses a decoder input longer than max_len
        raise ConfigError(f"The target prefix with its start token has {cache.length + 1} tokens; this model accepts "
                          f"at most {high} (max_len).", "too_long_for_model", side="tgt", n=cache.length + 1, high=high)
    x = _embedded(model, token_id, cache.length)  # (1, d_model)
    layers = []
    for l, layer in enumerate(cache.layers):
        x, layer = _layer(model, f"dec.{l}", x, layer)  # (1, d_model)
        layers.append(layer)
    return DecoderCache(tuple(layers), cache.length + 1), _next_token(model, _stack_output(model, x))


def _embedded(model, token_id, position):
    """X = E[token] sqrt(d_model) + PE of one position."""
    c = model.config
    scale = float(np.sqrt(c.d_model)) if c.embed_scale else 1.0
    x_emb = pe.embed(model.params[model.embed_names["tgt"]], [token_id], scale)  # (1, d_model)
    table = pe.positional_encoding(c.pos_encoding, c.max_len, c.d_model, model.params.get("pos.learned"))
    return x_emb + table[position:position + 1]  # (1, d_model)


def _layer(model, prefix, x, cache: LayerCache):
    """One decoder layer on the newest row, its sub-layers in turn as the forward pass's _sublayer: LayerNorm(x +
    Sublayer(x)) post-norm, x + Sublayer(LayerNorm(x)) pre-norm. The cache grows by the row's self-attention key and
    value."""
    c = model.config
    pre = c.norm_placement == "pre"
    for k, block in c.sublayers["dec"].items():
        norm = f"{prefix}.ln{k}"
        given = _normalised(model, norm, x) if pre else x  # (1, d_model)
        if block == "self_attn":
            out, cache = _self_attention(model, f"{prefix}.self_attn", given, cache)  # (1, d_model)
        elif block == "cross_attn":
            q = _projected(model, f"{prefix}.cross_attn", "Q", given)  # (h, 1, d_k)
            out = _attend(model, f"{prefix}.cross_attn", q, cache.cross_k, cache.cross_v)  # (1, d_model)
        else:
            out = _ffn(model, f"{prefix}.ffn", given)  # (1, d_model)
        x = x + out if c.residual else out  # (1, d_model)
        x = x if pre else _normalised(model, norm, x)  # (1, d_model)
    return x, cache


def _self_attention(model, block, x, cache: LayerCache):
    """The newest row's query against the keys of every position so far, its own appended: no position after it
    exists yet, so nothing is masked."""
    k = np.concatenate([cache.self_k, _projected(model, block, "K", x)], axis=1)  # (h, t+1, d_k)
    v = np.concatenate([cache.self_v, _projected(model, block, "V", x)], axis=1)  # (h, t+1, d_v)
    out = _attend(model, block, _projected(model, block, "Q", x), k, v)  # (1, d_model)
    return out, LayerCache(k, v, cache.cross_k, cache.cross_v)


def _projected(model, block, which, x):
    """Q_i, K_i or V_i = x W_i + b_i: (n, d_model) -> (h, n, d)."""
    return att.project(x, model.multiplier(f"{block}.W_{which}"), model.params.get(f"{block}.b_{which}"))


def _attend(model, block, q, k, v):
    """Concat(head_1, ..., head_h) W^O + b^O, head_i = softmax(Q_i K_i^T / sqrt(d_k)) V_i."""
    c = model.config
    weights = att.softmax(att.scale(att.scores(q, k), c.divisor), c.softmax)  # (h, 1, t)
    heads = att.weighted_sum(weights, v)  # (h, 1, d_v)
    return att.linear(att.concat_heads(heads), model.multiplier(f"{block}.W_O"), model.params.get(f"{block}.b_O"))


def _ffn(model, block, x):
    """act(x W_1 + b_1) W_2 + b_2."""
    hidden = att.linear(x, model.multiplier(f"{block}.W_1"), model.params.get(f"{block}.b_1"))  # (1, d_ff)
    act = ff.ACTIVATIONS[model.config.activation](hidden)  # (1, d_ff)
    return att.linear(act, model.multiplier(f"{block}.W_2"), model.params.get(f"{block}.b_2"))  # (1, d_model)


def _normalised(model, name, x):
    c = model.config
    return layer_norm(x, model.params[f"{name}.gamma"], model.params[f"{name}.beta"], c.eps, c.layer_norm)


def _stack_output(model, x):
    """The last layer's row; pre-norm normalises it once more."""
    return _normalised(model, "dec.ln_final", x) if model.config.norm_placement == "pre" else x  # (1, d_model)


def _next_token(model, y) -> NextToken:
    """P = softmax(y W_out + b_out + M) of the newest row."""
    c = model.config
    w_out = model.multiplier(model.embed_names["tgt"] if c.tied_output else "unembed.W")
    logits = att.linear(y, w_out, model.params.get("unembed.b"))[0]  # (V,)
    masked = logits + vocab_mask(len(model.vocab), model.never_next)  # (V,)
    return NextToken(logits, masked, att.softmax(masked, c.softmax))
