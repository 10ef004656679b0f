"""Rows of buttons and lists that pick what a page shows: the layer, the head, a page's section, a cell or a row of
a matrix. A forged value (out of range, a fraction, NaN) picks a position in range. On a following student's page
(Context.reading) a row of buttons is a line of text naming its choices, the chosen one in bold: what is shown is
the teacher's to pick."""
from __future__ import annotations

import math

import streamlit as st

from ui.core import session_store
from ui.core.labels import FIRST, indices
from ui.core.navigation import SECTIONS
from ui.views.drawn import restore_from_link, show_in_link

POSITION_LIST = 32  # a weight's row or column is picked from a list up to this many positions, else by its number
CELL_LIST = 64  # a matrix's cell is picked from one list ("row, column") up to this many cells, else row and column
LIST_WIDTH = 200  # px, a list of short names (choice's listed): a name and the list's arrow


def layer_picker(ctx, key: str) -> int:
    n = ctx.config.depth(key.removeprefix("layer.")[:3])  # the key names the stack: "layer.enc", "layer.dec_stack"
    if n == 1:
        return 0
    restore_from_link(ctx.t, key, "layer", range(n))
    layer = picker(ctx, key, ctx.t("ctl.layer"), [str(layer + 1) for layer in range(n)], 0,
                   collapsed=False, help=ctx.t("ctl.layer_help"))  # layer 1 is enc.0: the picker gives the index
    show_in_link("layer", layer, 0)
    return layer


def head_picker(ctx, key: str) -> int:
    """The head whose steps the page draws, from a row of buttons: one widget, where tabs sent a block per head
    (nine messages on every rerun with the paper's eight heads)."""
    n = ctx.config.n_heads
    restore_from_link(ctx.t, key, "head", range(n))
    head = picker(ctx, key, ctx.t("view.head"), [f"{ctx.t('view.head')} {h + 1}" for h in range(n)])
    show_in_link("head", head, 0)
    return head


def section_tabs(ctx, sections: dict, key: str, link: str | None = None, numbers: dict | None = None):
    """A page's sections, {label key: function that draws the section from the page's context, ctx}, picked from a
    row of buttons; only the chosen one is drawn. One widget, where st.tabs sent a block per tab on every rerun. link:
    the part of the page's link that names the chosen section (by its position, or by its number in `numbers`, {label
    key: number}, where the sections were reordered after links named them). `key` is declared in
    ui/core/navigation.SECTIONS, whose pages' sections tests/test_sections.py opens one by one."""
    if key not in SECTIONS.values():
        raise ValueError(f"the section picker {key!r} is not declared in ui/core/navigation.SECTIONS")
    keys = list(sections)
    labels = [ctx.t(label) for label in keys]
    linked = [numbers[label] for label in keys] if numbers else list(range(len(keys)))  # each section's number
    if link:  # a section is chosen by its label, the link's numbers in their order
        restore_from_link(ctx.t, key, link, [labels[linked.index(number)] for number in sorted(linked)], linked[0])
    if session_store.get(key) not in labels:  # the first run, another language's label, or a forged one
        session_store.put(key, labels[0])
    if ctx.reading:
        chosen = _read_only(key, None, labels, session_store.widget(key))
    else:
        chosen = st.segmented_control(ctx.t("view.section"), labels, key=key, required=True,
                                      label_visibility="collapsed")
    position = labels.index(chosen) if chosen in labels else 0
    if link:
        show_in_link(link, linked[position], linked[0])
    sections[keys[position]](ctx)


def choice(ctx, key, label, options, format_func, link=None, listed=False):
    """A row of buttons, or a list (listed: options too many for a row, one line of the page whatever their number);
    the first option if a forged message empties it or names no option. link: the part of the page's link that names
    the chosen option (by its position). On a following student's page a row names every option, a list the chosen."""
    if link:
        restore_from_link(ctx.t, key, link, options)
    if ctx.reading:
        kept = session_store.get(key)
        kept = kept if kept in options else options[0]
        shown = [kept] if listed else options
        chosen = _read_only(key, label, [format_func(o) for o in shown], kept, shown)
    elif listed:
        chosen = st.selectbox(label, options, key=key, format_func=format_func, width=LIST_WIDTH)
    else:
        chosen = st.segmented_control(label, options, default=options[0], required=True, key=key,
                                      format_func=format_func)
    chosen = chosen if chosen in options else options[0]
    if link:
        show_in_link(link, options.index(chosen), 0)
    return chosen


def picker(ctx, key: str, label: str, choices: list[str], default: int = 0, collapsed: bool = True,
           help: str | None = None) -> int:
    """The position of the chosen button of a row (a segmented control), or, on a following student's page, the
    line of text that names it."""
    if ctx.reading:
        return _read_only(key, None if collapsed else label, choices, clamped(session_store.get(key, default),
                                                                              len(choices)), range(len(choices)))
    chosen = st.segmented_control(label, range(len(choices)), format_func=choices.__getitem__, default=default,
                                  required=True, key=key, help=help,
                                  label_visibility="collapsed" if collapsed else "visible")
    return default if chosen is None else chosen  # required is the browser's rule: a forged message can empty it


def _read_only(key: str, label: str | None, labels: list[str], chosen, options=None):
    """A row of buttons on a following student's page: one line naming the choices (catalog words and numbers), the
    chosen one in bold. The choice is kept for the widget `key` (a widget not drawn forgets its value), which shows it
    when the page is the student's own again. options: what each label stands for (the labels themselves if None)."""
    options = labels if options is None else list(options)
    session_store.put(key, chosen)
    line = " · ".join(f"**{text}**" if option == chosen else f":gray[{text}]" for option, text in zip(options, labels))
    st.markdown(f"{label}: {line}" if label else line)
    return chosen


def cell_list(t, container, label, rows, cols, key, **callback):
    """(row, col) of a cell picked from one list of a matrix's cells, each named by its row and column label. A forged
    position (out of range, a fraction, NaN) is clamped like a picker's (see clamped)."""
    n = len(rows) * len(cols)
    chosen = container.selectbox(label, range(n), key=key, **callback,
                                 format_func=lambda i: t("view.cell", row=rows[i // len(cols)],
                                                         col=cols[i % len(cols)]))
    return divmod(clamped(chosen, n), len(cols))


def position_picker(container, label: str, labels: list[str], key: str) -> int:
    """A row or column of a weight matrix or of a step (the drill-down), its position in state `key`: from a list,
    or by its number where the labels are only the positions 1..n and there are many of them (a list of 512 costs
    every rerun a few ms). The number typed counts from 1, as the labels do; the position from 0."""
    n = len(labels)
    if n <= POSITION_LIST or labels != indices(n):
        return container.selectbox(label, range(n), format_func=labels.__getitem__, key=key)
    position = clamped(session_store.get(key), n)
    session_store.update({key: position, f"{key}.number": float(position + FIRST)})
    first, last = float(FIRST), float(n - 1 + FIRST)
    container.number_input(f"{label} ({first:g}–{last:g})", min_value=first, max_value=last, step=1.0, format="%g",
                           key=f"{key}.number", on_change=_take_number, args=(key, n))
    return position  # a float input (sidebar.whole_number_input)


def _take_number(key, n):
    """A typed position number (from 1) into the position state `key` (from 0), clamped like a picker's."""
    typed = session_store.widget(f"{key}.number")
    number = typed if isinstance(typed, (int, float)) and not isinstance(typed, bool) else math.nan
    session_store.put(key, clamped(number - FIRST, n))


def clamped(value, n):
    """A picker's position within range(n): a typed fraction is dropped (2.6 picks 2); anything but a finite
    number from 0 (a forged message) means 0."""
    number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else -1
    return min(int(number), n - 1) if math.isfinite(number) and number >= 0 else 0


def as_position(value, n):
    """A chart coordinate or a grid's row as a position in range(n), or None if it is not one (NaN, -1, 2.5, "a")."""
    whole = isinstance(value, int) and not isinstance(value, bool) or isinstance(value, float) and value.is_integer()
    return int(value) if whole and 0 <= value < n else None


def row_of_widgets():
    """Widgets side by side, sharing the width: one block where st.columns sends a block per column (each block
    is one more message to the browser on every rerun)."""
    return st.container(horizontal=True, gap="medium")
