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
    dec_ids, targets = teacher_forcing(model, trace.tgt_ids[1:])
    return _loss_and_grads(model, trace, list(trace.src_ids), dec_ids, targets,
                           dict(label_smoothing=label_smoothing, ignore_id=ignore_id))


def padded_loss_and_grads(model, pairs, *, label_smoothing=0.0, dropout=0.0, seed=0) -> LossAndGrads:
    """`loss_and_grads` of a batch of pairs in one padded pass (Model.run_batch). The loss is the mean of the pairs'
    losses, each over its own target tokens (engine.loss.BATCH_LOSS_TEX), so it and every gradient equal the mean
    of the pairs' own; ids, targets and token losses hold one row per pair, padded (a padded target is PADDED)."""
    _check_trainable(model)
    trace = model.run_batch(pairs, dropout=dropout, seed=seed)
    width, lengths = len(trace.tgt_ids[0]), trace.step("tgt.pad_mask").meta["lengths"]
    forced = (teacher_forcing(model, ids[1:n])[1] for ids, n in zip(trace.tgt_ids, lengths))
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


def backward(trace, grad_logits, start: str = "logits") -> dict:
    """dL/d(name) for every step and parameter the logits depend on, from dL/dlogits; `start`: the logits' step."""
    grads = {start: np.asarray(grad_logits, dtype=float)}
    for step in reversed(trace.steps()):
        if step.name in grads:
            for ref, grad in step.decl.kind.backward(trace, step, grads[step.name]):
                grads[ref] = grads[ref] + grad if ref in grads else grad
    return grads


def backward_formula(step) -> str:
    """The LaTeX of the rule that passes a step's gradient on to its inputs (its kind's, engine/kinds.py)."""
    return step.decl.kind.backward_formula(step)


# ---- one rule per kind of step (engine/kinds.py): (trace, step, ȳ) -> [(input name, x̄), ...] -------------------

def embed(trace, step, g):
    table = step.inputs[0]
    grad = np.zeros(trace.resolve(table).shape)  # (V, d_model)
    np.add.at(grad, np.asarray(step.meta["ids"]), g * step.meta["scale"])  # a repeated token collects every row
    return [(table, grad)]


def pos(trace, step, g):
    if not step.inputs:
        return []
    grad = np.zeros(trace.resolve(step.inputs[0]).shape)  # (max_len, d_model)
    grad[: len(g)] = g  # (n, d_model)
    return [(step.inputs[0], grad)]


def add(trace, step, g):
    return [(ref, _sum_to_shape(g, np.shape(trace.resolve(ref)))) for ref in step.inputs]


def layer_norm(trace, step, g):
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


def proj(trace, step, g):
    x_ref, W_ref, *bias = step.inputs
    x, W = trace.resolve(x_ref), trace.resolve(W_ref)
    dx = np.sum(g @ W.transpose(0, 2, 1), axis=-3)  # (..., h, n, d_k) @ (h, d_k, d_model) -> (..., n, d_model)
    h, d_k = g.shape[-3], g.shape[-1]
    per_head = np.moveaxis(g, -3, 0).reshape(h, -1, d_k)  # (h, rows, d_k), a batch's sentences one after another
    grads = [(x_ref, dx), (W_ref, _rows(x).T @ per_head)]  # (d_model, rows) @ (h, rows, d_k) -> (h, d_model, d_k)
    return grads + [(bias[0], np.sum(per_head, axis=1))] if bias else grads  # (h, d_k)


def scores(trace, step, g):
    q_ref, k_ref = step.inputs
    q, k = trace.resolve(q_ref), trace.resolve(k_ref)
    return [(q_ref, g @ k), (k_ref, np.swapaxes(g, -1, -2) @ q)]  # (..., h, n_q, d_k), (..., h, n_k, d_k)


def scale(trace, step, g):
    return [(step.inputs[0], g / step.meta["divisor"])]  # (h, n_q, n_k)


def softmax(trace, step, g):
    weights = step.value  # (..., n_k); 0 on masked cells, so their gradient is exactly 0
    return [(step.inputs[0], weights * (g - np.sum(weights * g, axis=-1, keepdims=True)))]


def weighted(trace, step, g):
    a_ref, v_ref = step.inputs
    a, v = trace.resolve(a_ref), trace.resolve(v_ref)
    # (..., h, n_q, n_k), (..., h, n_k, d_v)
    return [(a_ref, g @ np.swapaxes(v, -1, -2)), (v_ref, np.swapaxes(a, -1, -2) @ g)]


def concat(trace, step, g):
    return [(step.inputs[0], split_heads(g, trace.resolve(step.inputs[0]).shape[-3]))]  # (..., h, n, d_v)


def linear(trace, step, g):
    x_ref, W_ref, *bias = step.inputs
    x, W = trace.resolve(x_ref), trace.resolve(W_ref)
    if step.meta.get("transpose"):  # logits = y E^T: W is the (V, d_model) embedding table
        grads = [(x_ref, g @ W), (W_ref, _rows(g).T @ _rows(x))]  # (..., n, d_model), (V, d_model)
    else:
        grads = [(x_ref, g @ W.T), (W_ref, _rows(x).T @ _rows(g))]  # (..., n, d_in), (d_in, d_out)
    return grads + [(bias[0], np.sum(_rows(g), axis=0))] if bias else grads  # (d_out,)


def activation(trace, step, g):
    hidden = trace.resolve(step.inputs[0])  # (n, d_ff)
    if step.meta["fn"] == "relu":
        return [(step.inputs[0], g * (hidden > 0))]  # ReLU'(0) = 0, as PyTorch
    if step.meta["fn"] == "swish":
        with np.errstate(over="ignore"):
            sigma = 1.0 / (1.0 + np.exp(-hidden))  # (n, d_ff)
        return [(step.inputs[0], g * sigma * (1.0 + hidden * (1.0 - sigma)))]
    # Phi(H) = GELU(H) / H, read off the forward value (NumPy has no erf); Phi(0) = 1/2
    phi_cdf = np.divide(step.value, hidden, out=np.full(hidden.shape, 0.5), where=hidden != 0)  # (n, d_ff)
    phi_pdf = np.exp(-0.5 * hidden**2) / math.sqrt(2.0 * math.pi)  # (n, d_ff)
    return [(step.inputs[0], g * (phi_cdf + hidden * phi_pdf))]


def copy(trace, step, g):
    return [(step.inputs[0], g)]


def dropout(trace, step, g):
    return [(step.inputs[0], np.where(step.meta["keep"], g / (1.0 - step.meta["rate"]), 0.0))]


def prepend(trace, step, g):
    first_ref, rest_ref = step.inputs
    first = _sum_to_shape(g[..., :1, :], trace.resolve(first_ref).shape)  # (1, d_model), summed over a batch
    return [(first_ref, first), (rest_ref, g[..., 1:, :])]  # (..., N, d_model)


def row(trace, step, g):
    x_ref, at = step.inputs[0], step.meta["row"]
    grad = np.zeros(trace.resolve(x_ref).shape)  # (..., n, d_model): 0 on every other row
    grad[..., at:at + 1, :] = g
    return [(x_ref, grad)]


def constant(trace, step, g):
    return []


def _rows(x):
    """[..., n, d] -> [rows, d]: a batch's sentences one after another (one sentence: itself)."""
    return x.reshape(-1, x.shape[-1])


def _sum_to_shape(g, shape):
    """Undo broadcasting: sum the axes an input of `shape` was stretched along (the mask over the heads)."""
    g = np.sum(g, axis=tuple(range(g.ndim - len(shape)))) if g.ndim > len(shape) else g
    stretched = tuple(i for i, size in enumerate(shape) if size == 1 and g.shape[i] != 1)
    return np.sum(g, axis=stretched, keepdims=True) if stretched else g


