"""The paper's whole attention equations, written above the steps that take them apart, and the heads' W^Q as the
one matrix they are slices of (pure: LaTeX strings and figures from arrays)."""
from engine import attention as att

from ui.core.figures import Chart
from ui.core.format import fmt_tex

MARK = "#d62728"  # the open head's columns
DIGITS = 4  # at most: the whole W^Q is there to show its layout, and h·d_k columns of more digits would not fit a page


def attention_equations(divisor_tex: str, masked: bool, cross: bool, bias: bool, pre_norm: bool) -> list[str]:
    """Attention(Q,K,V), MultiHead with its head_i as the paper writes them (section 3.2.2), and what Q, K and V are
    in this block, as this model computes them: its divisor, the causal mask, the norm placement and the biases
    when it has them."""
    attention = (att.MASKED_ATTENTION_TEX if masked else att.ATTENTION_TEX) % divisor_tex
    biases = tuple(f" + b_i^{key}" for key in "QKV") if bias else ("", "", "")
    return [attention, att.OUT_TEX + (r" + b^O" if bias else ""), att.HEAD_TEX % biases,
            att.bindings_tex(cross, pre_norm)]


def side_by_side_tex(W, head: int, digits: int = DIGITS) -> str:
    r"""The per-head weights W (h, d_model, d_k) as one d_model x h·d_k matrix [W_1 | ... | W_h] (the layout the
    forward pass multiplies by), a bar between heads and the numbers of `head` in colour."""
    d_k = W.shape[2]
    whole = att.heads_side_by_side(W)  # (d_model, h*d_k)
    rows = [" & ".join(_cell(x, j // d_k == head, digits) for j, x in enumerate(row)) for row in whole]
    spec = "|".join(["c" * d_k] * W.shape[0])
    return rf"\left[\begin{{array}}{{{spec}}}" + r" \\ ".join(rows) + r"\end{array}\right]"


def _cell(x, marked: bool, digits: int) -> str:
    number = fmt_tex(x, digits)
    return rf"\textcolor{{{MARK}}}{{{number}}}" if marked else number


def mark_head(chart: Chart, head: int, d_k: int, n_heads: int) -> Chart:
    """A heatmap of the heads side by side with a line between heads and a frame around `head`'s columns; without
    the heatmap's click layer (the weights have no drill-down: a (16, 512) layer is 8192 markers to draw)."""
    lines = [{"type": "line", "xref": "x", "yref": "paper", "x0": h * d_k - 0.5, "x1": h * d_k - 0.5, "y0": 0,
              "y1": 1, "line": {"color": "#555", "width": 1}} for h in range(1, n_heads)]
    frame = {"type": "rect", "xref": "x", "yref": "paper", "x0": head * d_k - 0.5, "x1": (head + 1) * d_k - 0.5,
             "y0": 0, "y1": 1, "line": {"color": MARK, "width": 3}}
    wire = chart.to_dict()
    wire["data"], wire["layout"]["shapes"] = wire["data"][:1], lines + [frame]
    return chart
