"""A Vision Transformer page's frame: a step page (ui/views/frame.page) whose context is the ViT's, and the controls
every ViT page opens with: which test image it reads (and its digit) and which weights it runs."""
from __future__ import annotations

import functools

import streamlit as st

from ui.core import session, session_store, sidebar
from ui.core.session_store import STATE
from ui.core.state.vision import RANDOM, SHIPPED, TEST_IMAGES, label
from ui.views import frame

CHOICE_KEYS = {SHIPPED: "vit.weights.shipped", RANDOM: "vit.weights.random_choice"}  # else weights trained here


def page(body):
    """A ViT page's body as a step page (frame.page), drawn with the Vision Transformer's context."""
    return frame.page(body, vision=True)


def intro(ctx, page_name: str):
    """The page's title and intro (frame.intro), then the image and weights controls."""
    frame.intro(ctx, page_name, model_notes=False)
    controls(ctx)


def controls(ctx):
    """The test image (by its number, 1 to 360, with its digit) and the weights: the trained ones the repository
    ships or random ones; a following student's page shows them as text."""
    t, vit = ctx.t, ctx.state.vit
    digit = label(vit)
    said = t("vit.image_is", n=vit.image + 1, digit=digit) if digit is not None else t("vit.image_drawn",
                                                                                       n=vit.image + 1)
    weights = weights_name(t, vit)
    if ctx.reading:
        st.caption(f"{said} · {weights}")
        return
    row = st.container(horizontal=True, vertical_alignment="bottom")
    image_key = f"vit.image.{vit.image}"
    sidebar.whole_number_input(row, t("vit.image"), image_key, 1, TEST_IMAGES,
                               functools.partial(_take_image, image_key), value=vit.image + 1, width=160)
    trained = [vit.weights] if vit.weights not in (SHIPPED, RANDOM) else []  # weights trained here, in use
    key = f"vit.weights.{vit.weights}"  # a new widget for other weights: it shows them, chosen anywhere
    row.segmented_control(t("vit.weights"), [SHIPPED, RANDOM, *trained], key=key, default=vit.weights,
                          format_func=lambda w: t(CHOICE_KEYS.get(w, "vit.weights.trained")),
                          on_change=_take_weights, args=(key,))
    st.caption(f"{said} · {weights}")


def weights_name(t, vit) -> str:
    """The weights the ViT pages run, in words."""
    if vit.shipped:
        return t("vit.weights.shipped")
    return t("vit.weights.random", seed=vit.seed) if vit.weights == RANDOM else t("vit.weights.trained")


def _take_image(key):
    number = session_store.get(key)
    state = session_store.get(STATE)
    if isinstance(number, int) and 1 <= number <= TEST_IMAGES:
        session.set_state(state.replace(vit=state.vit.replace(image=number - 1, pixels=())))


def _take_weights(key):
    chosen = session_store.get(key)
    state = session_store.get(STATE)
    if chosen in (SHIPPED, RANDOM):
        session.set_state(state.replace(vit=state.vit.replace(weights=chosen, sizes=() if chosen == SHIPPED
                                                              else state.vit.sizes, edits=())))
