"""The 8×8 handwritten digits: UCI "Optical Recognition of Handwritten Digits" (E. Alpaydin, C. Kaynak, 1998;
https://archive.ics.uci.edu/dataset/80, CC BY 4.0), the 1797 images of its test set that scikit-learn ships as
sklearn/datasets/data/digits.csv.gz (sha256 09f66e6d…23aa22, scikit-learn 1.9.1). Each pixel counts the inked
pixels of a 4×4 block of a 32×32 bitmap: a whole number from 0 to 16.

engine/data/digits.npz holds them as uint8, split once, fixed: a permutation from np.random.default_rng(0) of the
csv's rows, its first 360 the test split and the other 1437 the training split. It was made by:

    rows = np.loadtxt(gzip.open("digits.csv.gz"), delimiter=",", dtype=np.int64)
    images, labels = rows[:, :64].reshape(-1, 8, 8).astype(np.uint8), rows[:, 64].astype(np.uint8)
    order = np.random.default_rng(0).permutation(len(labels)); test, train = order[:360], order[360:]
    np.savez_compressed("engine/data/digits.npz", train_images=images[train], train_labels=labels[train],
                        test_images=images[test], test_labels=labels[test])
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numpy as np

FILE = Path(__file__).parent / "data" / "digits.npz"
MAX_INK = 16  # a pixel's largest value in the file
SPLITS = ("train", "test")


class Digits(NamedTuple):
    images: np.ndarray  # (count, 8, 8, 1) float64, from 0 to 1: the file's pixels / 16
    labels: np.ndarray  # (count,) int, 0 to 9


def raw() -> dict:
    """The file's arrays as stored: {split}_images (count, 8, 8) uint8, {split}_labels (count,) uint8."""
    with np.load(FILE, allow_pickle=False) as archive:
        return {name: archive[name] for name in archive.files}


@lru_cache(maxsize=2)
def split(name: str) -> Digits:
    """The "train" or "test" split as the Vision Transformer reads it, read-only."""
    if name not in SPLITS:
        raise ValueError(f"the digits' splits are {', '.join(SPLITS)}; got {name!r}")
    arrays = raw()
    images = arrays[f"{name}_images"][..., None] / MAX_INK  # (count, 8, 8, 1)
    labels = arrays[f"{name}_labels"].astype(int)  # (count,)
    images.setflags(write=False)
    labels.setflags(write=False)
    return Digits(images, labels)
