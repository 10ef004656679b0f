"""The classification head page's views: the seed's slips at eq. 45, the head's steps (eqs. 45–46) and the digits'
probabilities as bars, with the model's answer and, for an unchanged test image, the right one."""
from __future__ import annotations

import streamlit as st

from engine.vit import SEED_SLIPS

from ui.core.figures import bars
from ui.core.format import fmt
from ui.core.state.vision import label
from ui.views import draw, steps
from ui.vision.vit_charts import prediction


def seed_slips(t):
    """The slips of the Shanghai Jiao Tong notes' section 9 (engine.vit.SEED_SLIPS), as the text pages' seed notes:
    small grey lines under the intro, each naming the equation, what it writes and what it means; and where this head
    departs from their eq. 46 by choice (a bias, as the ViT paper's)."""
    notes = [t(f"seednote.{slip.code}", equation=slip.equation, written=f"${slip.written}$",
               meant=f"${slip.meant}$") for slip in SEED_SLIPS] + [t("vit_head.bias_note")]
    st.markdown("\n\n".join(f":gray[:small[{note}]]" for note in notes))


def head(ctx):
    """The head's steps in the order of the pass: z_L^0, y = LN(z_L^0), the logits, their softmax."""
    steps.flow(ctx, [name for name in ctx.trace if name.startswith("head.")], key="vit_head")


def probabilities(ctx):
    """head.probs as one bar per digit, the answer in red, and a sentence naming it and, for a test image as the
    test split has it, its digit."""
    t, vit = ctx.t, ctx.state.vit
    probs = ctx.trace["head.probs"]  # (1, N_c)
    answer = prediction(probs, ctx.model.classes)
    st.markdown(f"##### {t('vit_head.bars')}")
    digit = label(vit)
    said = t("vit_head.answer", digit=answer.digit, p=fmt(answer.probability, ctx.state.digits))
    if digit is None:
        said += " " + t("vit_head.drawn")
    else:
        said += " " + t("vit_head.right" if str(digit) == answer.digit else "vit_head.wrong", n=vit.image + 1,
                        digit=digit)
    st.markdown(said)
    chart = draw.drawing(ctx.trace, ("vit_head.bars", ctx.state.digits),
                         lambda: bars(list(ctx.model.classes), probs[0], highlight=answer.digit,
                                      digits=ctx.state.digits))
    draw.plot(ctx, chart, "vit_head.bars")
