"""A Marian checkpoint made here, in the Hugging Face layout, for the tests and for trying the app without a network.

SentencePiece models trained on a small English and Chinese corpus stand in for source.spm and target.spm; transformers
builds a MarianMTModel from a MarianConfig with opus-mt's settings (swish, scale_embedding, static positions, one
tied table, decoder start = pad, bad_words_ids = [[pad]]) and random weights (every bias and LayerNorm drawn too),
and save_pretrained writes it in float32, as opus-mt's files are.

    python tests/marian_checkpoint.py FOLDER [--full] [--vocab 65001]

--full gives opus-mt's sizes (d_model 512, 8 heads, d_ff 2048, 6 + 6 layers); --vocab fills the vocabulary up to a
real model's size with tokens no text is cut into (their rows and output columns are real, e.g. for the pages' top-k).
"""
from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

ENGLISH = ["Hello world.", "The cat sat on the mat.", "How are you today?", "I love learning about attention!",
           "Good morning, my friend.", "Where is the library?", "We need more data, not less.",
           "Attention is all you need.", "The students read a book in the morning."]
CHINESE = ["你好，世界。", "猫坐在垫子上。", "你今天好吗？", "我喜欢学习注意力！", "早上好，我的朋友。",
           "图书馆在哪里？",
           "我们需要更多的数据。", "注意力就是你所需要的一切。", "学生们早上读书。"]
LANGUAGES = (">>cmn_Hans<<", ">>yue_Hant<<")
SMALL = dict(d_model=16, heads=4, ffn=24, enc=3, dec=2, positions=64)
FULL = dict(d_model=512, heads=8, ffn=2048, enc=6, dec=6, positions=512)  # opus-mt's sizes
EOS_BIAS = 3.7  # added to </s>'s output bias: some random greedy sentences then end, others run to max_len


def train_sentencepiece(lines, path, size):
    import sentencepiece

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=model, vocab_size=size, character_coverage=1.0, bos_id=-1,
        eos_id=0, unk_id=1, pad_id=-1, hard_vocab_limit=False, minloglevel=2, num_threads=1)
    path.write_bytes(model.getvalue())


def write_tokenizer(folder: Path, size: int | None = None) -> dict:
    """source.spm, target.spm and vocab.json as opus-mt's: </s> 0, <unk> 1, both sides' pieces (then filler tokens up
    to `size`), the language tokens, <pad> last. Returns the vocabulary."""
    import sentencepiece

    train_sentencepiece(ENGLISH * 3, folder / "source.spm", 60)
    train_sentencepiece(CHINESE * 3, folder / "target.spm", 60)
    tokens = ["</s>", "<unk>"]
    for name in ("source.spm", "target.spm"):
        spm = sentencepiece.SentencePieceProcessor(model_file=str(folder / name))
        tokens += [p for p in map(spm.id_to_piece, range(spm.get_piece_size())) if p not in tokens]
    tokens += [f"▁filler{i}" for i in range(max(0, (size or 0) - len(tokens) - len(LANGUAGES) - 1))]
    vocab = {token: i for i, token in enumerate(tokens + [*LANGUAGES, "<pad>"])}
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    return vocab


def marian_config(vocab_size, d_model, heads, ffn, enc, dec, positions) -> dict:
    """config.json of an opus-mt model of these sizes (its other settings as Helsinki-NLP's)."""
    pad = vocab_size - 1
    return {"model_type": "marian", "architectures": ["MarianMTModel"], "vocab_size": vocab_size,
            "decoder_vocab_size": vocab_size, "d_model": d_model, "encoder_attention_heads": heads,
            "decoder_attention_heads": heads, "encoder_ffn_dim": ffn, "decoder_ffn_dim": ffn, "encoder_layers": enc,
            "decoder_layers": dec, "max_position_embeddings": positions, "activation_function": "swish",
            "scale_embedding": True, "static_position_embeddings": True, "share_encoder_decoder_embeddings": True,
            "tie_word_embeddings": True, "pad_token_id": pad, "decoder_start_token_id": pad, "eos_token_id": 0,
            "forced_eos_token_id": 0, "bad_words_ids": [[pad]], "num_beams": 4, "max_length": positions}


def generation_config(hf: dict) -> dict:
    pad = hf["pad_token_id"]
    return {"bad_words_ids": [[pad]], "decoder_start_token_id": pad, "eos_token_id": 0, "forced_eos_token_id": 0,
            "max_length": hf["max_position_embeddings"], "num_beams": 4, "pad_token_id": pad, "length_penalty": 1.0}


def write_checkpoint(folder: Path, sizes: dict, vocab_size: int | None = None, seed: int = 0):
    """Every file of a random opus-mt-like checkpoint in `folder`; returns transformers' MarianTokenizer of it."""
    import torch
    from transformers import GenerationConfig, MarianConfig, MarianMTModel, MarianTokenizer

    vocab = write_tokenizer(folder, vocab_size)
    torch.manual_seed(seed)
    settings = marian_config(len(vocab), **sizes)
    model = MarianMTModel(MarianConfig(**settings))
    with torch.no_grad():  # every weight drawn: init_std 0.02 leaves the source little say, LayerNorm's 1 and 0
        for name, value in model.named_parameters():  # and zero biases would hide a mix-up
            value.normal_(1.0 if name.endswith("layer_norm.weight") else 0.0, 0.3)
        model.final_logits_bias.normal_(0, 0.5)
        model.final_logits_bias[0, 0] += EOS_BIAS
    model.generation_config = GenerationConfig(**generation_config(settings))
    model.save_pretrained(folder)
    tokenizer = MarianTokenizer(str(folder / "source.spm"), str(folder / "target.spm"), str(folder / "vocab.json"))
    tokenizer.save_pretrained(folder)
    return tokenizer


def write_numpy_checkpoint(folder: Path, seed: int = 0, vocab_size: int | None = None) -> None:
    """A small checkpoint written with NumPy and safetensors alone (no PyTorch: the fast tier's), random weights under
    the loader's names and transformers' layouts (tests/test_marian.py holds those names to save_pretrained's); its
    vocabulary filled up to `vocab_size` as write_tokenizer does (a real translator's length at small sizes)."""
    import numpy as np
    from safetensors.numpy import save_file

    import marian

    vocab = write_tokenizer(folder, vocab_size)
    hf = marian_config(len(vocab), **SMALL)
    (folder / "config.json").write_text(json.dumps(hf))
    (folder / "generation_config.json").write_text(json.dumps(generation_config(hf)))
    config, rng = marian.folder.engine_config(hf), np.random.default_rng(seed)
    shapes = _their_shapes(config, len(vocab))
    save_file({name: rng.normal(0, 0.3, shape) for name, shape in shapes.items()}, str(folder / "model.safetensors"))


def _their_shapes(config, vocab_size) -> dict:
    """transformers' shape of each weight: nn.Linear's (out, in), biases flat, final_logits_bias (1, V)."""
    from engine.params import param_shapes
    from marian import weights

    ours = param_shapes(config, vocab_size)
    shapes = {weights.EMBEDDING: ours["embed.src"], "final_logits_bias": (1, vocab_size)}
    for hf, name in weights.theirs(config).items():
        shape = ours[name]
        if name.rsplit(".", 1)[1] in ("W_Q", "W_K", "W_V"):
            shape = (shape[0] * shape[2], shape[1])
        elif name.rsplit(".", 1)[1] in ("b_Q", "b_K", "b_V"):
            shape = (shape[0] * shape[1],)
        elif len(shape) == 2 and hf != "final_logits_bias":
            shape = shape[::-1]
        shapes.setdefault(hf, shape)
    return shapes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--full", action="store_true", help="opus-mt's sizes (512, 8 heads, 2048, 6 + 6 layers)")
    parser.add_argument("--vocab", type=int, default=None, help="fill the vocabulary up to this many tokens")
    args = parser.parse_args(argv)
    args.folder.mkdir(parents=True, exist_ok=True)
    write_checkpoint(args.folder, FULL if args.full else SMALL, args.vocab)
    print(f"wrote {', '.join(sorted(p.name for p in args.folder.iterdir()))} to {args.folder}")


if __name__ == "__main__":
    main()
