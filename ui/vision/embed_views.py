"""The "Patch & position embeddings" page's views: the patch embedding x_p E + b_E laid out as it is computed, and
the learned position embeddings' similarity maps (the ViT paper's figure 7) with what they show."""
from __future__ import annotations

import streamlit as st

from engine import vit

from ui.core.format import fmt
from ui.core.state.vision import RANDOM
from ui.views import draw
from ui.vision import pictures

NAMES = ("x_p", "E", "b_E", "x_p E + b_E")


def product(ctx):
    """Every patch's row times E plus b_E: the four matrices in one picture, E above the result, x_p to its left."""
    s, names = ctx.model.settings, ctx.model.tokens[1:]
    draw.text_and_formula(ctx.t("vit.product", n=s.n_patches, k=s.patch_size, d=s.d_model), vit.PATCH_EMBED_TEX)
    chart = draw.drawing(ctx.trace, ("vit.product",), lambda: pictures.product_chart(
        ctx.trace["img.patches"], ctx.model.params["img.E"], ctx.model.params["img.b_E"], ctx.trace["img.embed"],
        (*NAMES, names)))
    draw.plot(ctx, chart, "vit.product")


def position_maps(ctx):
    """The cosine of every pair of the patches' position embeddings, one map per patch laid out in the grid, and a
    sentence on what they show: the shipped model's structure, random weights' none."""
    model, vision = ctx.model, ctx.state.vit
    draw.text_and_formula(ctx.t("vit.maps.intro", table=r"E_{\text{pos}}"), vit.POSITION_SIMILARITY_TEX)
    if model.settings.n_patches < 2:
        st.caption(ctx.t("vit.maps.one_patch"))
        return
    similarity = vit.position_similarity(model)  # (N, N)
    maps = vit.similarity_maps(similarity, model.settings)
    draw.plot(ctx, pictures.similarity_maps_chart(maps, model.tokens[1:]), "vit.maps", width="content")
    relation = vit.similarity_by_relation(similarity, model.settings)
    words = {name: "–" if value is None else fmt(value, 2) for name, value in relation.items()}
    edited = any(param == "img.E_pos" for param, _, _ in vision.edits)
    said = "other" if edited else "shipped" if vision.shipped else "random" if vision.weights == RANDOM else "other"
    st.markdown(ctx.t(f"vit.maps.{said}", **words))
