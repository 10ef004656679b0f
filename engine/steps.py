"""The step table: every step a forward pass records, declared once.

A step's name is its block's prefix and its short name: the attention block "enc.0.attn" records "enc.0.attn.q", the
sub-layer "enc.0" records "enc.0.add1", the output block (prefix "") records "logits". For each short name the table
says the step's kind, formula, inputs and constants; what a step is in words is the UI catalogs' ("desc.*"). Inputs
are written as the block sees them: a name the block binds ("x", the array it reads; "E", the embedding table it
looks up), or else a step or parameter of the block ("q" is "<prefix>.q", "W_Q" is "<prefix>.W_Q"). The table
follows the config (norm placement, biases, divisor, ...), the dropout probability of the pass (only a training pass
has dropout steps) and whether it runs a padded batch (only a batch has padding masks: `src.pad_mask`,
`tgt.pad_mask`, and every attention block masks).

engine/model.py computes the values and records each through a Hook: `q = hook("q", att.project(x, W_Q, b_Q))`.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable, NamedTuple

from . import attention as att
from . import dropout as dr
from . import feed_forward as ff
from . import positional as pe
from .config import Config
from .layer_norm import LAYER_NORM_TEX

ADD_TEX = {"post": r"X + \operatorname{Sublayer}(X)",  # then LayerNorm of this sum
           "pre": r"X + \operatorname{Sublayer}(\operatorname{LayerNorm}(X))"}  # the sum is not normalised
LOGITS_TEX = r"\text{logits} = y\, W_{\text{out}} + b_{\text{out}}"
TIED_LOGITS_TEX = r"\text{logits} = y\, E^\top + b_{\text{out}}"
VOCAB_MASK_TEX = r"M_v = \begin{cases} -\infty & v = \texttt{<unk>} \\ 0 & \text{⟦otherwise⟧} \end{cases}"
MASKED_LOGITS_TEX = r"\text{logits}' = \text{logits} + M"
PROBS_TEX = r"P = \operatorname{softmax}(\text{logits}')"
SUBLAYERS = 3  # the most sub-layers a layer has (a decoder layer's)
_ACTIVATION_NAMES = {"relu": "ReLU", "gelu": "GELU"}


class Decl(NamedTuple):
    """One step as the table declares it. A formula that depends on the pass (the encoding's length, the step
    copied) is a function of the hook recording it and the step's value."""
    kind: str  # which equation makes it; selects the per-cell explanation
    formula: str | Callable  # LaTeX; its words are word slots (engine/words.py)
    inputs: tuple = ()  # as the block sees them (see the module's docstring)
    meta: dict = {}  # the equation's constants; the forward pass adds the ones only it knows (token ids, keep masks)


class StepTable(dict):
    """Block -> short name -> Decl; and each block's steps resolved to names, remembered from pass to pass."""

    def __init__(self, blocks):
        super().__init__(blocks)
        self.resolved = {}  # (block, prefix) -> {short name: (name, kind, formula, input names, meta)}


def step_table(config: Config, p: float, padded: bool = False) -> StepTable:
    """Every step's declaration, by block and short name, in a pass with dropout probability p (0: inference), of a
    padded batch or of one sentence."""
    return _step_table(config, type(config.eps), p, padded)  # eps=0 equals eps=0.0, and each is recorded as given


@lru_cache(maxsize=64)
def _step_table(c: Config, eps_type, p: float, padded: bool) -> StepTable:
    return StepTable({"embedding": _embedding(c, p, padded), "sublayer": _sublayer(c, p),
                      "attn": _attention(c, p, cross=False, causal=False, padded=padded),
                      "self_attn": _attention(c, p, cross=False, causal=True, padded=padded),
                      "cross_attn": _attention(c, p, cross=True, causal=False, padded=padded),
                      "ffn": _ffn(c), "stack": _stack(c), "output": _output(c)})


def _dropout(x):
    """Dropout of the step `x`: declared in training only (p > 0); the pass adds p, its seed and keep mask."""
    return Decl("dropout", dr.DROPOUT_TEX, (x,))


def _embedding(c, p, padded):
    return {"embed": Decl("embed", pe.EMBED_SCALED_TEX if c.embed_scale else pe.EMBED_TEX, ("E",)),
            "pos": Decl("pos", lambda hook, value: pe.pe_tex(c.pos_encoding, len(value), c.d_model),
                        ("P",) if c.pos_encoding == "learned" else (), {"form": c.pos_encoding, "d_model": c.d_model}),
            "input": Decl("add", pe.INPUT_TEX, ("embed", "pos")),
            **({"dropout": _dropout("input")} if p else {}),
            **({"pad_mask": Decl("mask", att.PAD_MASK_TEX)} if padded else {})}


def _layer_norm(c, x, params):
    return Decl("layer_norm", LAYER_NORM_TEX[c.layer_norm], (x, f"{params}.gamma", f"{params}.beta"),
                {"eps": c.eps, "form": c.layer_norm})


def _sublayer(c, p):
    """Sub-layer k of a layer: "x" is its input, "out" its block's output."""
    steps = {}
    for k in range(1, SUBLAYERS + 1):
        if p:
            steps[f"drop{k}"] = _dropout("out")
        steps[f"add{k}"] = Decl("add", ADD_TEX[c.norm_placement], ("x", f"drop{k}" if p else "out"))
        steps[f"ln{k}"] = _layer_norm(c, f"add{k}" if c.norm_placement == "post" else "x", f"ln{k}")
    return steps


def _attention(c, p, cross, causal, padded):
    """An attention block: queries from "x", keys and values from "kv" (the same array but in cross-attention); in
    a padded batch, "pad_mask" is the padding mask of the keys' side."""
    texts = att.CROSS_PROJ_TEX if cross else att.PROJ_TEX
    bias = c.attn_bias
    steps = {key: Decl("proj", texts[key] + (att.BIAS_TEX[key] if bias else ""),
                       ("x" if key == "q" else "kv", f"W_{key.upper()}") + ((f"b_{key.upper()}",) if bias else ()))
             for key in ("q", "k", "v")}
    divisor_tex = att.SQRT_DK_TEX if c.attn_divisor == "sqrt_dk" else f"{c.divisor:.8g}"
    scaled_tex = att.SCALED_TEX["sqrt_dk"] if c.attn_divisor == "sqrt_dk" else att.SCALED_TEX["number"] % divisor_tex
    steps["scores"] = Decl("scores", att.SCORES_TEX, ("q", "k"))
    steps["scaled"] = Decl("scale", scaled_tex, ("scores",), {"divisor": c.divisor, "divisor_tex": divisor_tex})
    if causal:
        steps["mask"] = Decl("mask", att.CAUSAL_PAD_MASK_TEX, ("pad_mask",)) if padded else Decl("mask", att.MASK_TEX)
    if causal or padded:
        steps["masked"] = Decl("add", att.MASKED_TEX if causal else att.PAD_MASKED_TEX,
                               ("scaled", "mask" if causal else "pad_mask"))
    steps["weights"] = Decl("softmax", att.MASKED_WEIGHTS_TEX if causal or padded else att.WEIGHTS_TEX,
                            ("masked" if causal or padded else "scaled",), {"form": c.softmax})
    if p:
        steps["dropout"] = _dropout("weights")
    steps["heads"] = Decl("weighted", att.HEADS_TEX, ("dropout" if p else "weights", "v"))
    steps["concat"] = Decl("concat", att.CONCAT_TEX, ("heads",))
    steps["out"] = Decl("linear", att.OUT_TEX + (r" + b^O" if bias else ""),
                        ("concat", "W_O") + (("b_O",) if bias else ()))
    return steps


def _ffn(c):
    """The feed-forward network of "x"."""
    b1, b2 = (("b_1",), ("b_2",)) if c.ffn_bias else ((), ())
    name = _ACTIVATION_NAMES[c.activation]
    return {"hidden": Decl("linear", ff.HIDDEN_TEX if b1 else ff.HIDDEN_NO_BIAS_TEX, ("x", "W_1") + b1),
            "act": Decl("activation", ff.ACT_TEX[c.activation], ("hidden",), {"fn": c.activation}),
            "out": Decl("linear", (ff.OUT_TEX if b2 else ff.OUT_NO_BIAS_TEX) % name, ("act", "W_2") + b2)}


def _stack(c):
    """A stack's output: "x" is its last layer's output."""
    if c.norm_placement == "pre":
        return {"out": _layer_norm(c, "x", "ln_final")}
    return {"out": Decl("copy", lambda hook, value: hook.step("x").formula, ("x",))}


def _output(c):
    """The output layer of "y", the decoder's output; "W" is the output matrix (E^T when tied)."""
    return {"logits": Decl("linear", TIED_LOGITS_TEX if c.tied_output else LOGITS_TEX, ("y", "W", "unembed.b"),
                           {"transpose": c.tied_output}),
            "vocab_mask": Decl("mask", VOCAB_MASK_TEX),
            "masked_logits": Decl("add", MASKED_LOGITS_TEX, ("logits", "vocab_mask")),
            "probs": Decl("softmax", PROBS_TEX, ("masked_logits",), {"form": c.softmax})}


class Hook:
    """Records the steps of one block as the table declares them: hook("q", value) records "<prefix>.q".

    `bound` maps the block's own names to what they stand for: a name, or a recorded array (its step's name is
    taken). The parameters of the block are read through it, `matrix` as the pass multiplies by it
    (engine/products.py), `param` as it is stored: a parameter is bound by its name."""

    __slots__ = ("rec", "steps", "model", "drop", "bound", "dot", "resolved")  # a pass makes a few dozen

    def __init__(self, rec, table: StepTable, model, drop, block: str, prefix: str, bound: dict):
        self.rec, self.steps, self.model, self.drop, self.bound = rec, table[block], model, drop, bound
        self.dot = f"{prefix}." if prefix else ""
        key = (block, prefix)  # a step's name and inputs follow from the config and p alone: the table's
        self.resolved = table.resolved.get(key) or table.resolved.setdefault(key, {})

    def __call__(self, short, value, **meta):
        name, kind, formula, inputs, table_meta = self.resolved.get(short) or self._resolve(short)
        if type(formula) is not str:
            formula = formula(self, value)
        return self.rec(name, value, kind, formula, inputs, {**table_meta, **meta})

    def _resolve(self, short):
        decl = self.steps[short]
        return self.resolved.setdefault(short, (self.name(short), decl.kind, decl.formula,
                                                tuple(map(self.name_of, decl.inputs)), decl.meta))

    def name(self, short) -> str:
        return self.dot + short

    def name_of(self, symbol) -> str:
        """The step or parameter a symbol of the block stands for."""
        target = self.bound.get(symbol)
        if target is None:
            return self.dot + symbol
        return target if isinstance(target, str) else self.rec.name_of(target)

    def step(self, symbol):
        return self.rec.steps[self.name_of(symbol)]

    def param(self, symbol):
        """The parameter as stored; None if the config has none (a bias turned off)."""
        return self.model.params.get(self.bound.get(symbol) or self.dot + symbol)

    def matrix(self, symbol):
        """The weight as the pass multiplies by it: `x @ hook.matrix("W_Q")` is x W^Q, its product remembered."""
        return self.model.multiplier(self.bound.get(symbol) or self.dot + symbol)
