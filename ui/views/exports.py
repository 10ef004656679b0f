"""The sidebar's Export section: the example's trace as JSON, CSV or NPZ (the command line's formats,
engine/export.py, each with the settings and the vocabulary), the PyTorch check (a script and the NPZ in a zip), and
the format the charts' download button saves (draw.plot). Drawn only while open; a file is made when its button is
clicked (Streamlit's deferred download), not on every run."""
from __future__ import annotations

import io
from functools import partial

import streamlit as st

from engine.export import write_csv, write_json, write_npz, write_torch_check
from ui.core import session_store
from ui.views.draw import CHART_FORMAT, CHART_FORMATS

TEXT_WEIGHTS = 1_000_000  # JSON and CSV write the weights up to this many (the paper's 44 million: gigabytes of text)


def sidebar(ctx) -> None:
    """The Export expander at the sidebar's foot; none on a following student's lean page (Context.reading)."""
    if ctx.reading:
        return
    box = st.sidebar.expander(ctx.t("export.title"), key="export.open", on_change="rerun",
                              icon=":material/download:")
    if box.open:
        with box:
            _downloads(ctx)


def _downloads(ctx) -> None:
    t, trace, name = ctx.t, ctx.trace, f"transformer-{ctx.model.name}"
    weights = sum(value.size for value in ctx.model.params.values())
    params = weights <= TEXT_WEIGHTS
    st.caption(t("export.intro"))
    for fmt, writer, mime in (("json", write_json, "application/json"), ("csv", write_csv, "text/csv")):
        st.download_button(t(f"export.{fmt}"), data=partial(_text, trace, partial(writer, params=params)),
                           file_name=f"{name}.{fmt}", mime=mime, key=f"export.{fmt}", on_click="ignore",
                           width="stretch")
    st.download_button(t("export.npz"), data=partial(_bytes, trace, write_npz), file_name=f"{name}.npz",
                       mime="application/octet-stream", key="export.npz", on_click="ignore", width="stretch")
    if not params:
        st.caption(t("export.no_weights", n=f"{weights:,}"))
    st.download_button(t("export.torch"), data=partial(_bytes, trace, write_torch_check),
                       file_name=f"{name}-check-in-pytorch.zip", mime="application/zip", key="export.torch",
                       on_click="ignore", type="primary", width="stretch")
    st.caption(t("export.torch_help"))
    session_store.put("export.chart_choice", session_store.get(CHART_FORMAT, CHART_FORMATS[0]))
    st.segmented_control(t("export.charts"), CHART_FORMATS, format_func=str.upper, key="export.chart_choice",
                         required=True, on_change=_keep_chart_format, help=t("export.charts_help"))


def _keep_chart_format() -> None:
    """The choice outlives the expander's widget, which forgets its value while the expander is closed."""
    session_store.put(CHART_FORMAT, session_store.widget("export.chart_choice"))


def _text(trace, writer) -> str:
    buffer = io.StringIO()
    writer(trace, buffer)
    return buffer.getvalue()


def _bytes(trace, writer) -> bytes:
    buffer = io.BytesIO()
    writer(trace, buffer)
    return buffer.getvalue()
