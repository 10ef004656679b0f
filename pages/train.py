import streamlit as st

from ui import context, training_views, views

ctx = context.get()
views.intro("train")
result = training_views.loss_section()
training_views.backward_section(result)
st.divider()
training_views.trainer()
st.divider()
training_views.save_load()
