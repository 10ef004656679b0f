import streamlit as st

from ui import context, generation_views, views

ctx = context.get()
views.intro("generate")
chosen = generation_views.controls()
result = generation_views.result()
if result is not None and chosen["strategy"] == "beam":
    generation_views.beam(result)
elif result is not None:
    generation_views.player(result)
st.divider()
generation_views.disagreement()
