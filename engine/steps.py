"""What a step is, declared once, and the hook through which the forward pass computes and records it.

A step's name is its block's prefix and its short name: the attention block "enc.0.attn" records "enc.0.attn.q", the
sub-layer "enc.0" records "enc.0.add1", the output block (prefix "") records "logits". engine/model.py declares each
block's steps, a Decl per short name: the step's kind (engine/kinds.py: its explainer, backward rule and formula, mask
flag), formula, shape in the config's symbols, the symbol its formula calls it, and constants; what a step is in words
is the UI catalogs' ("desc.*"). Its inputs are not declared: the hook names them from the arguments of the call that
computes the step, `q = hook("q", att.project, x, W_Q, b_Q)`.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

from .kinds import Kind

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


class StepTable(dict):
    """Block -> short name -> Decl; and the inputs of each block's steps, named once by the first pass (see Hook)."""

    def __init__(self, blocks):
        super().__init__(blocks)
        self.named = {}  # (block, prefix) -> {short name: (step name, Decl, input names)}


class Hook:
    """Computes and records the steps of one block as the table declares them: hook("q", f, *args) records
    f(*args) as "<prefix>.q", whose inputs are the recorded steps and the model's parameters among args.

    The block's parameters are read through it, `matrix` as the pass multiplies by it (engine/products.py),
    `param` as it is stored: "W_Q" is "<prefix>.W_Q", unless `aliases` names it. A step's inputs follow from the
    config, p and padding alone, as its table does: they are named in a table's first pass, then read from it (a pass
    records ~300 steps, and naming them would be a third of the hook's time)."""

    __slots__ = ("rec", "params", "table", "model", "drop", "decls", "dot", "aliases", "named")  # a pass makes dozens

    def __init__(self, rec, table: StepTable, model, drop, block="output", prefix="", params=None, **aliases):
        self.rec, self.table, self.model, self.drop = rec, table, model, drop
        self.params = {} if params is None else params  # the pass's: id of a parameter -> its name, once needed
        self.decls, self.dot, self.aliases = table[block], f"{prefix}." if prefix else "", aliases
        key = (block, prefix)
        self.named = table.named.get(key) or table.named.setdefault(key, {})

    def block(self, block, prefix, **aliases) -> "Hook":
        """The hook of another block of the same pass."""
        return Hook(self.rec, self.table, self.model, self.drop, block, prefix, self.params, **aliases)

    def __call__(self, short, equation, *args, **meta):
        value = equation(*args)
        name, decl, inputs = self.named.get(short) or self._name(short, args)
        formula = decl.formula if type(decl.formula) is str else decl.formula(self.rec.steps, inputs, value)
        return self.rec(name, value, decl, formula, inputs, {**decl.meta, **meta})

    def _name(self, short, args):
        """The step's name, declaration and inputs: the recorded steps and parameters among `args`, in their order."""
        steps, params = self.rec.names, self.params
        if not params:
            params.update(self.model.parameter_names())
        inputs = tuple([steps.get(i) or params[i] for i in map(id, args) if i in steps or i in params])
        return self.named.setdefault(short, (self.dot + short, self.decls[short], inputs))

    def name(self, short) -> str:
        return self.dot + short

    def param(self, short):
        """The parameter as stored; None if the config has none (a bias turned off)."""
        return self.model.params.get(self.aliases.get(short) or self.dot + short)

    def matrix(self, short):
        """The weight as the pass multiplies by it: `x @ hook.matrix("W_Q")` is x W^Q, its product remembered."""
        return self.model.multiplier(self.aliases.get(short) or self.dot + short)
