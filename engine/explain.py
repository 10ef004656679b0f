"""Per-cell arithmetic: for any cell of any step, the computation that produced it, with the real numbers.

`explain(trace, name, index)` returns an Explanation whose `latex` and `text` end in the cell's value. Each line
of arithmetic says "=" only where the shown numbers on both sides of it are exact, "≈" where one is a rounding (a
relation is written IS and a rounded number marked ROUNDED; settle() turns them into signs).
Long sums are shortened with \\cdots in the LaTeX only; the text always lists every term. Their words are word
slots (engine/words.py) that the reader's catalog fills. How the numbers are written (digits, line width, where
counting starts) is one Writing, which explain() hands to the step's explainer.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, partial

import numpy as np

from .attention import SQRT_DK_TEX
from .layer_norm import DENOMINATOR_TEX
from .notation import num_tex, rounds, significant
from .positional import PE_BASE, blog_exponent, paper_exponent, sinusoid_angle
from .words import word

LATEX_TERMS = 8  # a LaTeX sum longer than this shows its first 6 and last 2 terms around \cdots
LINE_WIDTH = 36  # a LaTeX sum wider than this many characters (commands count as one) is broken into lines
BREAK = r" \\ &\quad "  # a line break inside the aligned environment explain() writes
ELIDED = object()  # where a long LaTeX sum shows \cdots
LATEX_DIGITS = 6  # the LaTeX's significant digits unless explain() is given others
TEXT_DIGITS = 8  # the text's, unless explain() is given others: a record of every term to check by hand
IS = "\ue001"  # the sign between two members of a line of arithmetic, which settle() writes as = or ≈
ROUNDED = "\ue000"  # follows a number shown rounded, until settle() has read it
APPROX_TEX, APPROX_TEXT = r"\approx", "≈"


@dataclass(frozen=True)
class Writing:
    """How an explanation writes its numbers and positions: every explainer receives one and writes through it."""
    digits: int = LATEX_DIGITS  # significant digits in the LaTeX
    text_digits: int = TEXT_DIGITS  # in the text
    line_width: int = LINE_WIDTH  # a LaTeX sum wider than this many characters breaks into lines
    first: int = 0  # the number positions, rows and columns start at: 0 as code counts, 1 as a person reads

    def num(self, x) -> str:
        """A number in the text (engine/notation.py's rule), marked if it is a rounding."""
        return significant(x, self.text_digits) + (ROUNDED if rounds(x, self.text_digits) else "")

    def num_tex(self, x) -> str:
        """A number in the LaTeX, marked if it is a rounding."""
        return num_tex(x, self.digits) + (ROUNDED if rounds(x, self.digits) else "")

    def aside(self, x, tex: bool = False) -> str:
        """A number said beside the arithmetic, not an operand of it (a dropped cell's value): no rounding mark."""
        return num_tex(x, self.digits) if tex else significant(x, self.text_digits)

    def paren(self, x) -> str:
        s = self.num(x)
        return f"({s})" if s.startswith("−") else s

    def paren_tex(self, x) -> str:
        s = self.num_tex(x)
        return f"({s})" if s.startswith("-") else s

    def at(self, index) -> str:
        """An index (a position, or a tuple of them) as written: "0, 2", or "1, 3" counting from 1."""
        return ", ".join(str(k + self.first) for k in (index if isinstance(index, tuple) else (index,)))

    def sum(self, items, tex, text):
        """Join the items' terms with +: tex(item) in the LaTeX, which elides the middle of long sums (writing
        only the terms it shows) and breaks wide ones into lines; text(item) in the text, which lists every term
        and is given as the function that writes it."""
        shown = items if len(items) <= LATEX_TERMS else [*items[:6], ELIDED, *items[-2:]]
        lines = [[]]
        for term in (r"\cdots" if item is ELIDED else tex(item) for item in shown):
            if lines[-1] and _width(" + ".join(lines[-1] + [term])) > self.line_width:
                lines.append([])
            lines[-1].append(term)
        return ((BREAK + "+ ").join(" + ".join(line) for line in lines) or "0",
                lambda: " + ".join(map(text, items)) or "0")

    def dot(self, a, b, bias=None):
        """a·b (+ bias) written term by term."""
        terms = [*zip(a, b), *([(bias,)] if bias is not None else [])]  # (x, y) a product, (bias,) the bias
        return self.sum(terms, lambda t: " \\cdot ".join(map(self.paren_tex, t)),
                        lambda t: "×".join(map(self.paren, t)))


@dataclass(frozen=True)
class Explanation:
    latex: str
    value: float
    spell: Callable[[], str] = field(repr=False, compare=False)  # writes `text`, on first reading: every term of a
    # sum of 2048 products takes milliseconds, and the app shows the text only when asked

    @cached_property
    def text(self) -> str:
        return self.spell()


def explain(trace, name: str, index: tuple, digits: int = LATEX_DIGITS, text_digits: int = TEXT_DIGITS,
            line_width: int = LINE_WIDTH, *, first: int = 0, label: tuple[str, str] | None = None) -> Explanation:
    """An explainer gives the LaTeX, the text, and maybe the definitions it uses (LaTeX and text); a text may be
    a function that writes it. The LaTeX writes `digits` significant digits, the text `text_digits` (the app
    gives both its setting); the LaTeX's sums break into lines `line_width` characters wide (narrower where the
    type is larger). Every position, row and column it writes counts from `first`: 0 as code counts (the CLI, the
    step's name), 1 as a person reads (the app). label: the cell's name (LaTeX, text) in place of `name[index]`."""
    step = trace.step(name)
    index = _check_index(step, index)
    w = Writing(digits, text_digits, line_width, first)
    with np.errstate(all="ignore"):  # the naive softmax may overflow here as in the forward pass
        latex, text, *where = step.decl.kind.explain(trace, step, index, w)
    value = float(step.value[index])
    code = f"{name}[{w.at(index)}]"
    label_tex, label = label or (f"\\text{{{tex_escape(code)}}}", code)
    lines = [settle(f"{label_tex} &{IS} {latex} \\\\ &{IS} {w.num_tex(value)}", APPROX_TEX)]
    if where:  # definitions the expression uses (LayerNorm's mean and variance, softmax's sum) come first
        lines.insert(0, f"&{settle(where[0], APPROX_TEX)}")
    spell = partial(_spelled, f"{label} {IS} ", text, f" {IS} {w.num(value)}", where[1] if where else None)
    return Explanation(r"\begin{aligned}" + r" \\ ".join(lines) + r"\end{aligned}", value, spell)


def settle(chain: str, approx: str) -> str:
    """The line of arithmetic with each IS written as "=" where the members on both its sides show every number
    exactly, as `approx` (≈, or LaTeX's \\approx) where either shows one rounded: 1 + 1 ≈ 2 for e^0 + e^(−2×10⁻⁶)
    at two digits; its ROUNDED marks dropped. Already settled text (a where line) passes unchanged."""
    members = chain.split(IS)
    signs = [approx if ROUNDED in left + right else "=" for left, right in zip(members, members[1:])]
    return "".join(member + sign for member, sign in zip(members, [*signs, ""])).replace(ROUNDED, "")


def _spelled(before, text, after, where) -> str:
    text = settle(before + _written(text) + after, APPROX_TEXT)
    return text if where is None else f"{word('with')}{settle(_written(where), APPROX_TEXT)}{word('with-end')}{text}"


def _written(text) -> str:
    return text() if callable(text) else text


def _check_index(step, index):
    if len(index) != step.value.ndim:
        raise ValueError(f"{step.name} has {step.value.ndim} axes, shape {step.shape}; give {step.value.ndim} indices")
    for i, (k, size) in enumerate(zip(index, step.shape)):
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < size:
            raise ValueError(f"index {k!r} on axis {i} of {step.name} is outside 0..{size - 1}")
    return tuple(int(k) for k in index)


def _width(tex: str) -> int:
    """Roughly how many characters wide a piece of LaTeX shows."""
    return len(re.sub(r"\\[a-zA-Z]+|[{}^_ ]", lambda m: "x" if m.group().startswith("\\") else "", tex))


def _bias(trace, step, position, index):
    return trace.resolve(step.inputs[position])[index] if len(step.inputs) > position else None


# ---- one explainer per kind of step (engine/kinds.py): (trace, step, index) -> (latex, text[, where]) -----

def embed(trace, step, index, w):
    i, j = index
    token, table = step.meta["tokens"][i], trace.resolve(step.inputs[0])
    entry = table[step.meta["ids"][i], j]
    column = w.at(j)
    tex, text = f"E[\\text{{{tex_escape(token)}}}, {column}]", f"E[{token}, {column}]"
    if step.meta["scale"] == 1.0:
        return f"{tex}", f"{text}"
    scale = step.meta["scale"]
    return (f"{tex} \\cdot \\sqrt{{d_{{\\text{{model}}}}}} {IS} {w.paren_tex(entry)} \\cdot {w.num_tex(scale)}",
            f"{text} × √d_model {IS} {w.paren(entry)} × {w.num(scale)}")


def pos(trace, step, index, w):
    pos, j = index
    form, d = step.meta["form"], step.meta["d_model"]
    if form == "none":
        return "0", f"0 {word('no-encoding')}"
    if form == "learned":  # the table's name: P, or the Vision Transformer's E_pos
        tex, text = step.meta.get("table", ("P", "P"))
        return f"{tex}[{w.at(index)}]", f"{text}[{w.at(index)}] {word('learned')}"
    exponent = int((blog_exponent if form.startswith("blog") else paper_exponent)(j))
    angle = sinusoid_angle(pos, d, exponent)
    fn = "sin" if j % 2 == 0 else "cos"
    tex = f"\\{fn}\\left(\\frac{{{pos}}}{{{PE_BASE:g}^{{{exponent}/{d}}}}}\\right) {IS} \\{fn}({w.num_tex(angle)})"
    text = f"{fn}({pos} / {PE_BASE:g}^({exponent}/{d})) {IS} {fn}({w.num(angle)})"
    if form != "blog_table":
        return tex, text
    exact = math.sin(angle) if fn == "sin" else math.cos(angle)
    tex = settle(f"{tex} {IS} {w.num_tex(exact)}", APPROX_TEX)  # an aside: the formula's line, settled on its own
    text = settle(f"{text} {IS} {w.num(exact)}", APPROX_TEXT)
    if pos < 2 and j < 4:
        return (f"\\text{{{word('post-value')}}}{BREAK}\\left(\\text{{{word('its-formula')}}} {tex}\\right)",
                word("post-value-formula", formula=text))
    return f"\\operatorname{{round}}_2\\left({tex}\\right)", f"round({text}{word('decimals', n=2)})"


def add(trace, step, index, w):
    a, b = (np.broadcast_to(trace.resolve(r), step.shape)[index] for r in step.inputs)
    return f"{w.paren_tex(a)} + {w.paren_tex(b)}", f"{w.paren(a)} + {w.paren(b)}"


def proj(trace, step, index, w):
    h, i, k = index
    x, W = trace.resolve(step.inputs[0]), trace.resolve(step.inputs[1])
    return w.dot(x[i], W[h, :, k], _bias(trace, step, 2, (h, k)))


def scores(trace, step, index, w):
    h, i, j = index
    q, k = (trace.resolve(r) for r in step.inputs)
    return w.dot(q[h, i], k[h, j])


def scale(trace, step, index, w):
    """S / divisor; the paper's divisor √d_k is then written as its number too, a number set by hand only as it."""
    s = trace.resolve(step.inputs[0])[index]
    divisor, divisor_tex = step.meta["divisor"], step.meta["divisor_tex"]
    if divisor_tex != SQRT_DK_TEX:  # its digits may differ from the number shown (30.5 at 2 digits is 30)
        return f"\\frac{{{w.num_tex(s)}}}{{{divisor_tex}}}", f"{w.num(s)} / {w.num(divisor)}"
    return (f"\\frac{{{w.num_tex(s)}}}{{{divisor_tex}}} {IS} \\frac{{{w.num_tex(s)}}}{{{w.num_tex(divisor)}}}",
            f"{w.num(s)} / √d_k {IS} {w.num(s)} / {w.num(divisor)}")


def mask(trace, step, index, w):
    if len(index) == 1:  # the output's mask over the vocabulary
        token = trace.model.vocab.tokens[index[0]]
        escaped = tex_escape(token)
        if token in step.meta["never"]:
            return (f"-\\infty \\quad (\\text{{{escaped}{word('never-next')}}})",
                    f"−∞ ({token}{word('never-next-text')})")
        return f"0 \\quad (\\text{{{escaped}{word('a-word')}}})", f"0 ({token}{word('may-be-next')})"
    i, j = map(w.at, index)  # the query's and the key's positions, as written
    if index[1] > index[0]:
        return f"-\\infty \\quad ({j} > {i}\\text{{{word('later')}}})", f"−∞ {word('comes-after', j=j, i=i)}"
    return f"0 \\quad ({j} \\le {i})", f"0 {word('not-after', j=j, i=i)}"


def softmax(trace, step, index, w):
    row = trace.resolve(step.inputs[0])[index[:-1]]
    j = index[-1]
    shift = float(np.max(row)) if step.meta["form"] == "stable" else 0.0
    exps = np.exp(row - shift)
    total = float(np.sum(exps))
    arg_tex = (lambda x: f"{w.paren_tex(x)} - {w.paren_tex(shift)}") if shift else w.paren_tex
    arg_txt = (lambda x: f"{w.paren(x)} − {w.paren(shift)}") if shift else w.paren
    sum_symbol = r"\sum_k e^{x_k - \max x}" if shift else r"\sum_k e^{x_k}"
    sum_tex, sum_text = w.sum(list(exps), w.num_tex, w.num)
    terms_tex, terms_text = w.sum(list(row), lambda x: f"e^{{{arg_tex(x)}}}", lambda x: f"e^({arg_txt(x)})")
    expanded = f"{terms_tex}{BREAK}{IS} " if len(row) <= 4 else ""  # the exponents in full for short rows
    return (f"\\frac{{e^{{{arg_tex(row[j])}}}}}{{{sum_symbol}}} {IS} "
            f"\\frac{{{w.num_tex(exps[j])}}}{{{w.num_tex(total)}}}",
            f"e^({arg_txt(row[j])}) / Σ {IS} {w.num(exps[j])} / {w.num(total)}",
            f"{sum_symbol} {IS} {expanded}{sum_tex} {IS} {w.num_tex(total)}",
            lambda: f"Σ {IS} {terms_text()} {IS} {sum_text()} {IS} {w.num(total)}")


def weighted(trace, step, index, w):
    h, i, c = index
    a, v = (trace.resolve(r) for r in step.inputs)  # A_i, V_i
    return w.dot(a[h, i], v[h, :, c])


def concat(trace, step, index, w):
    i, col = index
    heads = trace.resolve(step.inputs[0])
    h, c = divmod(col, heads.shape[2])  # head_1 .. head_h as the paper numbers them; the cell's [row, col] as written
    return f"\\text{{head}}_{{{h + 1}}}[{w.at((i, c))}]", f"head_{h + 1}[{w.at((i, c))}]"


def linear(trace, step, index, w):
    i, k = index
    x, W = trace.resolve(step.inputs[0]), trace.resolve(step.inputs[1])
    column = W[k] if step.meta.get("transpose") else W[:, k]
    return w.dot(x[i], column, _bias(trace, step, 2, (k,)))


def layer_norm(trace, step, index, w):
    """x̂·γ + β, after the lines that compute μ, σ², the denominator and x̂ from the row's numbers. The row's sums
    are in parentheses, not in a \\frac: KaTeX cannot break a line inside a \\frac's braces. σ²'s squares, and
    σ + ε, start lines of their own: after the definitions they reached the drill-down box's right edge at 1280 px
    (4 digits)."""
    i, j = index
    x = trace.resolve(step.inputs[0])[i]
    gamma, beta = (trace.resolve(r)[j] for r in step.inputs[1:])
    eps, d = step.meta["eps"], len(x)
    mu = float(np.mean(x))
    var = float(np.mean((x - mu) ** 2))
    denom_tex, denom_text, denom = _ln_denominator(step.meta["form"], var, eps, w)
    normed = float((x[j] - mu) / np.float64(denom))  # NumPy's: a constant row with ε = 0 is NaN, as in the pass
    mean_tex, mean_text = w.sum(list(x), w.paren_tex, w.paren)
    squares_tex, squares_text = w.sum(list(x - mu), lambda v: f"{w.paren_tex(v)}^2", lambda v: f"{w.paren(v)}²")
    symbol, k = DENOMINATOR_TEX[step.meta["form"]], w.at(j)  # k: the column as written
    where_tex = r" \\ &".join(settle(line, APPROX_TEX) for line in [
        f"\\mu {IS} \\tfrac{{1}}{{{d}}}({mean_tex}) {IS} {w.num_tex(mu)}",
        f"\\sigma^2 {IS} \\tfrac{{1}}{{{d}}}{{\\textstyle\\sum_k}} (x_k - \\mu)^2{BREAK}{IS} "
        f"\\tfrac{{1}}{{{d}}}({squares_tex}) {IS} {w.num_tex(var)}",
        *denom_tex,
        f"\\hat{{x}}_{{{k}}} {IS} \\frac{{x_{{{k}}} - \\mu}}{{{symbol}}} {IS} "
        f"\\frac{{{w.paren_tex(x[j])} - {w.paren_tex(mu)}}}{{{w.num_tex(denom)}}} {IS} {w.num_tex(normed)}"])
    latex = (f"\\hat{{x}}_{{{k}}} \\cdot \\gamma_{{{k}}} + \\beta_{{{k}}} {IS} "
             f"{w.paren_tex(normed)} \\cdot {w.paren_tex(gamma)} + {w.paren_tex(beta)}")
    text = f"x̂ × γ + β {IS} {w.paren(normed)} × {w.paren(gamma)} + {w.paren(beta)}"
    return latex, text, where_tex, lambda: _listed([
        f"μ {IS} ({mean_text()}) / {d} {IS} {w.num(mu)}", f"σ² {IS} ({squares_text()}) / {d} {IS} {w.num(var)}",
        *denom_text, f"x̂ {IS} ({w.paren(x[j])} − {w.paren(mu)}) / {w.num(denom)} {IS} {w.num(normed)}"])


def _listed(lines) -> str:
    """Lines of arithmetic in a sentence, each settled on its own: "a, b, c and d"."""
    *first, last = [settle(line, APPROX_TEXT) for line in lines]
    return f"{word('comma').join(first)}{word('and')}{last}"


def _ln_denominator(form, var, eps, w):
    """The LayerNorm denominator's lines in LaTeX and text, and its value: √(σ² + ε), or σ = √σ² then σ + ε."""
    if form == "paper":
        denom = math.sqrt(var + eps)
        return ([f"{DENOMINATOR_TEX[form]} {IS} \\sqrt{{{w.num_tex(var)} + {w.num_tex(eps)}}} {IS} {w.num_tex(denom)}"],
                [f"√(σ² + ε) {IS} √({w.num(var)} + {w.num(eps)}) {IS} {w.num(denom)}"], denom)
    sigma = math.sqrt(var)
    return ([f"\\sigma {IS} \\sqrt{{\\sigma^2}} {IS} \\sqrt{{{w.num_tex(var)}}} {IS} {w.num_tex(sigma)}",
             f"{DENOMINATOR_TEX[form]} {IS} {w.num_tex(sigma)} + {w.num_tex(eps)} {IS} {w.num_tex(sigma + eps)}"],
            [f"σ {IS} √σ² {IS} √{w.num(var)} {IS} {w.num(sigma)}",
             f"σ + ε {IS} {w.num(sigma)} + {w.num(eps)} {IS} {w.num(sigma + eps)}"],
            sigma + eps)


def activation(trace, step, index, w):
    """ReLU, Swish with its exponential written out, or GELU with the erf's argument and value written out."""
    h = float(trace.resolve(step.inputs[0])[index])
    if step.meta["fn"] == "relu":
        return f"\\max(0, {w.num_tex(h)})", f"max(0, {w.num(h)})"
    if step.meta["fn"] == "swish":
        e = math.exp(-h) if h > -700 else math.inf  # past that exp overflows: the value is -0
        return (f"\\frac{{{w.num_tex(h)}}}{{1 + e^{{{w.num_tex(-h)}}}}} = "
                f"\\frac{{{w.num_tex(h)}}}{{1 + {w.num_tex(e)}}}",
                f"{w.num(h)} / (1 + e^{w.paren(-h)}) = {w.num(h)} / (1 + {w.num(e)})")
    half, u = w.num_tex(h / 2), h / math.sqrt(2)
    erf = r"\operatorname{erf}"
    return (f"\\tfrac{{{w.num_tex(h)}}}{{2}}\\left(1 + {erf}\\left(\\tfrac{{{w.num_tex(h)}}}{{\\sqrt{{2}}}}\\right)"
            f"\\right) {IS} "
            f"{half}\\left(1 + {erf}({w.num_tex(u)})\\right){BREAK}{IS} {half}\\,(1 + {w.paren_tex(math.erf(u))})",
            f"{w.num(h)}/2 × (1 + erf({w.num(h)}/√2)) {IS} {w.num(h / 2)} × (1 + erf({w.num(u)})) {IS} "
            f"{w.num(h / 2)} × (1 + {w.paren(math.erf(u))})")


def copy(trace, step, index, w):
    ref = step.inputs[0]
    return f"\\text{{{tex_escape(ref)}}}[{w.at(index)}]", f"{ref}[{w.at(index)}]"


def dropout(trace, step, index, w):
    x, rate = float(trace.resolve(step.inputs[0])[index]), step.meta["rate"]
    if step.meta["keep"][index]:
        return (f"\\frac{{{w.num_tex(x)}}}{{1 - {w.num_tex(rate)}}} \\quad (\\text{{{word('kept')}}})",
                f"{w.num(x)} / (1 − {w.num(rate)}) {word('kept-text')}")
    return f"0 \\quad (\\text{{{word('dropped')}}} {w.aside(x, tex=True)})", f"0 {word('dropped-text', x=w.aside(x))}"


def patches(trace, step, index, w):
    """The image's pixel this cell of a flattened patch is."""
    pixel = w.at(patch_pixel(index, step.meta["patch"], step.meta["channels"], step.meta["across"]))
    return f"x[{pixel}]", f"x[{pixel}]"


def patch_pixel(index, size, channels, across) -> tuple[int, int, int]:
    """The image's (row, column, channel) that cell (i, j) of the flattened patches is (engine.vit.patchify): patch
    i's row p1, column p2 and channel ch, patches `across` to a row of the grid."""
    i, j = index
    (grid_row, grid_col), (p1, rest) = divmod(i, across), divmod(j, size * channels)
    p2, channel = divmod(rest, channels)
    return grid_row * size + p1, grid_col * size + p2, channel


def prepend(trace, step, index, w):
    """Row 0 is the class token; row i the (i-1)-th row of what follows it."""
    i, j = index
    if i == 0:
        return f"x_{{\\text{{class}}}}[{w.at(j)}]", f"x_class[{w.at(j)}]"
    ref, cell = step.inputs[-1], w.at((i - 1, j))
    return f"\\text{{{tex_escape(ref)}}}[{cell}]", f"{ref}[{cell}]"


def row(trace, step, index, w):
    """One row of the input, kept as a row."""
    ref, cell = step.inputs[0], w.at((step.meta["row"], index[1]))
    return f"\\text{{{tex_escape(ref)}}}[{cell}]", f"{ref}[{cell}]"


def tex_escape(text: str) -> str:
    return "".join("\\" + c if c in "#$%&_{}" else c for c in text).replace("<", r"\textless{}").replace(
        ">", r"\textgreater{}")

