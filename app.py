"""Entry point: `streamlit run app.py`. Builds the state and the trace, then runs the chosen page."""
import streamlit as st

from ui.classroom import follow, quiz_views
from ui.core import server, session, session_store, sidebar
from ui.core.navigation import PAGES
from ui.lessons import exercise_views
from ui.views import exports, frame, style
from ui.views.draw import plot

server.configure()  # the process's settings, on the first run only

# the browser keeps it: sent on a session's first run, not on every rerun
if not session_store.has(session_store.STATE):
    st.set_page_config(page_title="Transformer, step by step", page_icon="🔢", layout="wide")
follow.join_from_link()  # before the state writes the link, which keeps its room
follow.catch_up()  # a following student's page behind the teacher's takes the teacher's link
room_slot = st.sidebar.container()  # the room's panel, above the controls (follow.sidebar draws it)
t = sidebar.start()
page = st.navigation(session.navigation(t), expanded=True)  # its menu tops the sidebar whenever it is made
ctx = sidebar.build(t, reading=follow.following(), vision=page.url_path in PAGES["vision"])  # a following student's
if ctx.state.present:  # page is read-only and lean; presenter mode: the page has the whole screen
    st.set_page_config(initial_sidebar_state="collapsed")
follow.sidebar(ctx.t, page, room_slot)  # a student following the teacher may go to the teacher's page here
exports.sidebar(ctx)  # the trace's files and the PyTorch check, at the sidebar's foot
with st.sidebar:
    style.sheet()  # the page's style sheet: a wide formula's cue that it scrolls
teachers_quiz = quiz_views.quiz_panel(ctx, exercise_views.question_prompt, plot)  # a room's quiz question, on top
frame.run(ctx, page)  # a decoder-only model's page without an encoder says so; presenter mode's rail on every page
teachers_quiz()  # the teacher's panel above the page, if the page did not draw it where the question was asked
follow.publish(ctx.t)  # a teacher's page and link, after the page wrote its view
