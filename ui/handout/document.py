"""What a handout says, as blocks any renderer writes (ui.handout.render: HTML, Markdown): the settings, every step
of the trace in the order data flows (its name, line, formula, shape, where it departs from the paper, its numbers:
tables whose rows and columns are labelled by token, up to LATEX_MAX rows and as wide as a printed A4 page holds,
else a heatmap), what the model predicts, then the post's differences from the paper. Pure: the trace's numbers, the
catalogs' words and the engine's formulas, nothing written here twice."""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np

from engine import blog
from engine.presets import PRESETS
from ui.core import departures
from ui.core.format import LATEX_MAX, fmt
from ui.core.i18n import literal
from ui.core.labels import FIRST, description_key, indices, step_axes, step_name_key, step_tex, top_tokens, unique
from ui.core.model_card import describe, preset_name
from ui.handout.heatmap import Heatmap, heatmap

PAGE_CHARS = 80  # a table's characters that fit an A4 page's width in print (680 px, 8.1 px a digit: render.STYLE)
CELL_CHARS = 2  # a table cell's padding and border (11 px), in characters
LISTED = 2 * LATEX_MAX  # a heatmap's caption names up to this many rows (columns) one by one
RANKED = 5  # the prediction table: the most likely next token and the next four


class Block(NamedTuple):
    kind: str  # "title", "heading", "subheading", "text", "math", "image", "table" or "matrix" (a table of numbers)
    text: str = ""  # text, heading, table cell: Markdown's inline ($…$ math, `code`, **bold**); math: LaTeX
    rows: tuple = ()  # a table's rows of cells, its header first (a matrix's: its symbol, then its column labels)
    image: Heatmap | None = None
    axes: tuple = ()  # an image drawn cell by cell: its rows' labels and its columns' (tokens as typed)


class Settings(NamedTuple):
    """What produced the trace: the app's state, or the command line's."""
    preset: str
    seed: int
    src: str
    tgt: str | None
    digits: int
    edits: tuple = ()  # ((param, (i, j, ...), value), ...)
    weights: str = ""  # the weights store's id, a real translator's name, or "": the preset's random weights
    link: str = ""  # the app's link to this state, or ""
    origin: dict | None = None  # where stored weights came from (ui.stores.weights), for the model's sentence


def handout(trace, t, settings: Settings) -> list[Block]:
    """The whole handout of a trace in the translator's language."""
    config = trace.model.config
    card = describe(t, settings.preset, settings.seed, config, settings.origin, bool(settings.weights))
    blocks = [Block("title", t("handout.title")), Block("text", card),
              *_settings(t, settings, trace), Block("heading", t("handout.steps", n=len(trace)))]
    noted, group = set(), None
    for step in trace.steps():
        if _group(step.name) not in (group, None):
            group = _group(step.name)
            blocks.append(Block("heading", _group_title(t, group)))
        blocks += _step(trace, step, t, settings.digits, noted)
    return blocks + _prediction(trace, t, settings.digits, card) + _differences(t, config)


def _settings(t, settings: Settings, trace) -> list[Block]:
    """The settings as a table: the sentences and their tokens, the model's options (those that differ from the
    preset's marked), edited weights, stored weights and the link."""
    config, preset = trace.model.config, PRESETS[settings.preset]
    tokens = " · ".join(literal(" ".join(side)) for side in (trace.src_tokens, trace.tgt_tokens))
    rows = [(t("ctl.preset"), preset_name(t, settings.preset, settings.origin)), (t("ctl.seed"), str(settings.seed)),
            (t("ctl.src"), literal(settings.src)), (t("handout.target"), literal(settings.tgt or "")),
            (t("handout.tokens"), tokens), (t("ctl.digits"), str(settings.digits))]
    options = [(field.name, getattr(config, field.name), getattr(preset, field.name))
               for field in dataclasses.fields(config)]
    changed = f" ({t('handout.changed')})"
    rows.append((t("handout.options"), ", ".join(f"`{name} = {value!r}`" + changed * (value != usual)
                                                   for name, value, usual in options)))
    edits = "; ".join(f"`{param}` [{', '.join(str(i + FIRST) for i in index)}] = {fmt(value, settings.digits)}"
                      for param, index, value in settings.edits)
    rows.append((t("handout.edits"), edits or t("handout.none")))
    if settings.weights:
        rows.append((t("handout.weights"), f"`{settings.weights}`"))
    if settings.link:
        rows.append((t("handout.link"), literal(settings.link)))
    return [Block("heading", t("handout.settings")),
            Block("table", rows=((t("handout.setting"), t("handout.value")), *rows))]


def _group(name: str) -> tuple | None:
    """The part of the pass a step belongs to: ("src",), ("enc", layer), ("tgt",), ("dec", layer), ("output",); None
    for a stack's output, which ends its stack's last part."""
    parts = name.split(".")
    if parts[0] in ("src", "tgt"):
        return (parts[0],)
    if parts[0] in ("enc", "dec"):
        return (parts[0], int(parts[1])) if parts[1].isdigit() else None
    return ("output",)


def _group_title(t, group: tuple) -> str:
    if len(group) == 2:
        return t(f"handout.part.{group[0]}", l=group[1] + FIRST)
    return t(f"handout.part.{group[0]}")


def _step(trace, step, t, digits: int, noted: set) -> list[Block]:
    """A step: its name and line, formula, shape, the departures from the paper it is the first to show (each option
    once), its numbers."""
    title = t(step_name_key(step.name))
    shape = t("view.shape", axes=", ".join(step.axes), sizes=", ".join(map(str, step.shape)))
    blocks = [Block("subheading", f"{title} · `{step.name}`"), Block("text", t(description_key(step.name))),
              Block("math", t.words(step.formula)), Block("text", shape)]
    config = trace.model.config
    for departure in departures.for_steps((step.kind, step.name.rsplit(".", 1)[-1]), config):
        if departure.field not in noted:
            noted.add(departure.field)
            text = t(departures.text_key(departure, config), **departures.values(config))
            blocks.append(Block("text", t("handout.departs", text=text)))
    return blocks + _numbers(trace, step, title, digits, t)


def _numbers(trace, step, title: str, digits: int, t) -> list[Block]:
    """Each matrix as a table whose rows and columns are labelled (tokens, vocabulary words or numbers from 1), a
    head's each; or, when one has more than LATEX_MAX rows or is too wide for the page, one heatmap."""
    value = np.atleast_2d(step.value)  # (rows, cols) or (h, rows, cols)
    *_, rows, cols = [[""], *step_axes(trace, step.name)]  # a vector's one row is unlabelled
    few = value.shape[-2] <= LATEX_MAX and value.shape[-1] <= PAGE_CHARS // (1 + CELL_CHARS)  # else none fits
    tables = [_table(step_tex(step.symbol, None if value.ndim == 2 else head, title), matrix, rows, cols, digits)
              for head, matrix in enumerate(value if value.ndim == 3 else [value])] if few else []
    if tables and all(map(_fits, tables)):
        return [Block("matrix", rows=table) for table in tables]
    picture = heatmap(value)
    key = "handout.heatmap.heads" if value.ndim == 3 else "handout.heatmap"
    colours = t("handout.colours.signed" if picture.signed else "handout.colours.positive")
    words = [t(key, rows=value.shape[-2], cols=value.shape[-1], h=value.shape[0], colours=colours),
             t("handout.axes", rows=_axis(rows), cols=_axis(cols)) if step.value.ndim > 1 else
             t("handout.axes.vector", cols=_axis(cols))]
    if picture.block != (1, 1):
        words.append(t("handout.binned", block=f"{picture.block[0]} × {picture.block[1]}"))
    one_by_one = picture.block == (1, 1) and value.ndim == 2
    return [Block("image", " ".join([*words, _summary(value, digits, t)]), image=picture,
                  axes=(tuple(rows), tuple(cols)) if one_by_one else ())]


def _table(symbol: str, matrix: np.ndarray, rows: list, cols: list, digits: int) -> tuple:
    """A matrix as a table's rows: its symbol and the column labels, then each row's label and numbers."""
    return ((f"${symbol}$", *map(_label, cols)),
            *((_label(label), *(fmt(x, digits) for x in row)) for label, row in zip(rows, matrix)))


def _label(label: str) -> str:
    """A token as typed (a code span: "<unk>", "|" or "$" stay themselves); a number from 1 as it is."""
    return label if label.isdigit() or not label else literal(label)


def _fits(table: tuple) -> bool:
    """Whether a table of numbers is narrow enough for the printed page (PAGE_CHARS): its cells' characters as
    drawn (a label's without its code fence). The corner's symbol is left out: its LaTeX is longer than its
    drawing, which the row labels' column leaves room for."""
    header, *body = table
    shown = [[cell.strip("` ") for cell in row] for row in (header, *body)]
    widths = [max(len(row[0]) for row in shown[1:])]  # the row labels
    widths += [max(len(row[j]) for row in shown) for j in range(1, len(header))]
    return sum(widths) + CELL_CHARS * len(widths) <= PAGE_CHARS


def _axis(labels: list) -> str:
    """A heatmap's axis in words: its labels in order (the first and the last few and how many, beyond LISTED), or
    "1–n" for numbers from 1."""
    if labels == indices(len(labels)):
        return f"{FIRST}–{len(labels) + FIRST - 1}"
    if len(labels) <= LISTED:
        return " · ".join(map(literal, labels))
    return " · ".join([*map(literal, labels[:3]), "…", literal(labels[-1])]) + f" ({len(labels)})"


def _summary(value: np.ndarray, digits: int, t) -> str:
    """What a heatmap's cells hold: how many are −∞ (or NaN), and the smallest, largest and mean of the others."""
    finite = value[np.isfinite(value)]
    if not finite.size:
        return t("handout.summary.none", cells=value.size)
    numbers = {name: fmt(f(finite), digits) for name, f in (("low", np.min), ("high", np.max), ("mean", np.mean))}
    if finite.size == value.size:
        return t("handout.summary", **numbers)
    return t("handout.summary.masked", cells=value.size, masked=value.size - finite.size, **numbers)


def _prediction(trace, t, digits: int, card: str) -> list[Block]:
    """What the model predicts, read from P: at each decoder position the most likely next token and its
    probability, then the next most likely (RANKED in all), and which weights made it."""
    header = tuple(t(f"handout.prediction.{column}") for column in ("position", "token", "next", "p", "others"))
    rows = []
    for i, (token, probs) in enumerate(zip(unique(trace.tgt_tokens), trace["probs"])):
        (best, p), *others = top_tokens(probs, trace.model.vocab.tokens, RANKED)
        rows.append((str(i + FIRST), literal(token), literal(best), fmt(p, digits),
                     " · ".join(f"{literal(word)} {fmt(q, digits)}" for word, q in others)))
    return [Block("subheading", t("handout.prediction")), Block("text", t("handout.prediction.intro", n=RANKED - 1)),
            Block("table", rows=(header, *rows)), Block("text", card)]


def _differences(t, config) -> list[Block]:
    """The post's differences from the paper (engine.blog.DIFFERENCES), each under its topic: the post's formula,
    the other side's and who does so, why; "now" where the current settings do as one side. Lines, not a table's
    columns: a formula cannot wrap, and four columns of them are wider than a printed page."""
    blocks = [Block("heading", t("handout.differences"))]
    now = f" ({t('compare.now')})"
    for difference in blog.DIFFERENCES:
        key = difference["key"]
        post_now, other_now = departures.sides_now(key, config)
        other = f"${t.words(difference['engine'])}$ — {t(f'compare.side.{departures.RIGHT_SIDE[key]}')}"
        blocks += [Block("subheading", t(f"diff.{key}.topic")),
                   *(Block("text", t("handout.labelled", label=label, text=text)) for label, text in (
                       (t("compare.post"), f"${t.words(difference['post'])}$" + now * post_now),
                       (t("handout.other"), other + now * other_now), (t("handout.why"), t(f"diff.{key}.why"))))]
    return blocks
