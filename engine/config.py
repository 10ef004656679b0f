"""The model's hyper-parameters and conventions, with the paper's names, validated on creation."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

CHOICES = {
    "layer_norm": ("paper", "blog"),
    "norm_placement": ("post", "pre"),
    "pos_encoding": ("sinusoidal", "sinusoidal_halves", "blog", "blog_table", "learned", "none"),
    "activation": ("relu", "gelu", "swish"),
    "softmax": ("stable", "naive"),
    "decoder_start": ("sos", "pad"),
    "never_next": ("unk", "pad"),
}
LIMITS = {  # inclusive bounds for the integer sizes
    "d_model": (1, 4096),
    "n_heads": (1, 64),
    "d_k": (1, 4096),
    "d_v": (1, 4096),
    "d_ff": (1, 16384),
    "n_layers": (1, 64),
    "max_len": (1, 4096),
}
DEPTHS = {"enc": "n_enc_layers", "dec": "n_dec_layers"}  # each stack's own depth, None: n_layers
# fields older files lack; their defaults keep those files' model
NEWER_FIELDS = (*DEPTHS.values(), "decoder_only", "residual", "decoder_start", "never_next")


class ConfigError(ValueError):
    """A setting that cannot work; `code` and `values` let an app word the message in its own language."""

    def __init__(self, message: str, code: str | None = None, **values):
        super().__init__(message)
        self.code, self.values = code, values


@dataclass(frozen=True)
class Config:
    d_model: int = 512  # width of every token vector between sub-layers
    n_heads: int = 8  # h: attention heads per attention block
    d_k: int = 64  # width of each head's queries and keys
    d_v: int = 64  # width of each head's values
    d_ff: int = 2048  # hidden width of the position-wise feed-forward network
    n_layers: int = 6  # N: encoder layers, and as many decoder layers, unless one stack has its own depth below
    n_enc_layers: int | None = None  # encoder layers; None: n_layers
    n_dec_layers: int | None = None  # decoder layers; None: n_layers
    attn_divisor: float | str = "sqrt_dk"  # scores are divided by sqrt(d_k), or by this number
    layer_norm: str = "paper"  # "paper": (x-mu)/sqrt(var+eps), PyTorch's; Ba et al.'s (x-mu)/std has no eps;
    # "blog": (x-mu)/(std+eps); both then *gamma+beta
    eps: float = 1e-5  # the small number that keeps LayerNorm from dividing by zero
    norm_placement: str = "post"  # "post": LayerNorm(x + Sublayer(x)) (paper); "pre": x + Sublayer(LayerNorm(x))
    pos_encoding: str = "sinusoidal"  # paper sinusoid (sin, cos interleaved), Marian's (sines in the first half of the
    # columns, cosines in the second), the blog's formula or printed table, learned, none
    max_len: int = 128  # the longest sentence, in tokens, the model accepts
    embed_scale: bool = True  # multiply embeddings by sqrt(d_model) (paper section 3.4)
    attn_bias: bool = False  # biases b_Q, b_K, b_V, b_O in every attention block: the paper's formulas have none;
    # PyTorch's nn.MultiheadAttention adds them
    ffn_bias: bool = True  # biases b_1, b_2 in the feed-forward network
    activation: str = "relu"  # the feed-forward non-linearity: "relu" (paper), "gelu" or "swish" (x sigmoid(x), Marian)
    shared_embeddings: bool = True  # one embedding table for source and target (paper section 3.4)
    tied_output: bool = True  # the output layer reuses the target embedding, transposed (paper section 3.4)
    softmax: str = "stable"  # "stable" subtracts the row max first; "naive" is the blog's exp(x)/sum(exp(x))
    decoder_only: bool = False  # GPT-style: no encoder, no cross-attention; the decoder reads source, SOS, target
    residual: bool = True  # X + Sublayer(X) around every sub-layer (paper 3.1); False: Sublayer(X) alone, an experiment
    decoder_start: str = "sos"  # the token the decoder reads first: SOS, or <pad> as Marian (its vocabulary has no SOS)
    never_next: str = "unk"  # the token the output mask makes -inf: <unk>, or <pad> as Marian's bad_words_ids

    def __post_init__(self):
        for name, (low, high) in {**LIMITS, **dict.fromkeys(DEPTHS.values(), LIMITS["n_layers"])}.items():
            value = getattr(self, name)
            if value is None and name in DEPTHS.values():
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} must be a whole number, got {value!r}")
            if not low <= value <= high:
                raise ValueError(f"{name} must be between {low} and {high}, got {value}")
        for name, allowed in CHOICES.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {getattr(self, name)!r}")
        for field in dataclasses.fields(self):
            if field.type == "bool" and not isinstance(getattr(self, field.name), bool):
                raise ValueError(f"{field.name} must be true or false, got {getattr(self, field.name)!r}")
        if not _positive_finite(self.eps, allow_zero=True):
            raise ValueError(f"eps must be a finite number >= 0, got {self.eps!r}")
        if self.attn_divisor != "sqrt_dk" and not _positive_finite(self.attn_divisor):
            raise ValueError(f"attn_divisor must be 'sqrt_dk' or a finite number > 0, got {self.attn_divisor!r}")

    @property
    def divisor(self) -> float:
        """The number the attention scores are divided by."""
        return math.sqrt(self.d_k) if self.attn_divisor == "sqrt_dk" else float(self.attn_divisor)

    def depth(self, stack: str) -> int:
        """The number of layers of the stack "enc" or "dec" (a decoder-only model's encoder has none)."""
        if stack == "enc" and self.decoder_only:
            return 0
        own = getattr(self, DEPTHS[stack])
        return self.n_layers if own is None else own

    @property
    def sublayers(self) -> dict[str, dict[int, str]]:
        """Each stack's sub-layers by number (from 1): a decoder-only layer has no cross-attention, sub-layer 2."""
        dec = {1: "self_attn", 3: "ffn"} if self.decoder_only else {1: "self_attn", 2: "cross_attn", 3: "ffn"}
        return {"enc": {1: "attn", 2: "ffn"}, "dec": dec}

    def replace(self, **changes) -> "Config":
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def _positive_finite(value, allow_zero=False) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return math.isfinite(value) and (value >= 0 if allow_zero else value > 0)


def parse_field(name: str, text: str):
    """Turn the text of one `FIELD=VALUE` setting into the field's type (never evaluates the text)."""
    fields = {f.name: f for f in dataclasses.fields(Config)}
    if name not in fields:
        raise ValueError(f"unknown setting {name!r}; known: {', '.join(fields)}")
    kind = fields[name].type
    text = text.strip()
    if kind == "bool":
        lowered = text.lower()
        if lowered in ("true", "1", "yes", "on"):
            return True
        if lowered in ("false", "0", "no", "off"):
            return False
        raise ValueError(f"{name} must be true or false, got {text!r}")
    if kind in ("int", "int | None"):
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"{name} must be a whole number, got {text!r}") from None
    if kind == "float":
        return _parse_float(name, text)
    if name == "attn_divisor" and text != "sqrt_dk":
        return _parse_float(name, text)
    return text


def _parse_float(name: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {text!r}") from None
