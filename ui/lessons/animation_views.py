"""The animation page's player: the frames of ui/lessons/animation.py played in the browser by a small st.components.v2
element (its script, ui/lessons/animation_player.js, draws each frame in an SVG; play, pause, step and speed run there,
not as reruns). Fixed markup; the frames' tokens and the catalog's words are written as text.

The frame is in the page's link (frame=N): the player sends the frame it stopped on (a step, a pause, the end; not
every frame it plays, which would rerun the page of every follower many times a second), and a link's frame is sent to
the player as a move ("goto", numbered so that the player makes each move once)."""
from pathlib import Path

import streamlit as st

from ui.classroom import scroll
from ui.core import runs, session, session_store
from ui.core.state import CACHE_HASH
from ui.lessons import animation
from ui.views.drawn import from_link, show_in_link

KEY = "anim.player"
FRAME = "anim.frame"  # session_state: the frame the player shows, as it last said or a link moved it
GOTO = "anim.goto"  # session_state: the last move a link asked of the player: (its number, the frame)
HERE = Path(__file__).parent
HTML = "<div class='anim' tabindex='0'></div>"
_player = st.components.v2.component("forward_pass", html=HTML, css=(HERE / "animation_player.css").read_text(),
                                     js=(HERE / "animation_player.js").read_text())
LABELS = ("play", "pause", "prev", "next", "first", "slider", "speed", "speed_help", "large", "large_help", "frame",
          "keys", "id", "head", "probs", "written", "passes", "encoding", "first_dims", "vec.embed", "vec.pos",
          "vec.input", "vec.values", "rail.tokens", "rail.embed", "rail.enc", "rail.enc_out", "rail.dec", "rail.output",
          "side.enc.q", "side.enc.k", "side.self.q", "side.self.k", "side.cross.q", "side.cross.k",
          "f.tokens", "f.embed", "f.enc_attn", "f.vectors", "f.self", "f.cross", "f.output")


@st.cache_resource(max_entries=16, show_spinner=False, hash_funcs=CACHE_HASH)
def frames(model_key, _trace) -> list[dict]:
    """The frames of a state (its trace and the greedy generation of its model), made once per model_key: a rerun of
    an unchanged state sends the same frames without making them again."""
    generated = animation.greedy(runs.run_model(model_key), model_key.src)
    return animation.payload(animation.frames(_trace, generated))


def player(ctx) -> None:
    n = len(ctx.trace.src_tokens)
    if n > animation.MAX_TOKENS:
        st.info(ctx.t("anim.too_long", n=n, high=animation.MAX_TOKENS))
        return
    try:
        shown = frames(ctx.state.model_key, ctx.trace)
    except ValueError as error:  # the model's numbers are not finite: no token can be chosen
        st.error(ctx.t("gen.failed", error=session.refusal(ctx.t, error)))
        return
    c = ctx.config
    asked = from_link(ctx.t, "frame", lambda frame: frame < len(shown), 0)
    if asked is not None:
        session_store.put(GOTO, (session_store.get(GOTO, (0, 0))[0] + 1, asked))
        session_store.put(FRAME, asked)
    number, frame = session_store.get(GOTO, (0, 0))
    shows = min(session_store.get(FRAME, 0), len(shown) - 1)
    _player(key=KEY, data={
        "frames": shown, "stages": animation.stages(c), "heads": c.n_heads, "large": ctx.state.present,
        "frame": shows, "goto": {"id": number, "frame": frame} if number else None,
        "labels": {name: ctx.t(f"anim.{name}") for name in LABELS}}, on_frame_change=_stopped)
    show_in_link("frame", shows, 0)
    if ctx.step_in_view:  # the drawing, not the page's title, on a projector and on a following student's phone
        scroll.to_element("animation", ".anim>svg")


def _stopped() -> None:
    """The frame the player stopped on; anything but a whole number is a forged message, ignored."""
    frame = (session_store.get(KEY) or {}).get("frame")
    if isinstance(frame, int) and not isinstance(frame, bool) and frame >= 0:
        session_store.put(FRAME, frame)
