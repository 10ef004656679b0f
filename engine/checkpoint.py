"""Saving and loading a model's weights: an .npz file with no pickles, readable by any NumPy.

The archive holds one array per parameter, under the parameter's name, and one more, "meta": a string array
whose single element is JSON text with the preset name, the seed, every Config field and the vocabulary.

    save(model, "trained.npz")
    model = load("trained.npz")        # a path, an open binary file or the bytes of one
"""
from __future__ import annotations

import dataclasses
import io
import json
import zipfile
from pathlib import Path

import numpy as np

from .config import NEWER_FIELDS, Config
from .model import Model, param_shapes
from .presets import PRESETS
from .tokens import Vocabulary
from .values import check_seed

TRAINED = Path(__file__).parent / "data"  # the shipped trained weights, one file per corpus (README: "Trained weights")
META = "meta"
FORMAT = 1  # the layout version written into meta, so a later layout can still read this one
META_FIELDS = ("format", "preset", "seed", "config", "vocabulary")


def save(model: Model, file) -> None:
    """Write the model to `file`: a path (written as given, no suffix added) or a binary file object."""
    meta = {"format": FORMAT, "preset": model.name, "seed": model.seed, "config": model.config.as_dict(),
            "vocabulary": list(model.vocab.tokens)}
    arrays = {name: np.asarray(value) for name, value in model.params.items()}
    arrays[META] = np.array([json.dumps(meta, ensure_ascii=False)])  # (1,) a unicode string, not an object
    if isinstance(file, str) or hasattr(file, "__fspath__"):
        with open(file, "wb") as out:
            np.savez(out, **arrays)
    else:
        np.savez(file, **arrays)


def trained(corpus: str = "en-es") -> Model:
    """The model of engine.train.TRAINING_SETUP trained on the corpus from the fixed seed, as shipped in
    engine/data (made by `python -m engine train --corpus en-es --out engine/data/en-es.npz`)."""
    path = TRAINED / f"{corpus}.npz"
    if not path.is_file():
        raise ValueError(f"no trained weights are shipped for the corpus {corpus!r}")
    return load(path)


def to_bytes(model: Model) -> bytes:
    """The .npz file's bytes, e.g. for a download button."""
    buffer = io.BytesIO()
    save(model, buffer)
    return buffer.getvalue()


def load(file) -> Model:
    """The model saved in `file` (a path, a binary file object or bytes); refuses a malformed file, saying why."""
    if isinstance(file, (bytes, bytearray)):
        file = io.BytesIO(file)
    try:
        archive = np.load(file, allow_pickle=False)
    except FileNotFoundError:
        raise ValueError(f"there is no file {str(file)!r}") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile):
        raise ValueError("this is not a NumPy .npz file (a zip archive of arrays, as engine.checkpoint.save "
                         "writes)") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise ValueError("this is a single NumPy array (.npy), not an .npz archive of a model's weights")
    with archive:
        arrays = {name: _read_array(archive, name) for name in archive.files}
    if META not in arrays:
        raise ValueError(f"the file has no {META!r} entry, so it was not saved by engine.checkpoint.save")
    name, seed, config, vocab = _read_meta(arrays.pop(META))
    return Model(name, config, vocab, _check_params(arrays, config, vocab), seed)


def _read_array(archive, name):
    try:
        value = archive[name]
    except ValueError as error:
        if "allow_pickle" in str(error):
            raise ValueError(f"{name!r} holds Python objects (a pickle), which are not loaded for safety") from None
        raise ValueError(f"{name!r} is not a readable NumPy array") from None
    except (OSError, EOFError, zipfile.BadZipFile):
        raise ValueError(f"{name!r} is not a readable NumPy array") from None
    if not isinstance(value, np.ndarray):  # NpzFile hands back the raw bytes of a member that is not an .npy
        raise ValueError(f"{name!r} is not a readable NumPy array")
    return value


def _read_meta(array):
    if array.shape != (1,) or array.dtype.kind != "U":
        raise ValueError(f"{META!r} must be one string of JSON text, got an array of shape {array.shape}")
    try:
        meta = json.loads(str(array[0]))
    except json.JSONDecodeError as error:
        raise ValueError(f"{META!r} is not valid JSON ({error.msg})") from None
    if not isinstance(meta, dict) or sorted(meta) != sorted(META_FIELDS):
        keys = sorted(meta) if isinstance(meta, dict) else type(meta).__name__
        raise ValueError(f"{META!r} must have exactly the fields {', '.join(META_FIELDS)}; got {keys}")
    if meta["format"] != FORMAT:
        raise ValueError(f"this file has format {meta['format']!r}; this version reads format {FORMAT}")
    if meta["preset"] not in PRESETS:
        raise ValueError(f"unknown preset {meta['preset']!r}; choose one of {', '.join(PRESETS)}")
    seed = meta["seed"]
    check_seed(seed, "the seed")
    return meta["preset"], seed, _read_config(meta["config"]), _read_vocabulary(meta["vocabulary"])


def _read_config(fields) -> Config:
    known = [f.name for f in dataclasses.fields(Config)]
    if not isinstance(fields, dict):
        raise ValueError(f"the config must be a JSON object of settings, got {type(fields).__name__}")
    unknown, missing = sorted(set(fields) - set(known)), sorted(set(known) - set(fields) - set(NEWER_FIELDS))
    if unknown or missing:
        raise ValueError(f"the config does not match this version's settings: unknown {unknown}, missing {missing}")
    return Config(**fields)  # its own checks explain a bad value


def _read_vocabulary(tokens) -> Vocabulary:
    if not isinstance(tokens, list) or not all(isinstance(t, str) and t for t in tokens):
        raise ValueError("the vocabulary must be a list of non-empty strings")
    try:
        return Vocabulary(tokens)
    except ValueError as error:
        raise ValueError(f"the vocabulary cannot be used: {error}") from None


def _check_params(arrays, config, vocab) -> dict:
    shapes = param_shapes(config, len(vocab))
    missing, extra = sorted(set(shapes) - set(arrays)), sorted(set(arrays) - set(shapes))
    if missing or extra:
        raise ValueError(f"the parameters do not fit the config and vocabulary: missing {missing}, "
                         f"unexpected {extra}")
    for name, shape in shapes.items():
        value = arrays[name]
        if value.dtype.kind not in "fiu":
            raise ValueError(f"{name} must hold real numbers, got {value.dtype}")
        if value.shape != shape:
            raise ValueError(f"{name} must have shape {shape} (from the config and a vocabulary of "
                             f"{len(vocab)} tokens), got {value.shape}")
        if not np.all(np.isfinite(value)):
            raise ValueError(f"{name} holds inf or NaN; a saved model's weights must be finite numbers")
    return arrays

