"""Optimisers and the paper's learning-rate schedule (section 5.3), on dicts of named arrays.

An optimiser is a pure function: (params, grads, state, lr) -> (new params, new state). The state holds the
step count and the running averages, one array per parameter name; `initial_state` makes the first one.

    state = initial_state("adam", model.params)
    params, state = adam(model.params, grads, state, learning_rate(1, d_model=32, warmup=100))
"""
from __future__ import annotations

import math

import numpy as np

ADAM_BETAS, ADAM_EPS = (0.9, 0.98), 1e-9  # the paper's beta_1, beta_2 and epsilon

SGD_TEX = r"\theta \leftarrow \theta - \eta\, g"
MOMENTUM_TEX = r"v \leftarrow \mu\, v + g,\quad \theta \leftarrow \theta - \eta\, v"
ADAM_TEX = (r"\begin{gathered}m \leftarrow \beta_1 m + (1 - \beta_1)\, g \\ "  # a line each: a half column's width
            r"v \leftarrow \beta_2 v + (1 - \beta_2)\, g^2 \\ "
            r"\hat{m} = \frac{m}{1 - \beta_1^t},\quad \hat{v} = \frac{v}{1 - \beta_2^t} \\ "
            r"\theta \leftarrow \theta - \eta\, \frac{\hat{m}}{\sqrt{\hat{v}} + \epsilon}\end{gathered}")
SCHEDULE_TEX = (r"\eta(t) = s \cdot d_{\text{model}}^{-0.5} \cdot "
                r"\min\left(t^{-0.5},\ t \cdot \text{warmup}^{-1.5}\right)")


def learning_rate(step: int, *, d_model: int, warmup: int, scale: float = 1.0) -> float:
    """The paper's schedule: rises linearly for `warmup` steps, then decays as 1/sqrt(step); peak at warmup.

    The paper uses scale 1 and warmup 4000 for its 100,000 steps; a tiny model learning a tiny corpus in a
    few hundred steps wants a short warm-up."""
    _check_schedule(step, d_model, warmup, scale)
    return float(_rates(np.array([step]), d_model, warmup, scale)[0])


def schedule(last_step: int, *, d_model: int, warmup: int, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(steps 1..last_step, the learning rate at each), for plotting the schedule."""
    _check_schedule(last_step, d_model, warmup, scale)
    steps = np.arange(1, last_step + 1)  # (last_step,)
    return steps, _rates(steps, d_model, warmup, scale)


def _rates(steps, d_model, warmup, scale):
    return scale * d_model**-0.5 * np.minimum(steps**-0.5, steps * warmup**-1.5)  # (steps,) SCHEDULE_TEX


def initial_state(optimizer: str, params) -> dict:
    """Step 0 and zero running averages: Adam's m and v, or SGD's velocity."""
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}; got {optimizer!r}")
    averages = ("m", "v") if optimizer == "adam" else ("velocity",)
    return {"t": 0, **{key: {name: np.zeros(np.shape(value)) for name, value in params.items()} for key in averages}}


def sgd(params, grads, state, lr, *, momentum=0.0) -> tuple[dict, dict]:
    """Stochastic gradient descent; with momentum mu, the step follows a running sum of gradients (MOMENTUM_TEX,
    PyTorch's convention). momentum 0 is plain SGD_TEX."""
    velocity = {name: momentum * state["velocity"][name] + grads[name] for name in params}  # like each param
    new = {name: params[name] - lr * velocity[name] for name in params}  # like each param
    return new, {"t": state["t"] + 1, "velocity": velocity}


def adam(params, grads, state, lr, *, betas=ADAM_BETAS, eps=ADAM_EPS) -> tuple[dict, dict]:
    """Adam (ADAM_TEX): each parameter cell steps by its running mean gradient over the square root of its running
    mean squared gradient, so every cell moves at a similar pace whatever its gradient's scale."""
    beta1, beta2 = betas
    t = state["t"] + 1
    m = {name: beta1 * state["m"][name] + (1 - beta1) * grads[name] for name in params}  # like each param
    v = {name: beta2 * state["v"][name] + (1 - beta2) * grads[name] ** 2 for name in params}  # like each param
    correct1, correct2 = 1 - beta1**t, 1 - beta2**t  # the averages start at 0: undo their pull towards 0
    new = {name: params[name] - lr * (m[name] / correct1) / (np.sqrt(v[name] / correct2) + eps) for name in params}
    return new, {"t": t, "m": m, "v": v}


OPTIMIZERS = {"sgd": sgd, "adam": adam}


def _check_schedule(step, d_model, warmup, scale):
    for name, value in (("step", step), ("d_model", d_model), ("warmup", warmup)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a whole number of at least 1, got {value!r}")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"the learning-rate scale must be a number greater than 0, got {scale!r}")
