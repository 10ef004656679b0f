"""Math properties of every step, and the trace contract: every documented name, with its shape."""
import json
import math
from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
import step_inputs_cases
from conftest import examples
from engine import attention, layer_norm, layers, positional
from engine.model import step_table
from engine.products import Multiplier

SMALL = dict(d_model=12, n_heads=3, d_ff=20, n_layers=2)


def expected_shapes(config, n_src, n_dec, vocab):
    """Every step of an inference pass of one sentence pair, name -> shape. The blocks of the pass and their names
    are written here, in the order of the paper's figure; each block's steps and their shapes are the block's
    declarations (engine.model.step_table), so a step added to a block needs no edit here, while a block or a layer
    missing from the pass, or one too many, fails."""
    c, table = config, step_table(config, 0.0)

    def block(name, prefix, n, n_k=None, sublayers=None):
        sizes = axis_sizes(c, vocab, n, n_k or n)
        return {prefix + short: tuple(numbers(decl.shape, sizes)) for short, decl in table[name].items()
                if sublayers is None or int(short[-1]) <= sublayers}

    shapes = {**block("embedding", "src.", n_src), **block("embedding", "tgt.", n_dec)}
    for l in range(c.depth("enc")):
        shapes.update({**block("attn", f"enc.{l}.attn.", n_src), **block("ffn", f"enc.{l}.ffn.", n_src),
                       **block("sublayer", f"enc.{l}.", n_src, sublayers=2)})
    for l in range(c.depth("dec")):
        shapes.update({**block("self_attn", f"dec.{l}.self_attn.", n_dec),
                       **block("cross_attn", f"dec.{l}.cross_attn.", n_dec, n_src),
                       **block("ffn", f"dec.{l}.ffn.", n_dec), **block("sublayer", f"dec.{l}.", n_dec, sublayers=3)})
    return {**shapes, **block("stack", "enc.", n_src), **block("stack", "dec.", n_dec), **block("output", "", n_dec)}


def axis_sizes(config, vocab, n, n_k) -> dict:
    """The numbers a declared shape's symbols stand for (engine.steps.Decl.shape): n the step's side's positions, n_q
    and n_k an attention block's query and key positions."""
    return {"n": n, "n_q": n, "n_k": n_k, "h": config.n_heads, "d_k": config.d_k, "d_v": config.d_v,
            "d_model": config.d_model, "d_ff": config.d_ff, "vocab": vocab, "1": 1}


def numbers(axes, sizes):
    """A declared shape in numbers ("h·d_v" a product)."""
    return (math.prod(sizes[part] for part in axis.split("·")) for axis in axes)


@pytest.mark.parametrize("placement", ["post", "pre"])
@pytest.mark.parametrize("name, depths", [("hello-world", {}), ("paper", {}), ("paper", {"n_dec_layers": 3}),
                                          ("paper", {"n_enc_layers": 3, "n_dec_layers": 1})])
def test_every_documented_step_is_present_with_its_shape(name, depths, placement):
    overrides = {} if name == "hello-world" else SMALL
    model = engine.preset(name, norm_placement=placement, **overrides, **depths)
    trace = model.run("hello world how", "hola mundo")
    expected = expected_shapes(model.config, 3, 3, len(model.vocab))
    assert {k: v.shape for k, v in trace.items()} == expected
    assert list(trace)[:3] == ["src.embed", "src.pos", "src.input"]
    assert list(trace)[-4:] == ["logits", "vocab_mask", "masked_logits", "probs"]



SHARED = {"src.pos", "tgt.pos", "vocab_mask"}  # one array for every sentence of a batch: no batch axis


def declared_shape(step, config, vocab, n_src, n_dec, batch=None):
    """A step's declared shape (engine.Step.axes) in numbers; a batch's steps have b in front, but the shared ones."""
    n = n_src if step.name.split(".")[0] in ("src", "enc") else n_dec
    shape = tuple(numbers(step.axes, axis_sizes(config, vocab, n, n_src if ".cross_attn." in step.name else n)))
    return shape if batch is None or step.name in SHARED else (batch, *shape)


@pytest.mark.parametrize("name, overrides", [
    ("hello-world", {}), ("paper", dict(SMALL, norm_placement="pre")), ("paper", dict(SMALL, n_dec_layers=3)),
    ("paper", dict(SMALL, decoder_only=True, d_k=5, d_v=7))])
@pytest.mark.parametrize("dropout", [0.0, 0.1])
def test_every_step_has_the_shape_it_declares(name, overrides, dropout):
    model = engine.preset(name, **overrides)
    c, vocab = model.config, len(model.vocab)
    trace = model.run("hello world how", "hola mundo", dropout=dropout)
    for step in trace.steps():
        assert step.shape == declared_shape(step, c, vocab, len(trace.src_tokens), len(trace.tgt_tokens)), step.name
    batch = model.run_batch([("hello world how", "hola"), ("world", "hola mundo mundo")], dropout=dropout)
    for step in batch.steps():
        sizes = len(batch.src_tokens[0]), len(batch.tgt_tokens[0])
        assert step.shape == declared_shape(step, c, vocab, *sizes, batch=2), step.name


def test_trace_is_read_only():
    trace = engine.preset("hello-world").run("Hello World")
    with pytest.raises(ValueError):
        trace["enc.0.attn.scores"][0, 0, 0] = 1.0
    with pytest.raises(TypeError):
        trace["x"] = 1


@pytest.mark.parametrize("overrides", [dict(pos_encoding="learned"), dict(norm_placement="pre", attn_bias=False),
                                       dict(ffn_bias=False, tied_output=False)])
def test_each_step_holds_its_own_read_only_memory(overrides):
    """The pass records the arrays it makes as they are and copies the rest: a view of a parameter (the learned
    encoding), an array recorded before (post-norm's stack output) or kept for the next pass (a weight's last
    product, engine/products.py; a fixed encoding): no step shares memory with another, a parameter, or a step of
    another pass, however alike."""
    model = engine.preset("hello-world", **overrides)
    first, second = (model.run("Hello World", "Hola Mundo") for _ in range(2))
    values = [step.value for trace in (first, second) for step in trace.steps()]
    assert len(values) == 2 * len(first) > 100
    for i, value in enumerate(values):
        assert not value.flags.writeable and value.dtype == np.float64
        others = values[i + 1:] + list(model.params.values())
        assert not any(np.may_share_memory(value, other) for other in others), first.steps()[i % len(first)].name


def test_every_step_has_a_formula_and_every_cell_an_explanation():
    trace = engine.preset("hello-world").run("Hello World", "hola mundo")
    for step in trace.steps():
        assert step.formula
        index = tuple(s - 1 for s in step.shape)
        explanation = trace.explain(step.name, index)
        assert math.isclose(explanation.value, float(step.value[index]), rel_tol=0, abs_tol=0) or (
            math.isinf(explanation.value) and math.isinf(step.value[index]))


def test_parameter_names_and_shapes():
    model = engine.preset("paper", tied_output=False, shared_embeddings=False, attn_bias=True, **SMALL)
    p, c = model.params, model.config
    assert p["embed.src"].shape == p["embed.tgt"].shape == (len(model.vocab), 12)
    for block in ("enc.1.attn", "dec.0.self_attn", "dec.1.cross_attn"):
        assert p[f"{block}.W_Q"].shape == p[f"{block}.W_K"].shape == (3, 12, 4)
        assert p[f"{block}.W_V"].shape == (3, 12, 4) and p[f"{block}.W_O"].shape == (12, 12)
        assert p[f"{block}.b_Q"].shape == (3, 4) and p[f"{block}.b_O"].shape == (12,)
    assert p["dec.1.ln3.gamma"].shape == (12,) and p["enc.0.ffn.W_1"].shape == (12, 20)
    assert p["unembed.W"].shape == (12, len(model.vocab)) and c.d_k == 4


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=12))
def test_softmax_rows_sum_to_one(row):
    weights = attention.softmax(np.array([row, row[::-1]]))
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=1e-12)
    assert (weights >= 0).all()


def test_masked_cells_are_exactly_zero_and_rows_sum_to_one():
    trace = engine.preset("paper", **SMALL).run("hello world", "hola mundo cómo estás")
    for l in range(2):
        weights = trace[f"dec.{l}.self_attn.weights"]
        n = weights.shape[-1]
        future = np.triu(np.ones((n, n), dtype=bool), k=1)
        assert (weights[:, future] == 0.0).all()
        assert (weights[:, ~future] > 0).all()
        np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=1e-12)
        assert (trace[f"dec.{l}.self_attn.mask"][future] == -np.inf).all()


def test_causal_mask_means_the_past_does_not_see_the_future():
    model = engine.preset("paper", **SMALL)
    short, long = model.run("hello world", "hola"), model.run("hello world", "hola mundo cómo")
    np.testing.assert_allclose(long["logits"][:2], short["logits"], rtol=1e-12, atol=1e-12)


@given(st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=16).filter(lambda r: np.ptp(r) > 1e-3))
@settings(max_examples=examples(50))
def test_layer_norm_rows_have_mean_0_and_variance_1(row):
    x = np.array([row])
    d = x.shape[1]
    y = layer_norm.layer_norm(x, np.ones(d), np.zeros(d), eps=0.0)
    np.testing.assert_allclose(y.mean(), 0.0, atol=1e-9)
    np.testing.assert_allclose(y.var(), 1.0, rtol=1e-9)


def test_layer_norm_in_a_real_trace():
    trace = engine.preset("paper", **SMALL).run("hello world how are you")
    y = trace["enc.0.ln1"]
    np.testing.assert_allclose(y.mean(axis=-1), 0.0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=-1), 1.0, rtol=1e-4)  # eps = 1e-5 inside the root


@pytest.mark.parametrize("d_model", [4, 6, 512])
def test_sinusoidal_pe_matches_its_closed_form(d_model):
    pe = positional.sinusoidal(50, d_model)
    for pos in (0, 1, 7, 49):
        for i in range(d_model // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            assert pe[pos, 2 * i] == pytest.approx(math.sin(angle), abs=1e-13)
            assert pe[pos, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-13)


def test_embedding_scale():
    model = engine.preset("paper", **SMALL)
    trace = model.run("hello")
    np.testing.assert_allclose(trace["src.embed"][0],
                               model.params["embed.src"][model.vocab.id("hello")] * math.sqrt(12))
    off = engine.preset("paper", embed_scale=False, **SMALL).run("hello")
    np.testing.assert_allclose(off["src.embed"][0], model.params["embed.src"][model.vocab.id("hello")])


def test_pre_norm_ln_is_the_normalised_input_of_its_sublayer():
    trace = engine.preset("paper", norm_placement="pre", **SMALL).run("hello world")
    x = trace["src.input"]
    expected = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(trace["enc.0.ln1"], expected, rtol=1e-12)
    np.testing.assert_allclose(trace["enc.0.add1"], x + trace["enc.0.attn.out"], rtol=1e-12)


@pytest.mark.parametrize("placement, sublayer_reads", [("post", "X"), ("pre", r"\operatorname{LayerNorm}(X)")])
def test_the_residual_formula_says_what_the_sublayer_reads(placement, sublayer_reads):
    """Post-norm adds Sublayer(X) and normalises the sum next; pre-norm's sub-layer reads LayerNorm(X)."""
    trace = engine.preset("paper", norm_placement=placement, **SMALL).run("hello", "hola")
    for name in ("enc.0.add1", "enc.0.add2", "dec.0.add1", "dec.0.add2", "dec.0.add3"):
        assert trace.step(name).formula == rf"X + \operatorname{{Sublayer}}({sublayer_reads})"


def test_gelu_is_the_exact_erf_form():
    trace = engine.preset("paper", activation="gelu", **SMALL).run("hello")
    h = trace["enc.0.ffn.hidden"]
    expected = 0.5 * h * (1 + np.vectorize(math.erf)(h / math.sqrt(2)))
    np.testing.assert_allclose(trace["enc.0.ffn.act"], expected, rtol=1e-15)


def test_tied_output_uses_the_embedding_transposed():
    model = engine.preset("paper", **SMALL)
    trace = model.run("hello", "hola")
    np.testing.assert_allclose(trace["logits"], trace["dec.out"] @ model.params["embed.src"].T, rtol=1e-12)


def test_learned_and_no_positional_encoding():
    model = engine.preset("paper", pos_encoding="learned", **SMALL)
    np.testing.assert_array_equal(model.run("hello world")["src.pos"], model.params["pos.learned"][:2])
    assert not engine.preset("paper", pos_encoding="none", **SMALL).run("hello world")["src.pos"].any()


@pytest.mark.parametrize("placement", ["post", "pre"])
def test_residual_off_leaves_the_sublayers_output_alone(placement):
    """Config.residual=False (the exercise on residual connections): add{k} is Sublayer(x) without x, in both
    stacks, and the rest of the pass reads it as it reads the sum."""
    on = engine.preset("paper", norm_placement=placement, **SMALL).run("hello world", "hola")
    off = engine.preset("paper", norm_placement=placement, residual=False, **SMALL).run("hello world", "hola")
    for add, out in (("enc.0.add1", "enc.0.attn.out"), ("enc.1.add2", "enc.1.ffn.out"),
                     ("dec.0.add2", "dec.0.cross_attn.out"), ("dec.1.add3", "dec.1.ffn.out")):
        np.testing.assert_array_equal(off[add], off[out])
        assert off.step(add).kind == "copy" and off.step(add).inputs == (out,)
        assert np.abs(on[add] - on[out]).max() > 0.1  # the sum: x is added
    assert off.step("enc.0.add1").formula != on.step("enc.0.add1").formula
    assert not np.allclose(off["probs"], on["probs"])


def test_unknown_words_become_unk_and_are_reported():
    trace = engine.preset("hello-world").run("Hello dear World", "hola amigo")
    assert trace.src_tokens == ("hello", "<unk>", "world")
    assert trace.tgt_tokens == ("SOS", "hola", "<unk>")
    assert trace.unknown == (("src", "dear"), ("tgt", "amigo"))


def test_seed_draws_reproducible_and_different_weights():
    a, b, c = (engine.preset("paper", seed=s, **SMALL).params["enc.0.ffn.W_1"] for s in (1, 1, 2))
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_projection_side_by_side_equals_head_by_head():
    rng = np.random.default_rng(0)
    x, W, b = rng.normal(size=(5, 12)), rng.normal(size=(3, 12, 4)), rng.normal(size=(3, 4))
    fast = attention.project(x, Multiplier(W, attention.heads_side_by_side, partial(attention.split_heads, h=3)), b)
    np.testing.assert_allclose(fast, attention.project(x, W, b), rtol=1e-13)
    np.testing.assert_allclose(fast[1], x @ W[1] + b[1], rtol=1e-13)


def test_a_model_with_changed_weights_computes_as_a_fresh_one():
    """with_params shares the unchanged weights' side-by-side layout with its parent: the changed ones must
    not be taken from the parent's."""
    base = engine.preset("paper", d_model=8, n_heads=2, d_k=4, d_v=4, d_ff=16, n_layers=2)
    base.run("Hello World", "Hola")  # the parent has laid out every weight
    W = np.array(base.params["enc.1.attn.W_K"])
    W[1, 3, 2] += 0.5
    changed = base.with_params({"enc.1.attn.W_K": W})
    fresh = engine.Model(base.name, base.config, base.vocab, {**base.params, "enc.1.attn.W_K": W}, base.seed)
    got, want = changed.run("Hello World", "Hola"), fresh.run("Hello World", "Hola")
    assert not np.allclose(got["enc.1.attn.k"], base.run("Hello World", "Hola")["enc.1.attn.k"])
    assert list(got) == list(want)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])


def test_an_edited_model_reuses_its_parents_products_only_for_the_same_input():
    """A model made by an edit of W^Q shares its other weights, and their products with the same inputs, with its
    parent (engine/products.py): every step is still what a fresh model computes, sentence after sentence, in
    either order, and an input of the same shape but other numbers is multiplied afresh."""
    base = engine.preset("paper", d_model=8, n_heads=2, d_k=4, d_v=4, d_ff=16, n_layers=2)
    edited = base.with_cells({"enc.0.attn.W_Q": [((1, 2, 3), 0.25)]})
    fresh = engine.Model(base.name, base.config, base.vocab, edited.params, base.seed)
    for src in ("Hello World", "World Hello", "Hello World"):
        base.run(src, "Hola")["enc.0.attn.k"]  # the parent multiplies first
        got, want = edited.run(src, "Hola"), fresh.run(src, "Hola")
        for name in want:
            np.testing.assert_array_equal(got[name], want[name])
    W_K = edited._multipliers["enc.0.attn.W_K"]
    assert W_K is base._multipliers["enc.0.attn.W_K"]
    assert edited._multipliers["enc.0.attn.W_Q"] is not base._multipliers["enc.0.attn.W_Q"]
    x = np.ones((2, 8))
    assert W_K.times(x) is W_K.times(x.copy())
    np.testing.assert_array_equal(W_K.times(x + 1), (x + 1) @ W_K.matrix)


@pytest.mark.parametrize("tied", [False, True])
def test_an_edit_late_in_the_network_computes_as_a_fresh_model(tied):
    """The products before an edited output layer (or tied embedding) are the parent's; everything after is new."""
    base = engine.preset("paper", d_model=8, n_heads=2, d_k=4, d_v=4, d_ff=16, n_layers=2, tied_output=tied,
                         shared_embeddings=tied)
    name = "embed.src" if tied else "unembed.W"
    for edited in (base.with_cells({name: [((3, 1), 2.5)]}),
                   base.with_cells({"dec.1.self_attn.W_O": [((0, 0), -1.0)]})):
        fresh = engine.Model(base.name, base.config, base.vocab, edited.params, base.seed)
        for src in ("Hello World", "World Hello"):
            base.run(src, "Hola").steps()
            got, want = edited.run(src, "Hola"), fresh.run(src, "Hola")
            assert list(got) == list(want)
            for step in want:
                np.testing.assert_array_equal(got[step], want[step])
        assert not np.array_equal(edited.run("Hello World", "Hola")["logits"],
                                  base.run("Hello World", "Hola")["logits"])


def test_the_words_looked_up_under_another_spelling_are_the_ones_lower_cased():
    """The look-up ignores case: "The" is the token "the", which the tokens page says (issue 30)."""
    vocab = engine.with_words(engine.preset("paper", **SMALL), "The Zebra").vocab
    assert vocab.respelled("The cat sat on the mat", "The Zebra? EL gato") == (
        ("The", "the"), ("Zebra", "zebra"), ("EL", "el"))
    assert vocab.respelled("the cat", "Mars") == ()  # as spelt, or not in the vocabulary (<unk>)
    assert vocab.respelled("Hello") == (("Hello", "hello"),)


@pytest.mark.parametrize("name, new", [("hello-world", ("the", "zebra", "sat", "la", "cebra")),
                                       ("paper", ("zebra", "cebra"))])
def test_a_new_word_gets_the_same_numbers_in_every_sentence(name, new):
    model = engine.preset(name, **({} if name == "hello-world" else SMALL))
    first = engine.with_words(model, "the zebra sat", "la cebra")
    second = engine.with_words(model, "Zebra", "")
    assert engine.with_words(model, "Hello World") is model and not model.new_words
    assert first.new_words == new and second.new_words == ("zebra",)
    assert first.vocab.tokens[:len(model.vocab)] == model.vocab.tokens
    zebra_1, zebra_2 = first.vocab.id("zebra"), second.vocab.id("zebra")
    assert zebra_1 == len(model.vocab) + new.index("zebra") and zebra_2 == len(model.vocab)
    for name in [p for p in ("embed.src", "embed.tgt", "unembed.W", "unembed.b") if p in model.params]:
        axis = 1 if name == "unembed.W" else 0
        np.testing.assert_array_equal(np.take(first.params[name], zebra_1, axis),
                                      np.take(second.params[name], zebra_2, axis))
        np.testing.assert_array_equal(np.take(first.params[name], range(len(model.vocab)), axis), model.params[name])
    assert first.params["embed.src"][zebra_1].std() > 0  # a draw, not zeros
    trace = first.run("the zebra sat", "la cebra")
    assert not trace.unknown and "<unk>" not in trace.src_tokens + trace.tgt_tokens
    np.testing.assert_allclose(trace["src.embed"][1], first.params["embed.src"][zebra_1] * np.sqrt(
        model.config.d_model if model.config.embed_scale else 1.0), rtol=1e-15)
    assert trace["probs"].shape[1] == len(first.vocab) and trace["probs"][:, first.vocab.id("<unk>")].max() == 0.0


@pytest.mark.parametrize("placement", ["post", "pre"])
@pytest.mark.parametrize("stack, last", [("enc", 2), ("dec", 3)])
def test_a_stacks_layer_outputs_chain_its_input_to_its_output(stack, last, placement):
    """x^(0) is what the first layer adds to (the embedded input), x^(l) what layer l + 1 adds to, and x^(N) is the
    stack's output (post-norm) or what its final LayerNorm normalises (pre-norm)."""
    from engine.layers import layer_outputs

    trace = engine.preset("paper", norm_placement=placement, **SMALL).run("Hello World", "hola")
    kind = "ln" if placement == "post" else "add"
    names = layer_outputs(trace, stack)
    assert names == [{"enc": "src.input", "dec": "tgt.input"}[stack]] + [f"{stack}.{l}.{kind}{last}" for l in range(2)]
    assert trace.step(f"{stack}.1.add1").inputs[0] == names[1]
    assert trace.step(f"{stack}.out").inputs[0] == names[-1]


def test_layer_changes_are_the_norms_differences_and_cosines_of_the_rows():
    from engine.layers import layer_changes

    xs = np.array([[[3.0, 4.0], [1.0, 0.0]], [[0.0, 5.0], [0.0, 0.0]], [[0.0, -2.0], [2.0, 0.0]]])  # (N + 1, n, d)
    changes = layer_changes(xs)
    np.testing.assert_allclose(changes.norm, [[5, 1], [5, 0], [2, 2]])
    np.testing.assert_allclose(changes.change, [[np.sqrt(9 + 1), 1], [7, 2]])
    np.testing.assert_allclose(changes.cosine[0, 0], 20 / 25)
    assert changes.cosine[1, 0] == -1 and np.isnan(changes.cosine[0, 1]) and np.isnan(changes.cosine[1, 1])


def test_layer_changes_of_a_real_stack_match_numpys():
    from engine.layers import layer_changes, layer_outputs

    trace = engine.preset("paper", **SMALL).run("Hello World")
    xs = [trace[name] for name in layer_outputs(trace, "enc")]
    changes = layer_changes(xs)
    for l in range(len(xs) - 1):
        before, after = xs[l], xs[l + 1]
        np.testing.assert_allclose(changes.change[l], [np.linalg.norm(a - b) for a, b in zip(after, before)])
        np.testing.assert_allclose(changes.cosine[l], [a @ b / np.linalg.norm(a) / np.linalg.norm(b)
                                                       for a, b in zip(after, before)])
    np.testing.assert_allclose(changes.norm[1:], np.sqrt(SMALL["d_model"]), rtol=1e-4)  # LayerNorm, γ 1, β 0


def test_attention_focus_is_each_rows_largest_weight_and_its_key():
    from engine.layers import attention_focus

    weights = np.array([[[0.2, 0.5, 0.3], [1.0, 0.0, 0.0]], [[0.1, 0.1, 0.8], [0.4, 0.4, 0.2]]])  # (h, n_q, n_k)
    focus = attention_focus(weights)
    assert focus.key.tolist() == [[1, 0], [2, 0]]  # a tie goes to the first key
    np.testing.assert_allclose(focus.weight, [[0.5, 1.0], [0.8, 0.4]])


def test_evenly_spread_attention_is_every_weight_near_one_over_n_keys():
    assert layers.evenly_spread(np.array([[[0.5, 0.5], [0.503, 0.497]]]))
    assert not layers.evenly_spread(np.array([[[0.5, 0.5], [0.52, 0.48]]]))
    assert layers.evenly_spread(np.full((2, 3, 4), 0.25)) and not layers.evenly_spread(np.eye(3)[None])


def test_row_spread_is_the_largest_distance_of_two_rows_over_the_longest_row():
    assert layers.row_spread(np.array([[3.0, 4.0], [3.0, 4.0]])) == 0
    assert layers.row_spread(np.array([[3.0, 4.0], [0.0, 0.0], [3.0, 0.0]])) == pytest.approx(5 / 5)
    assert layers.row_spread(np.zeros((2, 3))) == 0 and math.isnan(layers.row_spread(np.array([[np.nan, 1], [1, 1]])))


def test_the_encoders_rows_converge_where_the_trace_says_whatever_the_sentence_or_weights():
    """Where the hello-world encoder's outputs become one vector, read from the trace: in the post's example at the
    first LayerNorm (hello's and world's rows after the residual add differ by ~10 % of their length, after the
    LayerNorm by 0.2 %); another sentence converges at the feed-forward output, an edited W^O never."""
    model = engine.preset("hello-world")

    def spreads(trace, names):
        return [layers.row_spread(trace[name]) for name in names]

    post = layers.convergence(model.run("Hello World", "Hola Mundo"))
    assert post[::2] == ("enc.0.ln1", "enc.0.add1")
    assert post.spread < layers.ALIKE < post.spread_before and post.spread_before == pytest.approx(0.1038, abs=1e-4)
    trace = model.run("the cat sat", "Hola")
    cat = layers.convergence(trace)
    assert cat[::2] == ("enc.0.ffn.out", "enc.0.ln1")
    assert all(s <= layers.ALIKE for s in spreads(trace, ["enc.0.ffn.out", "enc.0.add2", "enc.0.ln2", "enc.out"]))
    assert spreads(trace, ["enc.0.ln1"])[0] > layers.ALIKE
    w_o = model.params["enc.0.attn.W_O"]
    assert layers.convergence(model.with_params({"enc.0.attn.W_O": w_o * 0}).run("Hello World", "Hola Mundo")) is None
    assert layers.convergence(model.run("Hello World how are you", "Hola")) is None  # its output's rows stay apart


@pytest.mark.parametrize("case", [*step_inputs_cases.TEXT, "vit", "vit, batch"])
def test_each_steps_inputs_are_the_recorded_ones(case):
    """Every step's inputs, in every kind of pass (tests/step_inputs_cases.py), are those recorded in
    tests/data/step_inputs.json: the explainers, backward rules and pages read a step's operands by these names."""
    recorded = json.loads(step_inputs_cases.RECORD.read_text())[case]
    if case.startswith("vit"):
        computed = step_inputs_cases.vit_inputs(case.endswith("batch"))
    else:
        computed = step_inputs_cases.text_inputs(*step_inputs_cases.TEXT[case])
    assert computed == recorded
