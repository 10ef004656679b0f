"""What a handout says, as blocks any renderer writes (ui.handout.render: HTML, Markdown): the settings, every step
of the trace in the order data flows (its name, line, formula, shape, where it departs from the paper, its numbers:
written out up to LATEX_MAX × LATEX_MAX, else a heatmap), then the post's differences from the paper. Pure: the
trace's numbers, the catalogs' words and the engine's formulas, nothing written here twice."""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np

from engine import blog
from engine.presets import PRESETS
from ui.core import departures
from ui.core.format import LATEX_MAX, bmatrix, fmt
from ui.core.i18n import literal
from ui.core.labels import FIRST, description_key, step_name_key, step_tex
from ui.core.model_card import describe
from ui.handout.heatmap import Heatmap, heatmap


class Block(NamedTuple):
    kind: str  # "title", "heading", "subheading", "text", "math", "image" or "table"
    text: str = ""  # text, heading, table cell: Markdown's inline ($…$ math, `code`, **bold**); math: LaTeX
    rows: tuple = ()  # a table's rows of cells, its header first
    image: Heatmap | None = None


class Settings(NamedTuple):
    """What produced the trace: the app's state, or the command line's."""
    preset: str
    seed: int
    src: str
    tgt: str | None
    digits: int
    edits: tuple = ()  # ((param, (i, j, ...), value), ...)
    weights: str = ""  # the weights store's id, or "": the preset's random weights
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
    return blocks + _differences(t, config)


def _settings(t, settings: Settings, trace) -> list[Block]:
    """The settings as a table: the sentences and their tokens, the model's options (those that differ from the
    preset's marked), edited weights, stored weights and the link."""
    config, preset = trace.model.config, PRESETS[settings.preset]
    tokens = " · ".join(literal(" ".join(side)) for side in (trace.src_tokens, trace.tgt_tokens))
    rows = [(t("ctl.preset"), t(f"preset.{settings.preset}")), (t("ctl.seed"), str(settings.seed)),
            (t("ctl.src"), literal(settings.src)), (t("handout.target"), literal(settings.tgt or "")),
            (t("handout.tokens"), tokens), (t("ctl.digits"), str(settings.digits))]
    options = [(field.name, getattr(config, field.name), getattr(preset, field.name))
               for field in dataclasses.fields(config)]
    changed = f" ({t('handout.changed')})"
    rows.append((t("handout.options"), ", ".join(f"`{name} = {value!r}`" + changed * (value != usual)
                                                   for name, value, usual in options)))
    edits = "; ".join(f"`{param}[{', '.join(map(str, index))}]` = {fmt(value, settings.digits)}"
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
    return blocks + _numbers(step, title, digits, t)


def _numbers(step, title: str, digits: int, t) -> list[Block]:
    """Each matrix written out (a head's each), or, when one is larger than LATEX_MAX either way, one heatmap."""
    value = np.atleast_2d(step.value)  # (rows, cols) or (h, rows, cols)
    if max(value.shape[-2:]) <= LATEX_MAX:
        if value.ndim == 2:
            return [Block("math", f"{step_tex(step.symbol, None, title)} = {bmatrix(value, digits)}")]
        return [Block("math", f"{step_tex(step.symbol, head, title)} = {bmatrix(matrix, digits)}")
                for head, matrix in enumerate(value)]
    picture = heatmap(value)
    finite = value[np.isfinite(value)]
    summary = {name: fmt(f(finite), digits) if finite.size else "—"
               for name, f in (("low", np.min), ("high", np.max), ("mean", np.mean))}
    key = "handout.heatmap.heads" if value.ndim == 3 else "handout.heatmap"
    colours = t("handout.colours.signed" if picture.signed else "handout.colours.positive")
    return [Block("image", t(key, rows=value.shape[-2], cols=value.shape[-1], h=value.shape[0], colours=colours,
                             block=f"{picture.block[0]} × {picture.block[1]}", **summary), image=picture)]


def _differences(t, config) -> list[Block]:
    """The post's differences from the paper (engine.blog.DIFFERENCES): the topic, the post's formula and the
    other side's, who does so, why; "now" where the current settings do as one side."""
    rows = [(t("handout.topic"), t("compare.post"), t("handout.other"), t("handout.why"))]
    for difference in blog.DIFFERENCES:
        key = difference["key"]
        post_now, other_now = departures.sides_now(key, config)
        now = f" ({t('compare.now')})"
        rows.append((t(f"diff.{key}.topic"), f"${t.words(difference['post'])}$" + now * post_now,
                     f"${t.words(difference['engine'])}$ — {t(f'compare.side.{departures.RIGHT_SIDE[key]}')}"
                     + now * other_now, t(f"diff.{key}.why")))
    return [Block("heading", t("handout.differences")), Block("table", rows=tuple(rows))]
