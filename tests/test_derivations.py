"""sympy's derivations (ui/lessons/derivations.py) against the engine's numeric rules at random numbers, their LaTeX
through KaTeX, and the pages' expanders: a closed one is its label only, an open one shows the derivation."""
from types import SimpleNamespace

import numpy as np
import pytest
import sympy as sp

import engine
from engine.attention import softmax
from engine.kinds import KINDS
from engine.loss import cross_entropy_grad, target_distribution
from engine.positional import blog_exponent, sinusoid_angle, sinusoidal
from test_app import latex, open_page
from test_engine_imports import imported_top_modules
from test_katex import katex_errors
from ui.core.i18n import EN, ZH
from ui.lessons import derivations
from ui.views.draw import ROOM

RNG = np.random.default_rng(19)


def _by_name(expr) -> dict:
    return {str(symbol): symbol for symbol in expr.free_symbols}


def _rule(kind, g, value=None, meta=None, **inputs):
    """The engine's backward rule of a step kind, its inputs given by name: {input name: gradient}."""
    step = SimpleNamespace(inputs=tuple(inputs) or ("x",), value=value, meta=meta or {})
    return dict(KINDS[kind].backward(SimpleNamespace(resolve=inputs.__getitem__), step, g))


@pytest.mark.parametrize("trial", range(3))
def test_softmax_jacobian_is_the_backward_rule(trial):
    z, g = RNG.normal(size=3) * 2, RNG.normal(size=3)
    s = softmax(z[None, :])[0]
    jacobian = derivations.softmax_jacobian().result
    symbols = sp.symbols("s_1:4", real=True)
    J = np.array(sp.lambdify(symbols, jacobian)(*s), dtype=float)  # J[i, j] = ds_i/dz_j
    engine_grad = _rule("softmax", g[None, :], value=s[None, :])["x"][0]
    np.testing.assert_allclose(J.T @ g, engine_grad, atol=1e-12)
    numeric = np.array([(softmax((z + h)[None])[0] - softmax((z - h)[None])[0]) / 2e-6 for h in np.eye(3) * 1e-6]).T
    np.testing.assert_allclose(J, numeric, atol=1e-8)  # and it is the Jacobian of the engine's softmax


@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.3])
def test_cross_entropy_gradient_is_p_minus_q(smoothing):
    result = derivations.cross_entropy_gradient().result
    assert result == sp.Symbol("p_1", real=True) - sp.Symbol("q_1", real=True)
    named = _by_name(result)
    for target in range(3):
        logits = RNG.normal(size=(1, 3)) * 3
        p, q = softmax(logits)[0], target_distribution([target], 3, smoothing)[0]
        derived = float(result.subs({named["p_1"]: p[0], named["q_1"]: q[0]}))
        engine_grad = cross_entropy_grad(logits, [target], label_smoothing=smoothing)[0, 0]
        assert derived == pytest.approx(engine_grad, abs=1e-12)


@pytest.mark.parametrize("form", ["paper", "blog"])
def test_layer_norm_jacobian_gives_the_backward_rule(form):
    d, eps = 5, 0.1  # a large eps tells the forms apart
    x, gamma, g = RNG.normal(size=d), RNG.normal(size=d), RNG.normal(size=d)
    centred = x - x.mean()
    sigma = np.sqrt(np.mean(centred**2))
    normed = centred / (np.sqrt(sigma**2 + eps) if form == "paper" else sigma + eps)
    result = derivations.layer_norm_jacobian(form).result
    named = _by_name(result)
    entry = sp.lambdify([named[n] for n in (r"\delta_{ik}", "d", r"\hat{x}_i", r"\hat{x}_k", r"\sigma", r"\epsilon")],
                        result)
    J = np.array([[entry(float(i == k), d, normed[i], normed[k], sigma, eps) for i in range(d)] for k in range(d)])
    engine_grad = _rule("layer_norm", g[None, :], x=x[None, :], gamma=gamma, beta=np.zeros(d),
                        meta={"eps": eps, "form": form})["x"][0]
    np.testing.assert_allclose(J.T @ (g * gamma), engine_grad, atol=1e-12)


@pytest.mark.parametrize("d_model", [4, 16, 512])
def test_pe_rotation_moves_the_sinusoidal_table(d_model):
    pe = sinusoidal(40, d_model)
    for i in RNG.choice(d_model // 2, size=min(4, d_model // 2), replace=False):
        omega = sinusoid_angle(1, d_model, 2 * i)
        for pos, k in RNG.integers(0, 20, size=(3, 2)):
            R = derivations.rotation(omega, k)
            np.testing.assert_allclose(R @ pe[pos, 2 * i:2 * i + 2], pe[pos + k, 2 * i:2 * i + 2], atol=1e-12)
            np.testing.assert_allclose(R.T @ R, np.eye(2), atol=1e-12)


def test_the_blogs_encoding_is_no_rotation():
    """The page says so for the other encodings: the blog's columns 2i and 2i + 1 have different frequencies."""
    pe = sinusoidal(8, 4, blog_exponent)
    R = derivations.rotation(sinusoid_angle(1, 4, 0), 1)
    assert not np.allclose(R @ pe[0, 2:4], pe[1, 2:4], atol=1e-3)


@pytest.mark.parametrize("bias", [False, True])
def test_qkv_product_is_the_engines_q(bias):
    model = engine.preset("hello-world", seed=3, attn_bias=bias)
    trace = model.run("Hello World")
    step = trace.step("enc.0.attn.q")
    for head in range(model.config.n_heads):
        b = model.params["enc.0.attn.b_Q"][head] if bias else None
        product = derivations.qkv_product(trace[step.inputs[0]], model.params["enc.0.attn.W_Q"][head], b, digits=3)
        np.testing.assert_allclose(np.array(product.result, dtype=float), trace["enc.0.attn.q"][head][:2, :2],
                                   atol=1e-12)
        symbolic, with_numbers = product.lines
        assert symbolic.count("x_{11} w_{11}") == 1 and ("b_{1}" in symbolic) == bias
        assert with_numbers.count(r"\cdot") == 4 * 4  # 2 x 2 entries of d_model = 4 products


def all_lines():
    model = engine.preset("hello-world", seed=0, attn_bias=True)
    trace = model.run("Hello World")
    product = derivations.qkv_product(trace["src.input"], model.params["enc.0.attn.W_Q"][0],
                                      model.params["enc.0.attn.b_Q"][0])
    return [derivations.softmax_jacobian(), derivations.cross_entropy_gradient(), derivations.pe_rotation(),
            derivations.layer_norm_jacobian("paper"), derivations.layer_norm_jacobian("blog"), product]


def test_every_derivation_renders_in_katex(chromium):
    formulas = [ROOM[0] + r" \\ ".join(d.lines) + ROOM[1] for d in all_lines()]
    assert katex_errors(chromium, formulas) == [""] * len(formulas)


# ---- the pages ---------------------------------------------------------------------------------------------------

PAGES = {"qkv": "qkv", "attention": "softmax", "add_norm": "layer_norm", "positional": "pe_rotation",
         "train": "cross_entropy"}


def test_pages_import_sympy_only_when_a_derivation_opens():
    """Importing sympy takes a second: a page whose derivations are closed does not pay it."""
    assert "sympy" not in imported_top_modules("import sys, ui.lessons.derivation_views, ui.lessons.training_views")


def _box(at, key):
    boxes = [e for e in at.expander if e.proto.id.endswith(f"derive.{key}")]
    assert len(boxes) == 1, [e.proto.id for e in at.expander]
    return boxes[0]


@pytest.mark.parametrize("page", PAGES)
def test_a_closed_derivation_is_its_label_only_and_an_open_one_shows_it(page):
    key = PAGES[page]
    at = open_page(page)
    box = _box(at, key)
    assert box.label == EN[f"derive.{key}"].format(input="X") and len(box.children) == 0
    at.session_state[f"derive.{key}"] = True
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    text = _box(at, key).children[0].value if key != "layer_norm" else None
    formulas = latex(at)
    if key == "qkv":  # the preset's d_model = 4: written out, with the numbers of head 1's Q
        assert text.startswith(EN["derive.qkv.text"].format(x="src.input", head=1, input="X")[:40])
        assert any(r"x_{11} w_{11} + x_{12} w_{21}" in f for f in formulas)
    elif key == "softmax":
        assert any(r"s_{i} \left(\delta_{i j} - s_{j}\right)" in f for f in formulas)
    elif key == "layer_norm":  # the preset's LayerNorm is the blog's: sigma + eps
        assert any(r"\hat{x}_k = \frac{x_{k} - \mu}{\epsilon + \sigma}" in f for f in formulas)
    elif key == "cross_entropy":
        assert any(r"p_{j} - \delta_{j y}" in f for f in formulas)
    else:  # the preset's encoding is the post's printed table: the rotation is the paper's
        assert any(r"R(k)^\top R(k)" in f for f in formulas)
        assert EN["derive.pe_rotation.other"] in [c.value for c in at.caption]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_qkv_derivation_names_q_s_input_as_the_page_binds_it_in_pre_norm(lang):
    """In pre-norm the page writes Q_i = LayerNorm(X) W_i^Q; its derivation's title and text said Q = X W^Q, X the
    sub-layer's input, of the same numbers: they name LayerNorm(X), the step enc.0.ln1."""
    catalog, bound = {"en": EN, "zh": ZH}[lang], r"\operatorname{LayerNorm}(X)"
    at = open_page("qkv", cfg="norm_placement:pre", lang=lang)
    assert _box(at, "qkv").label == catalog["derive.qkv"].format(input=bound)
    assert f"$Q = {bound} W^Q$" in _box(at, "qkv").label
    at.session_state["derive.qkv"] = True
    at.run()
    text = _box(at, "qkv").children[0].value
    assert text.startswith(catalog["derive.qkv.text"].format(x="enc.0.ln1", head=1, input=bound)), text


def test_the_rotation_in_numbers_and_a_wide_q_in_chinese():
    at = open_page("positional", cfg="pos_encoding:sinusoidal", lang="zh")
    at.session_state["derive.pe_rotation"] = True
    at.run()
    assert _box(at, "pe_rotation").label == ZH["derive.pe_rotation"]
    assert any(r"= R(1)\," in f and "0.8415" in f for f in latex(at))  # sin 1 in row 1, column 0
    at = open_page("qkv", preset="paper", lang="zh")
    at.session_state["derive.qkv"] = True
    at.run()
    assert ZH["derive.qkv.wide"].format(d_model=512, most=4) in [c.value for c in at.caption]
