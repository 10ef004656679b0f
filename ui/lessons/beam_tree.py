"""The beam search's tree as a figure (the generation page's lesson): each kept prefix a box, the pruned ones of a step
one grey box, the best sentence's path red. Pure: no Streamlit here."""
from __future__ import annotations

import math
from html import escape

from ui.core.figures import Chart, MARGIN
from ui.core.format import decimals

TREE_FONT_PX = 13  # the beam tree's text: plotly draws it at this size whatever the figure's width
TREE_ROW_PX = 84  # a step's row: three lines of text and the edges between rows
TEXT_COLOUR = "#1f2937"


def path_probs(search, node_id=None) -> list[float]:
    """The model's probability of each token on the path to a node (the best sentence's by default)."""
    node_id = search.best.node if node_id is None else node_id
    return [math.exp(n.logprob) for n in search.path(node_id)[1:]]


def beam_tree(search, labels: dict) -> Chart:
    """The beam tree, one step per row from the top down: each kept prefix's box holds its token, the model's
    probability of that token and the prefix's log probability (and its score where a sentence ends); finished
    ones have a thick border, the best sentence's path is red. A step's pruned prefixes are one grey box (how
    many, the most likely one; all of them on hover). A row holds width + 1 boxes side by side (transformers' search,
    engine/transformers_beam.py, also keeps the sentences it finished: up to 2 width + 1) and the figure grows a row
    per step, so its text keeps its size however long the search ran.
    labels: "logp", "score", "pruned" (with {n}) and "best" (with {token}, {logp}) in the page's language."""
    best = {n.id for n in search.path(search.best.node)}
    ends = {h.node for h in search.hypotheses}
    x = _columns(search)
    boxes, edges = [], {"kept": [], "best": [], "pruned": []}
    for n in search.nodes:
        if n.parent is not None:
            kind = "pruned" if not n.kept else "best" if n.id in best else "kept"
            edges[kind].append(((x[n.parent], search.nodes[n.parent].step), (x[n.id], n.step)))
        if n.kept:
            boxes.append(_kept_box(n, x[n.id], labels, n.id in best, n.id in ends))
    boxes += [_pruned_box(search, step, x[("pruned", step)], labels) for step in _pruned_steps(search)]
    rows = max(n.step for n in search.nodes) + 1
    axis = {"visible": False, "fixedrange": True}
    layout = {"height": TREE_ROW_PX * rows + 40, "margin": MARGIN, "annotations": boxes, "showlegend": False,
              "dragmode": False, "hovermode": "closest",
              "xaxis": {**axis, "range": [-0.5, max(search.settings["width"], *x.values()) + 0.5]},
              "yaxis": {**axis, "range": [rows - 0.5, -0.5]}}
    return Chart([_lines(segments, kind) for kind, segments in edges.items() if segments], layout)


def _columns(search) -> dict:
    """Each kept node's column and each step's pruned box's (("pruned", step)): a row's kept prefixes in the order
    of their parents' columns, the most likely first among siblings, and the pruned box after them."""
    x = {0: 0}
    for step in range(1, max(n.step for n in search.nodes) + 1):
        kept = sorted((n for n in search.at_step(step) if n.kept), key=lambda n: (x[n.parent], -n.cum_logprob))
        x.update({n.id: column for column, n in enumerate(kept)})
        x[("pruned", step)] = len(kept)
    return {**x, **{n.id: x[("pruned", n.step)] for n in search.nodes if not n.kept}}


def _pruned_steps(search) -> list[int]:
    return sorted({n.step for n in search.nodes if not n.kept})


def _kept_box(node, x, labels, on_best_path, ends) -> dict:
    token = escape(node.token)  # plotly reads tags in text: "<unk>" must stay text
    text = token if node.parent is None else (
        f"<b>{token}</b> · p {math.exp(node.logprob):.2f}<br>{labels['logp']} {decimals(node.cum_logprob, 2)}")
    if ends:
        text += f"<br>{labels['score']} {decimals(node.score, 2)}"
    return _box(x, node.step, text, "#fde2e1" if on_best_path else "#eef4fb",
                "#d62728" if on_best_path else "#4a6fa5", 3 if node.finished else 1)


def _pruned_box(search, step, x, labels) -> dict:
    pruned = sorted((n for n in search.at_step(step) if not n.kept), key=lambda n: -n.cum_logprob)
    first = labels["best"].format(token=escape(pruned[0].token), logp=decimals(pruned[0].cum_logprob, 2))
    box = _box(x, step, f"{labels['pruned'].format(n=len(pruned))}<br>{first}", "#f2f2f2", "#aaaaaa", 1, "#555555")
    return {**box, "hovertext": "<br>".join(f"{escape(n.token)}  {labels['logp']} {decimals(n.cum_logprob, 2)}"
                                            for n in pruned)}


def _box(x, y, text, fill, border, border_width, colour=TEXT_COLOUR) -> dict:
    return {"x": x, "y": y, "text": text, "showarrow": False, "bgcolor": fill, "bordercolor": border,
            "borderwidth": border_width, "borderpad": 4, "font": {"size": TREE_FONT_PX, "color": colour}}


def _lines(segments, kind) -> dict:
    """Edges as one line trace, broken between segments (None)."""
    xs = [value for (x0, _), (x1, _) in segments for value in (x0, x1, None)]
    ys = [value for (_, y0), (_, y1) in segments for value in (y0, y1, None)]
    style = {"kept": {"color": "#888888", "width": 1}, "best": {"color": "#d62728", "width": 2.5},
             "pruned": {"color": "#bbbbbb", "width": 1, "dash": "dot"}}[kind]
    return {"type": "scatter", "mode": "lines", "x": xs, "y": ys, "line": style, "hoverinfo": "skip"}
