"""The model in use (shipped, random, trained here; with the learner's edits) on the test images: its accuracy, its
confusion matrix and the images it gets wrong, each one click from every ViT page. Computed once per model."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import streamlit as st

from engine import digits, vit_train

from ui.core import session, session_store
from ui.core.session_store import STATE
from ui.core.state import encode
from ui.core.state.vision import VisionState
from ui.views import draw
from ui.vision.vit_figures import confusion_chart, picture
from ui.vision.vit_frame import weights_name

MAX_SHOWN = 40  # misclassified images drawn (random weights get ~90 % of the 360 wrong)
OPENS_ON = ("vit_patches", "vit_head")  # the pages the misclassified image chosen is offered on


class Evaluation(NamedTuple):
    accuracy: float  # the share of test images classified right
    confusion: np.ndarray  # (N_c, N_c) counts[true, predicted]
    predicted: np.ndarray  # (360,) the most probable class of each test image


@st.cache_resource(max_entries=16, show_spinner=False, hash_funcs={VisionState: repr})
def evaluation_of(model_state: VisionState, _model) -> Evaluation:
    """The model's evaluation on the test split, keyed by the state that names the model (its weights, seed, sizes
    and edits; image and pixels left at their defaults, which the model does not depend on)."""
    test = digits.split("test")
    return Evaluation(vit_train.accuracy(_model, *test), vit_train.confusion(_model, *test),
                      vit_train.predict(_model, test.images))


def evaluation(ctx):
    t, vit = ctx.t, ctx.state.vit
    result = evaluation_of(vit.replace(image=0, pixels=()), ctx.model)
    n = len(result.predicted)
    st.subheader(t("vit_train.eval_title"))
    st.markdown(t("vit_train.eval_intro", weights=weights_name(t, vit), n=n,
                  edited=t("vit_train.eval_edited") if vit.edits else ""))
    st.metric(t("vit_train.accuracy"), t("vit_train.accuracy_value", percent=f"{100 * result.accuracy:.2f}",
                                         right=int(np.trace(result.confusion)), n=n))
    st.markdown(t("vit_train.confusion_intro"))
    draw.plot(ctx, confusion_chart(result.confusion, ctx.model.classes, t("vit_train.true"), t("vit_train.predicted"),
                              draw.type_scale(ctx)), "vit_train.confusion", width="content")
    _misclassified(ctx, result)


def _misclassified(ctx, result: Evaluation):
    """The test images the model gets wrong, each a picture with its number, true and predicted digit; a click opens
    it on every ViT page (state.vit.image)."""
    t, vit = ctx.t, ctx.state.vit
    test = digits.split("test")
    wrong = np.flatnonzero(result.predicted != test.labels)
    st.markdown(t("vit_train.misses", n=len(wrong)) if len(wrong) else t("vit_train.no_misses"))
    if not ctx.reading and len(wrong):
        _open_on(ctx)
    grid = st.container(horizontal=True, gap="small")
    for index in wrong[:MAX_SHOWN]:
        label = t("vit_train.miss", n=index + 1, true=test.labels[index], predicted=result.predicted[index])
        cell = grid.container(width=84, gap=None, horizontal_alignment="center")
        cell.image(picture(test.images[index]), width=56, alt=t("vit.image_is", n=index + 1, digit=test.labels[index]))
        if ctx.reading:  # a following student's page: the teacher chooses
            cell.caption(label)
        else:
            chosen = index == vit.image and not vit.pixels
            cell.button(label, key=f"vit_train.open.{index}", on_click=_open, args=(int(index),),
                        type="primary" if chosen else "secondary")
    if len(wrong) > MAX_SHOWN:
        st.caption(t("vit_train.more", n=len(wrong) - MAX_SHOWN))


def _open_on(ctx):
    """Links to the pages that read the chosen image, with the page's state."""
    row = st.container(horizontal=True, vertical_alignment="center")
    row.caption(ctx.t("vit_train.open_on", n=ctx.state.vit.image + 1), width="content")
    for page in OPENS_ON:
        row.page_link(session.page_entry(ctx.t, page), label=ctx.t(f"page.{page}"), query_params=encode(ctx.state),
                      width="content")


def _open(index: int):
    state = session_store.get(STATE)
    session.set_state(state.replace(vit=state.vit.replace(image=index, pixels=())))
