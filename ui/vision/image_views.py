"""The "Image to patches" page's views: the image the model reads with its patch grid, the pixel pad to draw on,
and one patch's flattened row, each of its numbers labelled with the pixel it is."""
from __future__ import annotations

import streamlit as st

from engine import vit

from ui.core import session, session_store
from ui.core.session_store import STATE
from ui.core.state.vision import image
from ui.views import draw, pickers
from ui.vision import pictures, pixel_pad, pixels

GREY_STEP = 1 / 16  # the digits' grey levels: 0, 1/16, ..., 1


def image_and_pad(ctx) -> int:
    """The image with its patches (the chosen one outlined, its pixels numbered by their column in x_p^i) beside the
    pad to draw on and the buttons to clear it or go back to the test image. Returns the chosen patch."""
    t, model, vision = ctx.t, ctx.model, ctx.state.vit
    settings, names = model.settings, model.tokens[1:]
    chosen = pickers.choice(ctx, "vit.patch", t("vit.patch"), list(range(settings.n_patches)), names.__getitem__,
                            link="position", listed=True)  # 4, 16 or 64 patches: one line
    picture = image(vision)[..., 0]  # (H, W): one channel
    shown, drawing = st.columns([3, 2]) if not ctx.reading else (st.container(), None)
    chart = pictures.image_chart(picture, settings.patch, names, chosen, vit.patch_pixels(settings, chosen))
    shown.markdown(t("vit.image_caption", patch=settings.patch, n=settings.n_patches, name=names[chosen]))
    draw.plot(ctx, chart, "vit.image", where=shown, width="content")
    if drawing is not None:
        with drawing:
            _drawing_side(t, picture, vision, settings)
    return chosen


def _drawing_side(t, picture, vision, settings):
    st.markdown(t("vit.pad.title"))
    st.caption(t("vit.pad.style"))  # why a 1 drawn as a thin bar may read as 7
    pixel_pad.refused_note(t)
    pixel_pad.pad(t, picture)
    row = st.container(horizontal=True)
    row.button(t("vit.pad.clear"), key="vit.pad.clear", on_click=_clear, args=(settings.height, settings.width))
    row.button(t("vit.pad.reset"), key="vit.pad.reset", on_click=_reset, disabled=not vision.pixels)
    _one_pixel(t, picture)


def _one_pixel(t, picture):
    """One pixel's exact grey (0 to 1 in the digits' 16 steps), picked by its row and column: in an expander, drawn
    only while open."""
    box = st.expander(t("vit.pixel.title"), key="open.vit.pixel", on_change="rerun")
    if not box.open:
        return
    height, width = picture.shape
    with box:
        place = st.container(horizontal=True)
        row = place.selectbox(t("vit.pixel.row"), range(height), format_func=lambda r: str(r + 1), key="vit.pixel.row")
        col = place.selectbox(t("vit.pixel.col"), range(width), format_func=lambda c: str(c + 1), key="vit.pixel.col")
        shown = min(max(float(picture[row, col]), 0.0), 1.0)  # a linked pixel may lie beyond the slider's 0 to 1
        key = f"vit.pixel.value.{row}.{col}.{shown!r}"
        st.slider(t("vit.pixel.value"), 0.0, 1.0, shown, step=GREY_STEP, key=key, on_change=_slid,
                  args=(key, row, col))


def _slid(key, row, col):
    """The slider's grey into the pixel; a forged value (not a finite number within ±engine.vit.MAX_PIXEL) is
    refused and said, the image as it was."""
    state = session_store.get(STATE)
    value = session_store.get(key)
    try:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise ValueError(value)
        session.set_state(state.replace(vit=state.vit.with_pixel(row, col, value)))
    except ValueError:
        pixel_pad.refuse()


def _clear(height, width):
    state = session_store.get(STATE)
    session.set_state(state.replace(vit=pixels.cleared(state.vit, height, width)))


def _reset():
    state = session_store.get(STATE)
    session.set_state(state.replace(vit=state.vit.replace(pixels=())))


def patch_row(ctx, chosen: int):
    """Patch `chosen`'s flattened row x_p^i, each number under its column's number and the pixel it is."""
    names = ctx.model.tokens[1:]
    columns = vit.patch_pixels(ctx.model.settings, chosen)
    st.markdown(ctx.t("vit.row_caption", name=names[chosen], row=f"x_p^{{{chosen + 1}}}",
                      p=ctx.model.settings.patch, size=len(columns)))
    chart = pictures.patch_row_chart(ctx.trace["img.patches"][chosen], columns, f"x_p^{chosen + 1}", names[chosen])
    draw.plot(ctx, chart, "vit.patch_row")
