"""A Marian checkpoint in the Hugging Face layout, read from a folder into an engine Model (float64).

The folder holds config.json (MarianConfig), generation_config.json, model.safetensors, vocab.json, source.spm and
target.spm, as Helsinki-NLP's opus-mt repositories do. Weights are read from safetensors only: a pickle
(pytorch_model.bin) can run code when it is loaded, so a folder with only that is refused, saying how to get
safetensors. Every check runs before the model is made, so a refused folder leaves nothing half loaded; a refusal is
a ConfigError whose code starts "marian_" and whose values name the file and what was wrong.

The settings follow transformers' modeling_marian.py (5.24): post-norm layers with nn.LayerNorm's eps 1e-5 and no
LayerNorm after either stack, biases in every projection, Marian's sinusoid (sines, then cosines), one embedding table
for both sides tied to the output layer, the output bias final_logits_bias, and √d_model scaling when scale_embedding
is set; the decoder starts from <pad> (decoder_start_token_id) and generation never writes <pad> (bad_words_ids)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import sentencepiece
from safetensors import SafetensorError
from safetensors.numpy import load_file

from engine.config import Config, ConfigError
from engine.model import Model
from engine.params import param_shapes
from engine.positional import positional_encoding

from . import weights
from .tokenizer import EOS, MarianVocabulary

# What every opus-mt model is, written out rather than left to Config's defaults (which are the paper's, and may
# move: the paper preset dropped PyTorch's attention biases): modeling_marian.py's attention projections have
# biases (bias=True), its LayerNorms are nn.LayerNorm's (eps 1e-5) after each residual add (post-norm), and its one
# embedding table is shared by both sides and tied to the output.
MARIAN_FIXED = dict(attn_bias=True, ffn_bias=True, layer_norm="paper", eps=1e-5, norm_placement="post",
                    shared_embeddings=True, tied_output=True, attn_divisor="sqrt_dk", softmax="stable", residual=True,
                    decoder_only=False)

FILES = ("config.json", "generation_config.json", "model.safetensors", "vocab.json", "source.spm", "target.spm")
POSITION_TOLERANCE = 1e-3  # float16's rounding of numbers up to 1
GENERATION = "generation_config.json"  # optional: older repositories keep num_beams and bad_words_ids in config.json
PICKLE = "pytorch_model.bin"
ACTIVATIONS = {"swish": "swish", "silu": "swish", "relu": "relu", "gelu": "gelu"}  # transformers' ACT2FN names
NAME = "marian"  # the engine model's name
GET_SAFETENSORS = ("Get model.safetensors: on the Hub, a repository without one often has it on the branch of its "
                   "safetensors conversion (a pull request by the SFconvertbot: load it with revision='refs/pr/N'); "
                   "or convert the file where PyTorch is installed: weights = torch.load(path, weights_only=True), "
                   "then safetensors.torch.save_file(weights, 'model.safetensors').")


def load_folder(folder) -> tuple[Model, dict]:
    """(the model, its generation settings: num_beams, length_penalty, max_length, force_end) of the checkpoint in
    `folder`: generation_config.json's, else config.json's (older checkpoints), else transformers' defaults."""
    folder = Path(folder)
    _check_files(folder)
    hf = _read_json(folder / "config.json")
    config = engine_config(hf)
    vocab = _vocabulary(folder, hf)
    params = _parameters(folder / "model.safetensors", config, len(vocab))
    generation = _generation(_read_json(folder / GENERATION) if (folder / GENERATION).is_file() else {}, hf)
    return Model(NAME, config, vocab, params), generation


def _check_files(folder: Path):
    if not folder.is_dir():
        raise ConfigError(f"there is no folder {str(folder)!r}", "marian_no_folder", folder=str(folder))
    missing = [name for name in FILES if name != GENERATION and not (folder / name).is_file()]
    if "model.safetensors" in missing and (folder / PICKLE).is_file():
        raise ConfigError(f"{folder} has its weights as {PICKLE} only, a pickle, which is never loaded here (it can "
                          f"run code). {GET_SAFETENSORS}", "marian_pickle_only", folder=str(folder))
    if missing:
        needed = ", ".join(name for name in FILES if name != GENERATION)
        raise ConfigError(f"{folder} lacks {', '.join(missing)}; a Marian checkpoint needs {needed}",
                          "marian_missing_files", folder=str(folder), files=", ".join(missing))


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ConfigError(f"{path.name} is not valid JSON ({error})", "marian_json", file=path.name) from None


def engine_config(hf: dict) -> Config:
    """The engine's Config of a MarianConfig (config.json); refuses one the engine does not compute as transformers
    does."""
    if not isinstance(hf, dict) or hf.get("model_type") != "marian":
        hf = hf if isinstance(hf, dict) else {}
        raise ConfigError(f"config.json describes a {hf.get('model_type')!r} model, not a Marian one (model_type "
                          "'marian')", "marian_architecture", model_type=str(hf.get("model_type")))
    _same(hf, "encoder_attention_heads", "decoder_attention_heads")
    _same(hf, "encoder_ffn_dim", "decoder_ffn_dim")
    for flag in ("share_encoder_decoder_embeddings", "tie_word_embeddings"):
        if not hf.get(flag, True):
            raise ConfigError(f"{flag} is false: this loader reads Marian models with one embedding table, shared by "
                              "both sides and the output layer", "marian_unshared", setting=flag)
    activation = ACTIVATIONS.get(hf.get("activation_function"))
    if activation is None:
        raise ConfigError(f"activation_function {hf.get('activation_function')!r} is not one of "
                          f"{', '.join(ACTIVATIONS)}", "marian_activation", value=str(hf.get("activation_function")))
    try:
        heads, d_model = hf["encoder_attention_heads"], hf["d_model"]
        if d_model % heads:
            raise ValueError(f"d_model {d_model} is not divisible by the {heads} heads")
        return Config(d_model=d_model, n_heads=heads, d_k=d_model // heads, d_v=d_model // heads,
                      d_ff=hf["encoder_ffn_dim"], n_layers=hf["encoder_layers"], n_enc_layers=hf["encoder_layers"],
                      n_dec_layers=hf["decoder_layers"], max_len=hf["max_position_embeddings"],
                      pos_encoding="sinusoidal_halves", activation=activation,
                      embed_scale=bool(hf.get("scale_embedding", False)), decoder_start="pad", never_next="pad",
                      **MARIAN_FIXED)
    except (KeyError, ValueError, TypeError, ZeroDivisionError) as error:
        raise ConfigError(f"config.json cannot be read as a Marian model's settings: {error}",
                          "marian_config", detail=str(error)) from None


def _same(hf, encoder, decoder):
    if hf.get(encoder) != hf.get(decoder):
        raise ConfigError(f"{encoder} ({hf.get(encoder)}) differs from {decoder} ({hf.get(decoder)}); the engine's "
                          "two stacks have the same widths", "marian_stacks_differ", setting=encoder)


def _vocabulary(folder: Path, hf: dict) -> MarianVocabulary:
    """vocab.json as a vocabulary, checked against config.json: ids 0 ... V - 1, V = vocab_size, <pad> at
    pad_token_id = decoder_start_token_id, </s> at eos_token_id."""
    ids = _read_json(folder / "vocab.json")
    if not isinstance(ids, dict) or sorted(ids.values()) != list(range(len(ids))):
        raise ConfigError("vocab.json must map each token to its id, the ids 0, 1, 2, ... each once",
                          "marian_vocab_ids")
    size = hf.get("vocab_size")
    if len(ids) != size or hf.get("decoder_vocab_size", size) != size:
        raise ConfigError(f"vocab.json has {len(ids)} tokens but config.json's vocab_size is {size}",
                          "marian_vocab_size", tokens=len(ids), size=str(size))
    tokens = sorted(ids, key=ids.get)
    expected = {"pad_token_id": "<pad>", "decoder_start_token_id": "<pad>", "eos_token_id": EOS}
    for setting, token in expected.items():
        at = hf.get(setting)
        if not isinstance(at, int) or not 0 <= at < size or tokens[at] != token:
            raise ConfigError(f"config.json's {setting} ({at}) is not the id of {token} in vocab.json",
                              "marian_special", setting=setting, token=token)
    spm = {}
    for side, name in (("src", "source.spm"), ("tgt", "target.spm")):
        try:
            spm[side] = sentencepiece.SentencePieceProcessor(model_file=str(folder / name))
        except (OSError, RuntimeError):
            raise ConfigError(f"{name} is not a SentencePiece model", "marian_spm", file=name) from None
    try:
        return MarianVocabulary(tokens, spm["src"], spm["tgt"])
    except ValueError as error:
        raise ConfigError(f"vocab.json cannot be used: {error}", "marian_vocab", detail=str(error)) from None


def _parameters(path: Path, config: Config, vocab_size: int) -> dict:
    """The engine's parameters from model.safetensors, float64, each checked for its shape."""
    arrays = _read_safetensors(path)
    names = weights.theirs(config)
    table = _embedding(arrays)
    unknown = sorted(set(arrays) - set(names) - {weights.EMBEDDING, *weights.TIED_COPIES, *weights.POSITIONS})
    missing = sorted(set(names) - set(arrays))
    if unknown or missing:
        raise ConfigError(f"model.safetensors does not hold this config's weights: missing {missing[:5]}, "
                          f"unexpected {unknown[:5]}", "marian_weights_names", n=len(missing) + len(unknown),
                          name=(missing + unknown)[0])
    _check_positions(arrays, config)
    params = {"embed.src": table}
    params |= {ours: weights.to_engine(ours, arrays[hf], config.n_heads) for hf, ours in names.items()}
    for name, shape in param_shapes(config, vocab_size).items():
        if params[name].shape != shape:
            raise ConfigError(f"{name} has shape {params[name].shape} in model.safetensors; config.json and "
                              f"vocab.json give {shape}", "marian_shape", param=name, shape=str(shape),
                              got=str(params[name].shape))
    return params


def _check_positions(arrays, config):
    """Positions an older checkpoint saved: they must be Marian's sinusoid, which the engine computes (in float64;
    the file's are rounded to float32 or float16, hence the tolerance)."""
    for name in weights.POSITIONS:
        if name in arrays:
            saved = arrays[name]
            table = positional_encoding(config.pos_encoding, len(saved), config.d_model)
            if saved.shape != table.shape or np.abs(saved - table).max() > POSITION_TOLERANCE:
                raise ConfigError(f"{name} is not Marian's sinusoid (sines, then cosines), which this loader computes",
                                  "marian_positions", param=name)


def _embedding(arrays) -> np.ndarray:
    """The one embedding table, under whichever of its names the file holds; every copy must be the same."""
    copies = [arrays[name] for name in (weights.EMBEDDING, *weights.TIED_COPIES) if name in arrays]
    if not copies:
        raise ConfigError(f"model.safetensors has no embedding table ({weights.EMBEDDING})", "marian_no_embedding")
    if any(c.shape != copies[0].shape or not np.array_equal(c, copies[0]) for c in copies[1:]):
        raise ConfigError("model.safetensors holds embedding tables that differ; Marian ties them to one",
                          "marian_untied")
    return copies[0]


def _read_safetensors(path: Path) -> dict:
    """Every tensor of the file as float64; refuses a file that is cut short or damaged, or holds no floats."""
    try:
        arrays = load_file(str(path))
    except (SafetensorError, OSError, ValueError, TypeError) as error:
        raise ConfigError(f"model.safetensors cannot be read ({error}); it may be cut short (fetch it again) or hold "
                          "numbers NumPy does not have (bfloat16)", "marian_safetensors", detail=str(error)) from None
    for name, value in arrays.items():
        if value.dtype.kind != "f":
            raise ConfigError(f"{name} holds {value.dtype}, not floating-point numbers", "marian_dtype", param=name)
        if not np.all(np.isfinite(value)):
            raise ConfigError(f"{name} holds inf or NaN", "marian_nonfinite", param=name)
    return {name: value.astype(np.float64) for name, value in arrays.items()}


def _generation(gen: dict, hf: dict) -> dict:
    """The checkpoint's generation settings; refuses a bad_words_ids other than [[<pad>]], which the engine's output
    mask could not follow, and a forced_eos_token_id other than </s>'s (force_end: the last token max_length allows
    is </s>, as transformers' ForcedEOSTokenLogitsProcessor makes it)."""
    pad, eos = hf["pad_token_id"], hf["eos_token_id"]
    bad = gen.get("bad_words_ids", hf.get("bad_words_ids"))
    if bad not in (None, [[pad]]):
        raise ConfigError(f"generation_config.json's bad_words_ids is {bad}; the engine masks <pad> ([[{pad}]]) alone",
                          "marian_bad_words", value=str(bad))
    forced = gen.get("forced_eos_token_id", hf.get("forced_eos_token_id"))
    if forced not in (None, eos):
        raise ConfigError(f"generation_config.json's forced_eos_token_id is {forced}; the engine can force </s> "
                          f"({eos}) alone", "marian_forced_eos", value=str(forced))
    return {"num_beams": gen.get("num_beams", hf.get("num_beams", 1)),
            "length_penalty": gen.get("length_penalty", hf.get("length_penalty", 1.0)),
            "max_length": gen.get("max_length", hf.get("max_length", 20)), "force_end": forced == eos}
