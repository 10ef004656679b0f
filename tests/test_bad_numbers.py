"""Weights of 1e300, inf or NaN never crash; non-finite results are reported by name."""
import numpy as np
import pytest

import engine


@pytest.mark.parametrize("value", [1e300, np.inf, -np.inf, np.nan])
@pytest.mark.parametrize("param", ["embed.src", "enc.0.attn.W_Q", "enc.0.ffn.W_1", "dec.0.cross_attn.W_O"])
def test_hostile_weights_do_not_crash(param, value):
    model = engine.preset("hello-world")
    hostile = np.full(model.params[param].shape, value)
    trace = model.with_params({param: hostile}).run("Hello World", "hola")
    probs = trace["probs"]
    if np.isfinite(value):  # huge but finite: saturated yet correct, or reported where it overflowed
        assert np.allclose(probs.sum(-1), 1.0) or "probs" in trace.nonfinite
    else:
        assert trace.nonfinite and "probs" in trace.nonfinite
    assert trace.nonfinite == tuple(name for name in trace if np.isnan(trace[name]).any()
                                    or np.isposinf(trace[name]).any()
                                    or (np.isneginf(trace[name]).any()
                                        and not name.endswith(("mask", "masked", "masked_logits"))))


def test_layer_norm_of_an_overflowing_row_is_nan_not_zero():
    model = engine.preset("hello-world")
    param = "enc.0.ffn.W_1"
    trace = model.with_params({param: np.full(model.params[param].shape, 1e300)}).run("Hello World")
    assert np.isfinite(trace["enc.0.add2"]).all() and np.isnan(trace["enc.0.ln2"][0]).all()
    assert trace.nonfinite[0] == "enc.0.ln2"


def test_one_huge_weight_keeps_stable_softmax_finite():
    model = engine.preset("hello-world")
    W = model.params["enc.0.attn.W_Q"].copy()
    W[0, 0, 0] = 1e5
    trace = model.with_params({"enc.0.attn.W_Q": W}).run("Hello World")
    assert np.isfinite(trace["enc.0.attn.weights"]).all()
    np.testing.assert_allclose(trace["enc.0.attn.weights"].sum(-1), 1.0)


def test_wrong_shapes_and_names_are_refused_clearly():
    model = engine.preset("hello-world")
    with pytest.raises(ValueError, match=r"enc.0.attn.W_Q must have shape \(2, 4, 3\)"):
        model.with_params({"enc.0.attn.W_Q": np.zeros((4, 3))})
    with pytest.raises(ValueError, match="unknown parameter"):
        model.with_params({"W_Z": np.zeros(1)})


def test_too_long_and_empty_sentences_are_refused_clearly():
    model = engine.preset("hello-world")
    with pytest.raises(ValueError, match="at most 128"):
        model.run(" ".join(["hello"] * 500))
    with pytest.raises(ValueError, match="empty"):
        model.run("   ")


@pytest.mark.parametrize("overrides, message", [
    ({"d_model": 0}, "d_model must be between"),
    ({"n_heads": 1.5}, "n_heads must be a whole number"),
    ({"layer_norm": "batch"}, "layer_norm must be one of"),
    ({"eps": float("nan")}, "eps must be"),
    ({"attn_divisor": 0}, "attn_divisor"),
    ({"embed_scale": "yes"}, "embed_scale must be true or false"),
    ({"d_model": 10, "n_heads": 3}, "not divisible"),
])
def test_config_validation_messages(overrides, message):
    with pytest.raises(ValueError, match=message):
        engine.preset("paper", **overrides)


def test_non_divisible_sizes_carry_a_code_for_translations():
    with pytest.raises(ValueError) as refused:
        engine.preset("paper", d_model=10, n_heads=3)
    assert refused.value.code == "not_divisible" and refused.value.values == {"d_model": 10, "n_heads": 3}


def test_a_sentence_longer_than_max_len_carries_a_code_for_translations():
    with pytest.raises(ValueError, match="this model accepts at most 2") as refused:
        engine.preset("hello-world", max_len=2).run("Hello World how")
    assert refused.value.code == "too_long_for_model" and refused.value.values == {"side": "src", "n": 3, "high": 2}


def test_unknown_preset_and_bad_seed():
    with pytest.raises(ValueError, match="unknown preset"):
        engine.preset("gpt")
    with pytest.raises(ValueError, match="seed"):
        engine.preset("paper", seed=-1)


def test_the_causal_mask_alone_is_not_reported_as_non_finite():
    trace = engine.preset("hello-world").run("Hello World", "hola mundo")
    assert np.isinf(trace["dec.0.self_attn.masked"]).any()
    assert trace.nonfinite == ()
