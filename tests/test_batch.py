"""Padded batches (Model.run_batch): PyTorch's key_padding_mask / tgt_key_padding_mask as the reference, forward
and backward, over random sizes and lengths; a batch of one is today's trace exactly; a sentence in a padded batch
gets the numbers it gets alone; padded keys get weight exactly 0; training on padded batches follows the per-pair loop
to rounding, and the recorded comparison the training page draws bears out what the page says of it.
"""
import dataclasses

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from test_backward import RTOL, TorchModel, in_torch_layout
from test_torch_reference import (SUBLAYERS, TORCH_ATTN, WORDS, cases, close, layer_output, perturbed, sublayer_input,
                                  torch_layer)

import engine
from engine import attention as att
from engine.backward import PADDED, padded_loss_and_grads
from engine.config import ConfigError
from engine.corpus import CORPORA, pairs as corpus_pairs
from engine.tokens import PAD
from engine.train import TrainSettings, batch_loss_and_grads, pairs_loss_and_grads, start_model, train
from ui.core.i18n import EN, ZH, translator
from ui.core.labels import description_key, step_name_key
from ui.lessons.batch_views import training_record

SMALL = dict(d_model=16, n_heads=4, d_ff=24, n_layers=2)
PAIRS = [("the cat sat on the mat", "el gato se sentó en la alfombra"), ("hello", "hola"),
         ("good night my friend", "buenas noches")]


@st.composite
def batches(draw):
    """A model's sizes and seed (test_torch_reference.cases) and 1 to 4 pairs of random lengths."""
    sizes, _, _, seed = draw(cases())
    sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=7).map(" ".join)
    prefix = st.lists(st.sampled_from(WORDS), min_size=0, max_size=6).map(" ".join)
    return sizes, draw(st.lists(st.tuples(sentence, prefix), min_size=1, max_size=4)), seed


def pad_masks(trace):
    """PyTorch's key padding masks, -inf at a padded position (float, as the causal mask): (b, n_src), (b, n_dec)."""
    return [torch.tensor(trace.step(f"{side}.pad_mask").value[:, 0, 0, :]) for side in ("src", "tgt")]


def real(trace, side):
    """The real positions of each sentence of one side: a list of index arrays."""
    return [np.arange(n) for n in trace.step(f"{side}.pad_mask").meta["lengths"]]


# ---- forward: PyTorch with padding masks ---------------------------------------------------------------------

def assert_batch_matches_torch(model, trace, masks=None):
    """Each layer's output at the real positions, and each attention module's weights (every row) and output;
    torch's padding masks are the trace's own unless given."""
    c, (src_pad, tgt_pad) = model.config, masks or pad_masks(trace)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(tgt_pad.shape[1], dtype=torch.float64)
    with torch.no_grad():
        x = torch.tensor(trace["src.input"])
        for l in range(c.depth("enc")):
            x = torch_layer(model, "enc", l)(x, src_key_padding_mask=src_pad)
            assert_real_rows(x, trace, layer_output(model, "enc", l), real(trace, "src"))
            x = torch.tensor(trace[layer_output(model, "enc", l)])  # torch's fast path zeroes padded rows
            assert_attention_matches(model, trace, "enc", l, src_pad, tgt_pad, causal)
        y, memory = torch.tensor(trace["tgt.input"]), torch.tensor(trace["enc.out"])
        for l in range(c.depth("dec")):
            y = torch_layer(model, "dec", l)(y, memory, tgt_mask=causal, tgt_key_padding_mask=tgt_pad,
                                             memory_key_padding_mask=src_pad)
            assert_real_rows(y, trace, layer_output(model, "dec", l), real(trace, "tgt"))
            assert_attention_matches(model, trace, "dec", l, src_pad, tgt_pad, causal)


def assert_real_rows(actual, trace, name, positions):
    for b, rows in enumerate(positions):
        close(actual[b, rows], trace[name][b, rows], f"{name}, sentence {b}")


def assert_attention_matches(model, trace, stack, l, src_pad, tgt_pad, causal):
    layer = torch_layer(model, stack, l)
    for k, sub in enumerate(SUBLAYERS[stack], start=1):
        if sub == "ffn":
            continue
        p, mha = f"{stack}.{l}.{sub}", getattr(layer, TORCH_ATTN[sub])
        x_q = torch.tensor(trace[sublayer_input(model, stack, l, k)])
        x_kv = torch.tensor(trace["enc.out"]) if sub == "cross_attn" else x_q
        keys_pad = tgt_pad if sub == "self_attn" else src_pad
        out, weights = mha(x_q, x_kv, x_kv, key_padding_mask=keys_pad, need_weights=True,
                           average_attn_weights=False, attn_mask=causal if sub == "self_attn" else None)
        close(weights, trace[f"{p}.weights"], f"{p}.weights")
        close(out, trace[f"{p}.out"], f"{p}.out")
        assert np.all(np.where(np.isneginf(keys_pad.numpy())[:, None, None, :], trace[f"{p}.weights"], 0.0) == 0.0)


@pytest.mark.parametrize("placement", ["post", "pre"])
@settings(max_examples=25, deadline=None)
@given(case=batches())
def test_random_batches_match_torch_padding_masks(placement, case):
    sizes, pairs, seed = case
    model = perturbed(engine.preset("paper", attn_bias=True, seed=seed, norm_placement=placement, **sizes), seed)
    assert_batch_matches_torch(model, model.run_batch(pairs))


# ---- backward: PyTorch autograd on the padded batch -----------------------------------------------------------

class TorchBatch(TorchModel):
    """test_backward's torch model on a padded batch: the padding masks in every layer; the loss the mean of each
    sentence's mean over its real targets."""

    def batch_loss_and_grads(self, result, label_smoothing=0.0):
        m, tables = self.model, self.model.embed_names
        src_pad, tgt_pad = pad_masks(result.trace)
        x = torch.stack([self.input(tables["src"], ids) for ids in result.src_ids])
        for layer in self.layers["enc"]:
            x = layer(x, src_key_padding_mask=src_pad)
        memory = self.norms["enc"](x)
        causal = torch.nn.Transformer.generate_square_subsequent_mask(tgt_pad.shape[1], dtype=torch.float64)
        y = torch.stack([self.input(tables["tgt"], ids) for ids in result.dec_input_ids])
        for layer in self.layers["dec"]:
            y = layer(y, memory, tgt_mask=causal, tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad)
        W = self.leaves[tables["tgt"]].T if m.config.tied_output else self.leaves["unembed.W"]
        words = [i for i in range(len(m.vocab)) if i not in m.never_next]
        logits = (self.norms["dec"](y) @ W + self.leaves["unembed.b"])[..., words]
        losses = [F.cross_entropy(logits[b, :len(t)], torch.tensor([words.index(i) for i in t]),
                                  label_smoothing=label_smoothing)
                  for b, t in enumerate([i for i in targets if i != PADDED] for targets in result.target_ids)]
        loss = torch.stack(losses).mean()
        loss.backward()
        return loss.item(), self.torch_layout_grads()


def assert_batch_grads_match_torch(model, pairs, label_smoothing=0.0):
    result = padded_loss_and_grads(model, pairs, label_smoothing=label_smoothing)
    loss, expected = TorchBatch(model).batch_loss_and_grads(result, label_smoothing)
    actual = in_torch_layout(model, result.grads)
    assert set(actual) == set(expected)
    floor = 1e-6 * max(np.max(np.abs(value)) for value in expected.values())  # as test_backward: b_K's is noise
    for name, value in expected.items():
        np.testing.assert_allclose(actual[name], value, rtol=RTOL, atol=RTOL * max(np.max(np.abs(value)), floor),
                                   err_msg=name)
    assert result.loss == pytest.approx(loss, rel=1e-12)


@pytest.mark.parametrize("placement", ["post", "pre"])
@settings(max_examples=15, deadline=None)
@given(case=batches(), smoothing=st.sampled_from([0.0, 0.1]))
def test_random_batches_match_torch_autograd(placement, case, smoothing):
    sizes, pairs, seed = case
    model = perturbed(engine.preset("paper", attn_bias=True, seed=seed, norm_placement=placement, **sizes), seed)
    assert_batch_grads_match_torch(model, pairs, smoothing)


def test_the_batch_comparison_sees_a_leaking_padded_key(monkeypatch):
    """Guard against a vacuous reference: an engine that lets each sentence's first padded key through fails."""
    model = perturbed(engine.preset("paper", attn_bias=True, **SMALL), seed=3)
    trace = model.run_batch(PAIRS)
    assert_batch_matches_torch(model, trace)
    padding_mask = att.padding_mask
    monkeypatch.setattr(att, "padding_mask", lambda lengths, n: padding_mask(np.asarray(lengths) + 1, n))
    with pytest.raises(AssertionError, match="enc.0.ln2, sentence 1"):
        assert_batch_matches_torch(model, model.run_batch(PAIRS), pad_masks(trace))


# ---- one copy of the math: a batch of one, a sentence alone --------------------------------------------------

@pytest.mark.parametrize("preset, options", [("hello-world", {}), ("paper", SMALL),
                                             ("paper", dict(SMALL, norm_placement="pre", activation="gelu"))])
def test_a_batch_of_one_is_todays_trace_exactly(preset, options):
    model = engine.preset(preset, **options)
    one, batch = model.run("Hello World", "Hola Mundo"), model.run_batch([("Hello World", "Hola Mundo")])
    for step in one.steps():
        value = batch[step.name]
        assert value.shape[value.ndim - step.value.ndim:] == step.shape and value.size == step.value.size
        np.testing.assert_array_equal(value.reshape(step.shape), step.value, err_msg=step.name)
    assert set(batch) - set(one) == {"src.pad_mask", "tgt.pad_mask"} | {
        f"{stack}.{l}.{block}.masked" for stack, block in (("enc", "attn"), ("dec", "cross_attn"))
        for l in range(model.config.depth(stack))}


@pytest.mark.parametrize("placement", ["post", "pre"])
def test_a_sentence_alone_equals_its_row_of_a_padded_batch(placement):
    model = perturbed(engine.preset("paper", attn_bias=True, norm_placement=placement, **SMALL), seed=4)
    batch = model.run_batch(PAIRS)
    assert batch.src_tokens[1] == ("hello",) + (PAD,) * 5 and batch["enc.0.attn.weights"].shape == (3, 4, 6, 6)
    for b, (src, tgt) in enumerate(PAIRS):
        alone = model.run(src, tgt)
        for step in alone.steps():
            value = batch[step.name]
            if value.ndim > step.value.ndim:
                value = value[b, 0] if step.kind == "mask" else value[b]  # the mask's axis over the heads
            np.testing.assert_allclose(value[tuple(slice(0, n) for n in step.shape)], step.value, rtol=0, atol=1e-12,
                                       err_msg=f"{step.name}, sentence {b}")


def test_padded_keys_get_weight_exactly_zero_and_minus_1e9_agrees():
    """Seed 004 masks with -1e9: in float64 its exp underflows to 0 as -inf's does, so the weights are identical."""
    model = engine.preset("paper", **SMALL)
    batch = model.run_batch(PAIRS)
    lengths = batch.step("src.pad_mask").meta["lengths"]
    assert lengths == (6, 1, 4) and batch.step("tgt.pad_mask").meta["lengths"] == (8, 2, 3)
    for name in ("enc.1.attn.weights", "dec.0.cross_attn.weights"):
        for b, n in enumerate(lengths):
            assert np.all(batch[name][b, :, :, n:] == 0.0) and np.all(batch[name][b, :, :, :n] > 0.0)
    mask = batch["dec.0.self_attn.mask"]  # causal + padding: (b, 1, n, n)
    assert mask.shape == (3, 1, 8, 8) and np.all(mask[1, 0, :, 2:] == -np.inf) and mask[1, 0, 1, 1] == 0.0
    scaled = batch["enc.0.attn.scaled"]
    minus_1e9 = np.where(batch["src.pad_mask"] == -np.inf, -1e9, 0.0)
    np.testing.assert_array_equal(att.softmax(scaled + minus_1e9), batch["enc.0.attn.weights"])


def test_a_batch_needs_a_pair_and_each_pair_a_source():
    model = engine.preset("hello-world")
    with pytest.raises(ValueError, match="The batch is empty"):
        model.run_batch([])
    with pytest.raises(ValueError, match="The source sentence is empty"):
        model.run_batch([("Hello", "Hola"), ("", "Mundo")])


def test_a_batch_too_long_for_the_model_says_which_side_and_its_longest():
    model = engine.preset("paper", max_len=4, **SMALL)
    with pytest.raises(ConfigError) as refused:
        model.run_batch([("hello", "hola"), ("the cat sat on the mat", "el gato")])
    assert refused.value.code == "too_long_for_model" and refused.value.values == {"side": "src", "n": 6, "high": 4}


def test_a_decoder_only_batch_pads_its_one_sequence_and_equals_each_run_alone():
    """The source, SOS and the target read as one sequence, padded to the longest; only tgt.pad_mask, no encoder."""
    model = perturbed(engine.preset("paper", attn_bias=True, decoder_only=True, **SMALL), seed=3)
    batch = model.run_batch(PAIRS)
    assert batch.step("tgt.pad_mask").meta["lengths"] == (6 + 1 + 7, 1 + 1 + 1, 4 + 1 + 2)
    assert not [name for name in batch if name.startswith(("src.", "enc.")) or "cross_attn" in name]
    for b, (src, tgt) in enumerate(PAIRS):
        alone = model.run(src, tgt)
        assert batch.tgt_tokens[b][:len(alone.tgt_tokens)] == alone.tgt_tokens
        n = len(alone.tgt_tokens)
        np.testing.assert_allclose(batch["probs"][b, :n], alone["probs"], rtol=0, atol=1e-12, err_msg=str(b))
    with pytest.raises(ValueError, match="decoder-only"):
        padded_loss_and_grads(model, PAIRS)


def test_every_step_of_a_batch_is_named_and_described_in_both_languages():
    """Like every step, a batch's masks have a name and a line in both catalogs, and their formulas' words are
    slots the catalogs fill: none is left, and the Chinese says 填充 (padding)."""
    trace = engine.preset("paper", **SMALL).run_batch(PAIRS)
    assert description_key("enc.0.attn.masked") == "desc.attn.pad_masked" == description_key(
        "dec.1.cross_attn.masked") and description_key("dec.0.self_attn.masked") == "desc.attn.masked"
    for name in trace:
        assert {description_key(name), step_name_key(name)} <= set(EN) & set(ZH), name
    for name in ("src.pad_mask", "dec.0.self_attn.mask", "enc.0.attn.masked"):
        zh = translator("zh").words(trace.step(name).formula)
        assert "填充" in zh and "⟦" not in zh and "⟦" not in translator("en").words(trace.step(name).formula), name
    assert translator("en").words(trace.step("src.pad_mask").formula).count(r"\text{len}_b") == 2
    for name in ("dec.0.self_attn.mask", "dec.0.self_attn.masked"):  # the decoder's mask holds the padding too
        assert "padding" in EN[description_key(name)] and "填充" in ZH[description_key(name)], name


def test_the_trace_reports_no_masked_cell_as_non_finite():
    assert engine.preset("paper", **SMALL).run_batch(PAIRS).nonfinite == ()


# ---- training on padded batches ---------------------------------------------------------------------------------

def test_the_padded_batch_loss_and_gradient_equal_the_per_pair_loop():
    model, batch, options = start_model(), corpus_pairs("en-zh")[:8], TrainSettings(label_smoothing=0.1)
    loss, grads = batch_loss_and_grads(model, batch, options)
    loop_loss, loop_grads = pairs_loss_and_grads(model, batch, options)
    assert loss == pytest.approx(loop_loss, rel=1e-14)
    floor = 1e-9 * max(np.max(np.abs(g)) for g in loop_grads.values())  # b_K's gradient is 0 up to rounding
    for name, grad in loop_grads.items():
        np.testing.assert_allclose(grads[name], grad, rtol=1e-10, atol=floor, err_msg=name)


def test_training_on_padded_batches_follows_the_per_pair_loop():
    """Equal to rounding while the training is stable (ui/data/padded_training.json: en-es's later stretch is not)."""
    settings = TrainSettings(steps=25)
    padded, loop = train(start_model(), settings), train(start_model(), settings, per_pair=True)
    np.testing.assert_allclose(padded.losses, loop.losses, rtol=1e-12)
    assert padded.losses[-1] < padded.losses[0] - 1.5


def test_the_recorded_trainings_bear_out_what_the_batch_tab_says():
    """The record the training page's batch tab draws (bench/train_bench.py --record): the default settings; the
    padded and the per-pair training equal to rounding at first, and where they part, the padded training from a
    nudged weight parts too, within a few steps; every run learns every target, final losses of the same size."""
    record = training_record()
    assert record["settings"] == {k: v for k, v in dataclasses.asdict(TrainSettings()).items() if k != "corpus"}
    assert set(record["corpora"]) == set(CORPORA) and record["agree"] == 1e-9
    for corpus, runs in record["corpora"].items():
        padded, loop, nudged = (np.array(runs[run]["losses"]) for run in ("padded", "per_pair", "nudged"))
        assert len(padded) == TrainSettings().steps and runs["speedup"] > 1, corpus
        np.testing.assert_allclose(loop[:50], padded[:50], rtol=1e-12, err_msg=corpus)
        parted = runs["agree_until"]
        assert parted["per_pair"] >= 100 and abs(parted["per_pair"] - parted["nudged"]) <= 20, (corpus, parted)
        finals = [runs[run]["corpus_loss"] for run in ("padded", "per_pair", "nudged")]
        assert max(finals) < 2 * min(finals) and max(finals) < 0.01, (corpus, finals)
        assert all(runs[run]["exact"] == runs[run]["pairs"] == 32 for run in ("padded", "per_pair", "nudged"))
