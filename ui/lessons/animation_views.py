"""The animation page's player: the frames of ui/lessons/animation.py played in the browser by a small st.components.v2
element (its script, ui/lessons/animation_player.js, draws each frame in an SVG; play, pause, step and speed run there,
not as reruns). Fixed markup; the frames' tokens and the catalog's words are written as text."""
from pathlib import Path

import streamlit as st

from ui.core import runs, session
from ui.core.state import CACHE_HASH
from ui.lessons import animation

HERE = Path(__file__).parent
HTML = "<div class='anim' tabindex='0'></div>"
_player = st.components.v2.component("forward_pass", html=HTML, css=(HERE / "animation_player.css").read_text(),
                                     js=(HERE / "animation_player.js").read_text())
LABELS = ("play", "pause", "prev", "next", "first", "speed", "speed_help", "large", "large_help", "frame", "keys", "id",
          "head", "probs", "written", "passes", "encoding", "first_dims", "vec.embed", "vec.pos", "vec.input",
          "vec.values", "rail.tokens", "rail.embed", "rail.enc", "rail.enc_out", "rail.dec", "rail.output",
          "side.enc.q", "side.enc.k", "side.self.q", "side.self.k", "side.cross.q", "side.cross.k",
          "f.tokens", "f.embed", "f.enc_attn", "f.vectors", "f.self", "f.cross", "f.output")


@st.cache_resource(max_entries=16, show_spinner=False, hash_funcs=CACHE_HASH)
def frames(model_key, _trace) -> list[dict]:
    """The frames of a state (its trace and the greedy generation of its model), made once per model_key: a rerun of
    an unchanged state sends the same frames without making them again."""
    generated = animation.greedy(runs.run_model(model_key), model_key.src)
    return animation.payload(animation.frames(_trace, generated))


def player() -> None:
    ctx = session.get()
    n = len(ctx.trace.src_tokens)
    if n > animation.MAX_TOKENS:
        st.info(ctx.t("anim.too_long", n=n, high=animation.MAX_TOKENS))
        return
    try:
        shown = frames(ctx.state.model_key, ctx.trace)
    except ValueError as error:  # the model's numbers are not finite: no token can be chosen
        st.error(ctx.t("gen.failed", error=error))
        return
    c = ctx.config
    _player(key="anim.player", data={
        "frames": shown, "stages": animation.stages(c), "heads": c.n_heads, "large": ctx.state.present,
        "labels": {name: ctx.t(f"anim.{name}") for name in LABELS}})
