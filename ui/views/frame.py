"""A page's frame: a step page's body as a fragment (`page`), its title and intro, the links to its neighbours
(or presenter mode's rail), and the page a decoder-only model has nothing for (`refuse_page`)."""
from __future__ import annotations

import functools

import streamlit as st

from ui.classroom import follow, presenter, scroll
from ui.core import model_card, runs, session, session_store, sidebar, streamlit_internals
from ui.core.i18n import literal
from ui.core.labels import SEED_NOTES, intro_keys, intro_values
from ui.core.navigation import ENCODER_DECODER_ONLY, HOME, neighbours
from ui.core.session import Context
from ui.core.session_store import EDIT_ERROR, LINK_VIEW, WHOLE_VIEW
from ui.core.state import encode
from ui.views.drawn import current, link_note, recording


def page(body, vision: bool = False):
    """A step page's body, as a fragment, drawn from the page's context (`body(ctx)`; vision: the Vision
    Transformer's, ui/vision/vit_frame.page): its own widgets (editors, pickers, drill-down) rerun the page alone, not
    app.py and the sidebar. The forward pass runs only as far as the steps the page draws (engine.Trace is lazy),
    and the page warns of inf or NaN only up to those steps. It ends with links to the steps before and after it."""
    @st.fragment
    @functools.wraps(body)
    def run():
        streamlit_internals.forget_stale_widgets()
        follow.catch_up_on_page()  # a following student's page woken alone takes the teacher's link here
        # The one place a step page reads its context, on every run of the fragment: an edit made on the page (a
        # weight typed, a setting's button) is a callback that wrote the new state before this run, and
        # session.get makes its context here (or reruns the whole app if the sidebar no longer holds). Everything
        # the page draws is given this ctx; nothing below reads it again.
        ctx = session.use_vision(True) if vision else session.get()
        presenter.follow(ctx.t)  # a presenter's key moved to another page
        with recording() as drawn:
            body(ctx)
        drawn.note_nonfinite(ctx)
        _write_view(ctx, drawn)
        follow.publish(ctx.t)  # this fragment's own reruns do not reach app.py's
        if ctx.state.present:
            presenter.rail(ctx, drawn.page, drawn.shown, follow.room().code)
        neighbour_links(ctx, drawn.page)  # none in presenter mode or for a following student
        if ctx.step_in_view:  # the step the class is on
            scroll.to_step(drawn.page, drawn.shown)
    return run


def linked(ctx: Context, body) -> None:
    """The part of a page that is not a step page (its widgets rerun the whole app: training, generation, the
    animation) whose widgets show a view: `body(ctx)`, with what they show in the page's link (pickers.section_tabs'
    link=...), as a step page's view is, so that the link reopens it and following the teacher takes it."""
    with recording() as drawn:
        body(ctx)
    _write_view(ctx, drawn)


def fragment(body, run_every=None):
    """A part of a linked page drawn as a fragment that reruns alone (generation's step player): `body(ctx, *args)`.
    Its runs skip the page's entry, and a button in it may change the state (a step opened on every page, with the
    shipped trained model): its context is read here on every run of it (session.get makes the new state's, or
    reruns the whole app if the sidebar no longer holds), not where it was first drawn."""
    @functools.wraps(body)
    def run(*args):
        body(session.get(), *args)
    return st.fragment(run_every=run_every)(run)


def fragment_link(ctx: Context, view: dict) -> None:
    """In a run of a linked page's fragment alone (its own widget moved; the page's end, which writes the link, does
    not run): the page's whole `view`, as that fragment shows it, into the link and to the room."""
    session.write_link(ctx.state, view)
    follow.publish(ctx.t)


def _write_view(ctx, drawn) -> None:
    """What the page's widgets showed into its link, once the link's own view has been given to them."""
    for part, value in session_store.pop(LINK_VIEW, {}).items():  # parts of the link no widget here took
        link_note(ctx.t, part, value)
    session_store.pop(WHOLE_VIEW)
    session.write_link(ctx.state, drawn.view)


def run(ctx: Context, page) -> None:
    """Run the page chosen (or say a decoder-only model has nothing there: refuse_page). In presenter mode every page
    is on the rail: a page that is not a slide of the pass (the overview, animation, generation, training, the
    comparisons) draws it after its body, with no slide marked and a line saying how to reach the slides; its keys
    move there (a step page's fragment draws its own rail and takes its own moves)."""
    present = ctx.state.present
    if present:
        presenter.follow(ctx.t)  # a key pressed on this page's rail: another page's slide
        session_store.pop(presenter.DRAWN, None)
    if not refuse_page(ctx, page):
        page.run()
    if present and not session_store.get(presenter.DRAWN):  # the page's model's rail: read again, as a ViT page
        presenter.rail(session.get(), page.url_path or HOME, {},  # made its context the ViT's (session.use_vision)
                       follow.room().code)


def neighbour_links(ctx: Context, page: str):
    """Links to the previous and the next page of the chain (navigation.CHAIN; generation has no next), which switch
    pages in this session and keep the link's state (st.page_link clears the query without query_params), not this
    page's view. None in presenter mode, whose rail moves between the slides, nor on a following student's page,
    which is the teacher's to move."""
    around = neighbours(page, ctx.config.decoder_only)
    if around is None or ctx.state.present or ctx.reading:
        return
    t = ctx.t
    query = encode(ctx.state)
    row = st.container(horizontal=True, horizontal_alignment="distribute")
    for which, neighbour, icon, side in zip(("previous", "next"), around, ("arrow_back", "arrow_forward"),
                                            ("left", "right")):
        if neighbour is None:
            continue
        row.page_link(session.page_entry(t, neighbour), label=t(f"nav.{which}", page=t(f"page.{neighbour}")),
                      icon=f":material/{icon}:", icon_position=side, query_params=query)


# The pages that show a model's predictions or attention patterns: each says under its intro which weights made them
# (the overview says it under its next token, below the room's card a class starts with).
PREDICTING = ("animation", "attention", "multihead", "masked_attention", "cross_attention", "encoder_stack",
              "decoder_stack", "output")


def intro(ctx: Context, page: str, model_notes: bool = True, model=None):
    """The page's title and intro: the text true in every setting (with the decoder's start and end tokens of the
    `model` the page runs, the pages' by default: labels.intro_values), then the sentences on the current settings
    (labels.intro_keys), and the notes on the seeds' slips where the page teaches their step (labels.SEED_NOTES).
    model_notes=False: the page says itself which words are new to the model it uses (generation)."""
    drawn = current()
    if drawn is not None:
        drawn.page = page
    first, *settings = intro_keys(page, ctx.config)
    c = ctx.config  # the title, the intro, the sentences on the settings and the seeds' note: one element
    seed_note = [f":gray[:small[{ctx.t(key)}]]" for key in SEED_NOTES.get(page, ())]
    text = "\n\n".join([f"# {ctx.t(f'page.{page}')}", ctx.t(first, **intro_values(page, model or ctx.model))]
                       + [ctx.t(key, d_k=c.d_k, divisor=f"{c.divisor:.4g}") for key in settings] + seed_note)
    element = st.markdown(text)
    if model_notes:
        new_words_note(ctx.t, ctx.model)
    if page in PREDICTING and not ctx.vision:
        learned_note(ctx, page)
    _notes(ctx, element, text)


def learned_note(ctx, page: str):
    """Which weights made the page's predictions or attention patterns, and what they have learned; where nothing
    (the preset's weights), the shipped trained model one click away."""
    state = ctx.state
    line = model_card.learned(ctx.t, state.preset, state.seed, ctx.config, session.weights_origin(state),
                              state.own_weights)
    if state.own_weights or ctx.reading:  # a following student's page is the teacher's to change
        st.caption(line)
        return
    row = st.container(horizontal=True, vertical_alignment="center", gap="small")
    row.caption(line)
    row.button(ctx.t("learned.use_trained", corpus=ctx.t(f"train.corpus.{runs.TRAINED_CORPUS}")),
               key=f"learned.{page}", icon=":material/school:", on_click=_use_trained)


def _use_trained():
    sidebar.adopt_model(runs.shipped_trained(), {"kind": "shipped", "corpus": runs.TRAINED_CORPUS})


def new_words_note(t, model):
    """Which typed words the model's vocabulary lacked, and where their weights come from (engine.with_words)."""
    if model.new_words:
        st.info(t("msg.new_words", words=t("list.separator").join(map(literal, model.new_words)), seed=model.seed,
                  n=len(model.vocab) - len(model.new_words)))


def _notes(ctx, intro, text):
    drawn = current()
    if drawn is not None:
        drawn.intro = (intro, text)
    elif ctx.trace.nonfinite:  # a page about the whole pass (overview, generation, training)
        st.warning(ctx.t("msg.nonfinite", step=ctx.trace.nonfinite[0]))
    error = session_store.pop(EDIT_ERROR)
    if error:
        st.error(error)


def refuse_page(ctx: Context, page) -> bool:
    """Draw a page of the encoder-decoder model only (navigation.ENCODER_DECODER_ONLY) as the title and one line
    saying the decoder-only model in use has nothing there, with a button back to the encoder-decoder model; True if
    so (the page is not run)."""
    name = page.url_path or HOME
    if not ctx.config.decoder_only or name not in ENCODER_DECODER_ONLY:
        return False
    st.title(ctx.t(f"page.{name}"))
    st.info(ctx.t({"train": "msg.no_training", "animation": "msg.no_animation"}.get(name, "msg.no_encoder")))
    st.button(ctx.t("ctl.encoder_decoder"), key="ctl.encoder_decoder", on_click=sidebar.use_settings,
              args=({"decoder_only": False},))
    return True
