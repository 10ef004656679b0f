import math

import streamlit as st

from engine.blog import DIFFERENCES
from ui.core import departures, runs, session
from ui.core.labels import indices, step_axes
from ui.views import draw, frame

ctx = session.get()
frame.intro(ctx, "paper_vs_blog")
t = ctx.t

st.subheader(t("compare.pe"))
for kind in ("blog_table", "blog", "sinusoidal"):
    row = runs.blog_variant((("pos_encoding", kind),))["src.pos"][1]
    st.markdown(f"**{t(f'choice.{kind}')}**")
    draw.numbers(ctx, row, [""], indices(len(row)))

st.subheader(t("compare.weights"))
left, right = st.columns(2)
for column, (label, divisor) in zip((left, right),
                                    (("compare.divisor_sqrt", math.sqrt(3)), ("compare.divisor_30", 30.0))):
    with column:
        st.markdown(f"**{t(label)}**")
        variant = runs.blog_variant((("attn_divisor", divisor),))
        _, rows, cols = step_axes(variant, "enc.0.attn.weights")
        draw.numbers(ctx, variant["enc.0.attn.weights"][0], rows, cols)

st.subheader(t("compare.ln"))
for label, overrides in (("compare.form_blog", ()), ("compare.form_paper", (("eps", 1e-5), ("layer_norm", "paper")))):
    st.markdown(f"**{t(label)}**")
    variant = runs.blog_variant(overrides)
    rows, cols = step_axes(variant, "enc.0.ln1")
    draw.numbers(ctx, variant["enc.0.ln1"][:1], rows[:1], cols, digits=10)

for difference in DIFFERENCES:  # one markdown each, display math in $$ (a message per element sent on every rerun)
    key = difference["key"]
    labels = (t("compare.post"), t(f"compare.side.{departures.RIGHT_SIDE[key]}"))
    now = [f" :orange-badge[{t('compare.now')}]" if marked else "" for marked in departures.sides_now(key, ctx.config)]
    sides = [f":gray[{label}]{mark}\n\n$$\n{t.words(difference[side])}{draw.HOLD}\n$$"
             for label, mark, side in zip(labels, now, ("post", "engine"))]
    st.markdown("\n\n".join([f"##### {t(f'diff.{key}.topic')}", *sides, t(f"diff.{key}.why")]))
