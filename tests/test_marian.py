"""A Marian checkpoint (marian/) run by the engine, exact against transformers' MarianMTModel and MarianTokenizer.

This machine cannot download a checkpoint, so the tests make them (tests/marian_checkpoint.py): SentencePiece models
trained on a small English and Chinese corpus stand in for source.spm and target.spm, and transformers builds a
MarianMTModel from a MarianConfig with opus-mt's settings (swish, scale_embedding, static positions, one tied table,
decoder start = pad, bad_words_ids = [[pad]]) with random weights, which save_pretrained writes as a Hugging Face
folder (float32, as opus-mt's), read back by transformers in float64 and by the engine. The tests that use that model
(the fixtures named "...reference") need PyTorch and transformers; the others, the refusals and the command line, read
a folder written here with NumPy under the loader's names (test_the_loader_reads_transformers_names holds those names
to save_pretrained's) and are in the fast tier (tests/conftest.py)."""
from __future__ import annotations

import json
import random
import shutil

import numpy as np
import pytest

import engine
import marian
from engine.config import ConfigError
from engine import transformers_beam
from engine.generate import beam_search, generate
from marian import weights
from marian.__main__ import main as cli
from marian_checkpoint import CHINESE, ENGLISH, FULL, LANGUAGES, SMALL, write_checkpoint, write_numpy_checkpoint
from test_incremental import assert_same_generation, assert_same_search, both_ways

WORDS = [w for line in ENGLISH + CHINESE for w in line.split()] + list("你好，。！？,.!?;:'\"-") + [
    "zebra", "quixotic", "Ωmega", "🙂", "</s>", "<unk>", "<pad>", ">>fr<<", "\t", "HELLO"]  # random texts' parts
SENTENCES = ["Hello world.", "How are you today?", "The cat sat on the mat, my friend!", "你好，世界。",
             ">>cmn_Hans<< Where is the library?", "zebra quixotic"]
TOLERANCE = 1e-9


# ---- the checkpoints ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def numpy_folder(tmp_path_factory):
    """A small checkpoint written with NumPy and safetensors alone, under the loader's names (no PyTorch)."""
    folder = tmp_path_factory.mktemp("numpy-marian")
    write_numpy_checkpoint(folder)
    return folder


def build_reference(folder, sizes, seed=0):
    """(transformers' MarianMTModel, MarianTokenizer) of a checkpoint written into `folder`
    (tests/marian_checkpoint.py): the model read back in float64, in eval mode, with eager attention (which returns
    the attention weights) and float64 positions."""
    import torch
    from transformers import MarianMTModel

    tokenizer = write_checkpoint(folder, sizes, seed=seed)
    reference = MarianMTModel.from_pretrained(folder, dtype=torch.float64, attn_implementation="eager").eval()
    with torch.no_grad():
        for side in (reference.model.encoder, reference.model.decoder):
            side.embed_positions.weight.copy_(torch.from_numpy(float64_positions(*side.embed_positions.weight.shape)))
    return reference, tokenizer


def float64_positions(n_pos, dim):
    """MarianSinusoidalPositionalEmbedding.create_weight's table without its torch.FloatTensor: it builds the table
    in float64 and rounds it to float32 even in a float64 model (~6e-8 off); the engine keeps float64."""
    position_enc = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(n_pos)])
    sentinel = dim // 2 if dim % 2 == 0 else (dim // 2) + 1
    out = np.empty((n_pos, dim))
    out[:, :sentinel], out[:, sentinel:] = np.sin(position_enc[:, 0::2]), np.cos(position_enc[:, 1::2])
    return out


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """(folder, transformers' model, tokenizer, the engine's model and generation settings from the folder)."""
    folder = tmp_path_factory.mktemp("marian")
    hf, tokenizer = build_reference(folder, SMALL)
    model, generation = marian.load(folder)
    return folder, hf, tokenizer, model, generation


# ---- against transformers ----------------------------------------------------------------------------------------

def run_both(hf, tokenizer, model, src, tgt):
    """transformers' outputs and the engine's trace on one pair, the decoder reading <pad> + tgt's pieces."""
    import torch

    trace = model.run(src, tgt)
    ids = tokenizer(src, return_tensors="pt")["input_ids"]
    assert ids[0].tolist() == list(trace.src_ids)
    with torch.no_grad():
        out = hf(input_ids=ids, decoder_input_ids=torch.tensor([trace.tgt_ids]), output_hidden_states=True,
                 output_attentions=True)
    return out, trace


def test_the_loader_reads_transformers_names(reference):
    from safetensors import safe_open

    folder, hf, _, model, _ = reference
    with safe_open(str(folder / "model.safetensors"), "np") as saved:
        names = set(saved.keys())
    assert names == set(weights.theirs(model.config)) | {weights.EMBEDDING}


TARGETS = ["你好", "", "猫坐在", "Hello", "图书馆", "x"]  # the decoder reads <pad> and these pieces


@pytest.mark.parametrize("src, tgt", list(zip(SENTENCES, TARGETS)))
def test_every_step_transformers_records_equals_the_engines(reference, src, tgt):
    """Every encoder and decoder layer's output, every attention's weights (self, causal, cross), the logits and
    the probabilities generation draws from (<pad> masked, as bad_words_ids does) within 1e-9."""
    import torch

    _, hf, tokenizer, model, _ = reference
    out, trace = run_both(hf, tokenizer, model, src, tgt)
    c = model.config
    ours = {"encoder_hidden_states": ["src.input"] + [f"enc.{l}.ln2" for l in range(c.depth("enc"))],
            "decoder_hidden_states": ["tgt.input"] + [f"dec.{l}.ln3" for l in range(c.depth("dec"))],
            "encoder_attentions": [f"enc.{l}.attn.weights" for l in range(c.depth("enc"))],
            "decoder_attentions": [f"dec.{l}.self_attn.weights" for l in range(c.depth("dec"))],
            "cross_attentions": [f"dec.{l}.cross_attn.weights" for l in range(c.depth("dec"))]}
    for field, names in ours.items():
        theirs = getattr(out, field)
        assert len(theirs) == len(names), field
        for value, name in zip(theirs, names):
            assert np.abs(value[0].numpy() - trace[name]).max() <= TOLERANCE, name
    logits = out.logits[0]
    assert np.abs(logits.numpy() - trace["logits"]).max() <= TOLERANCE
    logits[:, hf.config.pad_token_id] = -torch.inf  # generate's bad_words_ids
    assert np.abs(torch.softmax(logits, -1).numpy() - trace["probs"]).max() <= TOLERANCE


def test_a_padded_batch_equals_transformers_with_its_attention_mask(reference):
    """Model.run_batch pads with <pad> and masks it; transformers reads the tokenizer's padding and attention_mask.
    The decoder's own first token is <pad> too, which the engine's mask, made from lengths, keeps."""
    import torch

    _, hf, tokenizer, model, _ = reference
    pairs = [("Hello world.", "你好"), ("The cat sat on the mat, my friend!", "猫坐在垫子上"), ("你好", "")]
    trace = model.run_batch(pairs)
    src = tokenizer([s for s, _ in pairs], padding=True, return_tensors="pt")
    assert src["input_ids"].tolist() == [list(ids) for ids in trace.src_ids]
    with torch.no_grad():  # no decoder mask: the causal mask keeps a real row from the padding after it
        logits = hf(**src, decoder_input_ids=torch.tensor(trace.tgt_ids)).logits
    for b, (_, tgt) in enumerate(pairs):  # each sentence's own rows: its start token (<pad>) and its pieces
        n = 1 + len(model.vocab.encode(tgt, side="tgt")[0])
        assert np.abs(logits[b, :n].numpy() - trace["logits"][b, :n]).max() <= TOLERANCE


def test_marians_positions_are_the_papers_sines_then_cosines(reference):
    """The engine's table is transformers' formula in float64; transformers' own (float32) is within its rounding."""
    _, hf, _, model, _ = reference
    from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding

    n, d = 40, model.config.d_model
    ours = engine.positional.positional_encoding("sinusoidal_halves", n, d)
    assert np.abs(ours - float64_positions(n, d)).max() <= 1e-15
    float32 = MarianSinusoidalPositionalEmbedding(n, d).create_weight().numpy()
    assert 1e-9 < np.abs(ours - float32).max() <= 1e-7
    paper = engine.positional.positional_encoding("sinusoidal", n, d)
    assert np.array_equal(ours[:, : d // 2], paper[:, 0::2]) and np.array_equal(ours[:, d // 2:], paper[:, 1::2])


@pytest.mark.parametrize("force_end", [False, True])
def test_greedy_generation_writes_what_transformers_generate_writes(reference, force_end):
    """Token for token on 20 sentences, with generate(num_beams=1, do_sample=False) at max_length 13 (12 tokens after
    the start): with the checkpoint's forced_eos_token_id, which makes the 12th token </s>, and without it."""
    _, hf, tokenizer, model, generation = reference
    assert generation["force_end"]  # the checkpoint's own setting, which generate follows unless told otherwise
    lengths, rng = [], random.Random(1)
    for src in SENTENCES + [random_text(rng) or "Hello" for _ in range(14)]:
        ids = tokenizer(src, return_tensors="pt")["input_ids"]
        theirs = hf.generate(ids, num_beams=1, do_sample=False, max_length=13,
                             **({} if force_end else {"forced_eos_token_id": None}))
        ours = generate(model, src, max_len=12, force_end=force_end)
        assert list(ours.token_ids) == theirs[0, 1:].tolist(), src
        assert ours.steps[0].prefix_tokens == ("<pad>",)
        assert model.vocab.decode(ours.token_ids) == tokenizer.decode(theirs[0], skip_special_tokens=True)
        lengths.append(len(ours.token_ids) if ours.finished else None)
    ended_at_the_limit = 12 if force_end else None  # forced to </s>, or cut
    assert ended_at_the_limit in lengths and len(set(lengths)) > 1, lengths  # and sentences that end on their own


@pytest.mark.parametrize("force_end", [False, True])
def test_transformers_beam_search_writes_what_generate_writes(reference, force_end):
    """engine.transformers_beam against generate(num_beams=4) with the checkpoint's length penalty, on 20 sentences,
    with the checkpoint's forced_eos_token_id and without it: the same best sentence, and its score within float32's
    rounding (transformers scores in float32)."""
    _, hf, tokenizer, model, generation = reference
    rng, apps_own = random.Random(2), []
    for src in SENTENCES + [random_text(rng) or "Hello" for _ in range(14)]:
        ids = tokenizer(src, return_tensors="pt")["input_ids"]
        theirs = hf.generate(ids, num_beams=generation["num_beams"], length_penalty=generation["length_penalty"],
                             do_sample=False, max_length=9, output_scores=True, return_dict_in_generate=True,
                             **({} if force_end else {"forced_eos_token_id": None}))
        ours = transformers_beam.beam_search(model, src, width=generation["num_beams"], max_len=8,
                                             length_penalty=generation["length_penalty"], force_end=force_end)
        assert list(ours.best.token_ids) == theirs.sequences[0, 1:].tolist(), src
        assert ours.best.score == pytest.approx(float(theirs.sequences_scores[0]), rel=1e-6), src
        apps_own.append(beam_search(model, src, width=4, max_len=8, alpha=1.0).best.token_ids != ours.best.token_ids)
    assert any(apps_own)  # the app's own beam search (engine.generate) writes another sentence for some


def test_incremental_decoding_equals_the_full_recomputation_on_a_marian_model(reference):
    """Greedy, sampling and transformers' beam search, each token from one decoder row (engine/incremental.py), as
    if every step ran the whole forward pass: the same tokens, the probabilities within 1e-12."""
    _, _, _, model, generation = reference
    for src in SENTENCES[:3]:
        assert_same_generation(*both_ways(lambda: generate(model, src, max_len=10, force_end=True)))
        assert_same_generation(*both_ways(lambda: generate(model, src, "top_k", max_len=6, k=5, seed=3)))
        assert_same_search(*both_ways(lambda: transformers_beam.beam_search(
            model, src, width=generation["num_beams"], max_len=8, length_penalty=generation["length_penalty"],
            force_end=True)))


def test_the_parameter_count_and_transformers_differ_by_the_output_bias_and_positions(reference, full_size_reference):
    from marian.sizes import transformers_count

    for hf, model in ((reference[1], reference[3]), (full_size_reference[0], full_size_reference[2])):
        assert transformers_count(model.config, len(model.vocab)) == hf.num_parameters()


def test_the_trace_passes_the_pytorch_check(reference):
    """The exported check (scripts/check_in_pytorch.py) computes every step of a Marian trace again within 1e-9."""
    from engine.export import npz_arrays
    from test_torch_check import SCRIPT

    trace = reference[3].run("Hello world.", "你好")
    assert SCRIPT.check(npz_arrays(trace)) == 0


def random_text(rng) -> str:
    """A sentence of words, Chinese characters, punctuation, unknown letters, spaces and special tokens."""
    parts = [rng.choice(WORDS) for _ in range(rng.randrange(0, 9))]
    text = "".join(part + rng.choice(["", " ", "  "]) for part in parts)
    return (rng.choice(LANGUAGES) + rng.choice(["", " "]) if rng.random() < 0.2 else "") + text


def test_tokenization_equals_marian_tokenizers(reference):
    """Source (with </s>), target pieces and decoding, on 1,000 random texts and on edge cases."""
    _, _, tokenizer, model, _ = reference
    rng = random.Random(0)
    texts = ["", " ", "Hello", "你好", ">>cmn_Hans<<", ">>cmn_Hans<< 你好", "a</s>b", "<unk><unk>", "x" * 30]
    texts += [random_text(rng) for _ in range(1000)]
    vocab = model.vocab
    for text in texts:
        assert vocab.encode(text)[0] == tokenizer(text)["input_ids"], text
        assert vocab.encode(text, side="tgt")[0] + [0] == tokenizer(text_target=text)["input_ids"], text
    for _ in range(300):
        ids = [rng.randrange(len(vocab)) for _ in range(rng.randrange(0, 12))]
        assert vocab.decode(ids) == tokenizer.decode(ids, skip_special_tokens=True), ids
    assert vocab.languages == LANGUAGES == tuple(tokenizer.supported_language_codes)


@pytest.fixture(scope="module")
def full_size_reference(tmp_path_factory):
    """(transformers' model, tokenizer, the engine's model) at opus-mt's sizes with the small vocabulary."""
    folder = tmp_path_factory.mktemp("marian-full")
    hf, tokenizer = build_reference(folder, FULL, seed=1)
    return hf, tokenizer, marian.load(folder)[0]


def test_opus_mt_sizes_match_transformers(full_size_reference):
    """d_model 512, 8 heads, d_ff 2048, 6 + 6 layers (opus-mt's), the small vocabulary: the logits within 1e-9."""
    out, trace = run_both(*full_size_reference, "The cat sat on the mat.", "猫坐")
    assert np.abs(out.logits[0].numpy() - trace["logits"]).max() <= TOLERANCE


# ---- refusals and the command line (no PyTorch) -------------------------------------------------------------------

def test_the_config_is_opus_mts(numpy_folder):
    model, generation = marian.load(numpy_folder)
    c = model.config
    assert (c.d_model, c.n_heads, c.d_ff, c.depth("enc"), c.depth("dec"), c.max_len) == (16, 4, 24, 3, 2, 64)
    assert (c.activation, c.pos_encoding, c.decoder_start, c.never_next) == ("swish", "sinusoidal_halves", "pad",
                                                                             "pad")
    assert c.embed_scale and c.attn_bias and c.ffn_bias and c.shared_embeddings and c.tied_output
    assert c.norm_placement == "post"  # and so no LayerNorm after either stack: its output step is a copy
    assert generation == {"num_beams": 4, "length_penalty": 1.0, "max_length": 64, "force_end": True}
    assert model.vocab.tokens[model.start_id] == "<pad>" and model.never_next == (len(model.vocab) - 1,)


def _edit_json(name, change):
    def edit(folder):
        path = folder / name
        data = json.loads(path.read_text(encoding="utf-8"))
        change(data)
        path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return edit


def _only_pickle(folder):
    (folder / "model.safetensors").rename(folder / "pytorch_model.bin")


def _truncated(folder):
    path = folder / "model.safetensors"
    path.write_bytes(path.read_bytes()[:-100])


def _resave(change):
    """Damage: model.safetensors with its tensors changed by `change` (a function of the dict of arrays)."""
    def edit(folder):
        from safetensors.numpy import load_file, save_file

        arrays = load_file(str(folder / "model.safetensors"))
        change(arrays)
        save_file(arrays, str(folder / "model.safetensors"))
    return edit


def _older_names(arrays):
    """As a checkpoint saved by transformers 4 may hold them: every tied copy of the table, the positions (float32)."""
    for name in weights.TIED_COPIES:
        arrays[name] = arrays[weights.EMBEDDING]
    table = engine.positional.positional_encoding("sinusoidal_halves", SMALL["positions"], SMALL["d_model"])
    arrays |= dict.fromkeys(weights.POSITIONS, np.ascontiguousarray(table, np.float32))  # save_file writes the bytes
    # in memory order, and the table is Fortran-ordered (its columns picked from the paper's)


def _swap_vocabulary(folder):
    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    vocab["<pad>"], vocab["</s>"] = vocab["</s>"], vocab["<pad>"]
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")


REFUSALS = {  # what is done to a good folder: (the refusal's code, words its message holds)
    "only pytorch_model.bin": (_only_pickle, "marian_pickle_only", "safetensors"),
    "a BART config": (_edit_json("config.json", lambda c: c.update(model_type="bart")), "marian_architecture",
                      "'bart'"),
    "wider d_ff than the weights": (
        _edit_json("config.json", lambda c: c.update(encoder_ffn_dim=32, decoder_ffn_dim=32)), "marian_shape", "W_1"),
    "a truncated safetensors file": (_truncated, "marian_safetensors", "cut short"),
    "a vocabulary smaller than the config's": (_edit_json("vocab.json", lambda v: v.pop(">>yue_Hant<<")),
                                              "marian_vocab_ids", "vocab.json"),
    "a vocab_size the vocabulary lacks": (_edit_json("config.json", lambda c: c.update(vocab_size=7)),
                                          "marian_vocab_size", "vocab_size"),
    "<pad> not at pad_token_id": (_swap_vocabulary, "marian_special", "pad_token_id"),
    "a missing SentencePiece model": (lambda folder: (folder / "target.spm").unlink(), "marian_missing_files",
                                      "target.spm"),
    "other bad words": (_edit_json("generation_config.json", lambda g: g.update(bad_words_ids=[[1]])),
                        "marian_bad_words", "bad_words_ids"),
    "another forced end": (_edit_json("generation_config.json", lambda g: g.update(forced_eos_token_id=1)),
                           "marian_forced_eos", "forced_eos_token_id"),
    "positions that are not the sinusoid": (_resave(lambda a: _older_names(a) or a.update(
        {weights.POSITIONS[1]: np.zeros_like(a[weights.POSITIONS[1]])})), "marian_positions", "sinusoid"),
    "tied copies that differ": (_resave(lambda a: _older_names(a) or a.update(
        {"lm_head.weight": a["lm_head.weight"] + 1e-3})), "marian_untied", "differ"),
    "heads that do not divide d_model": (_edit_json("config.json", lambda c: c.update(
        encoder_attention_heads=3, decoder_attention_heads=3)), "marian_config", "divisible"),
    "unshared embeddings": (_edit_json("config.json", lambda c: c.update(share_encoder_decoder_embeddings=False)),
                            "marian_unshared", "share_encoder_decoder_embeddings"),
}


def test_an_older_file_with_the_tables_copies_and_positions_loads_the_same_model(numpy_folder, tmp_path):
    folder = shutil.copytree(numpy_folder, tmp_path / "checkpoint")
    _resave(_older_names)(folder)
    older, newer = marian.load(folder)[0], marian.load(numpy_folder)[0]
    assert all(np.array_equal(older.params[name], value) for name, value in newer.params.items())


def test_an_older_folder_keeps_its_generation_settings_in_config_json(numpy_folder, tmp_path):
    folder = shutil.copytree(numpy_folder, tmp_path / "checkpoint")
    (folder / "generation_config.json").unlink()
    assert marian.load(folder)[1] == {"num_beams": 4, "length_penalty": 1.0, "max_length": 64, "force_end": True}


@pytest.mark.parametrize("case", REFUSALS)
def test_a_bad_folder_is_refused_saying_why(numpy_folder, tmp_path, case):
    damage, code, words = REFUSALS[case]
    folder = shutil.copytree(numpy_folder, tmp_path / "checkpoint")
    damage(folder)
    with pytest.raises(ConfigError) as refused:
        marian.load(folder)
    assert refused.value.code == code and words in str(refused.value), str(refused.value)


def test_a_hub_id_offline_says_how_to_fetch_it(monkeypatch, tmp_path):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(ConfigError) as refused:
        marian.load("Helsinki-NLP/opus-mt-en-zh")
    assert refused.value.code == "marian_offline"
    assert "snapshot_download('Helsinki-NLP/opus-mt-en-zh'" in str(refused.value)


def test_the_command_line_translates(numpy_folder, capsys):
    assert cli(["--model", str(numpy_folder), "--src", "Hello world.", "--max-len", "5"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["src_tokens"][-1] == "</s>" and out["strategy"] == "greedy" and 1 <= len(out["token_ids"]) <= 5
    model, _ = marian.load(numpy_folder)
    assert out["text"] == model.vocab.decode(out["token_ids"])
    assert cli(["--model", str(numpy_folder), "--src", "Hello", "--beam", "--max-len", "3"]) == 0
    assert json.loads(capsys.readouterr().out)["settings"]["width"] == 4  # the checkpoint's num_beams
    with pytest.raises(SystemExit):
        cli(["--model", str(numpy_folder), "--src", "Hello", "--language", ">>xx<<"])
    assert ">>cmn_Hans<<" in capsys.readouterr().err
