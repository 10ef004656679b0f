"""The kinds of step: which equation made a step, and what every step of that kind shares, declared once.

A kind is its per-cell explainer (engine/explain.py), its backward rule (engine/backward.py), the LaTeX of that
rule, and whether its −∞ are a mask's. A step's declaration (a steps.Decl, in engine/model.py) names its kind; a
recorded step carries its declaration, so `step.decl.kind.explain(...)` is its explainer: no other table is keyed
by kind.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

from . import backward as bw
from . import explain as ex


class Kind(NamedTuple):
    name: str  # what Step.kind says: "proj", "softmax", ...
    explain: Callable  # (trace, step, index, writing) -> (latex, text[, where]): one cell's arithmetic, its numbers
    backward: Callable  # (trace, step, ȳ) -> [(input name, x̄), ...]: the gradient to each input
    backward_tex: str | Callable  # the backward rule's LaTeX, or a function of the step choosing it
    masks: bool = False  # its −∞ are a mask's doing, not an overflow (Trace.nonfinite does not report them)

    def backward_formula(self, step) -> str:
        return self.backward_tex if isinstance(self.backward_tex, str) else self.backward_tex(step)


def _biased(step) -> bool:
    """Whether a projection or linear step adds a bias: (x, W, b); a bias turned off is not an input."""
    return len(step.inputs) == 3


_EMBED_TEX = r"\bar{E}[t] \mathrel{+}= %s\sum_{i:\ \text{token}_i = t} \bar{X}_{\text{emb},i}"
_LAYER_NORM_TEX = {
    "paper": r"\bar{x} = \frac{\bar{\hat{x}} - \operatorname{mean}(\bar{\hat{x}}) - \hat{x}\,"
             r"\operatorname{mean}(\bar{\hat{x}} \odot \hat{x})}{\sqrt{\sigma^2 + \epsilon}},\quad "
             r"\bar{\hat{x}} = \bar{y} \odot \gamma,\quad \bar{\gamma} = \sum_i \bar{y}_i \odot \hat{x}_i,\quad "
             r"\bar{\beta} = \sum_i \bar{y}_i",
    "blog": r"\bar{x} = \frac{\bar{\hat{x}} - \operatorname{mean}(\bar{\hat{x}})}{\sigma + \epsilon} - "
            r"\frac{(x - \mu) \sum_k \bar{\hat{x}}_k (x_k - \mu)}{d\, \sigma\, (\sigma + \epsilon)^2},\quad "
            r"\bar{\hat{x}} = \bar{y} \odot \gamma,\quad \bar{\gamma} = \sum_i \bar{y}_i \odot \hat{x}_i,\quad "
            r"\bar{\beta} = \sum_i \bar{y}_i"}
_PROJ_TEX = {True: r"Y_i = X W_i + b_i:\quad \bar{X} = \sum_i \bar{Y}_i W_i^\top,\quad \bar{W}_i = X^\top \bar{Y}_i,"
                   r"\quad \bar{b}_i = \textstyle\sum_n \bar{Y}_{i,n}",
             False: r"Y_i = X W_i:\quad \bar{X} = \sum_i \bar{Y}_i W_i^\top,\quad \bar{W}_i = X^\top \bar{Y}_i"}
_LINEAR_TEX = {"bias": r"y = x W + b:\quad \bar{x} = \bar{y} W^\top,\quad \bar{W} = x^\top \bar{y},\quad "
                       r"\bar{b} = \textstyle\sum_n \bar{y}_n",
               "no_bias": r"y = x W:\quad \bar{x} = \bar{y} W^\top,\quad \bar{W} = x^\top \bar{y}",
               "tied": r"\text{logits} = y E^\top + b:\quad \bar{y} = \overline{\text{logits}}\, E,\quad "
                       r"\bar{E} \mathrel{+}= \overline{\text{logits}}^\top y,\quad \bar{b} = \textstyle\sum_n "
                       r"\overline{\text{logits}}_n"}
_ACTIVATION_TEX = {"relu": r"\bar{H} = \bar{Y} \odot [H > 0]",
                   "gelu": r"\bar{H} = \bar{Y} \odot \left(\Phi(H) + H \varphi(H)\right),\quad "
                           r"\varphi(h) = \tfrac{1}{\sqrt{2\pi}} e^{-h^2/2}",
                   "swish": r"\bar{H} = \bar{Y} \odot \sigma(H)\left(1 + H (1 - \sigma(H))\right)"}

EMBED = Kind("embed", ex.embed, bw.embed,
             lambda step: _EMBED_TEX % (r"\sqrt{d_{\text{model}}} " if step.meta["scale"] != 1.0 else ""))
POS = Kind("pos", ex.pos, bw.pos, lambda step: r"\bar{P}[pos] \mathrel{+}= \overline{PE}_{pos}" if step.inputs
           else r"\overline{PE}\ \text{⟦not-passed-on⟧}")
ADD = Kind("add", ex.add, bw.add, r"y = a + b:\quad \bar{a} = \bar{y},\quad \bar{b} = \bar{y}")
PROJ = Kind("proj", ex.proj, bw.proj, lambda step: _PROJ_TEX[_biased(step)])
SCORES = Kind("scores", ex.scores, bw.scores, r"\bar{Q}_i = \bar{S}_i K_i,\quad \bar{K}_i = \bar{S}_i^\top Q_i")
SCALE = Kind("scale", ex.scale, bw.scale,
             lambda step: r"\bar{S}_i = \frac{\bar{S}_i'}{%s}" % step.meta["divisor_tex"])
MASK = Kind("mask", ex.mask, bw.constant, r"M\ \text{⟦constant⟧}", masks=True)
SOFTMAX = Kind("softmax", ex.softmax, bw.softmax,
               r"\bar{x}_j = A_j \left(\bar{A}_j - \textstyle\sum_k A_k \bar{A}_k\right)\ \text{⟦each-row⟧}")
WEIGHTED = Kind("weighted", ex.weighted, bw.weighted,
                r"\bar{A}_i = \overline{\text{head}}_i V_i^\top,\quad \bar{V}_i = A_i^\top \overline{\text{head}}_i")
CONCAT = Kind("concat", ex.concat, bw.concat,
              r"\overline{\text{head}}_i = \text{⟦columns⟧} (i-1)\,d_v \ldots i\,d_v - 1 \text{⟦of⟧} \bar{C}")
LINEAR = Kind("linear", ex.linear, bw.linear, lambda step: _LINEAR_TEX[
    "tied" if step.meta.get("transpose") else "bias" if _biased(step) else "no_bias"])
LAYER_NORM = Kind("layer_norm", ex.layer_norm, bw.layer_norm, lambda step: _LAYER_NORM_TEX[step.meta["form"]])
ACTIVATION = Kind("activation", ex.activation, bw.activation, lambda step: _ACTIVATION_TEX[step.meta["fn"]])
COPY = Kind("copy", ex.copy, bw.copy, r"\bar{x} = \bar{y}")
DROPOUT = Kind("dropout", ex.dropout, bw.dropout, r"\bar{x} = \frac{m \odot \bar{y}}{1 - p}")

# The Vision Transformer's (engine/vit.py): an image cut into patches, the class token put first, one row taken
PATCHES = Kind("patches", ex.patches, bw.constant, r"x\ \text{⟦not-passed-on⟧}")
PREPEND = Kind("prepend", ex.prepend, bw.prepend,
               r"\bar{x}_{\text{class}} = \bar{z}_{0},\quad \overline{x_p E}_{i} = \bar{z}_{i}\ (i \ge 1)")
ROW = Kind("row", ex.row, bw.row, r"\bar{z}^{0} = \bar{y},\quad \bar{z}^{i} = 0\ (i \ge 1)")

KINDS = {kind.name: kind for kind in (EMBED, POS, ADD, PROJ, SCORES, SCALE, MASK, SOFTMAX, WEIGHTED, CONCAT, LINEAR,
                                      LAYER_NORM, ACTIVATION, COPY, DROPOUT)}  # the text model's
IMAGE_KINDS = {kind.name: kind for kind in (PATCHES, PREPEND, ROW)}  # the Vision Transformer's own
