"""The handout's download buttons (HTML and Markdown), each file made only when its button is clicked."""
from __future__ import annotations

import functools
from urllib.parse import urlencode

import streamlit as st

from ui.core import session, state as app_state
from ui.core.navigation import HOME
from ui.handout.document import Settings
from ui.handout.render import FORMATS, handout_file

FILE_NAME = "transformer-handout.{format}"


def handout_buttons(ctx, where=st) -> None:
    """A download button per format, side by side; a click makes the file on Streamlit's thread for it (no rerun)."""
    settings = settings_of(ctx)
    row = where.container(horizontal=True)
    for format_, mime in FORMATS.items():
        row.download_button(ctx.t(f"handout.download.{format_}"),
                            functools.partial(handout_file, ctx.trace, ctx.t, settings, format_),
                            file_name=FILE_NAME.format(format=format_), mime=mime, key=f"handout.{format_}",
                            help=ctx.t("handout.download.help"), on_click="ignore", icon=":material/download:")


def settings_of(ctx) -> Settings:
    """The handout's settings from the app's state, with its link (the app's address and the state's query)."""
    state = ctx.state
    home = (st.context.url or "").rstrip("/").removesuffix(f"/{HOME}")  # the overview's address is / or /overview
    link = f"{home}/?{urlencode(app_state.encode(state))}"
    return Settings(state.preset, state.seed, state.src, state.tgt, state.digits, state.edits,
                    state.weights or state.model, link, session.weights_origin(state))

