"""Backpropagation by hand: the gradient of the training loss with respect to every step and every parameter.

The forward trace is walked backwards. Each kind of step has one small rule that takes the gradient of the
loss with respect to the step's value (written x̄ = ∂L/∂x) and returns the gradient with respect to each of
its inputs, steps and parameters alike; gradients reaching the same name from several uses add up. The walk
starts at the logits with engine.loss's (P - q) / |I| (the output mask adds a constant, so the masked logits
have the same gradient), and the "vocab_mask", "masked_logits" and "probs" steps get none of their own.

    result = loss_and_grads(model, "the cat sat", "el gato se sentó")
    result.loss, result.token_losses          # mean cross-entropy, and each position's
    result.grads["enc.0.attn.W_Q"]            # (h, d_model, d_k), like the parameter
    result.backward["grad.enc.0.attn.scores"] # (h, n, n): ∂L/∂(that step), in backward order
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from .attention import split_heads
from .loss import cross_entropy, cross_entropy_grad, teacher_forcing
from .values import read_only

PADDED = -1  # the target of a padded position: no token's id, so the loss ignores it
GRAD_TEX = r"\bar{x} = \frac{\partial L}{\partial x}"
BACKWARD_TEX = {
    "embed": {True: r"\bar{E}[t] \mathrel{+}= \sqrt{d_{\text{model}}} \sum_{i:\ \text{token}_i = t} "
                    r"\bar{X}_{\text{emb},i}",
              False: r"\bar{E}[t] \mathrel{+}= \sum_{i:\ \text{token}_i = t} \bar{X}_{\text{emb},i}"},
    "pos": {True: r"\bar{P}[pos] \mathrel{+}= \overline{PE}_{pos}",
            False: r"\overline{PE}\ \text{⟦not-passed-on⟧}"},
    "add": r"y = a + b:\quad \bar{a} = \bar{y},\quad \bar{b} = \bar{y}",
    "layer_norm": {
        "paper": r"\bar{x} = \frac{\bar{\hat{x}} - \operatorname{mean}(\bar{\hat{x}}) - \hat{x}\,"
                 r"\operatorname{mean}(\bar{\hat{x}} \odot \hat{x})}{\sqrt{\sigma^2 + \epsilon}},\quad "
                 r"\bar{\hat{x}} = \bar{y} \odot \gamma,\quad \bar{\gamma} = \sum_i \bar{y}_i \odot \hat{x}_i,\quad "
                 r"\bar{\beta} = \sum_i \bar{y}_i",
        "blog": r"\bar{x} = \frac{\bar{\hat{x}} - \operatorname{mean}(\bar{\hat{x}})}{\sigma + \epsilon} - "
                r"\frac{(x - \mu) \sum_k \bar{\hat{x}}_k (x_k - \mu)}{d\, \sigma\, (\sigma + \epsilon)^2},\quad "
                r"\bar{\hat{x}} = \bar{y} \odot \gamma,\quad \bar{\gamma} = \sum_i \bar{y}_i \odot \hat{x}_i,\quad "
                r"\bar{\beta} = \sum_i \bar{y}_i"},
    "proj": {True: r"Y_i = X W_i + b_i:\quad \bar{X} = \sum_i \bar{Y}_i W_i^\top,\quad \bar{W}_i = X^\top \bar{Y}_i,"
                   r"\quad \bar{b}_i = \textstyle\sum_n \bar{Y}_{i,n}",
             False: r"Y_i = X W_i:\quad \bar{X} = \sum_i \bar{Y}_i W_i^\top,\quad \bar{W}_i = X^\top \bar{Y}_i"},
    "scores": r"\bar{Q}_i = \bar{S}_i K_i,\quad \bar{K}_i = \bar{S}_i^\top Q_i",
    "scale": r"\bar{S}_i = \frac{\bar{S}_i'}{%s}",
    "mask": r"M\ \text{⟦constant⟧}",
    "softmax": r"\bar{x}_j = A_j \left(\bar{A}_j - \textstyle\sum_k A_k \bar{A}_k\right)\ \text{⟦each-row⟧}",
    "weighted": r"\bar{A}_i = \overline{\text{head}}_i V_i^\top,\quad \bar{V}_i = A_i^\top \overline{\text{head}}_i",
    "concat": r"\overline{\text{head}}_i = \text{⟦columns⟧} (i-1)\,d_v \ldots i\,d_v - 1 \text{⟦of⟧} \bar{C}",
    "linear": {"bias": r"y = x W + b:\quad \bar{x} = \bar{y} W^\top,\quad \bar{W} = x^\top \bar{y},\quad "
                       r"\bar{b} = \textstyle\sum_n \bar{y}_n",
               "no_bias": r"y = x W:\quad \bar{x} = \bar{y} W^\top,\quad \bar{W} = x^\top \bar{y}",
               "tied": r"\text{logits} = y E^\top + b:\quad \bar{y} = \overline{\text{logits}}\, E,\quad "
                     r"\bar{E} \mathrel{+}= \overline{\text{logits}}^\top y,\quad \bar{b} = \textstyle\sum_n "
                     r"\overline{\text{logits}}_n"},
    "activation": {"relu": r"\bar{H} = \bar{Y} \odot [H > 0]",
                   "gelu": r"\bar{H} = \bar{Y} \odot \left(\Phi(H) + H \varphi(H)\right),\quad "
                           r"\varphi(h) = \tfrac{1}{\sqrt{2\pi}} e^{-h^2/2}"},
    "copy": r"\bar{x} = \bar{y}",
    "dropout": r"\bar{x} = \frac{m \odot \bar{y}}{1 - p}",
}


@dataclass(frozen=True)
class LossAndGrads:
    loss: float  # mean cross-entropy over the counted positions
    token_losses: np.ndarray  # (n_dec,) each position's loss, 0 where the target is ignored; (b, n_dec) a batch's
    grads: dict  # every parameter name -> dL/d(parameter), the parameter's shape
    trace: object  # the forward Trace (training mode when dropout > 0)
    backward: MappingProxyType  # "grad.<step name>" -> dL/d(step), read-only, in backward order
    src_ids: list
    dec_input_ids: list  # SOS + target
    target_ids: list  # target + EOS


def loss_and_grads(model, src: str, tgt: str, *, label_smoothing=0.0, ignore_id=None, dropout=0.0,
                   seed=0) -> LossAndGrads:
    """One training example: the forward pass with teacher forcing, the loss, and backpropagation."""
    _check_trainable(model)
    trace = model.run(src, tgt, dropout=dropout, seed=seed)
    dec_ids, targets = teacher_forcing(model.vocab, trace.tgt_ids[1:])
    return _loss_and_grads(model, trace, list(trace.src_ids), dec_ids, targets,
                           dict(label_smoothing=label_smoothing, ignore_id=ignore_id))


def padded_loss_and_grads(model, pairs, *, label_smoothing=0.0, dropout=0.0, seed=0) -> LossAndGrads:
    """`loss_and_grads` of a batch of pairs in one padded pass (Model.run_batch). The loss is the mean of the pairs'
    losses, each over its own target tokens (engine.loss.BATCH_LOSS_TEX), so it and every gradient equal the mean
    of the pairs' own; ids, targets and token losses hold one row per pair, padded (a padded target is PADDED)."""
    _check_trainable(model)
    trace = model.run_batch(pairs, dropout=dropout, seed=seed)
    width, lengths = len(trace.tgt_ids[0]), trace.step("tgt.pad_mask").meta["lengths"]
    forced = (teacher_forcing(model.vocab, ids[1:n])[1] for ids, n in zip(trace.tgt_ids, lengths))
    targets = [t + [PADDED] * (width - len(t)) for t in forced]
    return _loss_and_grads(model, trace, [list(ids) for ids in trace.src_ids], [list(ids) for ids in trace.tgt_ids],
                           targets, dict(label_smoothing=label_smoothing, ignore_id=PADDED))


def _check_trainable(model):
    if model.config.decoder_only:  # its targets would start inside the source: not written yet
        raise ValueError("Training a decoder-only model is not supported: train an encoder-decoder model.")


def _loss_and_grads(model, trace, src_ids, dec_ids, targets, options) -> LossAndGrads:
    """The loss of a forward trace against its targets, and backpropagation from it."""
    with np.errstate(all="ignore"):  # non-finite weights give a NaN loss and gradients, as in the forward pass
        loss, token_losses = cross_entropy(trace["masked_logits"], targets, **options)
        grads = backward(trace, cross_entropy_grad(trace["masked_logits"], targets, **options))
    params = {name: grads[name] if name in grads else np.zeros(value.shape) for name, value in model.params.items()}
    steps = {f"grad.{s.name}": read_only(grads[s.name], copy=False) for s in reversed(trace.steps()) if s.name in grads}
    return LossAndGrads(loss, token_losses, params, trace, MappingProxyType(steps), src_ids, dec_ids, targets)


def backward(trace, grad_logits) -> dict:
    """dL/d(name) for every step and parameter the logits depend on, from dL/dlogits."""
    grads = {"logits": np.asarray(grad_logits, dtype=float)}
    for step in reversed(trace.steps()):
        if step.name in grads:
            for ref, grad in _RULES[step.kind](trace, step, grads[step.name]):
                grads[ref] = grads[ref] + grad if ref in grads else grad
    return grads


def backward_formula(step) -> str:
    """The LaTeX of the rule that passes a step's gradient on to its inputs."""
    meta = step.meta
    bias = len(step.inputs) == 3  # a projection's or linear layer's (x, W, b); a bias turned off is not an input
    linear = "tied" if meta.get("transpose") else "bias" if bias else "no_bias"
    variant = {"embed": meta.get("scale") != 1.0, "pos": bool(step.inputs), "layer_norm": meta.get("form"),
               "proj": bias, "linear": linear, "activation": meta.get("fn")}.get(step.kind)
    tex = BACKWARD_TEX[step.kind]
    tex = tex[variant] if isinstance(tex, dict) else tex
    return tex % meta["divisor_tex"] if step.kind == "scale" else tex


# ---- one rule per kind of step: (trace, step, ȳ) -> [(input name, x̄), ...] ------------------------------------

def _embed(trace, step, g):
    table = step.inputs[0]
    grad = np.zeros(trace.resolve(table).shape)  # (V, d_model)
    np.add.at(grad, np.asarray(step.meta["ids"]), g * step.meta["scale"])  # a repeated token collects every row
    return [(table, grad)]


def _pos(trace, step, g):
    if not step.inputs:
        return []
    grad = np.zeros(trace.resolve(step.inputs[0]).shape)  # (max_len, d_model)
    grad[: len(g)] = g  # (n, d_model)
    return [(step.inputs[0], grad)]


def _add(trace, step, g):
    return [(ref, _sum_to_shape(g, np.shape(trace.resolve(ref)))) for ref in step.inputs]


def _layer_norm(trace, step, g):
    x_ref, gamma_ref, beta_ref = step.inputs
    x, gamma, eps = trace.resolve(x_ref), trace.resolve(gamma_ref), step.meta["eps"]
    centred = x - np.mean(x, axis=-1, keepdims=True)  # (n, d_model)
    var = np.mean(centred**2, axis=-1, keepdims=True)  # (n, 1)
    denominator, coefficient = _layer_norm_denominator(var, eps, step.meta["form"], x.shape[-1])  # (n, 1)
    g_hat = g * gamma  # (n, d_model)
    dx = (g_hat - np.mean(g_hat, axis=-1, keepdims=True)) / denominator \
        - centred * coefficient * np.sum(g_hat * centred, axis=-1, keepdims=True)  # (n, d_model)
    rows = tuple(range(g.ndim - 1))  # every position of every sentence
    return [(x_ref, dx), (gamma_ref, np.sum(g * centred / denominator, axis=rows)), (beta_ref, np.sum(g, axis=rows))]


def _layer_norm_denominator(var, eps, form, d):
    """D (the forward divides by it) and 2 D'(var) / (d D^2), how the variance's change reaches each x."""
    if form == "paper":
        denominator = np.sqrt(var + eps)  # (n, 1)
        return denominator, 1.0 / (d * denominator**3)  # (n, 1)
    sigma = np.sqrt(var)  # (n, 1)
    denominator = sigma + eps  # (n, 1)
    # a constant row (sigma = 0) has x - mu = 0, so this term vanishes there whatever its coefficient
    return denominator, np.divide(1.0, d * sigma * denominator**2, out=np.zeros_like(sigma), where=sigma > 0)


def _proj(trace, step, g):
    x_ref, W_ref, *bias = step.inputs
    x, W = trace.resolve(x_ref), trace.resolve(W_ref)
    dx = np.sum(g @ W.transpose(0, 2, 1), axis=-3)  # (..., h, n, d_k) @ (h, d_k, d_model) -> (..., n, d_model)
    h, d_k = g.shape[-3], g.shape[-1]
    per_head = np.moveaxis(g, -3, 0).reshape(h, -1, d_k)  # (h, rows, d_k), a batch's sentences one after another
    grads = [(x_ref, dx), (W_ref, _rows(x).T @ per_head)]  # (d_model, rows) @ (h, rows, d_k) -> (h, d_model, d_k)
    return grads + [(bias[0], np.sum(per_head, axis=1))] if bias else grads  # (h, d_k)


def _scores(trace, step, g):
    q_ref, k_ref = step.inputs
    q, k = trace.resolve(q_ref), trace.resolve(k_ref)
    return [(q_ref, g @ k), (k_ref, np.swapaxes(g, -1, -2) @ q)]  # (..., h, n_q, d_k), (..., h, n_k, d_k)


def _scale(trace, step, g):
    return [(step.inputs[0], g / step.meta["divisor"])]  # (h, n_q, n_k)


def _softmax(trace, step, g):
    weights = step.value  # (..., n_k); 0 on masked cells, so their gradient is exactly 0
    return [(step.inputs[0], weights * (g - np.sum(weights * g, axis=-1, keepdims=True)))]


def _weighted(trace, step, g):
    a_ref, v_ref = step.inputs
    a, v = trace.resolve(a_ref), trace.resolve(v_ref)
    return [(a_ref, g @ np.swapaxes(v, -1, -2)), (v_ref, np.swapaxes(a, -1, -2) @ g)]  # (..., h, n_q, n_k), (..., h, n_k, d_v)


def _concat(trace, step, g):
    return [(step.inputs[0], split_heads(g, trace.resolve(step.inputs[0]).shape[-3]))]  # (..., h, n, d_v)


def _linear(trace, step, g):
    x_ref, W_ref, *bias = step.inputs
    x, W = trace.resolve(x_ref), trace.resolve(W_ref)
    if step.meta.get("transpose"):  # logits = y E^T: W is the (V, d_model) embedding table
        grads = [(x_ref, g @ W), (W_ref, _rows(g).T @ _rows(x))]  # (..., n, d_model), (V, d_model)
    else:
        grads = [(x_ref, g @ W.T), (W_ref, _rows(x).T @ _rows(g))]  # (..., n, d_in), (d_in, d_out)
    return grads + [(bias[0], np.sum(_rows(g), axis=0))] if bias else grads  # (d_out,)


def _activation(trace, step, g):
    hidden = trace.resolve(step.inputs[0])  # (n, d_ff)
    if step.meta["fn"] == "relu":
        return [(step.inputs[0], g * (hidden > 0))]  # ReLU'(0) = 0, as PyTorch
    # Phi(H) = GELU(H) / H, read off the forward value (NumPy has no erf); Phi(0) = 1/2
    phi_cdf = np.divide(step.value, hidden, out=np.full(hidden.shape, 0.5), where=hidden != 0)  # (n, d_ff)
    phi_pdf = np.exp(-0.5 * hidden**2) / math.sqrt(2.0 * math.pi)  # (n, d_ff)
    return [(step.inputs[0], g * (phi_cdf + hidden * phi_pdf))]


def _copy(trace, step, g):
    return [(step.inputs[0], g)]


def _dropout(trace, step, g):
    return [(step.inputs[0], np.where(step.meta["keep"], g / (1.0 - step.meta["p"]), 0.0))]


def _constant(trace, step, g):
    return []


_RULES = {
    "embed": _embed, "pos": _pos, "add": _add, "layer_norm": _layer_norm, "proj": _proj, "scores": _scores,
    "scale": _scale, "mask": _constant, "softmax": _softmax, "weighted": _weighted, "concat": _concat,
    "linear": _linear, "activation": _activation, "copy": _copy, "dropout": _dropout,
}


def _rows(x):
    """[..., n, d] -> [rows, d]: a batch's sentences one after another (one sentence: itself)."""
    return x.reshape(-1, x.shape[-1])


def _sum_to_shape(g, shape):
    """Undo broadcasting: sum the axes an input of `shape` was stretched along (the mask over the heads)."""
    g = np.sum(g, axis=tuple(range(g.ndim - len(shape)))) if g.ndim > len(shape) else g
    stretched = tuple(i for i, size in enumerate(shape) if size == 1 and g.shape[i] != 1)
    return np.sum(g, axis=stretched, keepdims=True) if stretched else g


