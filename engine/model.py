"""The encoder-decoder Transformer's forward pass, which records every step, and the steps' declarations.

The pass reads as the paper draws it, from `_forward_pass` down. Each block's function computes its steps through a
hook, `q = hook("q", att.project, x, W_Q, b_Q)`, whose inputs are the arguments that carry their names: x a recorded
step, W_Q and b_Q the parameters (engine/steps.py); the function declaring the block's steps (kind, formula, shape,
symbol: engine/steps.py's Decl) stands above it."""
from __future__ import annotations

import operator
from functools import lru_cache, partial
from types import MappingProxyType

import numpy as np

from . import attention as att
from . import dropout as dr
from . import feed_forward as ff
from . import positional as pe
from .config import Config, ConfigError
from .kinds import (ACTIVATION, ADD, CONCAT, COPY, DROPOUT, EMBED, LAYER_NORM, LINEAR, MASK, POS, PROJ, SCALE,
                    SCORES, SOFTMAX, WEIGHTED)
from .layer_norm import LAYER_NORM_TEX, layer_norm
from .params import Parameters
from .steps import ROWS, Decl, Hook, step_table_of
from .tokens import PAD
from .trace import Recorder, Trace

ADD_TEX = {"post": r"X + \operatorname{Sublayer}(X)",  # then LayerNorm of this sum
           "pre": r"X + \operatorname{Sublayer}(\operatorname{LayerNorm}(X))"}  # the sum is not normalised
NO_RESIDUAL_TEX = {"post": r"\operatorname{Sublayer}(X)",  # Config.residual off: the sub-layer's output alone
                   "pre": r"\operatorname{Sublayer}(\operatorname{LayerNorm}(X))"}
LOGITS_TEX = r"\text{logits} = y\, W_{\text{out}} + b_{\text{out}}"
TIED_LOGITS_TEX = r"\text{logits} = y\, E^\top + b_{\text{out}}"
VOCAB_MASK_TEX = {  # Config.never_next
    kind: r"M_v = \begin{cases} -\infty & v = \texttt{<%s>} \\ 0 & \text{⟦otherwise⟧} \end{cases}" % kind
    for kind in ("unk", "pad")}
MASKED_LOGITS_TEX = r"\text{logits}' = \text{logits} + M"
PROBS_TEX = r"P = \operatorname{softmax}(\text{logits}')"
_ACTIVATION_NAMES = {"relu": "ReLU", "gelu": "GELU", "swish": "Swish"}


class Model(Parameters):
    """A configuration, a vocabulary and named parameters (engine/params.py); `run` computes and records a forward
    pass."""

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
        """(source ids, tokens, decoder input ids, tokens, unknown words) of one pair: the decoder reads its start
        token (SOS, or <pad>: Config.decoder_start) + tgt."""
        src_ids, src_tokens, src_unknown = self.vocab.encode(src, side="src")
        tgt_ids, tgt_tokens, tgt_unknown = self.vocab.encode(tgt or "", side="tgt")
        start = self.start_id
        dec_ids, dec_tokens = [start] + tgt_ids, [self.vocab.tokens[start]] + tgt_tokens
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
        hook = Hook(rec, step_table(self.config, drop.rate, padded=lengths is not None), self, drop)
        forward = _forward_pass(hook, (src_ids, src_tokens), (dec_ids, dec_tokens), lengths)
        return Trace(self, forward, rec.steps, src_tokens, dec_tokens, src_ids, dec_ids, unknown)

    def _check_lengths(self, src_lengths, dec_lengths):
        if min(src_lengths) == 0:
            raise ValueError("The source sentence is empty: type at least one word.")
        for side, what, lengths in (("src", "source sentence", src_lengths),
                                    ("tgt", "target prefix with its start token", dec_lengths)):
            n = max(lengths)
            if n > self.config.max_len:
                raise ConfigError(f"The {what} has {n} tokens; this model accepts at most {self.config.max_len} "
                                  "(max_len).", "too_long_for_model", side=side, n=n, high=self.config.max_len)


def _forward_pass(hook, src, dec, lengths):
    """The source sentence to the next token's probabilities (paper figure 1): the encoder reads the source, the
    decoder reads the target so far and the encoder's output, `memory`. One generator, which stops (yields) at the
    end of each stage so that the trace runs it only as far as the steps read. In a batch (`lengths` of each side),
    each attention block masks its keys' padding."""
    memory = src_pad = None  # a decoder-only model has no encoder
    if not hook.model.config.decoder_only:
        x, src_pad = yield from _embedding(hook, "src", *src, lengths)  # (n, d_model)
        memory = yield from _stack(hook, "enc", x, {"attn": src_pad})  # (n, d_model)
    y, tgt_pad = yield from _embedding(hook, "tgt", *dec, lengths)  # (m, d_model)
    y = yield from _stack(hook, "dec", y, {"self_attn": tgt_pad, "cross_attn": src_pad}, memory)  # (m, d_model)
    _output(hook, y)  # (m, V)


def _stack(hook, stack, x, pads, memory=None):
    """N layers, each its sub-layers in turn (paper section 3.1), then the stack's output. pads: each attention
    block's keys' padding mask, in a batch; memory: the encoder's output, which the decoder attends to."""
    x = yield from layers(hook, stack, x, pads, memory)  # (n, d_model)
    return (yield from _stack_output(hook.block("stack", stack), x))  # (n, d_model)


def layers(hook, stack, x, pads, memory=None):
    """The stack's N layers without its output (the Vision Transformer normalises only its class token's row)."""
    c = hook.model.config
    for l in range(c.depth(stack)):
        for k, block in c.sublayers[stack].items():  # sub-layer k and its block
            sublayer = _block(hook.block(block, f"{stack}.{l}.{block}"), block, pads, memory)
            x = yield from _sublayer(hook.block("sublayer", f"{stack}.{l}"), k, x, sublayer)  # (n, d_model)
    return x  # (n, d_model)


def _block(hook, block, pads, memory):
    """Sublayer(x) of a block, a function of x: the feed-forward network, or multi-head attention whose keys and
    values are x (self-attention, causal in the decoder) or the encoder's output (cross-attention)."""
    if block == "ffn":
        return partial(_ffn, hook)
    return partial(_attention, hook, kv=memory if block == "cross_attn" else None, pad=pads[block],
                   causal=block == "self_attn")


# ---- each block: its steps' declarations, then its computation --------------------------------------------------

def _embedding_steps(c, dropout, padded):
    return {"embed": Decl(EMBED, pe.EMBED_SCALED_TEX if c.embed_scale else pe.EMBED_TEX, symbol=r"X_{\text{emb}}"),
            "pos": Decl(POS, lambda steps, inputs, value: pe.pe_tex(c.pos_encoding, len(value), c.d_model),
                        symbol="PE", meta={"form": c.pos_encoding, "d_model": c.d_model}),
            "input": Decl(ADD, pe.INPUT_TEX, symbol="X"),
            **({"dropout": _dropout_step()} if dropout else {}),
            **({"pad_mask": Decl(MASK, att.PAD_MASK_TEX, ("1", "1", "n"))} if padded else {})}


def _embedding(hook, side, ids, tokens, lengths):
    """X = E[token] sqrt(d_model) + PE (paper sections 3.4 and 3.5), then dropout in training; in a batch, also the
    side's padding mask (else None)."""
    c = hook.model.config
    hook = hook.block("embedding", side, E=hook.model.embed_names[side], P="pos.learned")
    scale = float(np.sqrt(c.d_model)) if c.embed_scale else 1.0
    x_emb = hook("embed", pe.embed, hook.param("E"), ids, scale, ids=tuple(ids), tokens=tuple(tokens),
                 scale=scale)  # E[token] sqrt(d_model): (..., n, d_model)
    n = x_emb.shape[-2]
    pos = hook("pos", pe.positional_encoding, c.pos_encoding, n, c.d_model, hook.param("P"))  # (n, d_model)
    x = _dropout(hook, "dropout", hook("input", operator.add, x_emb, pos))  # (..., n, d_model)
    pad = hook("pad_mask", att.padding_mask, lengths[side], n, lengths=lengths[side]) if lengths else None
    yield  # pad: (b, 1, 1, n) in a batch
    return x, pad


def _sublayer_steps(c, dropout):
    """Sub-layer k of a layer, for every k a stack's layer has (Config.sublayers)."""
    steps = {}
    for k in sorted({k for sublayers in c.sublayers.values() for k in sublayers}):
        if dropout:
            steps[f"drop{k}"] = _dropout_step()
        steps[f"add{k}"] = Decl(ADD, ADD_TEX[c.norm_placement]) if c.residual else Decl(
            COPY, NO_RESIDUAL_TEX[c.norm_placement])
        steps[f"ln{k}"] = layer_norm_step(c)
    return steps


def _sublayer(hook, k, x, sublayer):
    """Sub-layer k: LayerNorm(x + Dropout(Sublayer(x))) post-norm, x + Dropout(Sublayer(LayerNorm(x))) pre-norm
    (paper sections 3.1 and 5.4)."""
    pre = hook.model.config.norm_placement == "pre"
    out = yield from sublayer(normalised(hook, f"ln{k}", x) if pre else x)  # (n, d_model)
    out = _dropout(hook, f"drop{k}", out)  # (n, d_model)
    residual = hook.model.config.residual  # off: an experiment, the sub-layer's output without X
    x = hook(f"add{k}", operator.add, x, out) if residual else hook(f"add{k}", np.copy, out)  # (n, d_model)
    x = x if pre else normalised(hook, f"ln{k}", x)  # (n, d_model)
    yield
    return x


def _attention_steps(c, dropout, cross, causal, padded):
    """An attention block: queries from the block's input, keys and values from the encoder's output in
    cross-attention (n_q decoder positions, n_k encoder positions), else from the same input."""
    bias, (q_from, kv_from) = c.attn_bias, att.bound_to(cross, c.norm_placement == "pre")
    n_q, n_k = ("n_q", "n_k") if cross else ("n", "n")
    shapes, scores = {"q": ("h", n_q, "d_k"), "k": ("h", n_k, "d_k"), "v": ("h", n_k, "d_v")}, ("h", "n_q", "n_k")
    steps = {key: Decl(PROJ, att.PROJ_TEX[key] % (q_from if key == "q" else kv_from)
                       + (att.BIAS_TEX[key] if bias else ""), shapes[key], f"{key.upper()}_{{i}}")
             for key in ("q", "k", "v")}
    divisor_tex = att.SQRT_DK_TEX if c.attn_divisor == "sqrt_dk" else f"{c.divisor:.8g}"
    scaled_tex = att.SCALED_TEX["sqrt_dk"] if c.attn_divisor == "sqrt_dk" else att.SCALED_TEX["number"] % divisor_tex
    steps["scores"] = Decl(SCORES, att.SCORES_TEX, scores, "S_{i}")
    steps["scaled"] = Decl(SCALE, scaled_tex, scores, "S_{i}'", {"divisor": c.divisor, "divisor_tex": divisor_tex})
    if causal:
        steps["mask"] = (Decl(MASK, att.CAUSAL_PAD_MASK_TEX, ("1", "n_q", "n_k"), "M") if padded
                         else Decl(MASK, att.MASK_TEX, ("n_q", "n_k"), "M"))
    if causal or padded:
        steps["masked"] = Decl(ADD, att.MASKED_TEX if causal else att.PAD_MASKED_TEX, scores, "S_{i}''")
    steps["weights"] = Decl(SOFTMAX, att.MASKED_WEIGHTS_TEX if causal or padded else att.WEIGHTS_TEX, scores,
                            "A_{i}", {"form": c.softmax})
    steps.update({"dropout": _dropout_step(scores)} if dropout else {})
    steps["heads"] = Decl(WEIGHTED, att.HEADS_TEX, ("h", n_q, "d_v"), r"\text{head}_{i}")
    steps["concat"] = Decl(CONCAT, att.CONCAT_TEX, (n_q, "h·d_v"))
    steps["out"] = Decl(LINEAR, att.OUT_TEX + (r" + b^O" if bias else ""), (n_q, "d_model"))
    return steps


def _attention(hook, x, kv=None, pad=None, causal=False):
    """MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O + b^O, head_i = softmax(Q_i K_i^T / sqrt(d_k) + M) V_i
    (paper section 3.2), Q_i = X W_i^Q + b_i^Q and K_i, V_i alike from X_kv: the encoder's output in
    cross-attention, else X. M: the causal mask (self-attention in the decoder), plus the keys' padding `pad`."""
    c, kv = hook.model.config, x if kv is None else kv  # kv: (m, d_model)
    q = hook("q", att.project, x, hook.matrix("W_Q"), hook.param("b_Q"))  # Q_i = X W_i^Q + b_i^Q: (h, n, d_k)
    k = hook("k", att.project, kv, hook.matrix("W_K"), hook.param("b_K"))  # K_i = X_kv W_i^K + b_i^K: (h, m, d_k)
    v = hook("v", att.project, kv, hook.matrix("W_V"), hook.param("b_V"))  # V_i = X_kv W_i^V + b_i^V: (h, m, d_v)
    s = hook("scores", att.scores, q, k)  # S_i = Q_i K_i^T: (h, n, m)
    s = hook("scaled", att.scale, s, c.divisor)  # S_i / sqrt(d_k): (h, n, m)
    if causal:
        pad = hook("mask", att.causal_mask, x.shape[-2], pad)  # (n, n), in a batch (b, 1, n, n)
    if pad is not None:
        s = hook("masked", att.apply_mask, s, pad)  # + M: (..., h, n, m)
    a = _dropout(hook, "dropout", hook("weights", att.softmax, s, c.softmax))  # A_i = softmax(...): (h, n, m)
    heads = hook("heads", att.weighted_sum, a, v)  # head_i = A_i V_i: (h, n, d_v)
    yield  # a page about the heads needs no W^O, a d_model x d_model matrix
    concat = hook("concat", att.concat_heads, heads)  # Concat(head_1, ..., head_h): (n, h*d_v)
    return hook("out", att.linear, concat, hook.matrix("W_O"), hook.param("b_O"))  # ... W^O + b^O: (n, d_model)


def _ffn_steps(c):
    name = _ACTIVATION_NAMES[c.activation]
    return {"hidden": Decl(LINEAR, ff.HIDDEN_TEX if c.ffn_bias else ff.HIDDEN_NO_BIAS_TEX, ("n", "d_ff"), "H"),
            "act": Decl(ACTIVATION, ff.ACT_TEX[c.activation], ("n", "d_ff"), meta={"fn": c.activation}),
            "out": Decl(LINEAR, (ff.OUT_TEX if c.ffn_bias else ff.OUT_NO_BIAS_TEX) % name)}


def _ffn(hook, x):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, or GELU or Swish in place of the ReLU (paper section 3.3)."""
    hidden = hook("hidden", att.linear, x, hook.matrix("W_1"), hook.param("b_1"))  # H = x W_1 + b_1: (n, d_ff)
    act = hook("act", ff.ACTIVATIONS[hook.model.config.activation], hidden)  # max(0, H): (n, d_ff)
    yield
    return hook("out", att.linear, act, hook.matrix("W_2"), hook.param("b_2"))  # ... W_2 + b_2: (n, d_model)


def layer_norm_step(c):
    """A LayerNorm step of the config's form and eps (the Vision Transformer's head declares one too)."""
    return Decl(LAYER_NORM, LAYER_NORM_TEX[c.layer_norm], meta={"eps": c.eps, "form": c.layer_norm})


def normalised(hook, short, x, params=None):
    """LayerNorm(x) of each row, recorded as step `short`, with the parameters `params`.gamma and `params`.beta
    (`short`'s, if not given)."""
    c, params = hook.model.config, params or short
    gamma, beta = hook.param(f"{params}.gamma"), hook.param(f"{params}.beta")  # (d_model,)
    return hook(short, layer_norm, x, gamma, beta, c.eps, c.layer_norm)  # (n, d_model)


def _dropout_step(shape=ROWS):
    """Dropout of a step, declared in training only (a rate > 0); the pass adds the rate, its seed and keep mask."""
    return Decl(DROPOUT, dr.DROPOUT_TEX, shape)


def _dropout(hook, short, x):
    """Training: x with each cell zeroed with probability p (the dropout rate), the rest divided by 1 - p (paper
    section 5.4), a step the table declares only then. Inference: x itself."""
    if short not in hook.decls:
        return x
    drop = hook.drop
    keep = drop.keep_mask(hook.name(short), x.shape)  # shape of x
    return hook(short, dr.dropout, x, keep, drop.rate, rate=drop.rate, seed=drop.seed, keep=keep)  # shape of x


def _stack_steps(c):
    """A stack's output, from its last layer's output."""
    if c.norm_placement == "pre":
        return {"out": layer_norm_step(c)}
    return {"out": Decl(COPY, lambda steps, inputs, value: steps[inputs[0]].formula)}


def _stack_output(hook, x):
    """The last layer's output; pre-norm normalises it once more (its layers' sums are not normalised)."""
    if hook.model.config.norm_placement == "pre":
        x = normalised(hook, "out", x, "ln_final")  # (n, d_model)
    else:
        x = hook("out", np.copy, x)  # (n, d_model)
    yield
    return x


def _output_steps(c):
    """The output layer, from the decoder's output y; its matrix is E^T when tied."""
    logits = ("n", "vocab")
    return {"logits": Decl(LINEAR, TIED_LOGITS_TEX if c.tied_output else LOGITS_TEX, logits, r"\text{logits}",
                           {"transpose": c.tied_output}),
            "vocab_mask": Decl(MASK, VOCAB_MASK_TEX[c.never_next], ("vocab",)),
            "masked_logits": Decl(ADD, MASKED_LOGITS_TEX, logits, r"\text{logits}'"),
            "probs": Decl(SOFTMAX, PROBS_TEX, logits, "P", {"form": c.softmax})}


def _output(hook, y):
    """P = softmax(y W_out + b_out + M), y the decoder's output, W_out = E^T when tied (paper section 3.4), M masking
    <unk> (or Marian's <pad>)."""
    model = hook.model
    c, vocab, never = model.config, model.vocab, model.never_next
    hook = hook.block("output", "", W=model.embed_names["tgt"] if c.tied_output else "unembed.W")
    logits = hook("logits", att.linear, y, hook.matrix("W"), hook.param("unembed.b"))  # y W_out + b_out: (n, V)
    mask = hook("vocab_mask", vocab_mask, len(vocab), never, never=tuple(vocab.tokens[i] for i in never))  # (V,)
    logits = hook("masked_logits", operator.add, logits, mask)  # (n, V)
    hook("probs", att.softmax, logits, c.softmax)  # (n, V)


def vocab_mask(size, never):
    """M_v: -inf at the ids in `never`, 0 elsewhere: (size,)."""
    mask = np.zeros(size)  # (V,)
    mask[list(never)] = -np.inf
    return mask  # (V,)


# ---- the step table ----------------------------------------------------------------------------------------------

def step_table(config: Config, dropout: float, padded: bool = False) -> MappingProxyType:
    """Every step's declaration, by block and short name, in a pass with dropout rate `dropout` (0: inference), of a
    padded batch or of one sentence. It follows from its arguments alone: made once for them, read-only."""
    return _step_table(config, type(config.eps), dropout, padded)  # eps=0 equals eps=0.0; each is recorded as given


def encoder_blocks(c: Config) -> dict:
    """The declarations of an encoder layer's blocks in an inference pass of one input (the Vision Transformer's)."""
    return {"sublayer": _sublayer_steps(c, 0.0), "attn": _attention_steps(c, 0.0, cross=False, causal=False,
                                                                          padded=False), "ffn": _ffn_steps(c)}


@lru_cache(maxsize=64)
def _step_table(c: Config, eps_type, dropout: float, padded: bool) -> MappingProxyType:
    return step_table_of({"embedding": _embedding_steps(c, dropout, padded), "sublayer": _sublayer_steps(c, dropout),
                          "attn": _attention_steps(c, dropout, cross=False, causal=False, padded=padded),
                          "self_attn": _attention_steps(c, dropout, cross=False, causal=True, padded=padded),
                          "cross_attn": _attention_steps(c, dropout, cross=True, causal=False, padded=padded),
                          "ffn": _ffn_steps(c), "stack": _stack_steps(c), "output": _output_steps(c)})
