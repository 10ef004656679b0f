"""Ready-made models: the blog's 4-dimensional "Hello World" and the paper's base model."""
from __future__ import annotations

import dataclasses
import zlib

import numpy as np

from . import blog
from .config import Config, ConfigError
from .model import Model
from .params import param_shapes
from .tokens import EOS, SOS, UNK, Vocabulary
from .values import check_seed

PAPER_VOCABULARY = (
    UNK, SOS, EOS, ".", ",", "?", "!",
    "hello", "world", "how", "are", "you", "i", "am", "a", "the", "cat", "dog", "sat", "on", "mat", "is",
    "good", "morning", "thank", "thanks", "yes", "no", "we", "love", "learning", "attention", "all", "need",
    "hola", "mundo", "cómo", "estás", "yo", "soy", "un", "una", "el", "gato", "perro", "se", "sentó", "en",
    "la", "alfombra", "es", "bueno", "buenos", "días", "gracias", "sí", "nosotros", "amamos", "aprender",
    "你", "好", "世", "界", "我", "是", "猫", "狗", "谢", "早", "上", "注", "意", "力",
    # appended for the training corpora (engine.corpus); ids above stay as they were
    "afternoon", "night", "goodbye", "see", "tomorrow", "very", "much", "my", "friend", "small", "big", "sleeps",
    "runs", "where", "and", "friends", "student", "students", "like", "important",
    "buenas", "tardes", "noches", "adiós", "hasta", "mañana", "muchas", "¿", "mi", "amigo", "pequeño", "grande",
    "duerme", "corre", "dónde", "está", "y", "son", "amigos", "estudiante", "somos", "estudiantes", "te", "quiero",
    "me", "encanta", "gusta", "atención", "todo", "lo", "que", "necesitas", "importante", "necesito",
    "下", "午", "晚", "安", "再", "见", "明", "天", "非", "常", "感", "吗", "？", "的", "不", "朋",
    "友", "坐", "在", "垫", "子", "很", "小", "大", "睡", "觉", "跑", "哪", "里", "和", "一", "只",
    "学", "生", "们", "爱", "习", "喜", "欢", "需", "要", "重",
)

PRESETS = {
    "hello-world": Config(d_model=4, n_heads=2, d_k=3, d_v=3, d_ff=8, n_layers=1, attn_divisor=30.0,
                          layer_norm="blog", eps=1e-6, pos_encoding="blog_table", embed_scale=False,
                          attn_bias=False, tied_output=False),
    "paper": Config(),
}
DESCRIPTIONS = {
    "hello-world": "The 4-dimensional worked example of 'The Random Transformer' (seed 002), as its code computes it.",
    "paper": "'Attention is all you need' base model: d_model 512, 8 heads, 6 layers, random weights.",
}
SIZE_FIELDS = ("d_model", "n_heads")


def preset(name: str, seed: int = 0, **overrides) -> Model:
    """A model of the named preset with seeded random weights; overrides replace Config fields."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    check_seed(seed)
    config = configure(name, **overrides)
    vocab = Vocabulary(blog.VOCABULARY if name == "hello-world" else PAPER_VOCABULARY)
    if name == "hello-world":
        params = _blog_params(config, vocab, seed)
    else:
        params = _paper_params(config, vocab, seed)
    return Model(name, config, vocab, params, seed)


def with_words(model: Model, *texts: str) -> Model:
    """The model with every word of the texts that its vocabulary lacks added to it, rather than read as <unk>: each
    new word gets an embedding row and an output column (and bias) of its own, drawn from the model's seed and the
    word alone as the preset draws its weights, so the same word always gets the same numbers, whatever the
    sentence. The model itself, if no word is new."""
    words = model.vocab.new_words(*texts)
    if not words:
        return model
    vocab = model.vocab.with_tokens(words)
    tables = {}
    for name, value in model.params.items():
        axis = _vocabulary_axis(name)
        if axis is not None:
            rows = [_new_word_weights(model, name, word, value) for word in words]
            tables[name] = np.concatenate([value, np.stack(rows, axis=axis)], axis=axis)
    return model.with_vocabulary(vocab, tables)


def _vocabulary_axis(name: str):
    """The axis of a parameter that runs over the vocabulary, or None."""
    if name.startswith("embed."):
        return 0  # (V, d_model)
    return {"unembed.W": 1, "unembed.b": 0}.get(name)  # (d_model, V), (V,)


def _new_word_weights(model: Model, name: str, word: str, table) -> np.ndarray:
    """A new word's slice of a vocabulary-sized parameter: a normal draw like the post's randn (hello-world), or the
    paper preset's initialisation (see _paper_params) for every other model, trained ones included."""
    rng = np.random.default_rng([model.seed, zlib.crc32(name.encode()), zlib.crc32(word.encode())])
    d_model = model.config.d_model
    if model.name == "hello-world":
        return rng.standard_normal(() if name == "unembed.b" else (d_model,))
    if name == "unembed.b":
        return np.zeros(())
    if name == "unembed.W":
        limit = np.sqrt(6.0 / sum(table.shape))
        return rng.uniform(-limit, limit, d_model)
    return rng.normal(0.0, d_model ** -0.5, d_model)


def configure(name: str, **overrides) -> Config:
    """The preset's Config with overrides; d_k = d_v = d_model / n_heads follow the sizes unless given."""
    base = PRESETS[name]
    known = {f.name for f in dataclasses.fields(Config)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise ValueError(f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    if any(k in overrides for k in SIZE_FIELDS):
        d_model = overrides.get("d_model", base.d_model)
        n_heads = overrides.get("n_heads", base.n_heads)
        needs_split = [k for k in ("d_k", "d_v") if k not in overrides]
        if needs_split and isinstance(d_model, int) and isinstance(n_heads, int) and n_heads > 0:
            if d_model % n_heads:
                raise ConfigError(f"d_model ({d_model}) is not divisible by n_heads ({n_heads}): "
                                  "choose sizes that divide, or set d_k and d_v yourself", "not_divisible",
                                  d_model=d_model, n_heads=n_heads)
            overrides = {**{k: d_model // n_heads for k in needs_split}, **overrides}
    return base.replace(**overrides)


def _rng(seed: int, name: str) -> np.random.Generator:
    """One generator per parameter, so changing one size does not redraw unrelated weights."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def _blog_params(config: Config, vocab: Vocabulary, seed: int) -> dict:
    """The post's explicit numbers where their shapes fit, standard normal draws (like its randn) elsewhere."""
    params = {}
    for name, shape in param_shapes(config, len(vocab)).items():
        norm = _identity_norm(name, shape)
        params[name] = norm if norm is not None else _rng(seed, name).standard_normal(shape)
    for word, row in blog.EMBEDDINGS.items():
        for table in ("embed.src", "embed.tgt"):
            if table in params and params[table].shape[1] == len(row):
                params[table][vocab.id(word)] = row
    for key, value in blog.ENCODER_ATTENTION.items():
        name = f"enc.0.attn.{key}"
        if name in params and params[name].shape == value.shape:  # a decoder-only model has no encoder
            params[name] = value.copy()
    return params


def _paper_params(config: Config, vocab: Vocabulary, seed: int) -> dict:
    """Xavier-uniform matrices (as PyTorch's nn.Transformer), N(0, d_model^-1/2) embeddings, zero biases."""
    params = {}
    for name, shape in param_shapes(config, len(vocab)).items():
        if name.startswith(("embed.", "pos.")):
            params[name] = _rng(seed, name).normal(0.0, config.d_model ** -0.5, shape)
        else:
            params[name] = initial_weight(name, shape, seed)
    return params


def initial_weight(name: str, shape: tuple, seed: int) -> np.ndarray:
    """A weight as nn.Transformer starts it: LayerNorm the identity, zero biases, Xavier-uniform matrices."""
    norm = _identity_norm(name, shape)
    if norm is not None:
        return norm
    if len(shape) == 1 or name.split(".")[-1].startswith("b_"):
        return np.zeros(shape)
    fan_in, fan_out = shape[-2], shape[-1]
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return _rng(seed, name).uniform(-limit, limit, shape)


def _identity_norm(name: str, shape: tuple):
    """LayerNorm starts as the identity affine map: gamma = 1, beta = 0."""
    if name.endswith(".gamma"):
        return np.ones(shape)
    if name.endswith(".beta"):
        return np.zeros(shape)
    return None
