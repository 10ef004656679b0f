"""A vocabulary too long to draw whole (a real translator's ~65,000 tokens): a step's vocabulary axis is drawn as
the columns a reader of that step looks at. A 3 x 65,000 heatmap is ~200,000 cells the browser draws for a few
seconds and no reader can scan; the columns that decide the output, and any token the reader looks for, are."""
from __future__ import annotations

import numpy as np
import streamlit as st

from ui.core.i18n import literal

DRAWN_WHOLE = 256  # a vocabulary up to this long is drawn whole (the presets': 11 and ~190 tokens)
TOP = 10  # each decoder position's most likely tokens drawn
FOUND = 8  # at most this many of the tokens a search finds drawn
SEARCH_LENGTH = 40  # characters a search may have: a token is shorter


def is_long(trace) -> bool:
    return len(trace.model.vocab) > DRAWN_WHOLE


def columns(ctx, trace, key: str) -> list[int]:
    """The vocabulary's ids a step drawn under `key` shows, in order: each decoder position's TOP most likely tokens
    (the pass's probabilities, the last position's first), the tokens no output may be (masked, e.g. <unk>), then
    those the reader's search finds. A following student's page has no search."""
    probs = trace["probs"]
    likeliest = np.argsort(-probs, axis=-1, kind="stable")[..., :TOP]
    ids = dict.fromkeys(int(i) for i in likeliest[::-1].ravel())
    ids |= dict.fromkeys(trace.model.never_next)
    if not ctx.reading:
        ids |= dict.fromkeys(_search(ctx, trace.model.vocab.tokens, key))
    st.caption(ctx.t("vocab.drawn", top=TOP, size=len(trace.model.vocab)))
    return list(ids)


def _search(ctx, tokens, key: str) -> list[int]:
    """The ids of the first FOUND tokens holding the text the reader typed (ignoring case), said in a caption."""
    typed = st.text_input(ctx.t("vocab.find"), key=f"vocab.find.{key}", max_chars=SEARCH_LENGTH,
                          placeholder=ctx.t("vocab.find_hint")).strip().lower()
    if not typed:
        return []
    found = [i for i, token in enumerate(tokens) if typed in token.lower()]
    st.caption(ctx.t("vocab.found", n=len(found), shown=min(len(found), FOUND), text=literal(typed)))
    return found[:FOUND]
