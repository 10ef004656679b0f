"""Where the current settings depart from the paper, as data: each option with the paper's value and the steps it
changes. A step page shows a departure next to the formula of such a step, with a button that sets the paper's
value (pure: no Streamlit here; ui.views.steps draws them).

Catalog keys, for an option FIELD: "depart.FIELD" (or "depart.FIELD.VALUE" where the text depends on the app's
value) says what the app does, what the paper does and why the preset does otherwise; "depart.FIELD.button" is
the button's label.
"""
from __future__ import annotations

from typing import NamedTuple

from ui.core.labels import one_embedding_table


class Departure(NamedTuple):
    field: str  # the Config field
    paper: object  # the paper's value; HEAD_WIDTH: d_model / h, for d_k and d_v together
    steps: tuple  # the steps whose formula it changes: a trace step's kind or its last name part
    by_value: bool = False  # the text depends on the app's value: "depart.FIELD.VALUE"


HEAD_WIDTH = "d_model/h"  # the paper's d_k = d_v = d_model / h (section 3.2.2)

DEPARTURES = (
    Departure("attn_divisor", "sqrt_dk", ("scale",)),
    Departure("pos_encoding", "sinusoidal", ("pos",), by_value=True),
    Departure("embed_scale", True, ("embed",)),
    Departure("shared_embeddings", True, ("embed",)),
    Departure("d_k", HEAD_WIDTH, ("proj",)),
    Departure("attn_bias", False, ("proj",)),
    Departure("norm_placement", "post", ("layer_norm",)),
    Departure("layer_norm", "paper", ("layer_norm",)),  # PyTorch's: the paper writes no formula
    Departure("activation", "relu", ("activation",), by_value=True),
    Departure("ffn_bias", True, ("hidden",)),
    Departure("tied_output", True, ("logits",)),
    Departure("residual", True, ("add1", "add2", "add3")),  # off only for the exercise on residual connections
    Departure("decoder_start", "sos", ("embed",)),  # Marian's decoder starts from <pad>
    Departure("never_next", "unk", ("vocab_mask",)),  # the app's own mask (the paper has none); Marian's masks <pad>
)


def paper_settings(departure: Departure, config) -> dict | None:
    """The Config fields that give the paper's form of this option, or None where no value can (d_model not
    divisible by h)."""
    if departure.paper != HEAD_WIDTH:
        return {departure.field: departure.paper}
    if config.d_model % config.n_heads:
        return None
    width = config.d_model // config.n_heads
    return {"d_k": width, "d_v": width}


def departs(departure: Departure, config) -> bool:
    """Whether the config does otherwise than the paper for this option."""
    if departure.paper == HEAD_WIDTH:
        return config.d_k * config.n_heads != config.d_model or config.d_v != config.d_k
    if departure.field == "shared_embeddings":
        return not one_embedding_table(config)
    return getattr(config, departure.field) != departure.paper


def for_steps(keys, config) -> list[Departure]:
    """The departures of the config that change the steps named by `keys`: a step's kind (e.g. "scale") or the last
    part of its name (e.g. "logits")."""
    return [d for d in DEPARTURES if set(keys) & set(d.steps) and departs(d, config)]


def text_key(departure: Departure, config) -> str:
    """The catalog key of the departure's sentence in this config."""
    return f"depart.{departure.field}" + (f".{getattr(config, departure.field)}" if departure.by_value else "")


def values(config) -> dict:
    """The numbers the departure sentences may name."""
    return {"divisor": f"{config.divisor:.4g}", "d_k": config.d_k, "d_v": config.d_v, "h": config.n_heads,
            "d_model": config.d_model, "width": f"{config.d_model / config.n_heads:g}"}


# The paper-vs-blog page: the differences that follow an option, with the option's values that do as the post
# (left) and as the right-hand side says. Where the current value is one of them, that side is marked "now".
OPTION_SIDES = {
    "pe_formula": ("pos_encoding", ("blog", "blog_table"), ("sinusoidal",)),
    "pe_rounding": ("pos_encoding", ("blog_table",), ("blog", "sinusoidal")),
    "divisor": ("attn_divisor", (30.0,), ("sqrt_dk",)),
    "layer_norm": ("layer_norm", ("blog",), ("paper",)),
    "embed_scale": ("embed_scale", (False,), (True,)),
    "softmax": ("softmax", ("naive",), ("stable",)),
}
RIGHT_SIDE = {  # who does as the right-hand side: catalog keys "compare.side.*"
    "wq1": "code", "wk2": "code", "pe_formula": "paper", "pe_rounding": "exact", "divisor": "paper",
    "layer_norm": "pytorch", "ln_rounding": "exact", "z_digits": "exact", "embed_scale": "paper", "mask": "app",
    "softmax": "stable", "w_o_random": "app", "generate": "app",
}


def sides_now(key: str, config) -> tuple[bool, bool]:
    """Whether the app does now as the post (left) and as the right-hand side of a difference; (False, False)
    where the difference follows no option, or the option's value is neither."""
    if key not in OPTION_SIDES:
        return False, False
    field, post, other = OPTION_SIDES[key]
    value = getattr(config, field)
    return value in post, value in other
