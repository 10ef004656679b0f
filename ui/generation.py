"""Generation settings (a strategy and its numbers), their URL form, the engine call they make, and the beam
tree as a figure. Pure: no Streamlit here.

In the URL the settings that differ from the defaults are one parameter, e.g. `gen=strategy:top_p,p:0.8,seed:7`.
"""
from __future__ import annotations

import math
from html import escape

from engine.generate import beam_search, generate
from engine.values import MAX_SEED

from .figures import MARGIN, Chart

TREE_FONT_PX = 13  # the beam tree's text: plotly draws it at this size whatever the figure's width
TREE_ROW_PX = 84  # a step's row: three lines of text and the edges between rows
TEXT_COLOUR = "#1f2937"

STRATEGIES = ("greedy", "temperature", "top_k", "top_p", "beam")
MODELS = ("trained", "current")  # the shipped model trained on the corpus (engine.trained), or the pages' model
DEFAULTS = {"model": "trained", "strategy": "greedy", "temperature": 1.0, "k": 5, "p": 0.9, "width": 3, "alpha": 0.6, "max_len": 10,
            "seed": 0}
RANGES = {"temperature": (0.05, 5.0), "k": (1, 100), "p": (0.01, 1.0), "width": (1, 5), "alpha": (0.0, 2.0),
          "max_len": (1, 30), "seed": (0, MAX_SEED)}
WHOLE = tuple(name for name, value in DEFAULTS.items() if isinstance(value, int))  # k, width, max_len, seed
USES = {  # the numbers each strategy reads, in the order the page shows them
    "greedy": ("max_len",),
    "temperature": ("temperature", "max_len", "seed"),
    "top_k": ("k", "temperature", "max_len", "seed"),
    "top_p": ("p", "temperature", "max_len", "seed"),
    "beam": ("width", "alpha", "max_len"),
}


def settings(pairs: tuple) -> dict:
    """Every setting: the defaults with the state's changes."""
    return {**DEFAULTS, **dict(pairs)}


def changed(values: dict) -> tuple:
    """The settings that differ from the defaults, as sorted pairs (what the state and the URL keep)."""
    return tuple(sorted((k, v) for k, v in values.items() if DEFAULTS.get(k) != v))


def encode(pairs: tuple) -> str:
    return ",".join(f"{k}:{v}" for k, v in pairs)


def decode(text: str) -> tuple[tuple, list[str]]:
    """The settings a link holds, and the parts that had to be ignored."""
    values, bad = {}, []
    for part in filter(None, text.split(",")):
        name, _, raw = part.partition(":")
        value = _parse(name, raw)
        if value is None:
            bad.append(part[:80])
        else:
            values[name] = value
    return changed(values), bad


def _parse(name: str, raw: str):
    if name in ("model", "strategy"):
        return raw if raw in (MODELS if name == "model" else STRATEGIES) else None
    if name not in RANGES:
        return None
    kind = type(DEFAULTS[name])
    try:
        value = kind(raw) if kind is float else int(raw) if raw.isascii() and raw.isdigit() else None
    except ValueError:
        return None
    low, high = RANGES[name]
    return value if value is not None and low <= value <= high else None  # NaN fails; isfinite(10**400) raises


def run(model, src: str, pairs: tuple):
    """The engine's Generation (or BeamSearch, for "beam") that the settings ask for."""
    s = settings(pairs)
    max_len = min(s["max_len"], model.config.max_len - 1)
    if s["strategy"] == "beam":
        return beam_search(model, src, width=s["width"], max_len=max_len, alpha=s["alpha"])
    if s["strategy"] == "greedy":
        return generate(model, src, max_len=max_len)
    extra = {"top_k": {"k": min(s["k"], len(model.vocab))}, "top_p": {"p": s["p"]}}.get(s["strategy"], {})
    return generate(model, src, strategy=s["strategy"], max_len=max_len, temperature=s["temperature"],
                    seed=s["seed"], **extra)


def path_probs(search, node_id=None) -> list[float]:
    """The model's probability of each token on the path to a node (the best sentence's by default)."""
    node_id = search.best.node if node_id is None else node_id
    return [math.exp(n.logprob) for n in search.path(node_id)[1:]]


def beam_tree(search, labels: dict) -> Chart:
    """The beam tree, one step per row from the top down: each kept prefix's box holds its token, the model's
    probability of that token and the prefix's log probability (and its score where a sentence ends); finished
    ones have a thick border, the best sentence's path is red. A step's pruned prefixes are one grey box (how
    many, the most likely one; all of them on hover). A row holds at most width + 1 boxes side by side and the
    figure grows a row per step, so its text keeps its size however long the search ran.
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
              "xaxis": {**axis, "range": [-0.5, search.settings["width"] + 0.5]},
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
        f"<b>{token}</b> · p {math.exp(node.logprob):.2f}<br>{labels['logp']} {node.cum_logprob:.2f}")
    if ends:
        text += f"<br>{labels['score']} {node.score:.2f}"
    return _box(x, node.step, text, "#fde2e1" if on_best_path else "#eef4fb",
                "#d62728" if on_best_path else "#4a6fa5", 3 if node.finished else 1)


def _pruned_box(search, step, x, labels) -> dict:
    pruned = sorted((n for n in search.at_step(step) if not n.kept), key=lambda n: -n.cum_logprob)
    first = labels["best"].format(token=escape(pruned[0].token), logp=f"{pruned[0].cum_logprob:.2f}")
    box = _box(x, step, f"{labels['pruned'].format(n=len(pruned))}<br>{first}", "#f2f2f2", "#aaaaaa", 1, "#555555")
    return {**box, "hovertext": "<br>".join(f"{escape(n.token)}  {labels['logp']} {n.cum_logprob:.2f}" for n in pruned)}


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
