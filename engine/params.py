"""A model's parameters by name: their names and shapes for a config, and copies of a model with some changed.

Matrices multiply on the right (x @ W); per-head weights are head-first, (h, d_model, d_k)."""
from __future__ import annotations

import copy
import dataclasses
from functools import partial
from types import MappingProxyType

import numpy as np

from . import attention as att
from .config import Config
from .products import Multiplier
from .tokens import Vocabulary
from .values import read_only


def param_shapes(config: Config, vocab_size: int) -> dict[str, tuple]:
    """Every parameter's name and shape; matrices multiply on the right (x @ W)."""
    c, shapes = config, {}
    if c.shared_embeddings or not c.decoder_only:
        shapes["embed.src"] = (vocab_size, c.d_model)
    if not c.shared_embeddings:
        shapes["embed.tgt"] = (vocab_size, c.d_model)
    if c.pos_encoding == "learned":
        shapes["pos.learned"] = (c.max_len, c.d_model)
    for stack, sublayers in c.sublayers.items():
        if not c.depth(stack):
            continue
        shapes.update(layer_shapes(c, stack))
        if c.norm_placement == "pre":
            shapes.update(layer_norm_shapes(c, f"{stack}.ln_final"))
    if not c.tied_output:
        shapes["unembed.W"] = (c.d_model, vocab_size)
    shapes["unembed.b"] = (vocab_size,)
    return shapes


def layer_shapes(c: Config, stack: str) -> dict:
    """The parameters of the stack's layers: each sub-layer's block and LayerNorm."""
    shapes = {}
    for l in range(c.depth(stack)):
        for k, sub in c.sublayers[stack].items():
            shapes.update(_ffn_shapes(c, f"{stack}.{l}.ffn") if sub == "ffn" else _attn_shapes(c, f"{stack}.{l}.{sub}"))
            shapes.update(layer_norm_shapes(c, f"{stack}.{l}.ln{k}"))
    return shapes


def layer_norm_shapes(c: Config, prefix: str) -> dict:
    return {f"{prefix}.gamma": (c.d_model,), f"{prefix}.beta": (c.d_model,)}


def _attn_shapes(c: Config, prefix: str) -> dict:
    shapes = {f"{prefix}.W_Q": (c.n_heads, c.d_model, c.d_k), f"{prefix}.W_K": (c.n_heads, c.d_model, c.d_k),
              f"{prefix}.W_V": (c.n_heads, c.d_model, c.d_v), f"{prefix}.W_O": (c.n_heads * c.d_v, c.d_model)}
    if c.attn_bias:
        shapes.update({f"{prefix}.b_Q": (c.n_heads, c.d_k), f"{prefix}.b_K": (c.n_heads, c.d_k),
                       f"{prefix}.b_V": (c.n_heads, c.d_v), f"{prefix}.b_O": (c.d_model,)})
    return shapes


def _ffn_shapes(c: Config, prefix: str) -> dict:
    shapes = {f"{prefix}.W_1": (c.d_model, c.d_ff), f"{prefix}.W_2": (c.d_ff, c.d_model)}
    if c.ffn_bias:
        shapes.update({f"{prefix}.b_1": (c.d_ff,), f"{prefix}.b_2": (c.d_model,)})
    return shapes


class Parameters:
    """A configuration, a vocabulary and named parameters, read-only; engine.Model runs them."""

    def __init__(self, name: str, config: Config, vocab: Vocabulary, params, seed: int = 0):
        self.name, self.config, self.vocab, self.seed = name, config, vocab, seed
        self.new_words = ()  # tokens added to the vocabulary after the model was made (presets.with_words)
        self._hold(params, param_shapes(config, len(vocab)))

    def _hold(self, params, shapes):
        """Keep `params` read-only, refusing any that do not have the names and `shapes` the model needs."""
        if set(params) != set(shapes):
            missing, extra = sorted(set(shapes) - set(params)), sorted(set(params) - set(shapes))
            raise ValueError(f"parameters do not fit the config: missing {missing}, unexpected {extra}")
        frozen = {}
        for key, shape in shapes.items():
            frozen[key] = _read_only(params[key], key, shape)
        self.params = MappingProxyType(frozen)
        self._multipliers = {name: _multiplier(name, value) for name, value in frozen.items() if value.ndim > 1}

    def with_params(self, updates) -> "Parameters":
        """A copy of this model with some parameters replaced (same names and shapes)."""
        unknown = sorted(set(updates) - set(self.params))
        if unknown:
            raise ValueError(f"unknown parameter(s): {', '.join(unknown)}")
        model = copy.copy(self)  # the others are this model's, already checked: only the new ones are
        model.params = MappingProxyType({**self.params, **{name: _read_only(value, name, self.params[name].shape)
                                                           for name, value in updates.items()}})
        model._multipliers = {**{name: m for name, m in self._multipliers.items() if name not in updates},
                              **{name: _multiplier(name, model.params[name]) for name in updates
                                 if model.params[name].ndim > 1}}  # the unchanged weights' are shared (products.py)
        return model

    def with_vocabulary(self, vocab: Vocabulary, tables) -> "Parameters":
        """A copy of this model with a longer vocabulary: `tables` holds the parameters whose size follows it (the
        embedding tables, the output layer), grown to the new size; the other parameters are shared."""
        model = copy.copy(self)
        model.vocab, model.new_words = vocab, self.new_words + vocab.tokens[len(self.vocab):]
        shapes = param_shapes(self.config, len(vocab))
        model.params = MappingProxyType({**self.params, **{name: _read_only(value, name, shapes[name])
                                                           for name, value in tables.items()}})
        if set(shapes) - set(tables) - set(self.params) or any(
                model.params[name].shape != shape for name, shape in shapes.items()):
            raise ValueError("every parameter whose size follows the vocabulary must be given")
        model._multipliers = {**{name: m for name, m in self._multipliers.items() if name not in tables},
                              **{name: _multiplier(name, model.params[name]) for name in tables
                                 if model.params[name].ndim > 1}}
        return model

    def without_positions(self) -> "Parameters":
        """A copy of this model with no positional encoding (pos_encoding "none"); the other weights are shared."""
        model = copy.copy(self)
        model.config = dataclasses.replace(self.config, pos_encoding="none")
        model.params = MappingProxyType({name: value for name, value in self.params.items() if name != "pos.learned"})
        model._multipliers = {name: m for name, m in self._multipliers.items() if name != "pos.learned"}
        return model

    def with_residual(self, on: bool) -> "Parameters":
        """A copy of this model with the residual connections on or off (Config.residual); the weights are shared."""
        model = copy.copy(self)
        model.config = dataclasses.replace(self.config, residual=on)
        return model

    def with_cells(self, cells) -> "Parameters":
        """A copy of this model with some cells changed: {name: [(index, value), ...]}. A changed per-head weight is
        copied once, in the heads-side-by-side layout the forward pass reads, and the parameter is a view of it."""
        updates = {}
        for name, changes in cells.items():
            if self.params[name].ndim == 3:
                array = att.heads_of(self._multipliers[name].matrix.copy(), self.params[name].shape)
            else:
                array = np.array(self.params[name])
            for index, value in changes:
                array[index] = value
            array.setflags(write=False)
            updates[name] = array
        return self.with_params(updates)  # its multiplier's side-by-side layout of the view is the copy again

    @property
    def start_id(self) -> int:
        """The id the decoder reads first: SOS, or <pad> (Config.decoder_start)."""
        return self.vocab.start_id(self.config.decoder_start)

    @property
    def never_next(self) -> tuple[int, ...]:
        """The ids the output mask makes -inf: <unk>, or <pad> (Config.never_next)."""
        return self.vocab.never(self.config.never_next)

    @property
    def embed_names(self) -> dict:
        src = "embed.src"
        return {"src": src, "tgt": src if self.config.shared_embeddings else "embed.tgt"}

    def multiplier(self, name) -> Multiplier:
        """The parameter `name` as the forward pass multiplies by it (see _multiplier): `x @ multiplier`."""
        return self._multipliers[name]


def _multiplier(name, weight) -> Multiplier:
    """How the forward pass multiplies by a parameter: per-head weights with their heads side by side, in one
    product; an embedding table, which is multiplied only as the tied output layer, transposed; others as they are."""
    if weight.ndim == 3:
        return Multiplier(weight, att.heads_side_by_side, partial(att.split_heads, h=len(weight)))
    return Multiplier(weight, np.transpose if name.startswith("embed.") else None)


def _read_only(value, name, shape):
    """A parameter as a read-only float64 array; one that already is (an unedited parameter) is shared, not copied."""
    array = read_only(value)
    if array.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {array.shape}")
    return array
