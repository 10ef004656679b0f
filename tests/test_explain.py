"""Per-cell arithmetic shows the real numbers and ends in the cell's value."""
import engine
from engine.explain import num


def explain(name, index, **overrides):
    return engine.preset("hello-world", **overrides).run("Hello World", "hola").explain(name, index)


def test_dot_product_of_query_and_key():
    assert explain("enc.0.attn.scores", (0, 0, 1)).text == "enc.0.attn.scores[0, 0, 1] = 8×6.84 + 3×9.99 + 3×6.84 = 105.21"


def test_projection_term_by_term():
    e = explain("enc.0.attn.k", (0, 1, 1))
    assert e.text.endswith("= 2.84×0 + 3.99×1 + 4×0 + 6×1 = 9.99")


def test_division_by_30():
    assert explain("enc.0.attn.scaled", (0, 0, 1)).text.endswith("= 105.21 / 30 = 3.507")


def test_softmax_shows_exponentials_and_sum():
    e = explain("enc.0.attn.weights", (0, 0, 1))
    assert "e^(3.507 − 3.507)" in e.text and e.text.endswith("= 0.77562203")
    assert r"\frac{e^{3.507 - 3.507}}" in e.latex


def test_concat_names_heads_from_1_like_the_paper():
    e = explain("enc.0.attn.concat", (1, 4))  # d_v = 3: column 4 is column 1 of head_2
    assert e.text == "enc.0.attn.concat[1, 4] = head_2[1, 1] = 3.9193774"
    assert r"\text{head}_{2}[1, 1]" in e.latex


def test_layer_norm_shows_mean_and_variance():
    e = explain("enc.0.ln1", (0, 0))
    assert e.text.startswith("With μ = ") and "= −4.5883757" in e.text and "σ² = mean((x − μ)²) = 98.418608" in e.text
    assert "= 1.7188769" in e.text


def test_mask_and_sin_cos_argument():
    e = engine.preset("paper", d_model=8, n_heads=2, d_ff=8, n_layers=1).run("hello", "hola mundo").explain(
        "dec.0.self_attn.mask", (0, 1))
    assert e.text.endswith("−∞ (position 1 comes after 0) = −∞")
    pe = explain("src.pos", (1, 1), pos_encoding="sinusoidal")
    assert pe.text == "src.pos[1, 1] = cos(1 / 10000^(0/4)) = cos(1) = 0.54030231"


def test_long_sums_are_elided_in_latex_but_complete_in_text():
    trace = engine.preset("paper", n_layers=1).run("hello")
    e = trace.explain("enc.0.ffn.hidden", (0, 0))
    assert "text" not in vars(e)  # written when read: the app shows the LaTeX, and the text only when asked
    assert r"\cdots" in e.latex and e.text.count("×") == 512
    assert e.text is e.text and e.text.endswith(f" = {num(e.value)}")


def test_text_in_latex_is_escaped_for_katex():
    """KaTeX rejects a bare _ or ^ inside \\text{...} (it renders the whole formula as a red error)."""
    import re

    trace = engine.preset("hello-world", n_layers=2).run("Hello World", "hola mundo")
    for step in trace.steps():
        for latex in (step.formula, trace.explain(step.name, (0,) * step.value.ndim).latex):
            for content in re.findall(r"\\text\{((?:[^{}]|\{[^{}]*\})*)\}", latex):
                assert not re.search(r"(?<!\\)[_^%#&]", content), (step.name, content)
