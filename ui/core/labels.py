"""Axis labels of every step and parameter: tokens for positions, indices for heads and widths; and the
catalog keys of a step's description and a page's intro."""
import re
from collections import Counter
from functools import lru_cache

import numpy as np

from ui.core.format import fmt
from ui.core.i18n import plain_math

FIRST = 1  # what a person reads counts from 1: positions, rows, columns, heads, layers, time steps (the paper's
# head_1 … head_h); only code counts from 0 (step and parameter names, enc.0; a link's edit=…:i.j.k and cell=i.j)

# a block: its sub-layer's words, catalog keys sublayer.* (the add & norm pages' choices, the rail's titles)
SUBLAYER_WORDS = {"attn": "self_attn", "self_attn": "masked", "cross_attn": "cross", "ffn": "ffn"}



def input_side(config) -> str:
    """The side the tokens and positional pages embed: the source, or a decoder-only model's one sequence (source,
    SOS, target), which its decoder reads."""
    return "tgt" if config.decoder_only else "src"


def input_tokens(trace) -> tuple[tuple, tuple]:
    """(tokens, ids) of the side the tokens and positional pages embed (input_side)."""
    if input_side(trace.model.config) == "tgt":
        return trace.tgt_tokens, trace.tgt_ids
    return trace.src_tokens, trace.src_ids


def unique(labels) -> list[str]:
    """Labels (tokens, say) numbered only where one repeats, by its position from 1 (the rule for what a person
    reads), so every label stays unique: ["a", "b", "a"] -> ["a (1)", "b", "a (3)"]."""
    counts = Counter(labels)
    return [label if counts[label] == 1 else f"{label} ({i + FIRST})" for i, label in enumerate(labels)]


def _positions(name, trace):
    """Which token sequence the rows (queries) and the columns (keys) of a step run over."""
    src, tgt = unique(trace.src_tokens), unique(trace.tgt_tokens)
    if name.startswith(("src.", "enc.", "img.", "head.")):  # the ViT's positions are its source tokens
        return src, src
    if ".cross_attn." in name:
        return tgt, src
    return tgt, tgt


def step_axes(trace, name) -> list[list[str]]:
    """One list of labels per axis of the step's array, by the symbols of its declared shape (engine.Step.axes):
    tokens for positions (n_k: the keys'), the vocabulary, else indices (a head's number too: the words around it,
    a picker's "head", are the catalog's)."""
    step = trace.step(name)
    rows, cols = _positions(name, trace)
    labels = {"n": rows, "n_q": rows, "n_k": cols, "N": rows[1:],  # the patches: the positions but the class token
              "vocab": lambda: list(trace.model.vocab.tokens), "n_classes": lambda: list(trace.model.classes)}
    return [_labels(labels.get(symbol)) or indices(size) for symbol, size in zip(step.axes, step.shape)]


def _labels(labels):
    """A list of labels, or the function that makes it (a model has a vocabulary or classes, not both)."""
    return labels() if callable(labels) else labels


def param_axes(model, name, shape) -> list[list[str]]:
    if name.startswith(("embed.", "pos.")):
        first = list(model.vocab.tokens) if name.startswith("embed.") else indices(shape[0])
        return [first, indices(shape[1])]
    if name == "unembed.W":
        return [indices(shape[0]), list(model.vocab.tokens)]
    if name == "img.E_pos":
        return [list(model.tokens), indices(shape[1])]
    if name in ("head.W_F", "head.b_F"):
        return [indices(n) for n in shape[:-1]] + [list(model.classes)]
    return [indices(n) for n in shape]  # a per-head weight's heads too, numbered as step_axes numbers them


# The settings a page's intro depends on: after "intro.<page>", which is true in every setting, the intro goes on
# with the catalog's "intro.<page>.<value>" for each setting's current value (see _setting_value).
INTRO_SETTINGS = {
    "tokens": ("embed_scale",),
    "qkv": ("attn_bias",),
    "multihead": ("attn_bias",),
    "positional": ("pos_encoding",),
    "attention": ("attn_divisor", "softmax"),
    "add_norm": ("norm_placement", "layer_norm"),
    "ffn": ("activation", "norm_placement"),
    "dec_ffn": ("norm_placement",),
    "encoder_stack": ("norm_placement",),
    "decoder_input": ("decoder_start",),
    "output": ("never_next",),
}

# The pages whose intro is another in a decoder-only model: "intro.<page>.decoder_only" in place of "intro.<page>".
DECODER_ONLY_INTROS = ("overview", "tokens", "positional", "decoder_input", "dec_add_norm", "dec_ffn", "decoder_stack",
                       "generate")

COUNTING = "tokens"  # the page where a learner first meets an index says how the app counts: "intro.counting"
# The pages that flag the seeds' slips where they teach the step, and the catalog keys of their notes.
SEED_NOTES = {"qkv": ("seednote.qkv", "seednote.qkv.shapes"), "multihead": ("seednote.multihead",),
              "add_norm": ("seednote.add_norm",),
              "masked_attention": ("seednote.masked_attention", "seednote.masked_attention.scores"),
              "train": ("seednote.train",)}


# The pages whose intro names the decoder's start and end tokens: {start} and {end}, from the model's own (the paper's
# SOS and EOS; a Marian translator's <pad> and </s>).
TOKEN_INTROS = ("animation", "generate", "train")


def decoder_tokens(model) -> dict:
    """{"start": the token the decoder reads first, "end": the one that ends its sentence}, as the model names them."""
    return {"start": model.vocab.tokens[model.start_id], "end": model.vocab.end}


def token_in_text(token: str) -> str:
    """A special token in Markdown: a word as the paper writes it (SOS), else code (Markdown reads <pad> and </s> as
    tags)."""
    return token if token.isalnum() else f"`{token}`"


def intro_values(page: str, model) -> dict:
    """The values of a page's intro text: the decoder's start and end tokens (decoder_tokens) where it names them."""
    if page not in TOKEN_INTROS:
        return {}
    return {name: token_in_text(token) for name, token in decoder_tokens(model).items()}


def intro_keys(page: str, config) -> list[str]:
    """The catalog keys of a page's intro in the current settings, e.g. ["intro.ffn", "intro.ffn.gelu"]."""
    fields = INTRO_SETTINGS.get(page, ())
    first = f"intro.{page}.decoder_only" if config.decoder_only and page in DECODER_ONLY_INTROS else f"intro.{page}"
    return [first] + [f"intro.{page}.{_setting_value(config, field)}" for field in fields] + (
        ["intro.counting"] if page == COUNTING else [])


def _setting_value(config, field: str) -> str:
    """A setting's value as a catalog key part: a choice as it is, "sqrt_dk" or "number" for the divisor, and a
    switch as its name or "no_" and its name."""
    value = getattr(config, field)
    if field == "attn_divisor":
        return "sqrt_dk" if value == "sqrt_dk" else "number"
    if isinstance(value, bool):
        return field if value else f"no_{field}"
    return value


def description_key(name: str) -> str:
    """The catalog key of a step's one-line description, e.g. "desc.attn.scores" or "desc.ffn.out"."""
    parts = name.split(".")
    if name in ("logits", "vocab_mask", "masked_logits", "probs") or parts[0] in ("img", "head"):
        return f"desc.{name}"  # the Vision Transformer's image and head steps: "desc.img.patches", "desc.head.probs"
    if parts[-1] in ("embed", "pos", "input"):
        return f"desc.{parts[-1]}"
    if parts[-1] == "out" and len(parts) == 2:
        return f"desc.{parts[0]}.out"
    if parts[-2] == "ffn":
        return f"desc.ffn.{parts[-1]}"
    if parts[-2].endswith("attn"):
        padded = parts[-1] == "masked" and parts[-2] != "self_attn"  # a padded batch's, in an attention not causal
        return "desc.attn.pad_masked" if padded else f"desc.attn.{parts[-1]}"
    return f"desc.{parts[-1].rstrip('0123456789')}"  # add1, ln2, ...


def step_name_key(name: str) -> str:
    """The catalog key of a step's name on screen, e.g. "step.attn.scores" (keyed like its description)."""
    return "step." + description_key(name).removeprefix("desc.")


def step_tex(symbol: str | None, head: int | None, title: str) -> str:
    """What a matrix of a step is called beside it: the symbol its formula gives it, `symbol` as the step declares it
    (engine.Step.symbol: S_{i}', S_1' for head 1's scaled scores), else its name on screen, `title`, in the reader's
    language (the math in it stays math)."""
    number = "i" if head is None else str(head + 1)
    if symbol is not None:
        return symbol.replace("{i}", f"{{{number}}}")
    parts = re.split(r"\$([^$]*)\$", title)  # text, math, text, ...
    words = "".join(part if i % 2 else rf"\text{{{part}}}" for i, part in enumerate(parts) if part)
    return f"{{{words}}}" + (f"_{{{number}}}" if head is not None else "")


def cell_label(symbol: str | None, head: int | None, title: str, cell: tuple) -> tuple[str, str]:
    """A drill-down's cell as its matrix is named on the page (step_tex) with its row and column from FIRST, in
    LaTeX and in plain text: ("Q_{1}[2, 3]", "Q_1[2, 3]"); the plain text writes a title's math in Unicode
    ("Output projection (× Wᴼ)[1, 1]", not "\\times W^O")."""
    position = f"[{', '.join(str(k + FIRST) for k in cell)}]"
    plain = step_tex(symbol, head, plain_math(title)) + position
    return step_tex(symbol, head, title) + position, re.sub(r"\\text\{([^{}]*)\}", r"\1", plain).replace(
        "{", "").replace("}", "")


TOP_PARAMS = ("embed", "pos", "unembed")  # parameters outside the layers, named whole ("embed.src")
PARAM_TEX = {  # a parameter's symbol, by param_key
    "embed.src": r"E_{\text{src}}", "embed.tgt": r"E_{\text{tgt}}", "pos.learned": "PE",
    "W_Q": "W^Q", "W_K": "W^K", "W_V": "W^V", "W_O": "W^O", "b_Q": "b^Q", "b_K": "b^K", "b_V": "b^V", "b_O": "b^O",
    "W_1": "W_1", "W_2": "W_2", "b_1": "b_1", "b_2": "b_2", "gamma": r"\gamma", "beta": r"\beta",
    "unembed.W": r"W_{\text{out}}", "unembed.b": r"b_{\text{out}}",
    "W_F": "W^F", "b_F": "b^F",  # the Vision Transformer's head (head.W_F, head.b_F)
    "E": "E", "b_E": "b_E", "x_class": r"x_{\text{class}}", "E_pos": r"E_{\text{pos}}",  # the ViT's image block
}


def param_key(name: str) -> str:
    """A parameter's kind, the same in every layer: "W_Q" for enc.0.attn.W_Q, "embed.src" for itself."""
    return name if name.split(".", 1)[0] in TOP_PARAMS else name.rsplit(".", 1)[-1]


def one_embedding_table(config) -> bool:
    """Whether the source and the target read one embedding table: a shared one, or a decoder-only model's only one
    (embed.tgt when not shared), which embeds the source too."""
    return config.shared_embeddings or config.decoder_only


def param_words_key(name: str, config) -> str:
    """The catalog key of a parameter's words: an embedding table says who else reads it, the target
    (shared_embeddings) and the output layer (tied_output), so an edit's reach is told where it is made."""
    key = f"param.{param_key(name)}"
    if name.startswith("embed.") and one_embedding_table(config):
        key = "param.embed.src.shared"
    if config.tied_output and name == ("embed.src" if config.shared_embeddings else "embed.tgt"):
        key += ".tied"
    return key


def param_tex(name: str, head: int | None = None) -> str:
    """A parameter's symbol, with its head's number from 1 (W^Q_{1}, the paper's W_1^Q)."""
    return PARAM_TEX[param_key(name)] + (f"_{{{head + 1}}}" if head is not None else "")


def indices(n) -> list[str]:
    """["1", "2", ..., str(n)]: positions as a person reads them (FIRST); the same strings on every call, so comparing
    two such lists is quick."""
    return list(_index_strings(n))


@lru_cache(maxsize=64)  # widths of the models in use
def _index_strings(n):
    return tuple(str(i + FIRST) for i in range(n))


TOP_K = 10  # a bar chart of next-token probabilities shows this many, the most likely


def top_heading(t, key: str, n: int) -> str:
    """A bar chart's heading, `key` of the catalog, saying it shows the TOP_K most likely of n tokens."""
    return t(key, k=min(TOP_K, n), n=n)


def top_tokens(row, tokens, k=TOP_K):
    """The k most probable (token, probability) pairs of a row, most probable first (a tie in the vocabulary's order,
    NaN, where the naive softmax overflowed, last). NumPy's sort: Python's took 0.27 s a row of 65,001 tokens, on
    every rerun of the output and generation pages and six times in the animation's frames."""
    row = np.asarray(row, dtype=float)
    order = np.argsort(-row, kind="stable")[:k]  # (k,)
    return [(tokens[i], float(row[i])) for i in order]


def loss_rows(result, tokens, digits):
    """Per decoder position: (i from 1, input token, target token, P(target), loss) of a teacher-forced pair, the
    numbers printed to `digits` significant digits."""
    probs = result.trace["probs"]
    return [(i + FIRST, tokens[x], tokens[y], fmt(probs[i, y], digits), fmt(result.token_losses[i], digits))
            for i, (x, y) in enumerate(zip(result.dec_input_ids, result.target_ids))]
