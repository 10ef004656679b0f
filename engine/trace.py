"""The record of a forward pass: every intermediate tensor by a stable name, in computation order."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .explain import explain


@dataclass(frozen=True)
class Step:
    name: str  # stable dotted name, e.g. "enc.0.attn.scores"
    value: np.ndarray  # read-only
    kind: str  # which equation made it; selects the per-cell explanation
    formula: str  # LaTeX
    description: str  # one line of English
    inputs: tuple = ()  # names of the steps or parameters it was computed from
    meta: dict = field(default_factory=dict)  # constants of the equation (divisor, eps, token ids, ...)

    @property
    def shape(self) -> tuple:
        return self.value.shape


class Recorder:
    """Collects steps while the forward pass runs; only the chaining functions use it."""

    def __init__(self):
        self.steps: dict[str, Step] = {}

    def __call__(self, name, value, kind, formula, description, inputs=(), **meta):
        value = np.array(value, dtype=float)
        value.setflags(write=False)
        self.steps[name] = Step(name, value, kind, formula, description, tuple(inputs), meta)
        return value

    def __getitem__(self, name):
        return self.steps[name].value


class Trace(Mapping):
    """A read-only mapping from step name to array, in computation order, with the tokens it ran on."""

    def __init__(self, model, steps, src_tokens, tgt_tokens, src_ids, tgt_ids, unknown):
        self.model = model
        self._steps = dict(steps)
        self.src_tokens, self.tgt_tokens = tuple(src_tokens), tuple(tgt_tokens)
        self.src_ids, self.tgt_ids = tuple(src_ids), tuple(tgt_ids)
        self.unknown = tuple(unknown)  # (side, word) pairs that were mapped to <unk>

    def __getitem__(self, name):
        return self._steps[name].value

    def __iter__(self):
        return iter(self._steps)

    def __len__(self):
        return len(self._steps)

    def step(self, name) -> Step:
        return self._steps[name]

    def steps(self):
        return list(self._steps.values())

    def resolve(self, ref):
        """The array a step input refers to: a step of this trace or a parameter of the model."""
        if ref in self._steps:
            return self._steps[ref].value
        return self.model.params[ref]

    @cached_property
    def nonfinite(self) -> tuple[str, ...]:
        """Names of the steps holding inf or NaN, first one first; the causal mask's own −∞ do not count."""
        return tuple(name for name, step in self._steps.items()
                     if np.any(~np.isfinite(step.value) & ~self._masked(step)))

    def _masked(self, step) -> np.ndarray:
        """Where a −∞ is the mask's doing: in the mask itself and in the scores it was added to."""
        masks = [self._steps[ref].value for ref in (step.name, *step.inputs)
                 if ref in self._steps and self._steps[ref].kind == "mask"]
        if not masks:
            return np.zeros(step.shape, dtype=bool)
        return (np.broadcast_to(masks[0], step.shape) == -np.inf) & (step.value == -np.inf)

    def explain(self, name, index):
        """The arithmetic that produced one cell, with the real numbers (see engine.explain)."""
        return explain(self, name, tuple(index))
