"""engine/exercises.py: every question's answer is the engine's number and follows from what its prompt gives; a typed
answer is read as a number only; ids and progress from a link are checked part by part; the post's exercises'
answers are the engine's."""
import math

import numpy as np
import pytest

import engine
from engine import exercises as ex
from engine.generate import beam_search, generate

SMALL = dict(d_model=12, n_heads=3, d_ff=20, n_layers=2)
MODELS = {"hello-world": engine.preset("hello-world"), "paper-small": engine.preset("paper", **SMALL),
          "decoder-only": engine.preset("paper", decoder_only=True, **SMALL), "paper": engine.preset("paper")}


def by_hand(q: ex.Question) -> float:
    """The question's number worked out from what its prompt gives, as a learner would."""
    g = q.given
    if q.kind == "score":
        return g.get("partial", 0.0) + float(np.dot(g["q"], g["k"]))
    if q.kind == "scaled":
        return g["score"] / g["divisor"]
    if q.kind in ("weight", "prob") and "sum_exp" in g:
        return math.exp(g["value"] - g["max"]) / g["sum_exp"]
    if q.kind in ("weight", "prob"):
        row = np.array(g["row"] if q.kind == "weight" else g["logits"])
        e = np.exp(row - row.max())
        return float(e[g["column"]] / e.sum())
    if q.kind == "layer_norm":
        x_j, mean, var = (g["x_j"], g["mean"], g["variance"]) if "mean" in g else (
            g["x"][g["column"]], np.mean(g["x"]), np.var(g["x"]))
        spread = math.sqrt(var + g["eps"]) if g["form"] == "paper" else math.sqrt(var) + g["eps"]
        return g["gamma"] * (x_j - mean) / spread + g["beta"]
    pos, j, d = g["pos"], g["column"], g["d_model"]
    angle = pos / 10000 ** ((j - j % 2) / d)
    return math.sin(angle) if j % 2 == 0 else math.cos(angle)


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("number", [1, 2, 999])
def test_every_answer_is_the_engines_number_and_follows_from_the_prompt(name, number):
    trace = MODELS[name].run("Hello World", "Hola Mundo")
    questions = ex.question_set(trace, number)
    assert [q.kind for q in questions] == list(ex.KINDS)  # six kinds (the post's printed PE has its formula)
    for q in questions:
        assert q.answer == trace[q.step][q.index] and q.tolerance == max(0.005, 0.005 * abs(q.answer))
        assert q.id == f"{q.kind}-{number}" and ex.question(trace, q.id) == q  # stable
        exact = q.kind != "pe" or q.given["form"] == "sinusoidal"  # the post's table rounds, its formula differs
        if exact:
            assert by_hand(q) == pytest.approx(q.answer, rel=1e-9, abs=1e-12), q.id


def test_a_cell_is_one_the_learner_can_see():
    """A causal block's query asks for no later key; a probability asked is its row's largest."""
    trace = MODELS["decoder-only"].run("Hello World", "Hola Mundo")
    for number in range(1, 40):
        h, i, j = ex.question(trace, f"weight-{number}").index
        assert j <= i
        prob = ex.question(trace, f"prob-{number}")
        assert prob.answer == trace["probs"][prob.index[0]].max()


def test_a_model_without_a_pe_formula_has_no_pe_question():
    trace = engine.preset("paper", pos_encoding="learned", **SMALL).run("Hello World")
    assert [q.kind for q in ex.question_set(trace, 1)] == ["score", "scaled", "weight", "layer_norm", "prob"]


@pytest.mark.hostile
@pytest.mark.parametrize("forged", ["score-0", "score-1000", "score-01a", "evil-1", "Score-1", "score-1 ", "score--1",
                                    "score-1;drop", "../score-1", "x" * 10_000, "", None, 5, "post-1"])
def test_a_forged_question_id_is_refused(forged):
    with pytest.raises(ValueError):
        ex.question(MODELS["hello-world"].run("Hello World"), forged)


@pytest.mark.hostile
@pytest.mark.parametrize("text, code", [
    ("", "empty"), ("   ", "empty"), (None, "empty"), ("x" * 10_000, "too_long"), ("1" * 41, "too_long"),
    ("nan", "not_finite"), ("NaN", "not_finite"), ("-inf", "not_finite"), ("Infinity", "not_finite"),
    ("1e999", "not_finite"), ("∞", "not_finite"),
    ("1/4", "expression"), ("2*3", "expression"), ("2**3", "expression"), ("1+1", "expression"), ("(1)", "expression"),
    ("√2", "expression"), ("__import__('os').system('true')", "expression"), ("0.5 - 0.25", "expression"),
    ("abc", "not_a_number"), ("one", "not_a_number"), ("0x10", "not_a_number"), ("1,2,3", "not_a_number"),
    ("1,353", "ambiguous_comma"), ("-12,000", "ambiguous_comma"), ("1.5,2", "not_a_number"), ("1,5e3", "not_a_number"),
    ("1e", "not_a_number"), ("1_000", "not_a_number"), ("--1", "not_a_number"),
])
def test_what_is_not_a_number_is_refused_and_never_evaluated(text, code):
    assert ex.read_number(text) == ex.Verdict(code)


@pytest.mark.parametrize("text, value", [("0.25", 0.25), (" -1.5e-3 ", -0.0015), ("−0.5", -0.5), ("+3", 3.0),
                                         (".5", 0.5), ("7.", 7.0), ("1E2", 100.0), ("0,1353", 0.1353), ("1,5", 1.5),
                                         ("−2,25", -2.25), ("0,135", 0.135), ("12,5000", 12.5)])
def test_a_number_is_read(text, value):
    assert ex.read_number(text) == ex.Verdict("wrong", value)  # "wrong" until checked against an answer


def test_an_answer_is_right_within_the_stated_tolerance():
    trace = MODELS["hello-world"].run("Hello World", "Hola Mundo")
    q = ex.question(trace, "score-1")
    assert q.tolerance == 0.005 * abs(q.answer) > 0.005  # a large score: 0.5 % of it
    for offset, code in ((0.99, "right"), (-0.99, "right"), (1.01, "wrong"), (-1.01, "wrong")):
        assert ex.check(q, repr(q.answer + offset * q.tolerance)).code == code
    small = ex.question(trace, "weight-1")
    assert small.tolerance == 0.005 and ex.check(small, str(small.answer + 0.004)).right


def test_progress_goes_into_the_link_and_back():
    progress = {"post-1": True, "score-3": False, "pe-999": True}
    text = ex.encode_progress(progress)
    assert text == "pe-999:1,post-1:1,score-3:0" and ex.decode_progress(text) == (progress, [])


@pytest.mark.hostile
def test_a_forged_progress_link_is_refused_part_by_part():
    text = "post-1:1,post-9:1,score-0:1,evil:1,score-2:2,score-2:1,score-2:0,weight-5,post-3:1," + "x" * 50
    progress, refused = ex.decode_progress(text)
    assert progress == {"post-1": True, "score-2": True, "post-3": True}
    assert refused == ["post-9:1", "score-0:1", "evil:1", "score-2:2", "score-2:0", "weight-5", "x" * 40]
    assert ex.decode_progress("post-1:1," * 1000 + "x" * 10_000) == ({}, [("post-1:1," * 5)[:40]])
    many = ",".join(f"score-{n}:1" for n in range(1, 150))
    kept, cut = ex.decode_progress(many)
    assert len(kept) == ex.MAX_PROGRESS and len(cut) == 149 - ex.MAX_PROGRESS


@pytest.mark.parametrize("name", ["hello-world", "paper-small"])
def test_the_posts_exercises_have_the_engines_answers(name):
    model = MODELS[name]
    src, tgt = "Hello World", "Hola Mundo"
    trace = model.run(src, tgt)
    blind = ex.order_blindness(model, src)
    assert blind.value == "same" and blind.evidence["without_pe"] < 1e-9 < blind.evidence["with_pe"]
    assert ex.cross_attention_keys(trace).value == len(trace.src_tokens) == 2
    d, f = model.config.d_model, model.config.d_ff
    assert ex.ffn_weights(model).value == 2 * d * f + f + d
    written = generate(model, src, max_len=ex.GENERATED)
    assert ex.decoder_passes(written).value == len(written.steps)
    residual = ex.residual_effect(model, src, tgt)
    assert residual.value == "alone" and residual.evidence["gaps"]["on"] > 0.1
    assert ex.next_token(trace).value == model.vocab.tokens[int(np.argmax(trace["probs"][-1]))]
    greedy = ex.greedy_optimal(written, beam_search(model, src, width=ex.BEAM_WIDTH, max_len=ex.GENERATED, alpha=0.0))
    (_, greedy_lp), (_, beam_lp) = greedy.evidence["greedy"], greedy.evidence["beam"]
    assert greedy.value == ("no" if beam_lp > greedy_lp + 1e-9 else "yes") and beam_lp >= greedy_lp - 1e-9


@pytest.mark.hostile
@pytest.mark.parametrize("given, code", [("2", "right"), ("2.0", "right"), ("3", "wrong"), ("1+1", "expression"),
                                         ("nan", "not_finite"), ("x" * 10_000, "too_long")])
def test_a_counted_answer_is_exact(given, code):
    answer = ex.cross_attention_keys(MODELS["hello-world"].run("Hello World", "Hola Mundo"))
    assert ex.check_answer(answer, given).code == code


@pytest.mark.hostile
def test_a_choice_or_token_answer_is_compared_never_evaluated():
    trace = MODELS["hello-world"].run("Hello World", "Hola Mundo")
    token = ex.next_token(trace)
    assert ex.check_answer(token, f"  {token.value.upper()} ").right
    assert ex.check_answer(token, "x" * 10_000).code == "too_long" and ex.check_answer(token, "").code == "empty"
    blind = ex.order_blindness(MODELS["hello-world"], "Hello World")
    assert ex.check_answer(blind, "same").right and ex.check_answer(blind, "different").code == "wrong"
    assert ex.check_answer(blind, "forged").code == "wrong" and ex.check_answer(blind, None).code == "empty"


def test_a_decoder_only_model_has_its_exercises_but_cross_attention():
    model = MODELS["decoder-only"]
    trace = model.run("Hello World", "Hola Mundo")
    assert ex.cross_attention_keys(trace) is None
    assert ex.residual_effect(model, "Hello World", "Hola Mundo").value == "alone"
    assert ex.decoder_passes(generate(model, "Hello World", max_len=ex.GENERATED)).evidence["encoder"] == 0
    assert ex.ffn_weights(model).value == 2 * 12 * 20 + 20 + 12


def test_an_experiment_compares_both_sides_whatever_the_current_setting():
    """The learner may have turned the residual or the positional encoding off already: the answers still compare
    the switch on and off."""
    model = MODELS["hello-world"]
    off = engine.preset("hello-world", residual=False)
    assert (ex.residual_effect(off, "Hello World", "Hola Mundo")
            == ex.residual_effect(model, "Hello World", "Hola Mundo"))
    blind = ex.order_blindness(engine.preset("hello-world", pos_encoding="none"), "Hello World")
    assert blind == ex.order_blindness(model, "Hello World")
    assert blind.value == "same" and blind.evidence["with_pe"] > 0.001


@pytest.mark.parametrize("n_keys", [2, 3, 7])
def test_the_d_k_evidence_shows_what_its_explanation_claims(n_keys):
    """Random queries and keys of unit variance: a score's spread is about √d_k unscaled and about 1 divided by √d_k;
    unscaled, d_k = 256 saturates softmax (one-hot), scaled the largest weight stays about the same for every d_k.
    (Before, the table came from one model's weights: scaled d_k = 256 was 0.9997, like unscaled.)"""
    answer = ex.saturation(n_keys)
    table = answer.evidence["table"]
    for d_k in ex.SATURATION_D_K:
        assert table[(d_k, 1.0)]["spread"] == pytest.approx(math.sqrt(d_k), rel=0.05)
        assert table[(d_k, "sqrt_dk")]["spread"] == pytest.approx(1.0, rel=0.05)
    scaled = [table[(d_k, "sqrt_dk")]["peak"] for d_k in ex.SATURATION_D_K[1:]]
    assert max(scaled) - min(scaled) < 0.03 and table[(256, 1.0)]["peak"] > 0.9 > max(scaled)
    assert answer.value == "one_hot" and answer == ex.saturation(n_keys)  # seeded: the same table every time


def test_the_order_exercise_shows_both_orders_labelled_and_their_difference():
    model = MODELS["hello-world"]
    shown = ex.reordered(model, "Hello World")
    assert shown["words"] == ("Hello", "World") and shown["reversed_words"] == ("World", "Hello")
    np.testing.assert_array_equal(shown["difference"], shown["after"][::-1] - shown["before"])
    assert np.abs(shown["difference"]).max() > 1e-3  # the post's table of positions: the orders differ
    blind = ex.reordered(model.without_positions(), "Hello World")
    assert np.abs(blind["difference"]).max() <= ex.ROUNDING


@pytest.mark.parametrize("name", MODELS)
def test_every_question_gives_at_most_sixteen_numbers_to_combine(name):
    """On the paper preset a score took 64 + 64 numbers, a LayerNorm 512 and a probability 169 logits, shown as
    'a heatmap only': a question now gives at most MAX_GIVEN numbers to combine, the rest as partial sums (which
    by_hand uses in the test above)."""
    trace = MODELS[name].run("Hello World", "Hola Mundo")
    for number in (1, 2, 3):
        for q in ex.question_set(trace, number):
            assert sum(len(v) for v in q.given.values() if isinstance(v, tuple)) <= ex.MAX_GIVEN, q.id


def test_no_question_is_asked_without_a_finite_answer():
    """Exercise 3's state with the blog's softmax overflows: such cells are not asked, and said."""
    model = engine.preset("hello-world", d_k=256, d_v=256, attn_divisor=1.0, softmax="naive")
    trace = model.run("Hello World", "Hola Mundo")
    asked = [q for number in range(1, 6) for q in ex.question_set(trace, number)]
    assert asked and all(math.isfinite(q.answer) for q in asked)
    assert ex.overflowing(trace, 1) == ["layer_norm", "prob"]
    assert ex.question(trace, "prob-1") is None and ex.overflowing(MODELS["hello-world"].run("Hello World"), 1) == []
