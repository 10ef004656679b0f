"""Generation settings (a strategy and its numbers) and the engine call they make (the beam tree's figure is
ui/lessons/beam_tree.py). Pure: no Streamlit here. In the link the settings that differ from the defaults are one
part, e.g. `gen=strategy:top_p,p:0.8,seed:7` (ui/core/state/codecs.GenerationSettings). And the player's
state (`Playback`), which the generation page's buttons and timer change."""
from __future__ import annotations

from dataclasses import dataclass, replace

from engine.generate import beam_search, generate
from engine.values import MAX_SEED

STRATEGIES = ("greedy", "temperature", "top_k", "top_p", "beam")
MODELS = ("trained", "current")  # the shipped model trained on the corpus (engine.trained), or the pages' model
DEFAULTS = {"model": "trained", "strategy": "greedy", "temperature": 1.0, "k": 5, "p": 0.9, "width": 3, "alpha": 0.6,
            "max_len": 10, "seed": 0}
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


@dataclass(frozen=True)
class Playback:
    """The generation player of a sentence of n steps: the step shown (from 1), whether it plays, and whether its
    timer's next tick moves on (not the first, which shows the step where play was pressed)."""
    step: int = 1
    playing: bool = False
    advance: bool = True

    def within(self, n: int) -> Playback:
        """The step kept among the sentence's (another sentence may be shorter)."""
        return replace(self, step=min(max(self.step, 1), n))

    def moved(self, delta: int, n: int) -> Playback:
        """Previous or next: the player stops there."""
        return replace(self, playing=False, step=min(max(self.step + delta, 1), n))

    def toggled(self, n: int) -> Playback:
        """Play (from the start when it stands at the end) or pause."""
        playing = not self.playing
        return replace(self, playing=playing, step=1 if playing and self.step >= n else self.step, advance=False)

    def ticked(self, n: int) -> Playback:
        """The timer's tick while playing: the next step (after the first tick), and the end stops it."""
        if not self.playing:
            return self
        step = min(self.step + 1, n) if self.advance else self.step
        return replace(self, step=step, playing=step < n, advance=True)
