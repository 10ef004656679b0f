"""The derivations sympy works out (ui.lessons.derivations), drawn on the pages that teach their step, each in an
expander that draws it only while open (draw.derivation): the lines, with a sentence before them and, where the step
has them, the current numbers."""
import numpy as np
import streamlit as st

from engine.attention import bound_to
from engine.positional import sinusoid_angle

from ui.core.format import bmatrix
from ui.core.labels import input_side
from ui.views import draw

LINES = r" \\ "


def _sympy():
    """ui.lessons.derivations, imported when a derivation is first opened: importing sympy takes a second, which a page
    that shows its derivations closed does not pay."""
    from ui.lessons import derivations
    return derivations


def _show(ctx, key: str, lines, **values):
    draw.text_and_formula(ctx.t(f"derive.{key}.text", **values), LINES.join(lines))


def qkv(ctx, block: str, head: int):
    """Q = X W^Q (+ b^Q) of one head, written out for its first positions and columns, then with its numbers; X is
    what the page binds Q to (LayerNorm(X) in pre-norm)."""
    bound = bound_to(cross=False, pre_norm=ctx.config.norm_placement == "pre")[0]
    draw.derivation(ctx, "qkv", lambda: _qkv(ctx, block, head, bound), input=bound)


def _qkv(ctx, block, head, bound):
    derivations = _sympy()
    step = ctx.trace.step(f"{block}.q")
    source, W, *bias = step.inputs
    X, d_model = ctx.trace[source], ctx.config.d_model
    if d_model > derivations.QKV_TERMS:
        st.caption(ctx.t("derive.qkv.wide", d_model=d_model, most=derivations.QKV_TERMS))
        return
    b = ctx.model.params[bias[0]][head] if bias else None
    product = derivations.qkv_product(X, ctx.model.params[W][head], b, digits=ctx.state.digits)
    name = rf"Q_{{{head + 1}}}[1{{:}}{product.result.rows},\ 1{{:}}{product.result.cols}]"
    numbers = bmatrix(np.array(product.result, dtype=float), ctx.state.digits)
    _show(ctx, "qkv", [f"{name} = {product.lines[0]}", f"= {product.lines[1]}", f"= {numbers}"], x=source,
          head=head + 1, input=bound)


def softmax(ctx):
    draw.derivation(ctx, "softmax", lambda: _show(ctx, "softmax", _sympy().softmax_jacobian().lines))


def layer_norm(ctx):
    form = ctx.config.layer_norm
    draw.derivation(ctx, "layer_norm",
                    lambda: _show(ctx, f"layer_norm.{form}", _sympy().layer_norm_jacobian(form).lines))


def cross_entropy(ctx):
    draw.derivation(ctx, "cross_entropy", lambda: _show(ctx, "cross_entropy", _sympy().cross_entropy_gradient().lines))


def pe_rotation(ctx):
    draw.derivation(ctx, "pe_rotation", lambda: _pe_rotation(ctx))


def _pe_rotation(ctx):
    """R(k) by the angle-sum identities; with the model's encoding (the paper's), PE(1) = R(1) PE(0) in numbers for
    the first frequency pair."""
    derivations = _sympy()
    _show(ctx, "pe_rotation", derivations.pe_rotation().lines)
    pe = ctx.trace[f"{input_side(ctx.config)}.pos"]  # (n, d_model): a decoder-only model's one sequence has no src
    if ctx.config.pos_encoding != "sinusoidal":
        st.caption(ctx.t("derive.pe_rotation.other"))
    elif pe.shape[0] > 1 and pe.shape[1] > 1:
        omega = sinusoid_angle(1, ctx.config.d_model, 0)
        digits = ctx.state.digits
        before, after = (bmatrix(pe[pos, :2][:, None], digits) for pos in (0, 1))
        draw.text_and_formula(ctx.t("derive.pe_rotation.numbers"), rf"{after} = R(1)\,{before} = "
                              rf"{bmatrix(derivations.rotation(omega, 1), digits)}\,{before}")
