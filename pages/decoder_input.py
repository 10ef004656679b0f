import pandas as pd
import streamlit as st

from ui import context, views

ctx = context.get()
views.intro("decoder_input")
trace = ctx.trace
st.dataframe(pd.DataFrame({ctx.t("tokens.token"): trace.tgt_tokens, ctx.t("tokens.id"): trace.tgt_ids}), hide_index=True)
views.step("tgt.embed")
views.edit_param(ctx.model.embed_names["tgt"], rows=sorted(set(trace.tgt_ids)))
views.step("tgt.pos")
views.step("tgt.input")
