"""Saving and loading a model's weights: an .npz file with no pickles, readable by any NumPy.

The archive holds one array per parameter, under the parameter's name, and one more, "meta": a string array
whose single element is JSON text with the preset name, the seed, every Config field and the vocabulary.
A malformed file is refused with a ConfigError whose code starts "ckpt_"; its values quote the file as strings.

    save(model, "trained.npz")
    model = load("trained.npz")        # a path, an open binary file or the bytes of one
"""
from __future__ import annotations

import dataclasses
import io
import json
import tokenize
import zipfile
from pathlib import Path

import numpy as np

from .config import NEWER_FIELDS, Config, ConfigError
from .model import Model
from .params import param_shapes
from .presets import PRESETS
from .tokens import EOS, SOS, UNK, Vocabulary
from .values import MAX_SEED, check_seed

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
        raise ConfigError(f"no trained weights are shipped for the corpus {corpus!r}", "ckpt_not_shipped",
                          corpus=corpus)
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
        raise ConfigError(f"there is no file {str(file)!r}", "ckpt_no_file", file=str(file)) from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile):
        raise ConfigError("this is not a NumPy .npz file (a zip archive of arrays, as engine.checkpoint.save "
                          "writes)", "ckpt_not_npz") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise ConfigError("this is a single NumPy array (.npy), not an .npz archive of a model's weights", "ckpt_npy")
    with archive:
        arrays = {name: _read_array(archive, name) for name in archive.files}
    if META not in arrays:
        raise ConfigError(f"the file has no {META!r} entry, so it was not saved by engine.checkpoint.save",
                          "ckpt_no_meta", member=META)
    name, seed, config, vocab = _read_meta(arrays.pop(META))
    return Model(name, config, vocab, _check_params(arrays, config, vocab), seed)


def _read_array(archive, name):
    try:
        value = archive[name]
    except ValueError as error:
        if "allow_pickle" in str(error):
            raise ConfigError(f"{name!r} holds Python objects (a pickle), which are not loaded for safety",
                              "ckpt_pickle", member=name) from None
        raise _unreadable(name) from None
    except (OSError, EOFError, zipfile.BadZipFile, SyntaxError, tokenize.TokenError):  # a damaged .npy header: NumPy
        raise _unreadable(name) from None  # parses it as a Python literal
    if not isinstance(value, np.ndarray):  # NpzFile hands back the raw bytes of a member that is not an .npy
        raise _unreadable(name)
    return value


def _unreadable(name) -> ConfigError:
    return ConfigError(f"{name!r} is not a readable NumPy array", "ckpt_unreadable", member=name)


def _read_meta(array):
    if array.shape != (1,) or array.dtype.kind != "U":
        raise ConfigError(f"{META!r} must be one string of JSON text, got an array of shape {array.shape}",
                          "ckpt_meta_not_text", member=META)
    try:
        meta = json.loads(str(array[0]))
    except json.JSONDecodeError as error:
        raise ConfigError(f"{META!r} is not valid JSON ({error.msg})", "ckpt_meta_json", member=META,
                          line=error.lineno, column=error.colno) from None
    if not isinstance(meta, dict) or sorted(meta) != sorted(META_FIELDS):
        keys = sorted(meta) if isinstance(meta, dict) else type(meta).__name__
        raise ConfigError(f"{META!r} must have exactly the fields {', '.join(META_FIELDS)}; got {keys}",
                          "ckpt_meta_fields", member=META, fields=", ".join(META_FIELDS))
    if meta["format"] != FORMAT:
        raise ConfigError(f"this file has format {meta['format']!r}; this version reads format {FORMAT}",
                          "ckpt_format", format=json.dumps(meta["format"]), readable=FORMAT)
    if meta["preset"] not in PRESETS:
        raise ConfigError(f"unknown preset {meta['preset']!r}; choose one of {', '.join(PRESETS)}", "ckpt_preset",
                          preset=json.dumps(meta["preset"], ensure_ascii=False), presets=", ".join(PRESETS))
    seed = meta["seed"]
    try:
        check_seed(seed, "the seed")
    except ValueError as error:
        raise ConfigError(str(error), "ckpt_seed", high=MAX_SEED) from None
    return meta["preset"], seed, _read_config(meta["config"]), _read_vocabulary(meta["vocabulary"])


def _read_config(fields) -> Config:
    known = [f.name for f in dataclasses.fields(Config)]
    if not isinstance(fields, dict):
        raise ConfigError(f"the config must be a JSON object of settings, got {type(fields).__name__}",
                          "ckpt_config_not_object")
    unknown, missing = sorted(set(fields) - set(known)), sorted(set(known) - set(fields) - set(NEWER_FIELDS))
    if unknown or missing:
        message = f"the config does not match this version's settings: unknown {unknown}, missing {missing}"
        if unknown:
            raise ConfigError(message, "ckpt_config_unknown", n=len(unknown), field=unknown[0])
        raise ConfigError(message, "ckpt_config_missing", fields=", ".join(missing))
    for name, value in fields.items():  # one at a time, so the refusal names the setting (each check is of one field)
        try:
            Config(**{name: value})
        except ValueError as error:
            raise ConfigError(str(error), "ckpt_setting", field=name) from None
    return Config(**fields)


def _read_vocabulary(tokens) -> Vocabulary:
    if not isinstance(tokens, list) or not all(isinstance(t, str) and t for t in tokens):
        raise ConfigError("the vocabulary must be a list of non-empty strings", "ckpt_vocabulary_not_list")
    try:
        return Vocabulary(tokens)
    except ValueError as error:
        raise ConfigError(f"the vocabulary cannot be used: {error}", "ckpt_vocabulary",
                          specials=", ".join((UNK, SOS, EOS))) from None


def _check_params(arrays, config, vocab) -> dict:
    shapes = param_shapes(config, len(vocab))
    missing, extra = sorted(set(shapes) - set(arrays)), sorted(set(arrays) - set(shapes))
    if missing or extra:
        message = f"the parameters do not fit the config and vocabulary: missing {missing}, unexpected {extra}"
        if missing:
            raise ConfigError(message, "ckpt_params_missing", n=len(missing), param=missing[0])
        raise ConfigError(message, "ckpt_params_extra", n=len(extra), param=extra[0])
    for name, shape in shapes.items():
        value = arrays[name]
        if value.dtype.kind not in "fiu":
            raise ConfigError(f"{name} must hold real numbers, got {value.dtype}", "ckpt_dtype", param=name,
                              dtype=str(value.dtype))
        if value.shape != shape:
            raise ConfigError(f"{name} must have shape {shape} (from the config and a vocabulary of "
                              f"{len(vocab)} tokens), got {value.shape}", "ckpt_shape", param=name,
                              shape=str(shape), got=str(value.shape), n=len(vocab))
        if not np.all(np.isfinite(value)):
            raise ConfigError(f"{name} holds inf or NaN; a saved model's weights must be finite numbers",
                              "ckpt_nonfinite", param=name)
    return arrays

