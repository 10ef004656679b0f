"""Derivations worked out by sympy, shown where the step they explain is taught: Q = X W^Q written out, the
softmax Jacobian, the LayerNorm Jacobian, the cross-entropy gradient after softmax, and the positional encoding's
rotation. Pure: each function returns its result (a sympy expression or matrix, which the tests hold against the
engine's numeric rules) and LaTeX lines.

sympy takes 40-300 ms per simplification, so each derivation is worked out once per process (functools.cache),
never on a rerun. Expressions are built from Symbols and numbers only: sympy never reads text (sympify and
parse_expr run eval; tests/test_security.py forbids them)."""
from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
import sympy as sp

SOFTMAX_SIZE = 3  # the softmax and cross-entropy are differentiated for 3 logits: small enough to read, i != j shown
QKV_TERMS = 4  # Q = X W^Q is written out when each entry is a sum of at most this many products (d_model)
QKV_BLOCK = 2  # ... for the first 2 positions and the first 2 columns of the head
POS, K, OMEGA = sp.symbols(r"pos k \omega", real=True)  # a position, a shift, a frequency of the encoding


class Derivation(NamedTuple):
    lines: tuple  # LaTeX, one line each
    result: object  # the sympy expression or matrix the lines end with


def _latex(expr, **options) -> str:
    return sp.latex(expr, order="none", **options)


def _symbols(name: str, n: int) -> list:
    return [sp.Symbol(f"{name}_{i + 1}", real=True) for i in range(n)]


def _equals(*sides) -> str:
    return " = ".join(side if isinstance(side, str) else _latex(side) for side in sides)


def _partial(of: str, by: str) -> str:
    return rf"\frac{{\partial {of}}}{{\partial {by}}}"


def _softmax_rule(s, i, j):
    """s_i (delta_ij - s_j) written out for the positions i and j."""
    return sp.Mul(s[i], sp.Add(1, -s[i], evaluate=False), evaluate=False) if i == j else -s[i] * s[j]


def _in_probabilities(expr, z, p):
    """expr (a ratio of sums of e^{z_k}, of degree 0) with e^{z_k} replaced by p_k = e^{z_k} / sum e^z: dividing
    numerator and denominator by the sum leaves the p_k, whose sum is 1."""
    ones = expr.subs({sp.exp(zk): pk for zk, pk in zip(z, p)})
    return sp.factor(sp.simplify(ones.subs(sp.Add(*p), 1)))


@functools.cache
def softmax_jacobian() -> Derivation:
    """ds_i/dz_j for 3 logits by the quotient rule, each written in the s_k: s_i (delta_ij - s_j). Result: the
    Jacobian matrix in the s_k."""
    z, s = _symbols("z", SOFTMAX_SIZE), _symbols("s", SOFTMAX_SIZE)
    total = sp.Add(*map(sp.exp, z))
    soft = [sp.exp(zk) / total for zk in z]
    jacobian = sp.Matrix(SOFTMAX_SIZE, SOFTMAX_SIZE, lambda i, j: _in_probabilities(sp.diff(soft[i], z[j]), z, s))
    rules = sp.Matrix(SOFTMAX_SIZE, SOFTMAX_SIZE, lambda i, j: _softmax_rule(s, i, j))
    if sp.simplify(jacobian - rules) != sp.zeros(SOFTMAX_SIZE):
        raise ArithmeticError("the softmax Jacobian is not s_i (delta_ij - s_j)")
    i, j = sp.symbols("i j", integer=True)
    si, sj = sp.Symbol("s_i"), sp.Symbol("s_j")
    lines = (_equals(s[0], soft[0]),
             _equals(_partial("s_1", "z_1"), sp.diff(soft[0], z[0]), rules[0, 0]),
             _equals(_partial("s_1", "z_2"), sp.diff(soft[0], z[1]), rules[0, 1]),
             _equals(_partial("s_i", "z_j"), sp.Mul(si, sp.Add(sp.KroneckerDelta(i, j), -sj, evaluate=False),
                                                    evaluate=False)),
             _equals("J", rules))
    return Derivation(lines, jacobian)


@functools.cache
def cross_entropy_gradient() -> Derivation:
    """dL/dz_1 of L = -sum_k q_k log softmax(z)_k for 3 logits and any target distribution q (sum 1): p_1 - q_1.
    Result: the derivative in the p_k and q_k, before q sums to 1 is used, and after."""
    z, p, q = _symbols("z", SOFTMAX_SIZE), _symbols("p", SOFTMAX_SIZE), _symbols("q", SOFTMAX_SIZE)
    total = sp.Add(*map(sp.exp, z))
    loss = -sp.Add(*[qk * (zk - sp.log(total)) for qk, zk in zip(q, z)])  # log softmax = z - log sum e^z
    raw = sp.diff(loss, z[0])
    in_p = sp.expand(raw.subs({sp.exp(zk): pk for zk, pk in zip(z, p)}).subs(sp.Add(*p), 1))
    summed = sp.collect(in_p, p[0])
    result = sp.expand(summed.subs(q[-1], 1 - sp.Add(*q[:-1])))  # the q_k sum to 1
    y, j = sp.symbols("y j", integer=True)
    short = sp.Symbol("S", positive=True)  # the sum, named so that the lines fit the page
    lines = (_equals(short, total),
             _equals("L", loss.subs(total, short)),
             _equals(_partial("L", "z_1"), raw.subs(total, short)),
             _equals(_partial("L", "z_1"), summed, result),
             _equals(_partial("L", "z_j"), sp.Symbol("p_j") - sp.KroneckerDelta(j, y)))
    return Derivation(lines, result)


@functools.cache
def layer_norm_jacobian(form: str) -> Derivation:
    """dx̂_k/dx_i of x̂_k = (x_k - mu) / D(sigma^2), by the chain rule through mu and sigma^2, in the x̂. D is
    sqrt(sigma^2 + eps) (form "paper") or sigma + eps ("blog"). Result: the Jacobian entry in delta_ik, d, x̂_i,
    x̂_k, sigma and eps."""
    mu, sigma, d, eps = sp.symbols(r"\mu \sigma d \epsilon", positive=True)
    delta = sp.Symbol(r"\delta_{ik}")
    xi, xk, hi, hk = sp.symbols(r"x_i x_k \hat{x}_i \hat{x}_k", real=True)
    var = sp.Symbol(r"\sigma^2", positive=True)
    denominator = sp.sqrt(var + eps) if form == "paper" else sp.sqrt(var) + eps
    normed = (xk - mu) / denominator
    dmu, dvar = 1 / d, 2 * (xi - mu) / d
    chain = sp.diff(normed, xk) * delta + sp.diff(normed, mu) * dmu + sp.diff(normed, var) * dvar
    shown = denominator.subs(var, sigma**2)
    result = sp.simplify(chain.subs(var, sigma**2).subs({xk: mu + hk * shown, xi: mu + hi * shown}))
    lines = (_equals(hk, (xk - mu) / shown),
             _equals(_partial(r"\mu", "x_i"), dmu) + r",\quad "
             + _equals(_partial(r"\sigma^2", "x_i"), sp.Mul(2, xi - mu, evaluate=False) / d),
             _equals(r"\frac{\partial \hat{x}_k}{\partial x_i}", r"\frac{\partial \hat{x}_k}{\partial x_k}"
                     r"\,\delta_{ik} + \frac{\partial \hat{x}_k}{\partial \mu}\frac{\partial \mu}{\partial x_i} + "
                     r"\frac{\partial \hat{x}_k}{\partial \sigma^2}\frac{\partial \sigma^2}{\partial x_i}", result),
             _equals(r"\bar{x}_i", r"\sum_k \bar{\hat{x}}_k \frac{\partial \hat{x}_k}{\partial x_i}"))
    return Derivation(lines, result)


@functools.cache
def pe_rotation() -> Derivation:
    """The pair (sin, cos) of one frequency omega at pos + k, by the angle-sum identities: a rotation R(k) of the
    pair at pos. Result: R(k) in k and omega."""
    pos, k, omega = POS, K, OMEGA
    sine, cosine = sp.sin(omega * pos), sp.cos(omega * pos)
    moved = [sp.expand_trig(f(omega * pos + omega * k)) for f in (sp.sin, sp.cos)]
    rotation = sp.Matrix([[m.coeff(sine), m.coeff(cosine)] for m in moved])
    lines = (_equals(sp.sin(omega * (pos + k)), moved[0]),
             _equals(sp.cos(omega * (pos + k)), moved[1]),
             _equals(sp.Matrix([sp.sin(omega * (pos + k)), sp.cos(omega * (pos + k))]),
                     sp.MatMul(rotation, sp.Matrix([sine, cosine]), evaluate=False)),
             _equals(r"R(k)^\top R(k)", sp.simplify(rotation.T * rotation)))
    return Derivation(lines, rotation)


@functools.cache
def _rotation_function():
    return sp.lambdify((OMEGA, K), pe_rotation().result, modules="numpy")


def rotation(omega: float, k: float) -> np.ndarray:
    """R(k) of the frequency omega, in numbers: (2, 2)."""
    return np.array(_rotation_function()(omega, k), dtype=float)


@functools.cache
def _product(rows: int, terms: int, cols: int, bias: bool):
    """Q = X W (+ b) for symbols: X (rows, terms), W (terms, cols), b (cols,); the sums written in order."""
    x = sp.Matrix(rows, terms, lambda i, m: sp.Symbol(f"x_{{{i + 1}{m + 1}}}"))
    w = sp.Matrix(terms, cols, lambda m, j: sp.Symbol(f"w_{{{m + 1}{j + 1}}}"))
    b = [sp.Symbol(f"b_{j + 1}") for j in range(cols)]
    entry = lambda X, W, B, i, j: sp.Add(*[sp.Mul(X[i, m], W[m, j], evaluate=False) for m in range(terms)]
                                        + ([B[j]] if bias else []), evaluate=False)
    return x, w, b, entry


def _numbers(X, W, b, places):
    """X, W and b as matrices of unevaluated numbers (kept apart, in order, by the printer) of `places` digits."""
    number = lambda value: sp.UnevaluatedExpr(sp.Float(float(value), places))
    signed = lambda value: -number(-value) if value < 0 else number(value)  # "- 1.5", not "+ -1.5"
    return sp.Matrix(X).applyfunc(number), sp.Matrix(W).applyfunc(number), [signed(v) for v in b]


def qkv_product(X, W, b=None, digits: int = 3) -> Derivation:
    """The first rows and columns of Q = X W (+ b), with X (n, d_model), W (d_model, d_k), b (d_k,) or None: the
    entries as sums of products, then with the numbers (to `digits` significant digits). Result: the sums of the
    numbers at full precision. Each entry has d_model products: meant for d_model up to QKV_TERMS."""
    rows, cols, terms = min(len(X), QKV_BLOCK), min(W.shape[1], QKV_BLOCK), W.shape[0]
    block = (np.asarray(X)[:rows], np.asarray(W)[:, :cols], [] if b is None else np.asarray(b)[:cols])
    x, w, bs, entry = _product(rows, terms, cols, b is not None)
    shown, full = _numbers(*block, digits), _numbers(*block, 15)
    symbolic = sp.Matrix(rows, cols, lambda i, j: entry(x, w, bs, i, j))
    with_numbers = sp.Matrix(rows, cols, lambda i, j: entry(*shown, i, j))
    values = sp.Matrix(rows, cols, lambda i, j: entry(*full, i, j).doit())
    return Derivation((_latex(symbolic), _latex(with_numbers, mul_symbol="dot")), values)
