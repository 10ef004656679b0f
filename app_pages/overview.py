import numpy as np
import streamlit as st

from ui.classroom import follow, presenter
from ui.core import session, session_store, sidebar
from ui.core.navigation import PAGES, page_file
from ui.core.session_store import STATE
from ui.handout.download import handout_buttons
from ui.lessons.diagram import architecture
from ui.views import draw, frame

OPENING = "overview.open"  # session_state: the page a click on the diagram opens on the next run


def open_box():
    """A click on a box of the diagram opens its page (a forged point, not a box, is ignored)."""
    points = session_store.widget("overview.diagram").selection.points
    page = points[0].get("customdata") if points and isinstance(points[0], dict) else None
    if any(page in pages for pages in PAGES.values()):
        session_store.put(OPENING, page)
        sidebar.adopt(session_store.get(STATE))  # st.switch_page's run starts the sidebar's inputs empty: refill them


if session_store.has(OPENING):
    st.switch_page(page_file(session_store.pop(OPENING)))
ctx = session.get()
frame.intro(ctx, "overview")
top = st.container(horizontal=True)  # where a class starts: the first slide and a room, one click each
joining = follow.join_card(ctx.t, st)  # for the room's teacher: how students join, in a row
if ctx.state.present:  # the first slide, as the rail's → opens it; in the room's row if there is one, so that a
    start_at = joining or top  # projector's first screen holds the code and Start above the rail
    start_at.button(ctx.t("present.start"), key="present.start", type="primary", icon=":material/play_arrow:",
                    on_click=presenter.open_slide, args=(ctx, 0))
if not follow.in_room():  # a teacher opens a room, a student joins one
    follow.open_room_button(ctx.t, top, "overview.room.open", width="content")
    follow.join_field(ctx.t, top, "overview.room.join", ctx.t("room.section"))
c, trace = ctx.config, ctx.trace
st.subheader(ctx.t("overview.flow"))
st.markdown(ctx.t("overview.shapes.decoder_only" if c.decoder_only else "overview.shapes",
                  n_src=len(trace.src_tokens), n_tgt=len(trace.tgt_tokens), d_model=c.d_model,
                  h=c.n_heads, n_enc=c.depth("enc"), n_dec=c.depth("dec")))
last = trace["probs"][-1]
best = int(np.argmax(last))
left, middle, right = st.columns(3)
left.metric(ctx.t("overview.src"), " ".join(trace.src_tokens))
middle.metric(ctx.t("overview.tgt"), " ".join(trace.tgt_tokens))
right.metric(ctx.t("overview.next"), ctx.model.vocab.tokens[best], f"{ctx.t('overview.prob')} {last[best]:.3f}",
             delta_color="off", delta_arrow="off")
frame.learned_note(ctx, "overview")  # which weights made that prediction, and what they have learned
diagram, hint = st.columns([3, 2])
draw.plot(ctx, architecture(ctx.t, trace), "overview.diagram", where=diagram, on_select=open_box,
          selection_mode="points")
hint.caption(ctx.t("overview.steps.decoder_only" if c.decoder_only else "overview.steps"))
handout_buttons(ctx, where=hint)
