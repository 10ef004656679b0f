"""The ViT encoder page's views: the model's sizes, and one layer as sections: where the class token looks on the
image, and each pre-norm sub-layer's steps (eqs. 43–44) as a flow."""
from __future__ import annotations

import functools

import streamlit as st

from engine.config import ConfigError
from engine.vit import ViTConfig

from ui.core import session, session_store, sidebar
from ui.core.format import decimals
from ui.core.session_store import STATE
from ui.core.state.vision import APP_LIMITS, SIZES, image
from ui.views import draw, pickers, steps
from ui.vision.vit_charts import (PANELS_PER_ROW, PLACES, attention_over_image, class_attention, self_attention,
                                  strongest, sublayers)

SUBLAYER_TEX = {  # eqs. 43–44: pre-norm, LayerNorm inside the residual branch
    "attn": r"z'_\ell = \operatorname{MSA}(\operatorname{LN}(z_{\ell-1})) + z_{\ell-1}",
    "ffn": r"z_\ell = \operatorname{MLP}(\operatorname{LN}(z'_\ell)) + z'_\ell"}
REFUSED = {"vit_patch_divides": "vit_encoder.refused.patch", "not_divisible": "vit_encoder.refused.heads"}


def sizes(ctx):
    """The ViT's sizes, each a number input, in an expander; a change runs random weights of those sizes (the
    shipped model has the defaults), a size that does not fit is refused with why. A following student's page
    names them."""
    t, vit = ctx.t, ctx.state.vit
    chosen = vit.settings()
    said = " · ".join(t(f"vit_encoder.size.{field}", n=getattr(chosen, field)) for field in SIZES)
    if ctx.reading:
        st.caption(said)
        return
    box = st.expander(t("vit_encoder.sizes", sizes=said), icon=":material/tune:", key="vit.sizes",
                      expanded=bool(session_store.get("vit.sizes")), on_change="rerun")  # a label naming
    # other sizes is another expander to Streamlit, which opens as `expanded` says: as the last one was
    if not box.open:
        return
    row = box.container(horizontal=True)
    for field in SIZES:
        value = getattr(chosen, field)
        low, high = APP_LIMITS[field]
        key = f"vit.size.{field}.{value}"  # keyed by the size: a refused number goes back to the state's
        sidebar.whole_number_input(row, t(f"vit_encoder.size_label.{field}"), key, low, high,
                                   functools.partial(_take_size, t, field, key), value=value, width=130)
    refused = session_store.pop("vit.size.refused", None)
    if refused:
        box.error(refused)
    default = ViTConfig()
    box.caption(t("vit_encoder.sizes.random" if vit.sizes else "vit_encoder.sizes.shipped",
                  **{field: getattr(default, field) for field in SIZES}))


def _take_size(t, field, key):
    number = session_store.get(key)
    state = session_store.get(STATE)
    low, high = APP_LIMITS[field]
    if not isinstance(number, int) or isinstance(number, bool) or not low <= number <= high:
        return
    try:
        session.set_state(state.replace(vit=state.vit.with_sizes(**{field: number})))
    except ConfigError as error:
        session_store.put(key, getattr(state.vit.settings(), field))  # the field shows the size in use again
        key = REFUSED.get(error.code)
        session_store.put("vit.size.refused", t(key, **error.values) if key else session.refusal(t, error))


def layer(ctx):
    """The layer picked, as sections: the class token's attention over the image, then each sub-layer's steps."""
    chosen = pickers.layer_picker(ctx, "layer.enc")
    names = sublayers(ctx.trace, chosen)
    blocks = ctx.config.sublayers["enc"]  # {1: "attn", 2: "ffn"}
    sections = {"vit_encoder.section.image": lambda ctx: class_token_looks(ctx, chosen)}
    for block, flow in zip(blocks.values(), names):
        sections[f"vit_encoder.section.{block}"] = lambda ctx, block=block, flow=flow: sublayer(ctx, block, flow,
                                                                                             chosen)
    pickers.section_tabs(ctx, sections, "vit_encoder.section", link="section")


def sublayer(ctx, block: str, names: list[str], chosen: int):
    """A sub-layer's equation (43 or 44) and its steps, LayerNorm first, as one flow (an attention's per head)."""
    draw.text_and_formula(ctx.t(f"vit_encoder.{block}.text", l=chosen + 1), SUBLAYER_TEX[block])
    head = pickers.head_picker(ctx, f"heads.vit_encoder.{chosen}") if block == "attn" else None
    steps.flow(ctx, names, head, key=f"vit_encoder.{block}")


def class_token_looks(ctx, chosen: int):
    """Per head and their mean: the class token's attention weights to the patches of layer `chosen`, laid over
    the image, with a sentence on what they show and what the class token keeps for itself."""
    t, s = ctx.t, ctx.model.settings
    name = f"enc.{chosen}.attn.weights"
    weights = ctx.trace[name]  # (h, n, n)
    maps = class_attention(weights, (s.height // s.patch, s.width // s.patch))
    own = self_attention(weights)
    heads = [f"{t('view.head')} {h + 1}" for h in range(len(own) - 1)] + [t("vit_encoder.mean")]
    titles = [f"{head}<br>{t('vit_encoder.itself', own=decimals(w, PLACES))}" for head, w in zip(heads, own)]
    st.markdown(f"##### {t('vit_encoder.section.image')} · {t('present.layer', n=chosen + 1)}\n\n"  # a slide's
                + t("vit_encoder.looks", l=chosen + 1, name=name, n=s.n_patches))  # heading (ui/classroom/scroll.py)
    per_row = len(maps) if ctx.state.present else PANELS_PER_ROW  # a projector's slide: one row of panels
    chart = draw.drawing(ctx.trace, ("class_attention", chosen, ctx.state.digits, draw.type_scale(ctx), t.lang),
                         lambda: attention_over_image(image(ctx.state.vit), maps, titles, ctx.model.tokens[1:],
                                                      ctx.state.digits, draw.type_scale(ctx), per_row))
    draw.plot(ctx, chart, f"vit_encoder.looks.{chosen}")
    most = " · ".join(f"{head} → {ctx.model.tokens[1 + k]} ({decimals(w, PLACES)})"
                      for head, (k, w) in zip(heads, strongest(maps)))
    st.caption(t("vit_encoder.most", most=most) + "\n\n" + t("vit_encoder.looks.note"))
