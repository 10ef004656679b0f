"""The encoder-decoder Transformer: parameters by name, and a forward pass that records every step.

The forward pass reads as the paper draws it, from `_forward_pass` down: each step is computed and recorded through
a hook, `q = hook("q", att.project, x, W_Q, b_Q)`, which names its inputs from its arguments; engine/steps.py
declares what each step is (its kind, formula, shape)."""
from __future__ import annotations

import copy
import dataclasses
import operator
from functools import partial
from types import MappingProxyType

import numpy as np

from . import attention as att
from . import dropout as dr
from . import feed_forward as ff
from . import positional as pe
from .config import Config, ConfigError
from .layer_norm import layer_norm
from .products import Multiplier
from .steps import Hook, step_table
from .tokens import PAD, SOS, Vocabulary
from .trace import Recorder, Trace
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
        for l in range(c.depth(stack)):
            for k, sub in sublayers.items():
                shapes.update(_ffn_shapes(c, f"{stack}.{l}.ffn") if sub == "ffn" else _attn_shapes(c, f"{stack}.{l}.{sub}"))
                shapes.update({f"{stack}.{l}.ln{k}.gamma": (c.d_model,), f"{stack}.{l}.ln{k}.beta": (c.d_model,)})
        if c.norm_placement == "pre":
            shapes.update({f"{stack}.ln_final.gamma": (c.d_model,), f"{stack}.ln_final.beta": (c.d_model,)})
    if not c.tied_output:
        shapes["unembed.W"] = (c.d_model, vocab_size)
    shapes["unembed.b"] = (vocab_size,)
    return shapes


def _attn_shapes(c: Config, p: str) -> dict:
    shapes = {f"{p}.W_Q": (c.n_heads, c.d_model, c.d_k), f"{p}.W_K": (c.n_heads, c.d_model, c.d_k),
              f"{p}.W_V": (c.n_heads, c.d_model, c.d_v), f"{p}.W_O": (c.n_heads * c.d_v, c.d_model)}
    if c.attn_bias:
        shapes.update({f"{p}.b_Q": (c.n_heads, c.d_k), f"{p}.b_K": (c.n_heads, c.d_k),
                       f"{p}.b_V": (c.n_heads, c.d_v), f"{p}.b_O": (c.d_model,)})
    return shapes


def _ffn_shapes(c: Config, p: str) -> dict:
    shapes = {f"{p}.W_1": (c.d_model, c.d_ff), f"{p}.W_2": (c.d_ff, c.d_model)}
    if c.ffn_bias:
        shapes.update({f"{p}.b_1": (c.d_ff,), f"{p}.b_2": (c.d_model,)})
    return shapes


class Model:
    """A configuration, a vocabulary and named parameters; `run` computes and records a forward pass."""

    def __init__(self, name: str, config: Config, vocab: Vocabulary, params, seed: int = 0):
        self.name, self.config, self.vocab, self.seed = name, config, vocab, seed
        self.new_words = ()  # tokens added to the vocabulary after the model was made (presets.with_words)
        shapes = param_shapes(config, len(vocab))
        if set(params) != set(shapes):
            missing, extra = sorted(set(shapes) - set(params)), sorted(set(params) - set(shapes))
            raise ValueError(f"parameters do not fit the config: missing {missing}, unexpected {extra}")
        frozen = {}
        for key, shape in shapes.items():
            frozen[key] = _read_only(params[key], key, shape)
        self.params = MappingProxyType(frozen)
        self._multipliers = {name: _multiplier(name, value) for name, value in frozen.items() if value.ndim > 1}

    def with_params(self, updates) -> "Model":
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

    def with_vocabulary(self, vocab: Vocabulary, tables) -> "Model":
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

    def without_positions(self) -> "Model":
        """A copy of this model with no positional encoding (pos_encoding "none"); the other weights are shared."""
        model = copy.copy(self)
        model.config = dataclasses.replace(self.config, pos_encoding="none")
        model.params = MappingProxyType({name: value for name, value in self.params.items() if name != "pos.learned"})
        model._multipliers = {name: m for name, m in self._multipliers.items() if name != "pos.learned"}
        return model

    def with_cells(self, cells) -> "Model":
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
    def embed_names(self) -> dict:
        src = "embed.src"
        return {"src": src, "tgt": src if self.config.shared_embeddings else "embed.tgt"}

    def run(self, src: str, tgt: str | None = None, *, dropout: float = 0.0, seed: int = 0) -> Trace:
        """Encode `src`, decode SOS + `tgt` (the target shifted right), and record every step.

        dropout > 0 is training mode (paper section 5.4): the embedding + PE sums, the attention weights and
        each sub-layer's output lose a fraction `dropout` of their cells, chosen by `seed`; each dropout is a
        step of kind "dropout" whose meta holds its keep mask. dropout = 0 records no such step.
        """
        drop = dr.Dropout(dropout, seed)
        return self._forward(*self._encode(src, tgt), drop)

    def run_batch(self, pairs, *, dropout: float = 0.0, seed: int = 0) -> Trace:
        """`run` on a batch of (source, target) pairs in one pass: the same steps, each with a leading batch axis
        (b, ...) but for what every sentence shares (`src.pos`, `tgt.pos`, `vocab_mask`), plus the padding masks.

        Each side's sentences are padded with <pad> (Vocabulary.pad_id) to its longest. `src.pad_mask` and
        `tgt.pad_mask` (b, 1, 1, n) make padded keys -inf in every attention block (the decoder's self-attention
        adds them to its causal mask), so they get weight exactly 0 and a sentence's real positions get the numbers
        they get alone; padded positions are computed and ignored. The trace's tokens and ids hold one padded tuple
        per sentence; the masks' meta hold the lengths. A training pass draws its dropout masks for the whole batch."""
        drop = dr.Dropout(dropout, seed)
        if not pairs:
            raise ValueError("The batch is empty: give at least one sentence pair.")
        sentences = [self._encode(src, tgt) for src, tgt in pairs]
        decoder = [self._decoder_input(*sentence[:4]) for sentence in sentences]
        (src_ids, src_tokens, src_lengths), (dec_ids, dec_tokens, dec_lengths) = (
            self._padded([s[0] for s in side], [s[1] for s in side]) for side in (sentences, decoder))
        unknown = [w for s in sentences for w in s[4]]
        self._check_lengths(src_lengths, dec_lengths)
        lengths = {"src": src_lengths, "tgt": dec_lengths}
        return self._traced(src_ids, src_tokens, dec_ids, dec_tokens, unknown, drop, lengths)

    def _encode(self, src, tgt):
        """(source ids, tokens, decoder input ids, tokens, unknown words) of one pair: the decoder reads SOS + tgt."""
        src_ids, src_tokens, src_unknown = self.vocab.encode(src)
        tgt_ids, tgt_tokens, tgt_unknown = self.vocab.encode(tgt or "")
        dec_ids, dec_tokens = [self.vocab.id(SOS)] + tgt_ids, [SOS] + tgt_tokens
        unknown = [("src", w) for w in src_unknown] + [("tgt", w) for w in tgt_unknown]
        return src_ids, src_tokens, dec_ids, dec_tokens, unknown

    def _padded(self, ids, tokens):
        """Sentences' ids and tokens, each padded to the longest: (ids, tokens) as tuples per sentence, lengths."""
        lengths = tuple(map(len, ids))
        n = max(lengths)
        return (tuple(tuple(i) + (self.vocab.pad_id,) * (n - len(i)) for i in ids),
                tuple(tuple(t) + (PAD,) * (n - len(t)) for t in tokens), lengths)

    def run_ids(self, src_ids, dec_ids, unknown=()) -> Trace:
        """The forward pass from token ids; `dec_ids` is the whole decoder input, its start token included.

        Generation uses it: a generated token such as "<unk>" would not survive a trip through text."""
        src_ids, dec_ids = self._check_ids(src_ids), self._check_ids(dec_ids)
        if not dec_ids:
            raise ValueError("The decoder input is empty: it needs at least its start token (SOS).")
        tokens = self.vocab.tokens
        return self._forward(src_ids, [tokens[i] for i in src_ids], dec_ids, [tokens[i] for i in dec_ids], unknown)

    def _check_ids(self, ids) -> list[int]:
        ids = [int(i) for i in ids]
        if any(not 0 <= i < len(self.vocab) for i in ids):
            raise ValueError(f"token ids must be between 0 and {len(self.vocab) - 1}, got {ids}")
        return ids

    def _forward(self, src_ids, src_tokens, dec_ids, dec_tokens, unknown, drop=dr.Dropout()) -> Trace:
        """The pass of one sentence pair."""
        dec_ids, dec_tokens = self._decoder_input(src_ids, src_tokens, dec_ids, dec_tokens)
        self._check_lengths((len(src_ids),), (len(dec_ids),))
        return self._traced(src_ids, src_tokens, dec_ids, dec_tokens, unknown, drop)

    def _decoder_input(self, src_ids, src_tokens, dec_ids, dec_tokens):
        """What the decoder reads, (ids, tokens): SOS and the target so far; a decoder-only model reads one sequence,
        the source as the prompt before them."""
        if self.config.decoder_only:
            return [*src_ids, *dec_ids], [*src_tokens, *dec_tokens]
        return dec_ids, dec_tokens

    def _traced(self, src_ids, src_tokens, dec_ids, dec_tokens, unknown, drop, lengths=None) -> Trace:
        """The trace of one sentence pair, or (with each side's `lengths`) of a padded batch."""
        rec = Recorder()
        hook = Hook(rec, step_table(self.config, drop.p, padded=lengths is not None), self, drop)
        forward = self._forward_pass(hook, (src_ids, src_tokens), (dec_ids, dec_tokens), lengths)
        return Trace(self, forward, rec.steps, src_tokens, dec_tokens, src_ids, dec_ids, unknown)

    def _forward_pass(self, hook, src, dec, lengths):
        """The source sentence to the next token's probabilities (paper figure 1): the encoder reads the source, the
        decoder reads the target so far and the encoder's output, `memory`. One generator, which stops (yields) at the
        end of each stage so that the trace runs it only as far as the steps read. In a batch (`lengths` of each
        side), each attention block masks its keys' padding."""
        memory = src_pad = None  # a decoder-only model has no encoder
        if not self.config.decoder_only:
            x, src_pad = yield from self._embedding(hook, "src", *src, lengths)  # (n, d_model)
            memory = yield from self._stack(hook, "enc", x, {"attn": src_pad})  # (n, d_model)
        y, tgt_pad = yield from self._embedding(hook, "tgt", *dec, lengths)  # (m, d_model)
        y = yield from self._stack(hook, "dec", y, {"self_attn": tgt_pad, "cross_attn": src_pad}, memory)
        self._output(hook, y)  # (m, V)

    def parameter_names(self) -> dict:
        """The name of each parameter, and of its multiplier, by the object's id: how a step names its inputs."""
        return {**{id(value): name for name, value in self.params.items()},
                **{id(m): name for name, m in self._multipliers.items()}}

    def multiplier(self, name) -> Multiplier:
        """The parameter `name` as the forward pass multiplies by it (see _multiplier): `x @ multiplier`."""
        return self._multipliers[name]

    def _check_lengths(self, src_lengths, dec_lengths):
        if min(src_lengths) == 0:
            raise ValueError("The source sentence is empty: type at least one word.")
        for side, what, lengths in (("src", "source sentence", src_lengths),
                                    ("tgt", "target prefix with its start token", dec_lengths)):
            n = max(lengths)
            if n > self.config.max_len:
                raise ConfigError(f"The {what} has {n} tokens; this model accepts at most {self.config.max_len} "
                                  "(max_len).", "too_long_for_model", side=side, n=n, high=self.config.max_len)

    def _embedding(self, hook, side, ids, tokens, lengths):
        """X = E[token] sqrt(d_model) + PE (paper sections 3.4 and 3.5), then dropout in training; in a batch, also
        the side's padding mask (else None)."""
        c, hook = self.config, hook.block("embedding", side, E=self.embed_names[side], P="pos.learned")
        scale = float(np.sqrt(c.d_model)) if c.embed_scale else 1.0
        x_emb = hook("embed", pe.embed, hook.param("E"), ids, scale, ids=tuple(ids), tokens=tuple(tokens),
                     scale=scale)  # E[token] sqrt(d_model): (..., n, d_model)
        n = x_emb.shape[-2]
        pos = hook("pos", pe.positional_encoding, c.pos_encoding, n, c.d_model, hook.param("P"))  # (n, d_model)
        x = self._dropout(hook, "dropout", hook("input", operator.add, x_emb, pos))  # (..., n, d_model)
        pad = hook("pad_mask", att.padding_mask, lengths[side], n, lengths=lengths[side]) if lengths else None
        yield  # (b, 1, 1, n) in a batch
        return x, pad

    def _stack(self, hook, stack, x, pads, memory=None):
        """N layers, each its sub-layers in turn (paper section 3.1), then the stack's output. pads: each attention
        block's keys' padding mask, in a batch; memory: the encoder's output, which the decoder attends to."""
        blocks = self.config.sublayers[stack]  # sub-layer k -> its block
        for l in range(self.config.depth(stack)):
            for k, block in blocks.items():
                sublayer = self._block(hook.block(block, f"{stack}.{l}.{block}"), block, pads, memory)
                x = yield from self._sublayer(hook.block("sublayer", f"{stack}.{l}"), k, x, sublayer)  # (n, d_model)
        return (yield from self._stack_output(hook.block("stack", stack), x))  # (n, d_model)

    def _block(self, hook, block, pads, memory):
        """Sublayer(x) of a block, a function of x: the feed-forward network, or multi-head attention whose keys and
        values are x (self-attention, causal in the decoder) or the encoder's output (cross-attention)."""
        if block == "ffn":
            return partial(self._ffn, hook)
        return partial(self._attention, hook, kv=memory if block == "cross_attn" else None, pad=pads[block],
                       causal=block == "self_attn")

    def _sublayer(self, hook, k, x, sublayer):
        """Sub-layer k: LayerNorm(x + Dropout(Sublayer(x))) post-norm, x + Dropout(Sublayer(LayerNorm(x))) pre-norm
        (paper sections 3.1 and 5.4)."""
        pre = self.config.norm_placement == "pre"
        out = yield from sublayer(self._layer_norm(hook, f"ln{k}", x) if pre else x)  # (n, d_model)
        x = hook(f"add{k}", operator.add, x, self._dropout(hook, f"drop{k}", out))  # x + Sublayer(...): (n, d_model)
        x = x if pre else self._layer_norm(hook, f"ln{k}", x)  # (n, d_model)
        yield
        return x

    def _attention(self, hook, x, kv=None, pad=None, causal=False):
        """MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O + b^O, head_i = softmax(Q_i K_i^T / sqrt(d_k) + M) V_i
        (paper section 3.2), Q_i = X W_i^Q + b_i^Q and K_i, V_i alike from X_kv: the encoder's output in
        cross-attention, else X. M: the causal mask (self-attention in the decoder), plus the keys' padding `pad`."""
        c, kv = self.config, x if kv is None else kv  # kv: (m, d_model)
        q = hook("q", att.project, x, hook.matrix("W_Q"), hook.param("b_Q"))  # Q_i = X W_i^Q + b_i^Q: (h, n, d_k)
        k = hook("k", att.project, kv, hook.matrix("W_K"), hook.param("b_K"))  # K_i = X_kv W_i^K + b_i^K: (h, m, d_k)
        v = hook("v", att.project, kv, hook.matrix("W_V"), hook.param("b_V"))  # V_i = X_kv W_i^V + b_i^V: (h, m, d_v)
        s = hook("scores", att.scores, q, k)  # S_i = Q_i K_i^T: (h, n, m)
        s = hook("scaled", att.scale, s, c.divisor)  # S_i / sqrt(d_k): (h, n, m)
        if causal:
            pad = hook("mask", att.causal_mask, x.shape[-2], pad)  # (n, n), in a batch (b, 1, n, n)
        if pad is not None:
            s = hook("masked", att.apply_mask, s, pad)  # + M: (..., h, n, m)
        a = self._dropout(hook, "dropout", hook("weights", att.softmax, s, c.softmax))  # A_i = softmax(...): (h, n, m)
        heads = hook("heads", att.weighted_sum, a, v)  # head_i = A_i V_i: (h, n, d_v)
        yield  # a page about the heads needs no W^O, a d_model x d_model matrix
        concat = hook("concat", att.concat_heads, heads)  # Concat(head_1, ..., head_h): (n, h*d_v)
        return hook("out", att.linear, concat, hook.matrix("W_O"), hook.param("b_O"))  # ... W^O + b^O: (n, d_model)

    def _ffn(self, hook, x):
        """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, or GELU in place of the ReLU (paper section 3.3)."""
        hidden = hook("hidden", att.linear, x, hook.matrix("W_1"), hook.param("b_1"))  # H = x W_1 + b_1: (n, d_ff)
        act = hook("act", ff.ACTIVATIONS[self.config.activation], hidden)  # max(0, H): (n, d_ff)
        yield
        return hook("out", att.linear, act, hook.matrix("W_2"), hook.param("b_2"))  # ... W_2 + b_2: (n, d_model)

    def _layer_norm(self, hook, short, x, params=None):
        """LayerNorm(x) of each row, with the parameters `params`.gamma and `params`.beta (`short`'s, if not given)."""
        c, params = self.config, params or short
        gamma, beta = hook.param(f"{params}.gamma"), hook.param(f"{params}.beta")  # (d_model,)
        return hook(short, layer_norm, x, gamma, beta, c.eps, c.layer_norm)  # (n, d_model)

    def _dropout(self, hook, short, x):
        """Training: x with each cell zeroed with probability p, the rest divided by 1 - p (paper section 5.4), a
        step the table declares only then. Inference: x itself."""
        if short not in hook.decls:
            return x
        drop = hook.drop
        keep = drop.keep_mask(hook.name(short), x.shape)  # shape of x
        return hook(short, dr.dropout, x, keep, drop.p, p=drop.p, seed=drop.seed, keep=keep)  # shape of x

    def _stack_output(self, hook, x):
        """The last layer's output; pre-norm normalises it once more (its layers' sums are not normalised)."""
        if self.config.norm_placement == "pre":
            x = self._layer_norm(hook, "out", x, "ln_final")  # (n, d_model)
        else:
            x = hook("out", np.copy, x)  # (n, d_model)
        yield
        return x

    def _output(self, hook, y):
        """P = softmax(y W_out + b_out + M), y the decoder's output, W_out = E^T when tied (paper section 3.4), M
        masking <unk>."""
        c, never = self.config, self.vocab.never_next
        hook = hook.block("output", "", W=self.embed_names["tgt"] if c.tied_output else "unembed.W")
        logits = hook("logits", att.linear, y, hook.matrix("W"), hook.param("unembed.b"))  # y W_out + b_out: (n, V)
        mask = hook("vocab_mask", _vocab_mask, len(self.vocab), never,
                    never=tuple(self.vocab.tokens[i] for i in never))  # (V,)
        logits = hook("masked_logits", operator.add, logits, mask)  # (n, V)
        hook("probs", att.softmax, logits, c.softmax)  # (n, V)


def _vocab_mask(size, never):
    """M_v: -inf at the ids in `never`, 0 elsewhere: (size,)."""
    mask = np.zeros(size)  # (V,)
    mask[list(never)] = -np.inf
    return mask  # (V,)


def _multiplier(name, weight) -> Multiplier:
    """How the forward pass multiplies by a parameter: per-head weights with their heads side by side, in one
    product; an embedding table, which is multiplied only as the tied output layer, transposed; others as they are."""
    if weight.ndim == 3:
        return Multiplier(weight, att.heads_side_by_side, partial(att.split_heads, h=len(weight)))
    return Multiplier(weight, np.transpose if name.startswith("embed.") else None)


def _read_only(value, name, shape):
    """A parameter as a read-only float64 array; one that already is (an unedited parameter) is shared, not copied,
    through an array object of its own: the forward pass names a step's inputs by their objects (steps.Hook)."""
    array = read_only(value)
    array = array.view() if array is value else array
    if array.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {array.shape}")
    return array
