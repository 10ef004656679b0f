"""The hello-world preset reproduces the numbers printed in seed 002's notebook, to the printed precision."""
import math

import numpy as np
import pytest

import engine
from engine import blog


def close(actual, printed, decimals=8):
    np.testing.assert_allclose(actual, printed, rtol=0, atol=0.5 * 10.0**-decimals)


@pytest.fixture(scope="module")
def trace():
    return engine.preset("hello-world").run("Hello World")


@pytest.fixture(scope="module")
def sqrt3():
    return engine.preset("hello-world", attn_divisor=math.sqrt(3)).run("Hello World")


def test_encoder_input_is_embedding_plus_printed_pe(trace):
    close(trace["src.embed"], [[1, 2, 3, 4], [2, 3, 4, 5]])
    close(trace["src.pos"], [[0, 1, 0, 1], [0.84, 0.99, 0, 1]])
    close(trace["src.input"], blog.PRINTED["encoder_input"])


def test_keys_values_queries_of_head_1(trace):
    close(trace["enc.0.attn.k"][0], blog.PRINTED["K1"])
    close(trace["enc.0.attn.v"][0], blog.PRINTED["V1"])
    close(trace["enc.0.attn.q"][0], blog.PRINTED["Q1"])


def test_scores_of_head_1(trace):
    close(trace["enc.0.attn.scores"][0], blog.PRINTED["scores1"], decimals=4)


def test_sqrt3_scaled_scores_and_saturated_softmax(sqrt3):
    close(sqrt3["enc.0.attn.scaled"][0], blog.PRINTED["scores1_sqrt3"])
    np.testing.assert_allclose(sqrt3["enc.0.attn.weights"][0], blog.PRINTED["weights1_sqrt3"], rtol=1e-8)
    np.testing.assert_allclose(sqrt3["enc.0.attn.weights"][1], blog.PRINTED["weights2_sqrt3"], rtol=1e-8)
    close(sqrt3["enc.0.attn.heads"][0], blog.PRINTED["head1_sqrt3"], decimals=6)
    close(sqrt3["enc.0.attn.heads"][1], blog.PRINTED["head2_sqrt3"], decimals=6)


def test_sqrt_dk_divisor_is_the_same_as_sqrt3():
    by_name = engine.preset("hello-world", attn_divisor="sqrt_dk").run("Hello World")
    np.testing.assert_allclose(by_name["enc.0.attn.weights"][0, 0, 0], 4.67695573e-10, rtol=1e-8)


def test_both_heads_divided_by_30(trace):
    close(trace["enc.0.attn.heads"][0], blog.PRINTED["head1_div30"])
    close(trace["enc.0.attn.heads"][1], blog.PRINTED["head2_div30"])
    close(trace["enc.0.attn.concat"], np.hstack([blog.PRINTED["head1_div30"], blog.PRINTED["head2_div30"]]))


def test_z_is_the_post_code_output(trace):
    close(trace["enc.0.attn.out"], blog.PRINTED["Z"])


def test_residual_mean_std_and_layer_norm(trace):
    residual = trace["enc.0.add1"]
    close(residual.mean(axis=-1, keepdims=True), blog.PRINTED["mean"])
    close(residual.std(axis=-1, keepdims=True), blog.PRINTED["std"])
    close(trace["enc.0.ln1"], blog.PRINTED["layer_norm"])


def test_decoder_starts_with_sos_embedding_plus_pe(trace):
    assert trace.tgt_tokens == ("SOS",)
    close(trace["tgt.input"], [[1, 1, 0, 1]])


def test_vocabulary_is_the_posts_ten_words_plus_unk(trace):
    assert trace.model.vocab.tokens[:10] == ("hello", "mundo", "world", "how", "?", "EOS", "SOS", "a", "hola", "c")
    assert trace["probs"].shape == (1, 11)


def test_code_matrices_not_latex_ones():
    params = engine.preset("hello-world").params
    np.testing.assert_array_equal(params["enc.0.attn.W_Q"][0][3], [1, 0, 0])  # LaTeX shows [1, 1, 0]
    np.testing.assert_array_equal(params["enc.0.attn.W_K"][1][2], [1, 1, 0])  # LaTeX shows [1, 0, 1]


def test_blog_formula_pe_is_exact_where_the_table_is_rounded():
    pe = engine.preset("hello-world", pos_encoding="blog").run("Hello World")["src.pos"]
    np.testing.assert_allclose(pe[1], [math.sin(1), math.cos(0.01), math.sin(1e-4), math.cos(1e-6)], rtol=1e-15)


def test_paper_pe_differs_from_the_post():
    pe = engine.preset("hello-world", pos_encoding="sinusoidal").run("Hello World")["src.pos"]
    np.testing.assert_allclose(pe[1], [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)], rtol=1e-15)


def test_naive_softmax_overflows_like_the_post_and_stable_does_not():
    big = {"enc.0.attn.W_Q": engine.preset("hello-world").params["enc.0.attn.W_Q"] * 100}
    naive = engine.preset("hello-world", softmax="naive").with_params(big).run("Hello World")
    stable = engine.preset("hello-world").with_params(big).run("Hello World")
    assert np.isnan(naive["enc.0.attn.weights"]).any()
    assert np.isfinite(stable["enc.0.attn.weights"]).all()
    assert "enc.0.attn.weights" in naive.nonfinite and not stable.nonfinite


@pytest.mark.parametrize("src, tgt, printed_rows", [("Hello", "", 1), ("Hello World", "hola", 2)])
def test_the_printed_table_is_the_formula_where_every_cell_is_printed(src, tgt, printed_rows):
    """The SOS-only target has one row of the post's table (position 0), the two-word sentence both."""
    for side in ("src", "tgt"):
        step = engine.preset("hello-world").run(src, tgt).step(f"{side}.pos")
        assert step.formula.count(r"\\") == printed_rows - 1 and r"\begin{cases}" not in step.formula
        assert step.formula.startswith(r"PE = \begin{bmatrix} 0 & 1 & 0 & 1")


def test_beyond_the_printed_table_the_formula_says_which_cells_are_computed():
    """A third position is the post's formula rounded to 2 decimals, and its formula and arithmetic say so."""
    trace = engine.preset("hello-world").run("Hello World hello", "hola mundo")
    for side in ("src", "tgt"):
        step = trace.step(f"{side}.pos")
        assert r"T_{pos,j} & pos < 2,\ j < 4" in step.formula and r"\operatorname{round}_2" in step.formula
        angle = 2 / 10000 ** (2 * 1 / 4)  # position 2, column 1: cos, the post's exponent 2j/d
        assert trace[f"{side}.pos"][2, 1] == round(math.cos(angle), 2) == 1.0
        assert trace.explain(f"{side}.pos", (2, 1)).text.startswith(f"{side}.pos[2, 1] = round(cos(2 / 10000^(2/4))")
        assert "⟦post-value-formula|formula=cos(" in trace.explain(f"{side}.pos", (1, 1)).text
    wide = engine.preset("hello-world", d_model=6, d_k=3, d_v=3).run("Hello")
    assert r"\begin{cases}" in wide.step("src.pos").formula  # columns 4 and 5 were never printed


def test_a_weights_difference_counts_its_row_from_one_and_names_the_codes_numbers():
    """The differences wrote W₁^Q[3,:] for the row the app calls row 4 (its [1, 0, 0]): rows count from 1."""
    weights = [d for d in blog.DIFFERENCES if "weight" in d]
    assert weights
    for difference in weights:
        param, head, row = difference["weight"]
        symbol = {"W_Q": "W^Q", "W_K": "W^K", "W_V": "W^V"}[param] + f"_{head + 1}"
        code = blog.ENCODER_ATTENTION[param][head][row]
        written = f"{symbol}[{row + 1},:] = [{', '.join(str(int(x)) for x in code)}]"
        assert difference["engine"] == written
        assert difference["post"] == f"{symbol}[{row + 1},:] = [{', '.join(map(str, difference['printed']))}]"
        assert tuple(code) != difference["printed"]


def test_every_difference_is_explained():
    keys = [d["key"] for d in blog.DIFFERENCES]
    assert len(keys) == len(set(keys))
    for difference in blog.DIFFERENCES:
        assert difference["post"] and difference["engine"]
