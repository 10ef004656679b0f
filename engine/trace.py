"""The record of a forward pass: every intermediate tensor by a stable name, in computation order."""
from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from .explain import LATEX_DIGITS, LINE_WIDTH, TEXT_DIGITS, explain

_END = object()  # what next() gives for a forward pass that has ended
_make_step = tuple.__new__  # Step(...) without NamedTuple's __new__, a Python function: a pass makes ~300 steps


class Step(NamedTuple):  # immutable, and quick to make: a pass of the paper's model records ~300
    name: str  # stable dotted name, e.g. "enc.0.attn.scores"
    value: np.ndarray  # read-only
    decl: tuple  # its declaration (engine/steps.py Decl): kind, shape in symbols, symbol
    formula: str  # LaTeX; its words are word slots (engine/words.py)
    inputs: tuple  # names of the steps or parameters it was computed from
    meta: dict  # constants of the equation (divisor, eps, token ids, ...)

    @property
    def shape(self) -> tuple:
        return self.value.shape

    @property
    def kind(self) -> str:
        """Which equation made it ("proj", "softmax", ...); `decl.kind` is the kind itself (engine/kinds.py)."""
        return self.decl.kind.name

    @property
    def axes(self) -> tuple:
        """Its shape in the config's symbols, e.g. ("h", "n", "d_k"): one sentence's (see engine.steps.Decl)."""
        return self.decl.shape

    @property
    def symbol(self) -> str | None:
        """What its formula calls it, {i} standing for its head's number (S_{i}'); None if nothing."""
        return self.decl.symbol


class Recorder:
    """Collects steps while the forward pass runs; only the chaining functions use it."""

    def __init__(self):
        self.steps: dict[str, Step] = {}

    def __call__(self, name, value, decl, formula, inputs: tuple, meta: dict) -> Step:
        if not _fresh(value):
            value = np.array(value, dtype=float)  # a copy, which no one else holds
        value.setflags(write=False)
        step = self.steps[name] = _make_step(Step, (name, value, decl, formula, inputs, meta))
        return step


def _fresh(value) -> bool:
    """Whether `value` is a float64 array that only the forward pass holds, as a NumPy operation made it, and
    so may be recorded as it is (its copy would have its layout): it owns its memory (a view shows another array's)
    and is still writeable (a parameter, a recorded or a cached array is not, nor a view of one: those are copied)."""
    if type(value) is not np.ndarray or value.dtype != np.float64:
        return False
    flags = value.flags  # made anew at each reading: read once (a pass records ~300 steps)
    return flags.owndata and flags.writeable


class Trace(Mapping):
    """A read-only mapping from step name to array, in computation order, with the tokens it ran on.

    The forward pass runs lazily, only as far as the step asked for: it is a generator (Model's) that records steps
    and stops at the end of each stage (an embedding, an attention block's heads, a sub-layer, a stack), and the
    trace runs it on until the step is recorded. A page about the first encoder layer does not pay for the decoder.
    Iterating, len() and `nonfinite` run it to the end. Threads may share a trace (the app does): a lock runs it.
    """

    def __init__(self, model, forward, steps, src_tokens, tgt_tokens, src_ids, tgt_ids, unknown):
        self.model = model
        self._forward = forward  # the pass, a generator recording into `steps`; it ends at its end or an error
        self._steps = steps
        self._lock = threading.Lock()
        self._nonfinite = {}  # step name -> whether it holds inf or NaN, checked once
        self.src_tokens, self.tgt_tokens = tuple(src_tokens), tuple(tgt_tokens)
        self.src_ids, self.tgt_ids = tuple(src_ids), tuple(tgt_ids)
        self.unknown = tuple(unknown)  # (side, word) pairs that were mapped to <unk>

    def _run_until(self, name=None):
        """Run the pass until step `name` is recorded, or (None) to its end."""
        with self._lock, np.errstate(all="ignore"):  # non-finite numbers are reported by the trace, not raised
            while (name is None or name not in self._steps) and next(self._forward, _END) is not _END:
                pass

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

    def names_through(self, name) -> list[str]:
        """The names of the steps up to and including `name`, in computation order (the pass runs no further)."""
        self.step(name)
        names = self._recorded()
        return names[:names.index(name) + 1]

    def nonfinite_through(self, name) -> tuple[str, ...]:
        """`nonfinite` among the steps up to and including `name` only (the pass runs no further)."""
        return tuple(n for n in self.names_through(name) if self._holds_nonfinite(n))

    def _holds_nonfinite(self, name) -> bool:
        if name not in self._nonfinite:
            step = self._steps[name]
            finite = np.isfinite(step.value)
            self._nonfinite[name] = not finite.all() and bool(np.any(~finite & ~self._masked(step)))
        return self._nonfinite[name]

    def _masked(self, step) -> np.ndarray:
        """Where a −∞ is the mask's doing: in the mask itself and in the scores it was added to."""
        masks = [self._steps[ref].value for ref in (step.name, *step.inputs)
                 if ref in self._steps and self._steps[ref].decl.kind.masks]
        if not masks:
            return np.zeros(step.shape, dtype=bool)
        return (np.broadcast_to(masks[0], step.shape) == -np.inf) & (step.value == -np.inf)

    def explain(self, name, index, digits=LATEX_DIGITS, text_digits=TEXT_DIGITS, line_width=LINE_WIDTH, **naming):
        """The arithmetic that produced one cell, with the real numbers, `digits` significant in the LaTeX and
        `text_digits` in the text, its sums `line_width` characters wide; naming: `first`, `label` (see
        engine.explain)."""
        return explain(self, name, tuple(index), digits, text_digits, line_width, **naming)
