"""Generation settings (a strategy and its numbers), their URL form and the engine call they make (the beam tree's
figure is ui/lessons/beam_tree.py). Pure: no Streamlit here.

In the URL the settings that differ from the defaults are one parameter, e.g. `gen=strategy:top_p,p:0.8,seed:7`.
"""
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


def encode(pairs: tuple) -> str:
    return ",".join(f"{k}:{v}" for k, v in pairs)


def decode(text: str) -> tuple[tuple, list[str]]:
    """The settings a link holds, and the parts that had to be ignored."""
    values, bad = {}, []
    for part in filter(None, text.split(",")):
        name, _, raw = part.partition(":")
        value = _parse(name, raw)
        if value is None:
            bad.append(part[:80])
        else:
            values[name] = value
    return changed(values), bad


def _parse(name: str, raw: str):
    if name in ("model", "strategy"):
        return raw if raw in (MODELS if name == "model" else STRATEGIES) else None
    if name not in RANGES:
        return None
    kind = type(DEFAULTS[name])
    try:
        value = kind(raw) if kind is float else int(raw) if raw.isascii() and raw.isdigit() else None
    except ValueError:
        return None
    low, high = RANGES[name]
    return value if value is not None and low <= value <= high else None  # NaN fails; isfinite(10**400) raises


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
