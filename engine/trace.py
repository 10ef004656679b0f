"""The record of a forward pass: every intermediate tensor by a stable name, in computation order."""
from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from .explain import LATEX_DIGITS, LINE_WIDTH, TEXT_DIGITS, explain


class Step(NamedTuple):  # immutable, and quick to make: a pass of the paper's model records ~300
    name: str  # stable dotted name, e.g. "enc.0.attn.scores"
    value: np.ndarray  # read-only
    kind: str  # which equation made it; selects the per-cell explanation
    formula: str  # LaTeX; its words are word slots (engine/words.py)
    inputs: tuple  # names of the steps or parameters it was computed from
    meta: dict  # constants of the equation (divisor, eps, token ids, ...)

    @property
    def shape(self) -> tuple:
        return self.value.shape


class Recorder:
    """Collects steps while the forward pass runs; only the chaining functions use it."""

    def __init__(self):
        self.steps: dict[str, Step] = {}
        self._names: dict[int, str] = {}  # id of a recorded value -> its step's name; the steps keep the values alive

    def __call__(self, name, value, kind, formula, inputs: tuple, meta: dict):
        if not _fresh(value):
            value = np.array(value, dtype=float)  # a copy, which no one else holds
        value.setflags(write=False)
        self.steps[name] = Step(name, value, kind, formula, inputs, meta)
        self._names[id(value)] = name
        return value

    def __getitem__(self, name):
        return self.steps[name].value

    def name_of(self, value) -> str:
        """The name of the step whose value this is (the very array recording returned)."""
        return self._names[id(value)]


def _fresh(value) -> bool:
    """Whether `value` is a float64 array that only the forward pass holds, as a NumPy operation made it, and
    so may be recorded as it is (its copy would have its layout): it owns its memory (a view shows another array's)
    and is still writeable (a parameter, a recorded or a cached array is not, nor a view of one: those are copied)."""
    return type(value) is np.ndarray and value.flags.owndata and value.flags.writeable and value.dtype == np.float64


class Trace(Mapping):
    """A read-only mapping from step name to array, in computation order, with the tokens it ran on.

    The forward pass runs lazily, one stage (an embedding, half a sub-layer, a stack's output) at a time, only as
    far as the step asked for: a page about the first encoder layer does not pay for the decoder. Iterating, len() and
    `nonfinite` run it to the end. Threads may share a trace (the app does): a lock runs the stages in order.
    """

    def __init__(self, model, stages, steps, src_tokens, tgt_tokens, src_ids, tgt_ids, unknown):
        self.model = model
        self._stages = list(stages)  # functions, each recording one stage's steps into `steps`, run in order
        self._done = 0  # how many stages have run
        self._steps = steps
        self._lock = threading.Lock()
        self._nonfinite = {}  # step name -> whether it holds inf or NaN, checked once
        self.src_tokens, self.tgt_tokens = tuple(src_tokens), tuple(tgt_tokens)
        self.src_ids, self.tgt_ids = tuple(src_ids), tuple(tgt_ids)
        self.unknown = tuple(unknown)  # (side, word) pairs that were mapped to <unk>

    def _run_until(self, name=None):
        """Run stages until step `name` is recorded, or (None) to the end of the pass."""
        with self._lock, np.errstate(all="ignore"):  # non-finite numbers are reported by the trace, not raised
            while self._done < len(self._stages) and (name is None or name not in self._steps):
                stage, self._done = self._stages[self._done], self._done + 1
                try:
                    stage()
                except BaseException:
                    self._done = len(self._stages)  # the later stages read this one's output: the pass ends here
                    raise

    def _recorded(self) -> list[str]:
        with self._lock:
            return list(self._steps)

    def __getitem__(self, name):
        return self.step(name).value

    def __iter__(self):
        self._run_until()
        return iter(self._steps)

    def __len__(self):
        self._run_until()
        return len(self._steps)

    def step(self, name) -> Step:
        if name not in self._steps:
            self._run_until(name)
        return self._steps[name]

    def steps(self):
        self._run_until()
        return list(self._steps.values())

    def resolve(self, ref):
        """The array a step input refers to: a parameter of the model or a step of this trace."""
        if ref in self.model.params:
            return self.model.params[ref]
        return self[ref]

    @property
    def nonfinite(self) -> tuple[str, ...]:
        """Names of the steps holding inf or NaN, first one first; the causal mask's own −∞ do not count."""
        return tuple(name for name in self if self._holds_nonfinite(name))

    def nonfinite_through(self, name) -> tuple[str, ...]:
        """`nonfinite` among the steps up to and including `name` only (the pass runs no further)."""
        self.step(name)
        names = self._recorded()
        return tuple(n for n in names[:names.index(name) + 1] if self._holds_nonfinite(n))

    def _holds_nonfinite(self, name) -> bool:
        if name not in self._nonfinite:
            step = self._steps[name]
            finite = np.isfinite(step.value)
            self._nonfinite[name] = not finite.all() and bool(np.any(~finite & ~self._masked(step)))
        return self._nonfinite[name]

    def _masked(self, step) -> np.ndarray:
        """Where a −∞ is the mask's doing: in the mask itself and in the scores it was added to."""
        masks = [self._steps[ref].value for ref in (step.name, *step.inputs)
                 if ref in self._steps and self._steps[ref].kind == "mask"]
        if not masks:
            return np.zeros(step.shape, dtype=bool)
        return (np.broadcast_to(masks[0], step.shape) == -np.inf) & (step.value == -np.inf)

    def explain(self, name, index, digits=LATEX_DIGITS, text_digits=TEXT_DIGITS, line_width=LINE_WIDTH):
        """The arithmetic that produced one cell, with the real numbers, `digits` significant in the LaTeX and
        `text_digits` in the text, its sums `line_width` characters wide (see engine.explain)."""
        return explain(self, name, tuple(index), digits, text_digits, line_width)
