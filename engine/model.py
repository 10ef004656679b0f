"""The encoder-decoder Transformer: parameters by name, and a forward pass that records every step."""
from __future__ import annotations

import copy
from types import MappingProxyType

import numpy as np

from . import attention as att
from . import dropout as dr
from . import feed_forward as ff
from . import positional as pe
from .config import Config
from .layer_norm import LAYER_NORM_TEX, layer_norm
from .products import Multiplier
from .tokens import SOS, Vocabulary
from .trace import Recorder, Trace
from .values import read_only

ADD_TEX = {"post": r"X + \operatorname{Sublayer}(X)",  # then LayerNorm of this sum
           "pre": r"X + \operatorname{Sublayer}(\operatorname{LayerNorm}(X))"}  # the sum is not normalised
LOGITS_TEX = r"\text{logits} = y\, W_{\text{out}} + b_{\text{out}}"
TIED_LOGITS_TEX = r"\text{logits} = y\, E^\top + b_{\text{out}}"
VOCAB_MASK_TEX = r"M_v = \begin{cases} -\infty & v = \texttt{<unk>} \\ 0 & \text{otherwise} \end{cases}"
MASKED_LOGITS_TEX = r"\text{logits}' = \text{logits} + M"
PROBS_TEX = r"P = \operatorname{softmax}(\text{logits}')"


def param_shapes(config: Config, vocab_size: int) -> dict[str, tuple]:
    """Every parameter's name and shape; matrices multiply on the right (x @ W)."""
    c, shapes = config, {}
    shapes["embed.src"] = (vocab_size, c.d_model)
    if not c.shared_embeddings:
        shapes["embed.tgt"] = (vocab_size, c.d_model)
    if c.pos_encoding == "learned":
        shapes["pos.learned"] = (c.max_len, c.d_model)
    for stack, sublayers in (("enc", ("attn", "ffn")), ("dec", ("self_attn", "cross_attn", "ffn"))):
        for l in range(c.n_layers):
            for k, sub in enumerate(sublayers, start=1):
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

    def with_cells(self, cells) -> "Model":
        """A copy of this model with some cells changed: {name: [(index, value), ...]}. A changed per-head weight is
        copied once, in the heads-side-by-side layout the forward pass reads, and the parameter is a view of it."""
        updates, fused = {}, {}
        for name, changes in cells.items():
            if self.params[name].ndim == 3:
                fused[name] = self._multipliers[name].matrix.copy()
                array = att.heads_of(fused[name], self.params[name].shape)
            else:
                array = np.array(self.params[name])
            for index, value in changes:
                array[index] = value
            array.setflags(write=False)
            updates[name] = array
        model = self.with_params(updates)
        for name, side_by_side in fused.items():
            model._multipliers[name] = Multiplier(side_by_side)
        return model

    def _product(self, name, x):
        """x times the parameter `name` as the forward pass multiplies by it (see _multiplier)."""
        return self._multipliers[name].times(x)

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
        src_ids, src_tokens, src_unknown = self.vocab.encode(src)
        tgt_ids, tgt_tokens, tgt_unknown = self.vocab.encode(tgt or "")
        dec_ids, dec_tokens = [self.vocab.id(SOS)] + tgt_ids, [SOS] + tgt_tokens
        unknown = [("src", w) for w in src_unknown] + [("tgt", w) for w in tgt_unknown]
        return self._forward(src_ids, src_tokens, dec_ids, dec_tokens, unknown, drop)

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
        self._check_lengths(src_ids, dec_ids)
        rec = Recorder()
        stages = self._stages(rec, src_ids, src_tokens, dec_ids, dec_tokens, drop)
        return Trace(self, stages, rec.steps, src_tokens, dec_tokens, src_ids, dec_ids, unknown)

    def _stages(self, rec, src_ids, src_tokens, dec_ids, dec_tokens, drop):
        """The forward pass, paused after each stage (an embedding, a sub-layer, a stack's output): the trace
        runs it only as far as the steps that are read."""
        yield from self._encoder(rec, self._embed(rec, "src", src_ids, src_tokens, drop), drop)
        x = self._embed(rec, "tgt", dec_ids, dec_tokens, drop)
        yield
        yield from self._decoder(rec, x, drop)
        self._output(rec)

    def _check_lengths(self, src_ids, dec_ids):
        if not src_ids:
            raise ValueError("The source sentence is empty: type at least one word.")
        for side, ids in (("source sentence", src_ids), ("target prefix with its start token", dec_ids)):
            if len(ids) > self.config.max_len:
                raise ValueError(f"The {side} has {len(ids)} tokens; this model accepts at most "
                                 f"{self.config.max_len} (max_len).")

    def _embed(self, rec, side, ids, tokens, drop):
        """Records the embedding, the positional encoding and their sum; returns the name the stack reads."""
        c, table = self.config, self.embed_names[side]
        scale = float(np.sqrt(c.d_model)) if c.embed_scale else 1.0
        rec(f"{side}.embed", pe.embed(self.params[table], ids, scale), "embed",
            pe.EMBED_SCALED_TEX if c.embed_scale else pe.EMBED_TEX,
            "Look up each token's row of the embedding table" + (", times sqrt(d_model)." if c.embed_scale else "."),
            inputs=(table,), ids=tuple(ids), tokens=tuple(tokens), scale=scale)
        learned = self.params.get("pos.learned")
        rec(f"{side}.pos", pe.positional_encoding(c.pos_encoding, len(ids), c.d_model, learned), "pos",
            pe.pe_tex(c.pos_encoding, len(ids), c.d_model), "The positional encoding of each position.",
            inputs=("pos.learned",) if learned is not None else (), form=c.pos_encoding, d_model=c.d_model)
        rec(f"{side}.input", rec[f"{side}.embed"] + rec[f"{side}.pos"], "add", pe.INPUT_TEX,
            "Add the positional encoding to the embedding.", inputs=(f"{side}.embed", f"{side}.pos"))
        return self._dropout(rec, drop, f"{side}.dropout", f"{side}.input", "the sum of embedding and encoding")

    def _encoder(self, rec, x, drop):
        """The encoder's sub-layers, pausing after each (see _stages)."""
        for l in range(self.config.n_layers):
            x = yield from self._sublayer(rec, f"enc.{l}", 1, x, lambda ref, l=l: self._attention(
                rec, f"enc.{l}.attn", ref, ref, drop=drop), drop)
            yield
            x = yield from self._sublayer(rec, f"enc.{l}", 2, x, lambda ref, l=l: self._ffn(rec, f"enc.{l}.ffn", ref),
                                          drop)
            yield
        self._stack_output(rec, "enc", x)
        yield

    def _decoder(self, rec, x, drop):
        """The decoder's sub-layers, pausing after each (see _stages)."""
        n = len(rec["tgt.input"])
        for l in range(self.config.n_layers):
            p = f"dec.{l}"
            x = yield from self._sublayer(rec, p, 1, x, lambda ref: self._attention(
                rec, f"{p}.self_attn", ref, ref, causal=n, drop=drop), drop)
            yield
            x = yield from self._sublayer(rec, p, 2, x, lambda ref: self._attention(
                rec, f"{p}.cross_attn", ref, "enc.out", drop=drop), drop)
            yield
            x = yield from self._sublayer(rec, p, 3, x, lambda ref: self._ffn(rec, f"{p}.ffn", ref), drop)
            yield
        self._stack_output(rec, "dec", x)
        yield

    def _sublayer(self, rec, layer, k, x, block, drop):
        """Post-norm: LayerNorm(x + Sublayer(x)). Pre-norm: x + Sublayer(LayerNorm(x)). Returns the output's name;
        pauses where its block does (a generator, see _stages).

        In training, Sublayer(.) is followed by dropout, before the residual add (paper section 5.4)."""
        what = "the sub-layer's output"
        if self.config.norm_placement == "post":
            out = self._dropout(rec, drop, f"{layer}.drop{k}", (yield from block(x)), what)
            self._add(rec, f"{layer}.add{k}", x, out)
            return self._layer_norm(rec, f"{layer}.ln{k}", f"{layer}.add{k}")
        normed = self._layer_norm(rec, f"{layer}.ln{k}", x)
        out = self._dropout(rec, drop, f"{layer}.drop{k}", (yield from block(normed)), what)
        return self._add(rec, f"{layer}.add{k}", x, out)

    def _dropout(self, rec, drop, name, x, what):
        """Training: record `name`, step `x` with a random fraction of its cells zeroed. Inference: `x` itself."""
        if not drop.p:
            return x
        keep = drop.keep_mask(name, rec[x].shape)
        rec(name, dr.dropout(rec[x], keep, drop.p), "dropout", dr.DROPOUT_TEX,
            f"Dropout on {what}: each cell is zeroed with probability {drop.p:g}, the rest divided by {1 - drop.p:g}.",
            inputs=(x,), p=drop.p, seed=drop.seed, keep=keep)
        return name

    def _add(self, rec, name, x, out):
        rec(name, rec[x] + rec[out], "add", ADD_TEX[self.config.norm_placement],
            "Residual connection: add the sub-layer's input to its output.", inputs=(x, out))
        return name

    def _layer_norm(self, rec, name, x, params=None):
        c, params = self.config, params or name
        gamma, beta = f"{params}.gamma", f"{params}.beta"
        rec(name, layer_norm(rec[x], self.params[gamma], self.params[beta], c.eps, c.layer_norm), "layer_norm",
            LAYER_NORM_TEX[c.layer_norm], "Layer normalisation of each row (each token).",
            inputs=(x, gamma, beta), eps=c.eps, form=c.layer_norm)
        return name

    def _attention(self, rec, p, x_q, x_kv, causal=None, drop=dr.Dropout()):
        """One attention block; a generator that pauses after the heads' outputs and returns the output's name."""
        c, P = self.config, self.params
        texts = att.CROSS_PROJ_TEX if x_q != x_kv else att.PROJ_TEX
        for key, source in (("q", x_q), ("k", x_kv), ("v", x_kv)):
            W, b = f"{p}.W_{key.upper()}", f"{p}.b_{key.upper()}"
            bias = (b,) if c.attn_bias else ()
            product = self._product(W, rec[source])
            rec(f"{p}.{key}", att.project(rec[source], P[W], P[b] if bias else None, product), "proj",
                texts[key] + (att.BIAS_TEX[key] if bias else ""), f"Each head's {_QKV[key]}.", inputs=(source, W) + bias)
        rec(f"{p}.scores", att.scores(rec[f"{p}.q"], rec[f"{p}.k"]), "scores", att.SCORES_TEX,
            "Dot product of every query with every key.", inputs=(f"{p}.q", f"{p}.k"))
        divisor_tex = r"\sqrt{d_k}" if c.attn_divisor == "sqrt_dk" else _number_tex(c.divisor)
        scaled_tex = att.SCALED_TEX["sqrt_dk"] if c.attn_divisor == "sqrt_dk" else att.SCALED_TEX["number"] % divisor_tex
        last = rec(f"{p}.scaled", att.scale(rec[f"{p}.scores"], c.divisor), "scale", scaled_tex,
                   "Divide the scores so softmax does not saturate.", inputs=(f"{p}.scores",), divisor=c.divisor,
                   divisor_tex=divisor_tex)
        last_name = f"{p}.scaled"
        if causal is not None:
            rec(f"{p}.mask", att.causal_mask(causal), "mask", att.MASK_TEX,
                "The causal mask: a position may not look at later positions.")
            rec(f"{p}.masked", att.apply_mask(last, rec[f"{p}.mask"]), "add", att.MASKED_TEX,
                "Add the mask: future positions become minus infinity.", inputs=(f"{p}.scaled", f"{p}.mask"))
            last_name = f"{p}.masked"
        rec(f"{p}.weights", att.softmax(rec[last_name], c.softmax), "softmax",
            att.MASKED_WEIGHTS_TEX if causal is not None else att.WEIGHTS_TEX,
            "Softmax of each row: the attention weights, which sum to 1.", inputs=(last_name,), form=c.softmax)
        weights = self._dropout(rec, drop, f"{p}.dropout", f"{p}.weights", "the attention weights")
        rec(f"{p}.heads", att.weighted_sum(rec[weights], rec[f"{p}.v"]), "weighted", att.HEADS_TEX,
            "Each head's output: the weighted sum of its values.", inputs=(weights, f"{p}.v"))
        yield  # a page about the heads needs no more of the pass (W^O alone is a d_model x d_model matrix)
        rec(f"{p}.concat", att.concat_heads(rec[f"{p}.heads"]), "concat", att.CONCAT_TEX,
            "Put the heads' outputs side by side.", inputs=(f"{p}.heads",))
        bias = (f"{p}.b_O",) if c.attn_bias else ()
        product = self._product(f"{p}.W_O", rec[f"{p}.concat"])
        rec(f"{p}.out", att.linear(rec[f"{p}.concat"], P[f"{p}.W_O"], P[bias[0]] if bias else None, product), "linear",
            att.OUT_TEX + (r" + b^O" if bias else ""), "Mix the heads back to d_model with W^O.",
            inputs=(f"{p}.concat", f"{p}.W_O") + bias)
        return f"{p}.out"

    def _ffn(self, rec, p, x):
        """The feed-forward block; a generator that pauses after the activation and returns the output's name."""
        c, P = self.config, self.params
        b1, b2 = ((f"{p}.b_1",), (f"{p}.b_2",)) if c.ffn_bias else ((), ())
        product = self._product(f"{p}.W_1", rec[x])
        rec(f"{p}.hidden", att.linear(rec[x], P[f"{p}.W_1"], P[b1[0]] if b1 else None, product), "linear",
            ff.HIDDEN_TEX if b1 else ff.HIDDEN_NO_BIAS_TEX, "First linear layer: widen to d_ff.",
            inputs=(x, f"{p}.W_1") + b1)
        rec(f"{p}.act", ff.ACTIVATIONS[c.activation](rec[f"{p}.hidden"]), "activation", ff.ACT_TEX[c.activation],
            f"The {_ACTIVATION_NAMES[c.activation]} non-linearity.", inputs=(f"{p}.hidden",), fn=c.activation)
        yield
        out_tex = (ff.OUT_TEX if b2 else ff.OUT_NO_BIAS_TEX) % _ACTIVATION_NAMES[c.activation]
        product = self._product(f"{p}.W_2", rec[f"{p}.act"])
        rec(f"{p}.out", att.linear(rec[f"{p}.act"], P[f"{p}.W_2"], P[b2[0]] if b2 else None, product), "linear",
            out_tex, "Second linear layer: back to d_model.", inputs=(f"{p}.act", f"{p}.W_2") + b2)
        return f"{p}.out"

    def _stack_output(self, rec, stack, x):
        if self.config.norm_placement == "pre":
            self._layer_norm(rec, f"{stack}.out", x, params=f"{stack}.ln_final")
        else:
            rec(f"{stack}.out", rec[x], "copy", rec.steps[x].formula, f"The output of the last layer ({x}).",
                inputs=(x,))

    def _output(self, rec):
        c = self.config
        if c.tied_output:
            W, tex, transpose = self.embed_names["tgt"], TIED_LOGITS_TEX, True
        else:
            W, tex, transpose = "unembed.W", LOGITS_TEX, False
        matrix = self.params[W].T if transpose else self.params[W]
        product = self._product(W, rec["dec.out"])
        rec("logits", att.linear(rec["dec.out"], matrix, self.params["unembed.b"], product), "linear", tex,
            "Score every vocabulary word at every decoder position.", inputs=("dec.out", W, "unembed.b"),
            transpose=transpose)
        never = self.vocab.never_next
        rec("vocab_mask", np.where(np.isin(np.arange(len(self.vocab)), never), -np.inf, 0.0), "mask", VOCAB_MASK_TEX,
            "<unk> is never a next token: its logit is masked.", never=tuple(self.vocab.tokens[i] for i in never))
        rec("masked_logits", rec["logits"] + rec["vocab_mask"], "add", MASKED_LOGITS_TEX,
            "Add the mask: <unk> becomes minus infinity.", inputs=("logits", "vocab_mask"))
        rec("probs", att.softmax(rec["masked_logits"], c.softmax), "softmax", PROBS_TEX,
            "Probability of each word being the next token.", inputs=("masked_logits",), form=c.softmax)


_QKV = {"q": "queries", "k": "keys", "v": "values"}
_ACTIVATION_NAMES = {"relu": "ReLU", "gelu": "GELU"}


def _number_tex(x: float) -> str:
    return f"{x:.8g}"


def _multiplier(name, weight) -> Multiplier:
    """How the forward pass multiplies by a parameter: per-head weights with their heads side by side, in one
    product; an embedding table, which is multiplied only as the tied output layer, transposed; others as they are."""
    if weight.ndim == 3:
        return Multiplier(weight, att.heads_side_by_side)
    return Multiplier(weight, np.transpose if name.startswith("embed.") else None)


def _read_only(value, name, shape):
    """A parameter as a read-only float64 array; one that already is (an unedited parameter) is shared, not copied."""
    array = read_only(value)
    if array.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {array.shape}")
    return array
