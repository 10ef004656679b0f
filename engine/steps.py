"""The step table: every step a forward pass records, declared once.

A step's name is its block's prefix and its short name: the attention block "enc.0.attn" records "enc.0.attn.q", the
sub-layer "enc.0" records "enc.0.add1", the output block (prefix "") records "logits". For each short name the table
declares the step's kind (engine/kinds.py: its explainer, backward rule and its formula, its mask flag), formula,
shape in the config's symbols, the symbol its formula calls it, and constants; what a step is in words is the UI
catalogs' ("desc.*"). The table follows the config (norm placement, biases, divisor, ...), the dropout probability
of the pass (only a training pass has dropout steps) and whether it runs a padded batch (only a batch has padding
masks: `src.pad_mask`, `tgt.pad_mask`, and every attention block masks).

engine/model.py computes each step through a Hook, which also names its inputs: `q = hook("q", att.project, x, W_Q,
b_Q)` records `att.project(x, W_Q, b_Q)` as "<prefix>.q", from the steps and parameters among its arguments.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable, NamedTuple

from . import attention as att
from . import dropout as dr
from . import feed_forward as ff
from . import positional as pe
from .config import Config
from .kinds import (ACTIVATION, ADD, CONCAT, COPY, DROPOUT, EMBED, LAYER_NORM, LINEAR, MASK, POS, PROJ, SCALE,
                    SCORES, SOFTMAX, WEIGHTED, Kind)
from .layer_norm import LAYER_NORM_TEX

ADD_TEX = {"post": r"X + \operatorname{Sublayer}(X)",  # then LayerNorm of this sum
           "pre": r"X + \operatorname{Sublayer}(\operatorname{LayerNorm}(X))"}  # the sum is not normalised
LOGITS_TEX = r"\text{logits} = y\, W_{\text{out}} + b_{\text{out}}"
TIED_LOGITS_TEX = r"\text{logits} = y\, E^\top + b_{\text{out}}"
VOCAB_MASK_TEX = r"M_v = \begin{cases} -\infty & v = \texttt{<unk>} \\ 0 & \text{⟦otherwise⟧} \end{cases}"
MASKED_LOGITS_TEX = r"\text{logits}' = \text{logits} + M"
PROBS_TEX = r"P = \operatorname{softmax}(\text{logits}')"
ROWS = ("n", "d_model")  # the residual stream's shape: one row per position
_ACTIVATION_NAMES = {"relu": "ReLU", "gelu": "GELU"}


class Decl(NamedTuple):
    """One step as the table declares it. A formula that depends on the pass (the encoding's length, the step
    copied) is a function of the recorded steps, the step's input names and its value.

    `shape` is one sentence's, in the config's symbols: n (the positions of the step's side), n_q and n_k (an
    attention block's query and key positions), h, d_k, d_v, d_model, d_ff, vocab, "h·d_v" a product, "1" one; a
    padded batch puts b in front of every step but those all sentences share (`src.pos`, `tgt.pos`, `vocab_mask`)."""
    kind: Kind  # which equation makes it: its explainer and backward rule (engine/kinds.py)
    formula: str | Callable  # LaTeX; its words are word slots (engine/words.py)
    shape: tuple = ROWS
    symbol: str | None = None  # what its formula calls it, {i} its head's number; None: its name on screen
    meta: dict = {}  # the equation's constants; the forward pass adds the ones only it knows (token ids, keep masks)


class StepTable(dict):
    """Block -> short name -> Decl; and the inputs of each block's steps, named once by the first pass (see Hook)."""

    def __init__(self, blocks):
        super().__init__(blocks)
        self.named = {}  # (block, prefix) -> {short name: (step name, Decl, input names)}


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


def _dropout(shape=ROWS):
    """Dropout of a step, declared in training only (p > 0); the pass adds p, its seed and keep mask."""
    return Decl(DROPOUT, dr.DROPOUT_TEX, shape)


def _embedding(c, p, padded):
    return {"embed": Decl(EMBED, pe.EMBED_SCALED_TEX if c.embed_scale else pe.EMBED_TEX, symbol=r"X_{\text{emb}}"),
            "pos": Decl(POS, lambda steps, inputs, value: pe.pe_tex(c.pos_encoding, len(value), c.d_model),
                        symbol="PE", meta={"form": c.pos_encoding, "d_model": c.d_model}),
            "input": Decl(ADD, pe.INPUT_TEX, symbol="X"),
            **({"dropout": _dropout()} if p else {}),
            **({"pad_mask": Decl(MASK, att.PAD_MASK_TEX, ("1", "1", "n"))} if padded else {})}


def _layer_norm(c):
    return Decl(LAYER_NORM, LAYER_NORM_TEX[c.layer_norm], meta={"eps": c.eps, "form": c.layer_norm})


def _sublayer(c, p):
    """Sub-layer k of a layer, for every k a stack's layer has (Config.sublayers)."""
    steps = {}
    for k in sorted({k for sublayers in c.sublayers.values() for k in sublayers}):
        if p:
            steps[f"drop{k}"] = _dropout()
        steps[f"add{k}"] = Decl(ADD, ADD_TEX[c.norm_placement])
        steps[f"ln{k}"] = _layer_norm(c)
    return steps


def _attention(c, p, cross, causal, padded):
    """An attention block: queries from the block's input, keys and values from the encoder's output in
    cross-attention (n_q decoder positions, n_k encoder positions), else from the same input."""
    texts, bias = att.CROSS_PROJ_TEX if cross else att.PROJ_TEX, c.attn_bias
    n_q, n_k = ("n_q", "n_k") if cross else ("n", "n")
    shapes = {"q": ("h", n_q, "d_k"), "k": ("h", n_k, "d_k"), "v": ("h", n_k, "d_v")}
    steps = {key: Decl(PROJ, texts[key] + (att.BIAS_TEX[key] if bias else ""), shapes[key], f"{key.upper()}_{{i}}")
             for key in ("q", "k", "v")}
    divisor_tex = att.SQRT_DK_TEX if c.attn_divisor == "sqrt_dk" else f"{c.divisor:.8g}"
    scaled_tex = att.SCALED_TEX["sqrt_dk"] if c.attn_divisor == "sqrt_dk" else att.SCALED_TEX["number"] % divisor_tex
    scores = ("h", "n_q", "n_k")
    steps["scores"] = Decl(SCORES, att.SCORES_TEX, scores, "S_{i}")
    steps["scaled"] = Decl(SCALE, scaled_tex, scores, "S_{i}'", {"divisor": c.divisor, "divisor_tex": divisor_tex})
    if causal:
        steps["mask"] = (Decl(MASK, att.CAUSAL_PAD_MASK_TEX, ("1", "n_q", "n_k"), "M") if padded
                         else Decl(MASK, att.MASK_TEX, ("n_q", "n_k"), "M"))
    if causal or padded:
        steps["masked"] = Decl(ADD, att.MASKED_TEX if causal else att.PAD_MASKED_TEX, scores, "S_{i}''")
    steps["weights"] = Decl(SOFTMAX, att.MASKED_WEIGHTS_TEX if causal or padded else att.WEIGHTS_TEX, scores,
                            "A_{i}", {"form": c.softmax})
    if p:
        steps["dropout"] = _dropout(scores)
    steps["heads"] = Decl(WEIGHTED, att.HEADS_TEX, ("h", n_q, "d_v"), r"\text{head}_{i}")
    steps["concat"] = Decl(CONCAT, att.CONCAT_TEX, (n_q, "h·d_v"))
    steps["out"] = Decl(LINEAR, att.OUT_TEX + (r" + b^O" if bias else ""), (n_q, "d_model"))
    return steps


def _ffn(c):
    """The feed-forward network of the block's input."""
    name = _ACTIVATION_NAMES[c.activation]
    return {"hidden": Decl(LINEAR, ff.HIDDEN_TEX if c.ffn_bias else ff.HIDDEN_NO_BIAS_TEX, ("n", "d_ff"), "H"),
            "act": Decl(ACTIVATION, ff.ACT_TEX[c.activation], ("n", "d_ff"), meta={"fn": c.activation}),
            "out": Decl(LINEAR, (ff.OUT_TEX if c.ffn_bias else ff.OUT_NO_BIAS_TEX) % name)}


def _stack(c):
    """A stack's output, from its last layer's output."""
    if c.norm_placement == "pre":
        return {"out": _layer_norm(c)}
    return {"out": Decl(COPY, lambda steps, inputs, value: steps[inputs[0]].formula)}


def _output(c):
    """The output layer, from the decoder's output y; its matrix is E^T when tied."""
    logits = ("n", "vocab")
    return {"logits": Decl(LINEAR, TIED_LOGITS_TEX if c.tied_output else LOGITS_TEX, logits, r"\text{logits}",
                           {"transpose": c.tied_output}),
            "vocab_mask": Decl(MASK, VOCAB_MASK_TEX, ("vocab",)),
            "masked_logits": Decl(ADD, MASKED_LOGITS_TEX, logits, r"\text{logits}'"),
            "probs": Decl(SOFTMAX, PROBS_TEX, logits, "P", {"form": c.softmax})}


class Hook:
    """Computes and records the steps of one block as the table declares them: hook("q", f, *args) records
    f(*args) as "<prefix>.q", whose inputs are the recorded steps and the model's parameters among args.

    The block's parameters are read through it, `matrix` as the pass multiplies by it (engine/products.py),
    `param` as it is stored: "W_Q" is "<prefix>.W_Q", unless `aliases` names it. A step's inputs follow from the
    config, p and padding alone, as its table does: they are named in a table's first pass, then read from it (a pass
    records ~300 steps, and naming them would be a third of the hook's time)."""

    __slots__ = ("rec", "params", "table", "model", "drop", "decls", "dot", "aliases", "named")  # a pass makes dozens

    def __init__(self, rec, table: StepTable, model, drop, block="output", prefix="", params=None, **aliases):
        self.rec, self.table, self.model, self.drop = rec, table, model, drop
        self.params = {} if params is None else params  # the pass's: id of a parameter -> its name, once needed
        self.decls, self.dot, self.aliases = table[block], f"{prefix}." if prefix else "", aliases
        key = (block, prefix)
        self.named = table.named.get(key) or table.named.setdefault(key, {})

    def block(self, block, prefix, **aliases) -> "Hook":
        """The hook of another block of the same pass."""
        return Hook(self.rec, self.table, self.model, self.drop, block, prefix, self.params, **aliases)

    def __call__(self, short, equation, *args, **meta):
        value = equation(*args)
        name, decl, inputs = self.named.get(short) or self._name(short, args)
        formula = decl.formula if type(decl.formula) is str else decl.formula(self.rec.steps, inputs, value)
        return self.rec(name, value, decl, formula, inputs, {**decl.meta, **meta})

    def _name(self, short, args):
        """The step's name, declaration and inputs: the recorded steps and parameters among `args`, in their order."""
        steps, params = self.rec.names, self.params
        if not params:
            params.update(self.model.parameter_names())
        inputs = tuple([steps.get(i) or params[i] for i in map(id, args) if i in steps or i in params])
        return self.named.setdefault(short, (self.dot + short, self.decls[short], inputs))

    def name(self, short) -> str:
        return self.dot + short

    def param(self, short):
        """The parameter as stored; None if the config has none (a bias turned off)."""
        return self.model.params.get(self.aliases.get(short) or self.dot + short)

    def matrix(self, short):
        """The weight as the pass multiplies by it: `x @ hook.matrix("W_Q")` is x W^Q, its product remembered."""
        return self.model.multiplier(self.aliases.get(short) or self.dot + short)
