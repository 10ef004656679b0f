"""Dropout (paper section 5.4): in training, zero a random fraction p of the cells (the rate, P_drop in the paper),
scale the rest by 1/(1-p)."""
from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from .values import check_seed

DROPOUT_TEX = r"\operatorname{Dropout}(x) = \frac{m \odot x}{1 - p},\quad m_j \sim \operatorname{Bernoulli}(1 - p)"


@dataclass(frozen=True)
class Dropout:
    rate: float = 0.0  # p, the probability of dropping a cell; 0 is inference mode (nothing recorded, nothing dropped)
    seed: int = 0  # with the step's name, fixes every keep mask, so a training step can be replayed

    def __post_init__(self):
        if isinstance(self.rate, bool) or not isinstance(self.rate, (int, float)) or not 0 <= self.rate < 1:
            raise ValueError(f"dropout must be a probability from 0 up to (not including) 1, got {self.rate!r}")
        check_seed(self.seed, "the dropout seed")

    def keep_mask(self, name: str, shape: tuple) -> np.ndarray:
        """True where a cell survives (probability 1 - p); one generator per (seed, step name)."""
        rng = np.random.default_rng([self.seed, zlib.crc32(name.encode())])
        keep = rng.random(shape) >= self.rate  # shape of the step
        keep.setflags(write=False)
        return keep


def keep_scale(rate):
    """1 / (1 - p): what a kept cell is multiplied by."""
    return 1.0 / (1.0 - rate)


def dropout(x, keep, rate):
    """Inverted dropout: kept cells are divided by 1 - p, so each cell's expected value is unchanged."""
    return np.where(keep, x / (1.0 - rate), 0.0)  # shape of x; keep_scale(rate) is the same factor, for display
