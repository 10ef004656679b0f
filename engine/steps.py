"""What a step is, declared once, and the hook through which the forward pass computes and records it.

A step's name is its block's prefix and its short name: the attention block "enc.0.attn" records "enc.0.attn.q", the
sub-layer "enc.0" records "enc.0.add1", the output block (prefix "") records "logits". engine/model.py declares each
block's steps, a Decl per short name: the step's kind (engine/kinds.py: its explainer, backward rule and formula, mask
flag), formula, shape in the config's symbols, the symbol its formula calls it, and constants; what a step is in words
is the UI catalogs' ("desc.*"). Its inputs are named where the pass hands them to the step's equation: a recorded
Step and a Param carry their names, `q = hook("q", att.project, x, W_Q, b_Q)`.
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Callable, NamedTuple

from .kinds import Kind
from .trace import Step

ROWS = ("n", "d_model")  # the residual stream's shape: one row per position


class Decl(NamedTuple):
    """One step as the table declares it. A formula that depends on the pass (the encoding's length, the step
    copied) is a function of the recorded steps, the step's input names and its value.

    `shape` is one sentence's, in the config's symbols: n (the positions of the step's side), n_q and n_k (an
    attention block's query and key positions), h, d_k, d_v, d_model, d_ff, vocab, "h·d_v" a product, "1" one; a
    padded batch puts b in front of every step but those all sentences share (`src.pos`, `tgt.pos`, `vocab_mask`)."""
    kind: Kind  # which equation makes it: its explainer and backward rule (engine/kinds.py)
    formula: str | Callable  # LaTeX; its words are word slots (engine/words.py)
    shape: tuple = ROWS
    symbol: str | None = None  # what its formula calls it, {i} its head's number; None: its name on screen
    meta: dict = {}  # the equation's constants; the forward pass adds the ones only it knows (token ids, keep masks)


class Param(NamedTuple):
    """A parameter as the pass hands it to an equation, with its name, as a recorded Step carries its own."""
    name: str  # as stored, "enc.0.attn.W_Q"
    value: object  # the array, or how the pass multiplies by it (engine/products.py)


def step_table_of(blocks: dict) -> MappingProxyType:
    """A step table, block -> short name -> Decl, read-only: it follows from a config alone, so passes share it."""
    return MappingProxyType({block: MappingProxyType(decls) for block, decls in blocks.items()})


_make_param = tuple.__new__  # Param(...) without NamedTuple's __new__, a Python function: a pass reads ~200


class Hook:
    """Computes and records the steps of one block as the table declares them: hook("q", f, *args) records
    f(*args) as "<prefix>.q"; its inputs are the Steps and Params among args, in their order, and f receives
    their values.

    The block's parameters are read through it, `matrix` as the pass multiplies by it (engine/products.py),
    `param` as it is stored: "W_Q" is "<prefix>.W_Q", unless `aliases` names it."""

    __slots__ = ("rec", "table", "model", "drop", "decls", "dot", "aliases")  # a pass makes dozens

    def __init__(self, rec, table, model, drop, block="output", prefix="", **aliases):
        self.rec, self.table, self.model, self.drop = rec, table, model, drop
        self.decls, self.dot, self.aliases = table[block], f"{prefix}." if prefix else "", aliases

    def block(self, block, prefix, **aliases) -> "Hook":
        """The hook of another block of the same pass."""
        return Hook(self.rec, self.table, self.model, self.drop, block, prefix, **aliases)

    def __call__(self, short, equation, *args, **meta) -> Step:
        values, inputs = [], []
        for arg in args:  # one loop, not two comprehensions: a pass records ~300 steps
            if type(arg) is Step or type(arg) is Param:
                inputs.append(arg.name)
                arg = arg.value
            values.append(arg)
        value, inputs, decl = equation(*values), tuple(inputs), self.decls[short]
        formula = decl.formula if type(decl.formula) is str else decl.formula(self.rec.steps, inputs, value)
        return self.rec(self.dot + short, value, decl, formula, inputs, {**decl.meta, **meta})

    def name(self, short) -> str:
        return self.dot + short

    def param(self, short) -> Param | None:
        """The parameter as stored; None if the config has none (a bias turned off)."""
        name = self.aliases.get(short) or self.dot + short
        value = self.model.params.get(name)
        return None if value is None else _make_param(Param, (name, value))

    def matrix(self, short) -> Param:
        """The weight as the pass multiplies by it: the equation's `x @ W` with W from hook.matrix("W_Q") is x W^Q,
        its product remembered."""
        name = self.aliases.get(short) or self.dot + short
        return _make_param(Param, (name, self.model.multiplier(name)))
