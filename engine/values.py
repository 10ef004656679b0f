"""The engine's checks of the values it is given, and the read-only arrays it hands out, written once."""
from __future__ import annotations

import math

import numpy as np

MAX_SEED = 2**32 - 1  # NumPy's seeds: 0 to 2^32 - 1


def whole(value) -> bool:
    """A whole number (int or NumPy integer), not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def finite_number(value) -> bool:
    """A finite int or float (NumPy's too), not a bool."""
    return (isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
            and math.isfinite(value))


def check_seed(seed, name: str = "seed") -> None:
    """ValueError unless seed is a whole number from 0 to MAX_SEED; name: how the message calls it."""
    if not (whole(seed) and 0 <= seed <= MAX_SEED):
        raise ValueError(f"{name} must be a whole number from 0 to {MAX_SEED}, got {seed!r}")


def read_only(value, copy: bool = True) -> np.ndarray:
    """A read-only float64 array. copy: a writeable array is copied, so its owner's later writes do not reach it (one
    that already is read-only is shared); else a read-only view, for an array the caller made and shares no further
    (a gradient passed on twice is one array, not two)."""
    array = np.asarray(value, dtype=float)
    if not array.flags.writeable:
        return array
    array = array.copy() if copy else array.view()
    array.setflags(write=False)
    return array
