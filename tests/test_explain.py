"""Per-cell arithmetic shows the real numbers and ends in the cell's value."""
import math
import re

import numpy as np
import pytest

import engine
from engine.explain import TEXT_DIGITS
from engine.notation import num_tex, significant


def num(x):
    """A number as explain()'s text writes it, at its default digits."""
    return significant(x, TEXT_DIGITS)


def explain(name, index, **overrides):
    return engine.preset("hello-world", **overrides).run("Hello World", "hola").explain(name, index)


def test_dot_product_of_query_and_key():
    assert (explain("enc.0.attn.scores", (0, 0, 1)).text
            == "enc.0.attn.scores[0, 0, 1] = 8×6.84 + 3×9.99 + 3×6.84 = 105.21")


def test_projection_term_by_term():
    e = explain("enc.0.attn.k", (0, 1, 1))
    assert e.text.endswith("= 2.84×0 + 3.99×1 + 4×0 + 6×1 = 9.99")


def test_division_by_30():
    assert explain("enc.0.attn.scaled", (0, 0, 1)).text.endswith("= 105.21 / 30 = 3.507")


def test_softmax_shows_exponentials_and_sum():
    e = explain("enc.0.attn.weights", (0, 0, 1))
    assert "e^(3.507 − 3.507)" in e.text and e.text.endswith("≈ 0.77562203")
    assert r"\frac{e^{3.507 - 3.507}}" in e.latex


def test_concat_names_heads_from_1_like_the_paper():
    e = explain("enc.0.attn.concat", (1, 4))  # d_v = 3: column 4 is column 1 of head_2
    assert e.text == "enc.0.attn.concat[1, 4] = head_2[1, 1] ≈ 3.9193774"
    assert r"\text{head}_{2}[1, 1]" in e.latex


def test_layer_norm_shows_mean_and_variance():
    e = explain("enc.0.ln1", (0, 0))
    assert e.text.startswith("⟦with⟧μ ≈ ") and "≈ −4.5883757⟦comma⟧σ² ≈ (17.052319² + " in e.text  # word slots
    assert "σ = √σ² ≈ √98.418608 ≈ 9.9206153" in e.text and e.text.endswith(" ≈ 1.7188769")


@pytest.mark.parametrize("form", ["paper", "blog"])
def test_layer_norm_writes_every_number_its_hand_computation_needs(form):
    """μ, σ², σ (the blog's form), the denominator and the normalised x̂ are each written, in the LaTeX and in the
    text; a large ε keeps σ and σ + ε apart."""
    model = engine.preset("hello-world", layer_norm=form, eps=0.5)
    trace = model.run("Hello World", "hola")
    x, j = trace["enc.0.add1"][1], 2
    mu, var = x.mean(), x.var()
    denominator = np.sqrt(var + 0.5) if form == "paper" else np.sqrt(var) + 0.5
    normed = (x[j] - mu) / denominator
    numbers = [mu, var, denominator, normed, *(x - mu)] + ([np.sqrt(var)] if form == "blog" else [])
    e = trace.explain("enc.0.ln1", (1, j))
    assert np.isclose(normed * model.params["enc.0.ln1.gamma"][j] + model.params["enc.0.ln1.beta"][j], e.value)
    assert [n for n in numbers if num_tex(n) not in e.latex or num(n) not in e.text] == []
    assert (r"\sqrt{\sigma^2 + \epsilon} \approx " if form == "paper" else r"\sigma + \epsilon \approx ") in e.latex


@pytest.mark.parametrize("form", ["paper", "blog"])
def test_layer_norm_of_a_constant_row_with_no_epsilon_is_nan_not_an_error(form):
    """d_model = 1 and ε = 0 (both allowed) divide by zero: the pass gives NaN, and so does its explanation."""
    trace = engine.preset("hello-world", d_model=1, n_heads=1, d_ff=2, eps=0.0, layer_norm=form).run("Hello World")
    e = trace.explain("enc.0.ln1", (0, 0))
    assert math.isnan(e.value) and e.text.endswith("/ 0 ≈ NaN⟦with-end⟧"
                                                   "enc.0.ln1[0, 0] = x̂ × γ + β = NaN × 1 + 0 = NaN")


def test_gelu_writes_the_erf_it_uses():
    trace = engine.preset("hello-world", activation="gelu").run("Hello World")
    h = trace["enc.0.ffn.hidden"][0, 1]
    e = trace.explain("enc.0.ffn.act", (0, 1))
    assert [n for n in (h / 2, h / np.sqrt(2), math.erf(h / np.sqrt(2))) if num_tex(n) not in e.latex
            or num(n) not in e.text] == []


def test_swish_writes_the_exponential_it_uses():
    trace = engine.preset("hello-world", activation="swish").run("Hello World")
    h = trace["enc.0.ffn.hidden"][0, 1]
    e = trace.explain("enc.0.ffn.act", (0, 1))
    assert e.value == pytest.approx(h / (1 + math.exp(-h)), rel=1e-15)
    assert [n for n in (h, -h, math.exp(-h)) if num_tex(n) not in e.latex or num(n) not in e.text] == []


def test_the_latex_writes_the_digits_asked_for_and_the_text_keeps_eight():
    """The app's digits setting: the drill-down's LaTeX follows it, every number of it, down to the cell's value;
    the plain text, to check by hand, keeps 8 digits. A number printed is the same text in a matrix (ui.core.format)."""
    trace = engine.preset("hello-world", attn_divisor="sqrt_dk").run("Hello World", "hola")
    e = trace.explain("enc.0.attn.scaled", (0, 0, 1), digits=3)
    assert e.latex.endswith(r"\ &\approx 60.7\end{aligned}") and r"\frac{105}{1.73}" in e.latex
    assert e.text == explain("enc.0.attn.scaled", (0, 0, 1), attn_divisor="sqrt_dk").text
    assert num_tex(e.value, 3) == "60.7" and num_tex(e.value) == "60.743"  # outside explain(): 6 digits


def test_the_text_writes_the_digits_asked_for_also_where_it_is_written_late():
    """The app gives its digits setting to the text too. LayerNorm's definitions are written on first reading,
    after explain() returned: they keep the digits asked for."""
    trace = engine.preset("hello-world", attn_divisor="sqrt_dk").run("Hello World", "hola")
    assert trace.explain("enc.0.attn.scaled", (0, 0, 1), 3, 3).text == \
        "enc.0.attn.scaled[0, 0, 1] ≈ 105 / √d_k ≈ 105 / 1.73 ≈ 60.7"
    e = trace.explain("enc.0.ln1", (0, 0), 3, 3)
    assert "σ = √σ² ≈ √113 ≈ 10.6" in e.text and e.text.endswith("≈ 1.72 × 1 + 0 ≈ 1.72")
    assert trace.explain("enc.0.ln1", (0, 0), 3).text.endswith("≈ 1.7163583")  # the engine's default: 8


def test_square_root_divisor_is_written_as_its_number():
    e = explain("enc.0.attn.scaled", (0, 0, 1), attn_divisor="sqrt_dk")
    assert r"\frac{105.21}{\sqrt{d_k}} \approx \frac{105.21}{1.73205}" in e.latex
    assert e.text == "enc.0.attn.scaled[0, 0, 1] = 105.21 / √d_k ≈ 105.21 / 1.7320508 ≈ 60.743022"


def test_a_divisor_set_by_hand_is_never_called_sqrt_dk_whatever_the_digits():
    """At 2 digits the divisor 30.5 prints as 30, unlike the formula's 30.5: it is still the number set by hand."""
    trace = engine.preset("hello-world", attn_divisor=30.5).run("Hello World", "hola")
    e = trace.explain("enc.0.attn.scaled", (0, 0, 1), 2, 2)
    assert e.text == "enc.0.attn.scaled[0, 0, 1] ≈ 105 / 30 ≈ 3.4" and "sqrt" not in e.latex


TEX_NUMBER = re.compile(r"(-?\d+(?:\.\d+)?)(?: \\times 10\^\{(-?\d+)\})?")  # 1.5, -2, 1 \times 10^{-6}
TEXT_NUMBER = re.compile(r"(−?\d+(?:\.\d+)?)(?:×10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+))?")  # 1.5, −2, 1×10⁻⁶
PLAIN_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻−", "0123456789--")


def _numbers(written, pattern):
    return [float(m.translate(PLAIN_DIGITS)) * 10.0 ** int(e.translate(PLAIN_DIGITS) or 0)
            for m, e in pattern.findall(written)]


def _not_in(numbers, others):
    """The numbers that are in no other: the LaTeX's 6 digits against the text's 8."""
    return [x for x in numbers if not any(math.isclose(x, y, rel_tol=1e-5, abs_tol=1e-12) for y in others)]


@pytest.mark.parametrize("overrides", [
    {}, dict(norm_placement="pre", activation="gelu", softmax="naive", layer_norm="paper", attn_bias=True,
             pos_encoding="sinusoidal", embed_scale=True, attn_divisor="sqrt_dk"),
    dict(pos_encoding="blog"), dict(pos_encoding="learned"), dict(pos_encoding="none")])
def test_text_and_latex_write_the_same_numbers(overrides):
    """Every cell of every step: the plain text and the LaTeX name the same numbers (a LaTeX sum elided with
    ⋯ aside; its squares ^2 are the text's ²), so neither uses a number the other leaves out."""
    trace = engine.preset("hello-world", **overrides).run("Hello World", "hola mundo", dropout=0.3 if overrides else 0)
    differ = {}
    for step in trace.steps():
        for index in np.ndindex(step.shape):
            e = trace.explain(step.name, index)
            if r"\cdots" not in e.latex:
                tex, text = _numbers(e.latex.replace("^2", ""), TEX_NUMBER), _numbers(e.text, TEXT_NUMBER)
                if _not_in(tex, text) or _not_in(text, tex):
                    differ[step.name, index] = (_not_in(tex, text), _not_in(text, tex))
    assert differ == {}


def test_positions_are_written_from_first_and_the_cell_named_by_label():
    """The app's drill-down counts what it writes from 1 and names the cell as its page does; the default (the CLI's,
    the step's name) counts from 0, as code does. A value of the paper's formula (PE's pos) is not a position."""
    trace = engine.preset("hello-world").run("Hello World", "hola")
    written = lambda name, index: trace.explain(name, index, first=1, label=("L", "L")).text  # noqa: E731
    assert written("dec.0.self_attn.mask", (0, 1)) == "L = −∞ ⟦comes-after|j=2|i=1⟧ = −∞"
    assert written("enc.0.attn.concat", (1, 4)) == "L = head_2[2, 2] ≈ 3.9193774"
    assert written("src.embed", (1, 0)) == "L = E[world, 1] = 2"
    assert written("enc.out", (1, 2)) == "L = enc.0.ln2[2, 3] ≈ −0.38568961"
    assert r"\hat{x}_{3} \cdot \gamma_{3} + \beta_{3}" in trace.explain("enc.0.ln1", (1, 2), first=1).latex
    sinusoid = engine.preset("hello-world", pos_encoding="sinusoidal").run("Hello World")
    assert sinusoid.explain("src.pos", (1, 1), first=1).text == (
        "src.pos[2, 2] = cos(1 / 10000^(0/4)) = cos(1) ≈ 0.54030231")  # position 2 has pos = 1
    assert trace.explain("enc.0.attn.q", (0, 1, 2)).text.startswith("enc.0.attn.q[0, 1, 2] = ")


def test_mask_and_sin_cos_argument():
    e = engine.preset("paper", d_model=8, n_heads=2, d_ff=8, n_layers=1).run("hello", "hola mundo").explain(
        "dec.0.self_attn.mask", (0, 1))
    assert e.text.endswith("−∞ ⟦comes-after|j=1|i=0⟧ = −∞")  # the words are the catalog's: codes and values
    pe = explain("src.pos", (1, 1), pos_encoding="sinusoidal")
    assert pe.text == "src.pos[1, 1] = cos(1 / 10000^(0/4)) = cos(1) ≈ 0.54030231"


def test_long_sums_are_elided_in_latex_but_complete_in_text():
    trace = engine.preset("paper", n_layers=1).run("hello")
    e = trace.explain("enc.0.ffn.hidden", (0, 0))
    assert "text" not in vars(e)  # written when read: the app shows the LaTeX, and the text only when asked
    assert r"\cdots" in e.latex and len(re.findall(r"×(?!10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹])", e.text)) == 512
    assert e.text is e.text and e.text.endswith(f" ≈ {num(e.value)}")


def test_text_in_latex_is_escaped_for_katex():
    """KaTeX rejects a bare _ or ^ inside \\text{...} (it renders the whole formula as a red error)."""
    import re

    trace = engine.preset("hello-world", n_layers=2).run("Hello World", "hola mundo")
    for step in trace.steps():
        for latex in (step.formula, trace.explain(step.name, (0,) * step.value.ndim).latex):
            for content in re.findall(r"\\text\{((?:[^{}]|\{[^{}]*\})*)\}", latex):
                assert not re.search(r"(?<!\\)[_^%#&]", content), (step.name, content)


def nearly_equal_scores(gap):
    """The post's model with every query the same: W_Q = 0 and a bias that makes head 1's two scaled scores of each
    query differ by `gap` (its keys' first column times b_Q[0, 0], divided by 30)."""
    model = engine.preset("hello-world", attn_bias=True)
    keys = model.run("Hello World", "hola")["enc.0.attn.k"][0, :, 0]  # (n,) head 1, column 1: W_Q does not change K
    b_q = np.zeros_like(model.params["enc.0.attn.b_Q"])  # (h, d_k)
    b_q[0, 0] = gap * 30 / (keys[0] - keys[1])
    return model.with_params({"enc.0.attn.W_Q": 0 * model.params["enc.0.attn.W_Q"], "enc.0.attn.b_Q": b_q})


def test_a_rounded_number_is_followed_by_approx_never_by_equals():
    """e^(−2×10⁻⁶) is 0.999998, which two digits show as 1: its sum with e^0 is ≈ 2, not = 2, and the weight ≈ 1/2
    ≈ 0.5, in the LaTeX and in the text; and 0.999998 is itself a rounding, of 0.999998000002."""
    trace = nearly_equal_scores(2e-6).run("Hello World", "hola")
    np.testing.assert_allclose(np.diff(trace["enc.0.attn.scaled"][0, 0]), -2e-6, rtol=1e-6)
    e = trace.explain("enc.0.attn.weights", (0, 0, 1), 2, 2)
    assert r"\approx 1 + 1 \approx 2" in e.latex and r"\approx \frac{1}{2} \\ &\approx 0.5" in e.latex
    assert "≈ 1 + 1 ≈ 2⟦with-end⟧" in e.text and e.text.endswith("≈ 1 / 2 ≈ 0.5")
    assert not re.search(r"= (1 \+ 1|2\b|\\frac\{1\}\{2\}|1 / 2|0\.5)", e.latex + e.text)
    text = trace.explain("enc.0.attn.weights", (0, 0, 1)).text  # 8 digits
    assert "≈ 1 + 0.999998 ≈ 1.999998⟦with-end⟧" in text and text.endswith("≈ 0.999998 / 1.999998 ≈ 0.4999995")


def test_exact_small_numbers_keep_equals():
    """Where every number shown is the value itself, each step says "=": equal scores give e^0 + e^0 = 1 + 1 = 2 and
    the weight 1/2 = 0.5; the post's 1 + 0 = 1 adds a position to an embedding; nothing is ≈."""
    model = engine.preset("hello-world")
    trace = model.with_params({"enc.0.attn.W_Q": 0 * model.params["enc.0.attn.W_Q"]}).run("Hello World", "hola")
    e = trace.explain("enc.0.attn.weights", (0, 0, 1), 2, 2)
    assert r"e^{0} + e^{0} \\ &\quad = 1 + 1 = 2" in e.latex
    assert e.latex.endswith(r"= \frac{1}{2} \\ &= 0.5\end{aligned}")
    assert e.text == ("⟦with⟧Σ = e^(0) + e^(0) = 1 + 1 = 2⟦with-end⟧"
                      "enc.0.attn.weights[0, 0, 1] = e^(0) / Σ = 1 / 2 = 0.5")
    position = trace.explain("src.input", (0, 0), first=1)
    assert position.text == "src.input[1, 1] = 1 + 0 = 1" and r"\approx" not in position.latex
