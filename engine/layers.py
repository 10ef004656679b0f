"""What each layer of a stack does, in numbers read from a forward pass: the length of every position's vector
after each layer, the change a layer makes to it, and where each attention head looks most. The stack pages
show these; the layers' full matrices are steps of the trace."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .steps import ROWS

ALIKE = 0.01  # a step's rows are alike when no two differ by more than this fraction of the longest row's length

NORM_TEX = r"\lVert x^{(l)}_i \rVert = \sqrt{\textstyle\sum_j \big(x^{(l)}_{ij}\big)^2}"
CHANGE_TEX = r"\lVert x^{(l)}_i - x^{(l-1)}_i \rVert"
COSINE_TEX = (r"\cos\big(x^{(l)}_i, x^{(l-1)}_i\big) = "
              r"\frac{x^{(l)}_i \cdot x^{(l-1)}_i}{\lVert x^{(l)}_i \rVert \, \lVert x^{(l-1)}_i \rVert}")


class Changes(NamedTuple):
    """Row i of layer l: norm[l] its length (l = 0 is the stack's input), change[l - 1] the length of what layer l
    added to it, cosine[l - 1] the cosine between the row after and before layer l (NaN for a zero row)."""
    norm: np.ndarray  # (N + 1, n)
    change: np.ndarray  # (N, n)
    cosine: np.ndarray  # (N, n)


class Convergence(NamedTuple):
    """Where a stack's rows become alike: from `step` on, every step of the stack with one row per position has
    rows alike (ALIKE), up to the stack's output; `before` is the step just before it, whose rows are not."""
    step: str
    spread: float  # row_spread of step
    before: str
    spread_before: float


class Focus(NamedTuple):
    """Per head and query row: the key with the largest attention weight, and that weight."""
    key: np.ndarray  # (h, n_q), positions of keys
    weight: np.ndarray  # (h, n_q)


def layer_outputs(trace, stack: str) -> list[str]:
    """The names of x^(0), the stack's input, and x^(1) ... x^(N), each layer's output: its last LayerNorm
    (post-norm) or its last residual sum (pre-norm)."""
    c = trace.model.config
    last = ("ln" if c.norm_placement == "post" else "add") + str(max(c.sublayers[stack]))  # a layer's last sub-layer
    first = trace.step(f"{stack}.0.add1").inputs[0]  # both placements add a layer's input to its first sub-layer
    return [first] + [f"{stack}.{layer}.{last}" for layer in range(c.depth(stack))]


def layer_changes(xs) -> Changes:
    """xs: the stack's input then each layer's output, (N + 1, n, d_model)."""
    xs = np.asarray(xs, dtype=float)
    norm = np.linalg.norm(xs, axis=-1)  # (N + 1, n)
    change = np.linalg.norm(np.diff(xs, axis=0), axis=-1)  # (N, n)
    with np.errstate(all="ignore"):  # a row of zeros has no direction: its cosine is NaN
        cosine = np.sum(xs[1:] * xs[:-1], axis=-1) / (norm[1:] * norm[:-1])  # (N, n)
    return Changes(norm, change, cosine)


def attention_focus(weights) -> Focus:
    """weights: attention weights (h, n_q, n_k), each row summing to 1."""
    weights = np.asarray(weights, dtype=float)
    key = np.argmax(weights, axis=-1)  # (h, n_q)
    return Focus(key, np.take_along_axis(weights, key[..., None], axis=-1)[..., 0])  # (h, n_q)


def row_spread(x) -> float:
    """How far apart the rows of x (n, d) are: the largest distance between two rows over the longest row's length
    (0 where every row is the same, NaN where a number is not finite)."""
    x = np.asarray(x, dtype=float)
    gaps = np.linalg.norm(x[:, None, :] - x[None, :, :], axis=-1)  # (n, n)
    longest = np.max(np.linalg.norm(x, axis=-1))
    return float(np.max(gaps) / longest) if longest else 0.0


def convergence(trace, stack: str = "enc", tolerance: float = ALIKE) -> Convergence | None:
    """The step of a stack's pass from which its positions' vectors stay alike up to its output, and the step before
    it; None if the output's rows are not alike, or already the stack's input's are (nothing in the stack made them
    so)."""
    first = layer_outputs(trace, stack)[0]
    names = [first] + [name for name in trace.names_through(f"{stack}.out")
                       if name.startswith(f"{stack}.") and trace.step(name).axes == ROWS]
    spreads = [row_spread(trace[name]) for name in names]
    apart = [i for i, spread in enumerate(spreads) if not spread <= tolerance]  # NaN is not alike
    if not apart or apart[-1] == len(names) - 1:
        return None
    at = apart[-1] + 1
    return Convergence(names[at], spreads[at], names[at - 1], spreads[at - 1])


def evenly_spread(weights: np.ndarray, tolerance: float = 0.01) -> bool:
    """Whether every attention weight is within `tolerance` of 1/n_keys: each query weighs all keys alike (their
    keys are nearly the same vector), so the step passes on little more than the values' mean."""
    return bool(np.all(np.abs(weights - 1 / weights.shape[-1]) < tolerance))


def largest_difference_alone(batch, alone, b: int, name: str) -> float:
    """The largest difference between step `name` of a sentence pair run alone and the same cells of its row b in a
    padded batch (Model.run_batch): rounding only, since padded keys get weight exactly 0."""
    mine = alone[name]  # (n, ...)
    return float(np.max(np.abs(batch[name][b][tuple(slice(0, n) for n in mine.shape)] - mine)))
