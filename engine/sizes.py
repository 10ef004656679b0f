"""How big a model is: its parameters counted per block and per part, and the multiply-adds of each step's matrix
product. Counted from the config and the shapes alone (engine.params.param_shapes, a trace's step shapes)."""
from __future__ import annotations

import math
from typing import NamedTuple

from .config import Config
from .params import param_shapes

PAPER_VOCABULARY_SIZE = 37_000  # the base model's shared source-target byte-pair vocabulary (paper section 5.1)
PAPER_BASE_PARAMETERS = 65_000_000  # the base model's count in the paper's Table 3
PAPER_BASE_CONFIG = Config()  # the base model's settings (the paper preset's)
PRODUCT_KINDS = ("proj", "scores", "weighted", "linear")  # the step kinds that multiply two matrices


class Part(NamedTuple):
    """A kind of block of the model, e.g. the encoder's feed-forward networks: `copies` alike, one per layer (1 for
    a part outside the stacks), of `each` parameters."""
    each: int
    copies: int

    @property
    def total(self) -> int:
        return self.each * self.copies


def block_of(name: str) -> str:
    """The block a parameter belongs to: "enc.0.attn" for "enc.0.attn.W_Q", "enc.0.ln1" for "enc.0.ln1.gamma",
    "unembed" for "unembed.b"; each embedding table is a block of its own."""
    return name if name.startswith(("embed.", "pos.")) else name.rsplit(".", 1)[0]


def part_of(block: str) -> str:
    """The part a block is a copy of: "enc.attn" for "enc.3.attn", "dec.ln" for any decoder layer's LayerNorm."""
    stack, *rest = block.split(".")
    if not rest or not rest[0].isdigit():
        return block
    sub = rest[1]
    return f"{stack}.{'ln' if sub.startswith('ln') else sub}"


def parameter_count(config: Config, vocab_size: int) -> int:
    """Every parameter of the model, a shared embedding table counted once."""
    return sum(math.prod(shape) for shape in param_shapes(config, vocab_size).values())


def block_counts(config: Config, vocab_size: int) -> dict[str, int]:
    """Parameters per block, in the order of param_shapes."""
    counts = {}
    for name, shape in param_shapes(config, vocab_size).items():
        block = block_of(name)
        counts[block] = counts.get(block, 0) + math.prod(shape)
    return counts


def part_counts(config: Config, vocab_size: int) -> dict[str, Part]:
    """Parameters per part: the blocks of every layer of a stack that are alike counted once, with their copies."""
    totals, copies = {}, {}
    for block, count in block_counts(config, vocab_size).items():
        part = part_of(block)
        totals[part] = totals.get(part, 0) + count
        copies[part] = copies.get(part, set()) | {block.split(".")[1] if part != block else ""}
    return {part: Part(total // len(copies[part]), len(copies[part])) for part, total in totals.items()}


def multiply_adds(kind: str, a_shape: tuple, b_shape: tuple) -> int:
    """The multiply-adds of a step's matrix product A B, from its two operands' shapes as they are multiplied (K^T,
    not K; E^T where the output is tied to the embedding); 0 for a step of another kind.

    proj, linear: x (..., d_in) times W (h, d_in, d_k) or (d_in, d_out): each row of x meets every weight once.
    scores: Q (..., n, d_k) K^T (..., d_k, m): every cell of Q meets m keys. weighted: A (..., n, m) V, V (..., m,
    d_v): every weight meets a value row of d_v."""
    if kind in ("proj", "linear"):
        return math.prod(a_shape[:-1]) * math.prod(b_shape)
    if kind in ("scores", "weighted"):
        return math.prod(a_shape) * b_shape[-1]
    return 0


class Product(NamedTuple):
    """One step's matrix product: its operands' shapes as multiplied (K^T for the scores) and its multiply-adds."""
    a_shape: tuple
    b_shape: tuple
    multiply_adds: int


def pass_products(trace) -> dict[str, Product]:
    """The matrix product of every step of a forward pass that makes one, by step name, in the pass's order."""
    products = {}
    for step in trace.steps():
        if step.kind in PRODUCT_KINDS:
            a, b = (trace.resolve(ref).shape for ref in step.inputs[:2])
            if step.kind == "scores" or step.meta.get("transpose"):  # Q K^T; y E^T
                b = (*b[:-2], b[-1], b[-2])
            products[step.name] = Product(a, b, multiply_adds(step.kind, a, b))
    return products


def stack_of(step_name: str) -> str:
    """Where a step sits: "enc" or "dec" for a layer's step, else the first part of its name ("logits" for the
    output layer's)."""
    return step_name.split(".", 1)[0]


def totals_by_stack(products: dict[str, Product]) -> dict[str, int]:
    """Multiply-adds per stack of the pass (see stack_of), and "all"."""
    totals = {}
    for name, product in products.items():
        totals[stack_of(name)] = totals.get(stack_of(name), 0) + product.multiply_adds
    return {**totals, "all": sum(totals.values())}


# PyTorch's counterpart of a model, whose sum(p.numel()) the sizes page shows beside the model's count: the
# encoder–decoder model's is nn.Transformer(d_model, h, N_enc, N_dec, d_ff) (biases on, heads d_model / h wide, a
# final LayerNorm after each stack in post-norm too), a decoder-only one's nn.TransformerEncoder of N
# nn.TransformerEncoderLayer(d_model, h, d_ff) with norm=nn.LayerNorm(d_model), run with a causal mask; each with an
# nn.Embedding(V, d_model) per embedding table of the model. Neither has an output layer or positions to learn.
# tests/test_sizes.py builds it for every combination of the sidebar's options.

def torch_difference_parts(config: Config, vocab_size: int) -> dict[str, Part]:
    """What this model counts beyond PyTorch's counterpart, item by item, as a signed number of parameters per block
    times the blocks (negative: what PyTorch counts and it does not, e.g. the paper's model has no attention biases:
    4 d_model in each attention block); the items that are 0 left out."""
    c, d = config, config.d_model
    attentions = sum(c.depth(stack) * sum(sub.endswith("attn") for sub in subs.values())
                     for stack, subs in c.sublayers.items())
    ffns = sum(c.depth(stack) for stack in c.sublayers)
    stacks = sum(1 for stack in c.sublayers if c.depth(stack))
    widths = d * c.n_heads * (2 * c.d_k + 2 * c.d_v) - 4 * d * d  # W_Q, W_K, W_V, W_O against PyTorch's d × d each
    if c.attn_bias:
        widths += c.n_heads * (2 * c.d_k + c.d_v) + d - 4 * d  # b_Q, b_K, b_V, b_O against PyTorch's d each
    items = {
        "output_bias": Part(vocab_size, 1),
        "output_weights": Part(0 if c.tied_output else d * vocab_size, 1),
        "learned_positions": Part(c.max_len * d if c.pos_encoding == "learned" else 0, 1),
        "final_norms": Part(0 if c.norm_placement == "pre" else -2 * d, stacks),  # gamma and beta
        "attention_biases": Part(0 if c.attn_bias else -4 * d, attentions),
        "ffn_biases": Part(0 if c.ffn_bias else -(c.d_ff + d), ffns),
        "head_widths": Part(widths, attentions),
    }
    return {item: part for item, part in items.items() if part.total}


def torch_differences(config: Config, vocab_size: int) -> dict[str, int]:
    """torch_difference_parts' totals: parameter_count minus their sum is PyTorch's sum(p.numel())."""
    return {item: part.total for item, part in torch_difference_parts(config, vocab_size).items()}


def torch_count(config: Config, vocab_size: int) -> int:
    """sum(p.numel()) of PyTorch's counterpart of the model (see torch_differences)."""
    return parameter_count(config, vocab_size) - sum(torch_differences(config, vocab_size).values())
