"""Generation settings (a strategy and its numbers) and the engine call they make (the beam tree's figure is
ui/lessons/beam_tree.py). Pure: no Streamlit here. In the link the settings that differ from the defaults are one
part, e.g. `gen=strategy:top_p,p:0.8,seed:7` (ui/core/state/codecs.GenerationSettings)."""
from __future__ import annotations

from engine.generate import beam_search, generate
from engine.values import MAX_SEED

STRATEGIES = ("greedy", "temperature", "top_k", "top_p", "beam")
MODELS = ("trained", "current")  # the shipped model trained on the corpus (engine.trained), or the pages' model
DEFAULTS = {"model": "trained", "strategy": "greedy", "temperature": 1.0, "k": 5, "p": 0.9, "width": 3, "alpha": 0.6, "max_len": 10,
            "seed": 0}
RANGES = {"temperature": (0.05, 5.0), "k": (1, 100), "p": (0.01, 1.0), "width": (1, 5), "alpha": (0.0, 2.0),
          "max_len": (1, 30), "seed": (0, MAX_SEED)}
WHOLE = tuple(name for name, value in DEFAULTS.items() if isinstance(value, int))  # k, width, max_len, seed
USES = {  # the numbers each strategy reads, in the order the page shows them
    "greedy": ("max_len",),
    "temperature": ("temperature", "max_len", "seed"),
    "top_k": ("k", "temperature", "max_len", "seed"),
    "top_p": ("p", "temperature", "max_len", "seed"),
    "beam": ("width", "alpha", "max_len"),
}


def settings(pairs: tuple) -> dict:
    """Every setting: the defaults with the state's changes."""
    return {**DEFAULTS, **dict(pairs)}


def changed(values: dict) -> tuple:
    """The settings that differ from the defaults, as sorted pairs (what the state and the URL keep)."""
    return tuple(sorted((k, v) for k, v in values.items() if DEFAULTS.get(k) != v))


def run(model, src: str, pairs: tuple):
    """The engine's Generation (or BeamSearch, for "beam") that the settings ask for."""
    s = settings(pairs)
    max_len = min(s["max_len"], model.config.max_len - 1)
    if s["strategy"] == "beam":
        return beam_search(model, src, width=s["width"], max_len=max_len, alpha=s["alpha"])
    if s["strategy"] == "greedy":
        return generate(model, src, max_len=max_len)
    extra = {"top_k": {"k": min(s["k"], len(model.vocab))}, "top_p": {"p": s["p"]}}.get(s["strategy"], {})
    return generate(model, src, strategy=s["strategy"], max_len=max_len, temperature=s["temperature"],
                    seed=s["seed"], **extra)
