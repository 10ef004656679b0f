"""Generation settings (a strategy and its numbers) and the engine call they make (the beam tree's figure is
ui/lessons/beam_tree.py). Pure: no Streamlit here. In the link the settings that differ from the defaults are one
part, e.g. `gen=strategy:top_p,p:0.8,seed:7` (ui/core/state/codecs.GenerationSettings). The defaults are the
toy's (DEFAULTS) or, with a real translator loaded, its checkpoint's own (`defaults`): a link without gen= opens
the model it names as its users get it from transformers. And the player's state (`Playback`), which the generation
page's buttons and timer change."""
from __future__ import annotations

from dataclasses import dataclass, replace

from engine import transformers_beam
from engine.generate import beam_search, generate
from engine.values import MAX_SEED

STRATEGIES = ("greedy", "temperature", "top_k", "top_p", "beam")
MODELS = ("trained", "current")  # the shipped model trained on the corpus (engine.trained), or the pages' model
CHECKPOINT = {"width": "num_beams", "alpha": "length_penalty"}  # a translator's defaults from generation_config.json
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


def defaults(checkpoint: dict | None = None) -> dict:
    """The settings a page opens with. checkpoint: a real translator's generation settings (marian.load_folder's:
    num_beams, length_penalty, max_length, force_end), whose model, strategy and numbers (within the page's ranges)
    are then the defaults, as transformers' generate() takes them."""
    if checkpoint is None:
        return DEFAULTS
    numbers = {name: _within(name, checkpoint[key]) for name, key in CHECKPOINT.items()}
    return {**DEFAULTS, **numbers, "model": "current", "strategy": "beam" if numbers["width"] > 1 else "greedy",
            "max_len": _within("max_len", checkpoint["max_length"] - 1)}  # max_length counts the decoder's start


def _within(name: str, value):
    low, high = RANGES[name]
    return type(DEFAULTS[name])(min(max(value, low), high))


def settings(pairs: tuple, checkpoint: dict | None = None) -> dict:
    """Every setting: the defaults (of the checkpoint, if a translator is loaded) with the state's changes."""
    return {**defaults(checkpoint), **dict(pairs)}


def changed(values: dict, checkpoint: dict | None = None) -> tuple:
    """The settings that differ from the defaults, as sorted pairs (what the state and the URL keep)."""
    return tuple(sorted((k, v) for k, v in values.items() if defaults(checkpoint).get(k) != v))


def translator_generates(pairs: tuple, checkpoint: dict | None = None) -> bool:
    """Whether the settings have the loaded translator generate, which decodes as transformers' generate() does."""
    return checkpoint is not None and settings(pairs, checkpoint)["model"] == "current"


def run(model, src: str, pairs: tuple, checkpoint: dict | None = None):
    """The engine's Generation (or BeamSearch, for "beam") that the settings ask for. checkpoint: the loaded
    translator's generation settings; when the pages' model (the translator) generates, it decodes as transformers'
    generate() does: its beam search (engine/transformers_beam.py) and forced </s> at the last token."""
    s = settings(pairs, checkpoint)
    own = checkpoint if translator_generates(pairs, checkpoint) else None
    max_len = min(s["max_len"], model.config.max_len - 1, *([own["max_length"] - 1] if own else []))
    force_end = bool(own and own["force_end"])
    if s["strategy"] == "beam" and own:
        return transformers_beam.beam_search(model, src, width=s["width"], max_len=max_len, length_penalty=s["alpha"],
                                             force_end=force_end)
    if s["strategy"] == "beam":
        return beam_search(model, src, width=s["width"], max_len=max_len, alpha=s["alpha"])
    if s["strategy"] == "greedy":
        return generate(model, src, max_len=max_len, force_end=force_end)
    extra = {"top_k": {"k": min(s["k"], len(model.vocab))}, "top_p": {"p": s["p"]}}.get(s["strategy"], {})
    return generate(model, src, strategy=s["strategy"], max_len=max_len, temperature=s["temperature"],
                    seed=s["seed"], force_end=force_end, **extra)


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
