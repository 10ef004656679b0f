"""The generation page's building blocks: the strategy controls, the step-by-step player, the beam tree, and
the example where greedy and beam search disagree. They only display what the engine generated."""
from __future__ import annotations

from dataclasses import replace
from functools import partial

import streamlit as st

import engine
from engine.corpus import pairs
from engine.generate import (DISAGREEMENT, GREEDY_TEX, SCORE_TEX, TEMPERATURE_TEX, TOP_K_TEX, TOP_P_TEX,
                             disagreement_example)

from ui.core import generation, runs, session, session_store, sidebar, streamlit_internals
from ui.core.runs import TRAINED_CORPUS, shipped_trained
from ui.core.figures import bars, heatmap
from ui.core.format import arrow, decimals, fmt
from ui.core.generation import Playback
from ui.core.i18n import literal
from ui.core.labels import decoder_tokens, token_in_text, top_heading, top_tokens
from ui.core.model_card import model_sizes
from ui.core.session_store import STATE
from ui.core.state import CACHE_HASH
from ui.lessons import beam_tree
from ui.views import draw, frame
from ui.views.drawn import from_link, show_in_link

CHOICES = {"model": generation.MODELS, "strategy": generation.STRATEGIES}
PLAY_SECONDS = 1.2  # one step per this many seconds while playing
STEP = "gen.step"  # the player's step slider, which shows Playback.step
PLAYING, ADVANCE = "gen.playing", "gen.advance"  # session_state: the rest of the player's Playback
STRATEGY_TEX = {"greedy": GREEDY_TEX, "temperature": TEMPERATURE_TEX, "top_k": TOP_K_TEX, "top_p": TOP_P_TEX,
                "beam": SCORE_TEX["plain"]}
CONTROL_WIDTH = 300  # pixels per number control
SLIDERS = {"temperature": 0.05, "p": 0.01, "alpha": 0.05, "width": 1}  # the rest are number inputs


@st.cache_resource(max_entries=32, show_spinner=False, hash_funcs=CACHE_HASH)
def decoded(model_key, gen):
    """One generation per distinct state and settings, shared by every session (the page's, and the exercises'
    that grade what the page of their link writes)."""
    checkpoint = translator_settings(model_key.model)
    choice = generation.settings(gen, checkpoint)["model"]
    return generation.run(generating_model(model_key, choice), model_key.src, gen, checkpoint)


def translator_settings(name: str) -> dict | None:
    """The generation settings of the real translator a state names (its generation_config.json), or None."""
    return runs.marian_model(name)[1] if name else None


def chosen_model(ctx):
    """The model the state's generation settings choose: the pages' model or the shipped trained one (the page's
    intro names its start and end tokens)."""
    choice = generation.settings(ctx.state.gen, translator_settings(ctx.state.model))["model"]
    return generating_model(ctx.state.model_key, choice)


def generating_model(model_key, choice):
    """The pages' model, or the shipped trained one with the source's new words (see _trained_for)."""
    return _trained_for(model_key.src) if choice == "trained" else runs.run_model(model_key)


@st.cache_resource(max_entries=16, show_spinner=False)
def _trained_for(src):
    """The shipped trained model; a word of the source it never learned gets weights of its own."""
    return engine.with_words(shipped_trained(), src)




@st.cache_resource(max_entries=1, show_spinner=False)
def _disagreement():
    return disagreement_example()


def controls(ctx) -> dict:
    """The strategy and its numbers; a change goes into the state (and so the URL) before the rerun."""
    checkpoint = translator_settings(ctx.state.model)
    for name, value in generation.settings(ctx.state.gen, checkpoint).items():
        if session_store.get(f"gen.{name}") != value:  # the state's: a translator loaded changes the defaults
            session_store.put(f"gen.{name}", value)
    st.segmented_control(ctx.t("gen.model"), generation.MODELS, format_func=partial(_model_label, ctx),
                         key="gen.model", required=True, on_change=_on_change)
    st.caption(_model_note(ctx))
    frame.new_words_note(ctx.t, generating_model(ctx.state.model_key, session_store.widget("gen.model")))
    st.segmented_control(ctx.t("gen.strategy"), generation.STRATEGIES, format_func=lambda s: ctx.t(f"gen.s.{s}"),
                         key="gen.strategy", required=True, on_change=_on_change)
    used = generation.USES[session_store.widget("gen.strategy")]
    # One block (st.columns would send one per column), as wide as its controls need: one input is not stretched
    # across the page. A width over the page's is the page's.
    numbers = st.container(horizontal=True, gap="medium", width=CONTROL_WIDTH * len(used))
    for name in used:
        with numbers:
            _number(ctx, name)
    draw.latex(STRATEGY_TEX[session_store.widget("gen.strategy")])
    return generation.settings(session_store.get(STATE).gen, checkpoint)


def _model_label(ctx, choice: str) -> str:
    """A choice's name; the pages' model, when it is a real translator, by its folder's name."""
    if choice == "current" and ctx.state.model:
        return ctx.t("gen.m.translator", name=literal(ctx.state.model))
    return ctx.t(f"gen.m.{choice}")


def _model_note(ctx) -> str:
    """Which model generates: its sizes and where its weights come from (a translator's: its decoding settings)."""
    if session_store.widget("gen.model") == "current":
        note = ctx.t("gen.m.current_note", model=session.model_description(ctx))
        if ctx.state.model:
            return f"{note} {_checkpoint_note(ctx.t, translator_settings(ctx.state.model))}"
        return (note if ctx.state.own_weights
                else f"{note} {ctx.t('gen.m.untrained')}{_shared_vocabulary(ctx, ctx.model)}")
    return ctx.t("gen.m.trained_note", n=len(pairs(TRAINED_CORPUS)), sizes=model_sizes(ctx.t, shipped_trained().config),
                 file=f"engine/data/{TRAINED_CORPUS}.npz")


def _checkpoint_note(t, checkpoint: dict) -> str:
    """The translator's own decoding (generation.defaults), which the page starts from."""
    opens = generation.defaults(checkpoint)
    forced = f" {t('gen.m.forced_end')}" if checkpoint["force_end"] else ""
    return t("gen.m.checkpoint", beams=checkpoint["num_beams"], penalty=checkpoint["length_penalty"],
             length=checkpoint["max_length"], strategy=t(f"gen.s.{opens['strategy']}"), width=opens["width"],
             alpha=opens["alpha"],
             max_len=opens["max_len"]) + forced


def _shared_vocabulary(ctx, model) -> str:
    """Where an untrained paper-preset model's candidates of three languages come from: its one vocabulary."""
    return f" {ctx.t('gen.shared_vocabulary', vocab=len(model.vocab))}" if model.name == "paper" else ""


def _number(ctx, name):
    low, high = generation.RANGES[name]
    if name in SLIDERS:
        st.slider(ctx.t(f"gen.{name}"), low, high, step=SLIDERS[name], key=f"gen.{name}", on_change=_on_change)
    else:
        sidebar.whole_number_input(st, ctx.t(f"gen.{name}"), f"gen.{name}", low, high, on_change=_on_change)


def _on_change():
    checkpoint = translator_settings(session_store.get(STATE).model)
    current = generation.settings(session_store.get(STATE).gen, checkpoint)
    values = {name: session_store.get(f"gen.{name}", value) for name, value in current.items()}
    values |= {name: int(values[name]) for name in generation.WHOLE}  # whole_number_input's value is a float
    for name, choices in CHOICES.items():  # none chosen: only from a forged message, as the browser does not let
        if values[name] not in choices:      # a required control be emptied
            values[name] = current[name]
    session.set_state(session_store.get(STATE).replace(gen=generation.changed(values, checkpoint)),
                      reset_editors=False)
    session_store.put(STEP, 1)


def result(ctx):
    """The engine's Generation or BeamSearch for the current state, or None with a message."""
    try:
        return decoded(ctx.state.model_key, ctx.state.gen)
    except ValueError as error:
        st.error(ctx.t("gen.failed", error=session.refusal(ctx.t, error)))
        return None


# ---- sampling strategies: one step at a time ---------------------------------------------------------------

def sentence(ctx, generated, note=""):
    """The generated tokens after the decoder's start (SOS, a Marian model's <pad>) as a line of code spans, and a
    note in small grey type under it (one element)."""
    tokens = (_start_token(generated.steps[0]), *generated.tokens)
    line = f"**{ctx.t('gen.sentence')}** " + " ".join(f"`{t}`" for t in tokens)
    st.markdown(line + (f"\n\n:gray[:small[{note}]]" if note else ""))


def _start_token(step) -> str:
    """The decoder's start token (SOS, a Marian model's <pad>); a decoder-only model's prefix begins with the source."""
    return decoder_tokens(step.trace.model)["start"]


def player(ctx, generated):
    """Previous / next / play, and the chosen step drawn by a fragment that advances itself while playing."""
    n = len(generated.steps)
    asked = from_link(ctx.t, "position", lambda position: position < n, 0)  # the step, counted from 0
    playback = _playback() if asked is None else replace(_playback(), step=asked + 1)
    _save(playback.within(n))
    sentence(ctx, generated, ctx.t("gen.finished" if generated.finished else "gen.stopped", n=n,
                                   end=token_in_text(generated.end)))
    buttons = st.container(horizontal=True)  # one block; st.columns would send one per column
    buttons.button(ctx.t("gen.prev"), key="gen.prev", on_click=_move, args=(-1, n), disabled=n == 1)
    buttons.button(ctx.t("gen.next"), key="gen.next", on_click=_move, args=(1, n), disabled=n == 1)
    playing = playback.playing
    buttons.button(ctx.t("gen.pause" if playing else "gen.play"), key="gen.play", on_click=_toggle_play, args=(n,),
                   disabled=n == 1)
    frame.fragment(_step_view, run_every=PLAY_SECONDS if playing else None)(generated)


def _playback() -> Playback:
    return Playback(session_store.get(STEP, 1), session_store.get(PLAYING, False), session_store.get(ADVANCE, True))


def _save(playback: Playback) -> None:
    session_store.update({STEP: playback.step, PLAYING: playback.playing, ADVANCE: playback.advance})


def _move(delta, n):
    _save(_playback().moved(delta, n))


def _toggle_play(n):
    _save(_playback().toggled(n))


def _step_view(ctx, generated):
    n, playback = len(generated.steps), _playback()
    ticked = playback.ticked(n)
    if ticked != playback:
        _save(ticked)
    if playback.playing and not ticked.playing:
        st.rerun(scope="app")  # drop the timer and show the play button again
    if n > 1:
        st.slider(ctx.t("gen.step_label"), 1, n, key=STEP)
    position = session_store.get(STEP) - 1
    if not streamlit_internals.fragment_run():
        show_in_link("position", position, 0)
    elif not ticked.playing:
        # the slider moved this fragment alone: the page's end, which writes the link, does not run. A step played
        # is not written: the followers' pages would run every PLAY_SECONDS; the end of the play is written
        frame.fragment_link(ctx, {"position": position} if position else {})
    _one_step(ctx, generated, generated.steps[position])


def _one_step(ctx, generated, step):
    index, tokens = len(step.prefix_ids), list(step.trace.tgt_tokens)  # a decoder-only model's input: source first
    prefix = "gen.prefix.decoder_only" if step.trace.model.config.decoder_only else "gen.prefix"
    st.markdown(ctx.t(prefix, n=index, m=len(tokens) - index, start=f"`{_start_token(step)}`") + " " +
                " ".join(f"`{t}`" for t in tokens) + "\n\n" +
                ctx.t("gen.chosen", token=step.token, p=fmt(step.prob, ctx.state.digits),
                      q=fmt(step.sampled_prob, ctx.state.digits)))
    sampling = generated.strategy != "greedy"
    columns = st.columns(3 if sampling else 2)
    with columns[0]:
        st.markdown(f"**{ctx.t('gen.mask')}**")
        scale = draw.type_scale(ctx)
        weights = draw.drawing(step.trace, ("gen.mask", ctx.state.digits, scale), lambda: heatmap(
            step.trace["dec.0.self_attn.weights"][0], tokens, tokens, digits=ctx.state.digits, scale=scale))
        draw.plot(ctx, weights, "gen.mask_chart")
    shown = ((("gen.probs", step.probs), ("gen.sampled", step.sampled_from)) if sampling
             else (("gen.probs", step.probs),))
    for column, (label, distribution) in zip(columns[1:], shown):
        column.markdown(f"**{top_heading(ctx.t, label, len(step.trace.model.vocab))}**")
        chart = draw.drawing(step.trace, (label, distribution.tobytes(), step.token, ctx.state.digits),
                             lambda: _top_bars(distribution, step.trace.model.vocab.tokens, step.token,
                                               ctx.state.digits))
        draw.plot(ctx, chart, f"{label}_chart", where=column)
    st.button(ctx.t("gen.open_step"), key="gen.open_step", on_click=_open_prefix, args=(step.prefix_tokens,))


def _top_bars(distribution, tokens, chosen, digits):
    ranked = top_tokens(distribution, tokens)
    return bars([t for t, _ in ranked], [p for _, p in ranked], highlight=chosen, digits=digits)


def _open_prefix(prefix_tokens):
    """Every page then shows this step's forward pass: the target prefix is the tokens after SOS, and the model the
    shipped trained one if it generated (its weights then become every page's, as trained weights do, in place of a
    translator: the settings are kept, written against the toy's defaults)."""
    text = " ".join(t for t in prefix_tokens[1:])
    session_store.put("ctl.tgt", text)
    state = session_store.get(STATE)
    chosen = generation.settings(state.gen, translator_settings(state.model))
    if chosen["model"] == "trained":
        sidebar.adopt_model(shipped_trained(), {"kind": "shipped", "corpus": TRAINED_CORPUS}, tgt=text,
                            gen=generation.changed(chosen))
    else:
        session.set_state(session_store.get(STATE).replace(tgt=text), reset_editors=False)


# ---- beam search -------------------------------------------------------------------------------------------

def beam(ctx, search):
    best = search.best
    st.markdown(ctx.t("gen.beam_best", text=best.text or "∅", logp=decimals(best.logprob, 4),
                      score=decimals(best.score, 4)))
    _tree(ctx, search, "gen.tree")
    transformers = generation.translator_generates(ctx.state.gen, translator_settings(ctx.state.model))
    st.caption(ctx.t("gen.beam_legend.transformers" if transformers else "gen.beam_legend",
                     end=token_in_text(best.end)))  # the search engine/transformers_beam.py runs, or the app's
    hypotheses = search.hypotheses
    st.dataframe(arrow({ctx.t("gen.col.rank"): range(1, len(hypotheses) + 1),
                        ctx.t("gen.col.text"): [" ".join(h.tokens) for h in hypotheses],
                        "log P": [round(h.logprob, 4) for h in hypotheses],
                        ctx.t("gen.col.length"): [len(h.tokens) for h in hypotheses],
                        ctx.t("gen.score"): [round(h.score, 4) for h in hypotheses],
                        ctx.t("gen.col.finished", end=best.end): ["✓" if h.finished else "" for h in hypotheses]}),
                 hide_index=True)


def _tree(ctx, search, key):
    labels = {"logp": "log P", "score": ctx.t("gen.score"), "pruned": ctx.t("gen.pruned"),
              "best": ctx.t("gen.pruned_best")}
    draw.plot(ctx, beam_tree.beam_tree(search, labels), key)


# ---- greedy vs beam ----------------------------------------------------------------------------------------

def disagreement(ctx):
    st.subheader(ctx.t("gen.compare"))
    model, greedy, search = _disagreement()
    example = DISAGREEMENT
    st.markdown(ctx.t("gen.compare_setup", src=example["src"], width=example["width"]) + _shared_vocabulary(ctx, model))
    answers = (("gen.s.greedy", greedy.tokens, greedy.logprob), ("gen.s.beam", search.best.tokens, search.best.logprob))
    for column, (label, tokens, logprob) in zip(st.columns(2), answers):
        column.metric(ctx.t(label), " ".join(tokens), f"log P {decimals(logprob, 3)}",
                      delta_color="off", delta_arrow="off")
    st.markdown(ctx.t("gen.compare_why", greedy=_with_probs(greedy.tokens, [s.prob for s in greedy.steps]),
                      beam=_with_probs(search.best.tokens, beam_tree.path_probs(search)),
                      lg=decimals(greedy.logprob, 3), lb=decimals(search.best.logprob, 3)))
    _tree(ctx, search, "gen.compare_tree")
    st.button(ctx.t("gen.compare_open"), key="gen.compare_open", on_click=_open_example, args=(ctx.t,))


def _with_probs(tokens, probs):
    return " → ".join(f"`{t}` ({p:.4f})" for t, p in zip(tokens, probs))


def _open_example(t):
    example = DISAGREEMENT
    state = session_store.get(STATE).replace(
        preset=example["preset"], seed=example["seed"], src=example["src"], tgt="", edits=(), weights="", model="",
        overrides=tuple(sorted(example["overrides"].items())),
        gen=generation.changed({**generation.DEFAULTS, "model": "current", "strategy": "beam",
                                "width": example["width"], "max_len": example["max_len"], "alpha": example["alpha"]}))
    sidebar.adopt(state)
    for name, value in generation.settings(state.gen).items():
        session_store.put(f"gen.{name}", value)
    session_store.put("gen.tab", t("gen.tab.run"))  # where the example's beam search is shown
