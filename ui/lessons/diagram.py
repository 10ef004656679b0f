"""The architecture as a figure whose boxes are the pages, labelled with the current sizes (pure).

A click on a box opens its page (app_pages/overview.py). Streamlit's Graphviz chart turns a node's link into a page
load, which starts a new session from the link alone; a plotly click is a widget event instead, so the page
opens in the same session (st.switch_page). The figure holds sizes and words of the app only, not the sentence
(the overview shows the tokens above it)."""
from ui.core.figures import Chart, MARGIN, MARKERS
from ui.core.i18n import plain_math

BOX_W, BOX_H = 0.86, 0.64  # in axis units: the two stacks are 1 apart, the levels too
LAYER_TOP, STACK_OUT = 8.5, 9.3  # the top of a layer's dashed frame, and the level of a stack's output above it
ENCODER, DECODER = (0, 2.5, LAYER_TOP), (1, 2.5, LAYER_TOP)  # a stack's column, and the bottom and top of its frame
FRAME = 0.49  # the frame's half width
CROSS_LEVELS = 2  # the cross-attention's box and its Add & Norm's, which a decoder-only model has not
ONE_STACK = (0.5, 2.5, LAYER_TOP - CROSS_LEVELS)  # a decoder-only model's one stack, centred
FILL, LINE, TEXT = "#eef4fb", "#4a6fa5", "#1f2937"
NORMS = ("add_norm", "dec_add_norm")  # a sub-layer's Add & LayerNorm box: above the sub-layer, or its LayerNorm below
SUBLAYER_INPUTS = ("tokens", "positional", "decoder_input")  # boxes before a stack's first sub-layer
SUM_PX = 7  # the radius of the residual sum's ⊕ that pre-norm draws above each sub-layer


def boxes(trace) -> list[tuple]:
    """(page, stack column, level, sizes) of every box, from the inputs up; a stack's boxes in the order data
    flows through them. Every step page has a box (the encoder's attention has three pages, the decoder's one each);
    a stack's output sits above its layer. A decoder-only model's are the decoder's without cross-attention."""
    c = trace.model.config
    n, m, d, h = len(trace.src_tokens), len(trace.tgt_tokens), c.d_model, c.n_heads
    placed = [("tokens", 0, 1, f"{n}×{d}"), ("positional", 0, 2, f"{n}×{d}"), ("qkv", 0, 3, f"{h} × {n}×{c.d_k}"),
              ("attention", 0, 4, f"{h} × {n}×{n}"), ("multihead", 0, 5, f"{n}×{d}"),
              ("add_norm", 0, 6, ""), ("ffn", 0, 7, f"{n}×{c.d_ff}"), ("add_norm", 0, 8, ""),
              ("encoder_stack", 0, STACK_OUT, f"{n}×{d}"),
              ("decoder_input", 1, 2, f"{m}×{d}"), ("masked_attention", 1, 3, f"{h} × {m}×{m}"),
              ("dec_add_norm", 1, 4, ""), ("cross_attention", 1, 5, f"{h} × {m}×{n}"), ("dec_add_norm", 1, 6, ""),
              ("dec_ffn", 1, 7, f"{m}×{c.d_ff}"), ("dec_add_norm", 1, 8, ""),
              ("decoder_stack", 1, STACK_OUT, f"{m}×{d}"),
              ("output", 1, STACK_OUT + 1.2, f"{m}×{len(trace.model.vocab)}")]
    placed = _one_stack(placed) if c.decoder_only else placed
    return _norm_first(placed) if c.norm_placement == "pre" else placed


def _norm_first(placed) -> list[tuple]:
    """Pre-norm, x + Sublayer(LayerNorm(x)): each sub-layer's norm box moved below the sub-layer's boxes, which move
    up a level each (the residual sum above them is drawn as a ⊕, _sums)."""
    moved, sublayer = [], []
    for box in placed:
        if box[0] in NORMS:
            group = [box] + sublayer
            moved += [(page, x, y, size) for (page, x, _, size), y in zip(group, sorted(b[2] for b in group))]
            sublayer = []
        elif box[0] in SUBLAYER_INPUTS or not sublayer and box[0].endswith(("_stack", "output")):
            moved.append(box)
        else:
            sublayer.append(box)
    return moved


def _sums(placed) -> list[dict]:
    """Pre-norm's residual sums, half a level above each sub-layer's last box (the box the next norm box or the stack's
    output follows): a ⊕, drawn as a circle and its bar; the arrow through it is the other bar."""
    ends = [(x, y) for (page, x, y, _), (after, *_) in zip(placed, placed[1:])
            if page not in NORMS + SUBLAYER_INPUTS and (after in NORMS or after.endswith("_stack"))]
    pixels = {"xsizemode": "pixel", "ysizemode": "pixel", "line": {"color": LINE, "width": 1.2}}
    return [shape for x, y in ends for shape in (
        {**pixels, "type": "circle", "xanchor": x, "yanchor": y + 0.5, "x0": -SUM_PX, "x1": SUM_PX, "y0": -SUM_PX,
         "y1": SUM_PX, "fillcolor": "white"},
        {**pixels, "type": "line", "xanchor": x, "yanchor": y + 0.5, "x0": -SUM_PX, "x1": SUM_PX, "y0": 0, "y1": 0})]


def _one_stack(placed) -> list[tuple]:
    """The decoder's boxes without the cross-attention's two, centred, the boxes above them moved down."""
    cross = next(i for i, (page, *_) in enumerate(placed) if page == "cross_attention")
    level = placed[cross][2]
    return [(page, ONE_STACK[0], y - CROSS_LEVELS if y > level else y, size)
            for i, (page, x, y, size) in enumerate(placed) if x == 1 and i not in (cross, cross + 1)]


def architecture(t, trace) -> Chart:
    """The encoder (left) and the decoder (right), bottom to top, or a decoder-only model's decoder alone; an
    invisible marker on each box carries the click (its customdata is the box's page)."""
    c, placed = trace.model.config, boxes(trace)
    titles = {page: plain_math(t("step.ln" if page in NORMS and c.norm_placement == "pre" else f"page.{page}"))
              for page, *_ in placed}  # plotly writes no LaTeX here; pre-norm's norm box is the LayerNorm alone
    decoder = ONE_STACK if c.decoder_only else DECODER
    frames = [decoder] if c.decoder_only else [ENCODER, DECODER]
    shapes = [_cluster(*frame) for frame in frames] + [_box(x, y) for _, x, y, _ in placed]
    shapes += _sums(placed) if c.norm_placement == "pre" else []
    labels = [_text(x, y, titles[page] + (f"<br><span style='font-size:10px'>{size}</span>" if size else ""))
              for page, x, y, size in placed]
    labels += [_text(decoder[0], 0, t("overview.tgt")),
               _beside(decoder, f"{t('section.decoder')} × {c.depth('dec')}", 1)]
    pages, ends = [page for page, *_ in placed], [(x, y) for _, x, y, _ in placed]
    arrows = [_arrow(ends[i], ends[i + 1]) for i in range(len(ends) - 1) if ends[i][0] == ends[i + 1][0]]
    arrows.append(_arrow((decoder[0], 0), ends[pages.index("decoder_input")]))
    if not c.decoder_only:
        labels += [_text(0, 0, t("overview.src")), _beside(ENCODER, f"{t('section.encoder')} × {c.depth('enc')}", -1)]
        arrows += [_arrow((0, 0), ends[pages.index("tokens")]),
                   _into_cross(ends[pages.index("encoder_stack")], ends[pages.index("cross_attention")])]
    click = {**MARKERS, "x": [x for _, x, _, _ in placed], "y": [y for _, _, y, _ in placed],
             "customdata": pages, "text": [titles[page] for page in pages],
             "hovertemplate": "%{text}<extra></extra>", "marker": {**MARKERS["marker"], "size": 40}}
    axis = {"visible": False, "fixedrange": True}
    layout = {"height": 720, "margin": MARGIN, "shapes": shapes, "annotations": labels + arrows, "dragmode": False,
              "clickmode": "event+select", "hovermode": "closest", "hoverdistance": 100,
              "xaxis": {**axis, "range": [-0.62, 1.62]},
              "yaxis": {**axis, "range": [-0.4, max(y for *_, y, _ in placed) + 0.5]}}
    return Chart([click], layout)


def _box(x, y) -> dict:
    return {"type": "rect", "x0": x - BOX_W / 2, "x1": x + BOX_W / 2, "y0": y - BOX_H / 2, "y1": y + BOX_H / 2,
            "fillcolor": FILL, "line": {"color": LINE, "width": 1}, "layer": "below"}


def _cluster(x, bottom, top) -> dict:
    return {"type": "rect", "x0": x - FRAME, "x1": x + FRAME, "y0": bottom, "y1": top, "line": {"dash": "dash",
            "color": "#888", "width": 1}, "layer": "below"}


def _text(x, y, text, align="center") -> dict:
    return {"x": x, "y": y, "text": text, "showarrow": False, "xanchor": align, "font": {"size": 12, "color": TEXT}}


def _beside(stack, text, side) -> dict:
    """A stack's "× N" outside its frame, left of the encoder (side -1) and right of the decoder (+1), as in the
    paper's figure, read along the frame: no arrow runs there, however narrow the figure."""
    x, bottom, top = stack
    return {**_text(x + side * (FRAME + 0.02), (bottom + top) / 2, text, "right" if side < 0 else "left"),
            "textangle": 90 * side}


def _arrow(tail, head) -> dict:
    """From the top of the box at `tail` (or the label there, at level 0) to the bottom of the box at `head`."""
    (tx, ty), (hx, hy) = tail, head
    return {"x": hx, "y": hy - BOX_H / 2, "ax": tx, "ay": ty + (BOX_H / 2 if ty else 0.25), "xref": "x", "yref": "y",
            "axref": "x", "ayref": "y", "text": "", "showarrow": True, "arrowhead": 2, "arrowwidth": 1.2,
            "arrowcolor": LINE}


def _into_cross(encoder_out, cross) -> dict:
    """The encoder's output, from the lower corner of its last box (below the box's words, which a narrow figure
    writes wider than the box) into the side of the cross-attention's."""
    (tx, ty), (hx, hy) = encoder_out, cross
    return {**_arrow(encoder_out, cross), "x": hx - BOX_W / 2, "y": hy, "ax": tx + BOX_W / 2, "ay": ty - BOX_H / 2}
