"""Real MarianMT translators (Helsinki-NLP's opus-mt) run by the NumPy engine.

Why a package of its own, beside engine/: engine/ imports NumPy alone (a test proves it), and a checkpoint needs
SentencePiece (its tokenizers), safetensors (its weights, read without unpickling), JSON files and, for a Hub id,
huggingface_hub. Here those meet the engine: the checkpoint becomes an engine Model and Config whose every step the
app records and draws as it does a preset's, and the engine itself learns only the options Marian's architecture
needs (engine/config.py: swish, sinusoidal_halves, decoder_start and never_next "pad").

    model, generation = marian.load("opus-mt-en-zh")             # a folder in the Hugging Face layout
    model, generation = marian.load("Helsinki-NLP/opus-mt-en-zh")  # or a Hub id, where there is a network
    trace = model.run("Hello world.")  # the source ends with </s>; the decoder starts from <pad>
    model.vocab.decode(ids)            # ids back to text

Written for transformers 5.24's modeling_marian.py and tokenization_marian.py (tests/test_marian.py holds the
engine to them on checkpoints the test builds: no real checkpoint was tried on this machine, which has no network).
"""
from __future__ import annotations

import re
from pathlib import Path

from .folder import FILES, load_folder
from .hub import fetch
from .tokenizer import MarianVocabulary, with_language


HUB_ID = re.compile(r"[\w.-]+/[\w.-]+")  # owner/name


def load(where, revision: str | None = None):
    """(engine Model, generation settings) of the checkpoint in the folder `where`, or of the Hub id `where` (an
    owner/name that is no path here)."""
    where = str(where)
    if Path(where).exists() or not HUB_ID.fullmatch(where):
        return load_folder(where)
    return load_folder(fetch(where, revision))


__all__ = ["FILES", "MarianVocabulary", "fetch", "load", "load_folder", "with_language"]
