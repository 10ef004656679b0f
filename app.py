"""Entry point: `streamlit run app.py`. Builds the state and the trace, then runs the chosen page."""
import streamlit as st

from ui import classroom, context, server

server.configure()  # the process's settings, on the first run only

st.set_page_config(page_title="Transformer, step by step", page_icon="🔢", layout="wide")
classroom.join_from_link()  # before the state writes the link, which keeps its room
ctx = context.build()
page = st.navigation(context.navigation(ctx.t), expanded=True)
classroom.sidebar(ctx.t, page)  # a student following the teacher may go to the teacher's page here
page.run()
classroom.publish(ctx.t)  # a teacher's page and link, after the page wrote its view
