"""Real translators (marian/: Helsinki-NLP's opus-mt checkpoints) that the server may load, by name (pure).

A name is a folder of the server's models directory, `opus-mt-en-zh`, or a Hub id, `Helsinki-NLP/opus-mt-en-zh`,
which is the folder `Helsinki-NLP/opus-mt-en-zh` of that directory once fetched. A link carries the name (`?model=`),
never the weights: every process of a classroom reads the same directory (a model is 300 MB of float32 files and
600 MB in memory as float64, too much for Redis) and loads the model once (ui/core/runs.py caches it). A reader
must not make the server read any other file: a name is one or two plain folder names (no `..`, no absolute path
but one inside the directory), and the folder and each file it holds must stay inside the directory once symbolic
links are followed. A Hub id the directory lacks is fetched into it with huggingface_hub where the machine has a
network (only the files the loader reads: never a pickle); offline, the refusal says how to fetch it elsewhere.

    TRANSFORMER_MODELS_DIR   the directory (default: models/ in this checkout, which git ignores)
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from engine.config import ConfigError

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "models"
NAME = re.compile(r"[A-Za-z0-9_.-]{1,96}(?:/[A-Za-z0-9_.-]{1,96})?")  # a folder, or owner/name (a Hub id's form)
MAX_NAME = 200  # the characters of a typed name that are read (a refusal quotes this many at most)


def models_dir(environ=os.environ) -> Path:
    """The server's models directory (TRANSFORMER_MODELS_DIR, else models/ in this checkout)."""
    return Path(environ.get("TRANSFORMER_MODELS_DIR") or DEFAULT_DIR)


def model_name(text: str, directory: Path) -> str:
    """The name a typed folder or Hub id stands for, or ConfigError (marian_name): an absolute path is taken only
    inside the directory, as its path from there."""
    typed = name = str(text).strip()[:MAX_NAME]
    if os.path.isabs(typed):
        path, root = (Path(os.path.normpath(p)) for p in (typed, directory.absolute()))
        name = path.relative_to(root).as_posix() if path.is_relative_to(root) else ""
    if not is_name(name):
        raise ConfigError(f"{typed!r} is not a folder of the models directory or a Hub id (owner/name)",
                          "marian_name", name=typed)
    return name


def is_name(text: str) -> bool:
    """Whether the text is a name as a link carries it: one or two plain folder names, neither `.` nor `..`."""
    return bool(NAME.fullmatch(text)) and not {".", ".."} & set(text.split("/"))


def inside(folder: Path, directory: Path) -> Path:
    """The folder, once it and each file in it stay inside the directory with their links followed; else
    ConfigError (marian_outside)."""
    root = directory.resolve()
    for path in [folder, *(folder.iterdir() if folder.is_dir() else ())]:
        if not path.resolve().is_relative_to(root):
            raise ConfigError(f"{path} leads outside the models directory", "marian_outside",
                              name=path.relative_to(directory).as_posix())
    return folder


def available(directory: Path) -> list[str]:
    """The names of the folders of the directory that hold a config.json (one or two levels down), sorted."""
    if not directory.is_dir():
        return []
    found = [*directory.glob("*/config.json"), *directory.glob("*/*/config.json")]
    root = directory.resolve()
    return sorted(path.parent.relative_to(directory).as_posix() for path in found
                  if path.parent.resolve().is_relative_to(root))  # not a link out, which load refuses


def check_present(name: str, directory: Path) -> None:
    """ConfigError (marian_not_here) unless the directory holds the name's folder: a link loads only what is there
    (the box fetches a Hub id; a link that any reader can send must not make the server download gigabytes)."""
    if not is_name(name) or not (directory / name).exists():
        raise ConfigError(f"the models directory has no folder {name!r}", "marian_not_here", name=name)


def load(name: str, directory: Path):
    """(engine Model, generation settings) of the model named `name` (model_name's form), read from the directory,
    or fetched into it first if it is a Hub id the directory lacks; a ConfigError (a `code` starting "marian_")
    says why not."""
    import marian  # here: SentencePiece and safetensors are needed only once a model is loaded

    name = model_name(name, directory)
    folder = directory / name
    if not folder.exists():
        if "/" not in name:
            raise ConfigError(f"there is no folder {name!r} in the models directory", "marian_unknown", name=name,
                              names=", ".join(available(directory)) or "—")
        marian.fetch(name, local_dir=folder)
    return marian.load_folder(inside(folder, directory))
