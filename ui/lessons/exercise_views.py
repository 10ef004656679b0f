"""The exercises page: the post's eight exercises, each an experiment with a link to its prepared state, a control,
an answer checked against the engine's and an explanation from its numbers; cells of the current pass to compute by
hand; the session's answers, kept in the link (engine.exercises: the questions, the answers and their reading)."""
from urllib.parse import urlencode

import numpy as np
import streamlit as st

import engine
from engine import exercises as ex
from ui.classroom import quiz, quiz_views
from ui.core import generation, runs, session, session_store, sidebar
from ui.core.figures import heatmap
from ui.core.format import fmt
from ui.core.i18n import literal
from ui.core.labels import FIRST, step_name_key
from ui.core.session_store import STATE
from ui.core.state import APP_LIMITS, CACHE_HASH, encode, encode_view
from ui.lessons.generation_views import decoded, translator_settings
from ui.views import frame, pickers
from ui.views.draw import TABLE_COLS, as_table, latex, numbers, plot
from ui.views.drawn import from_link, show_in_link
from ui.views.drill import cell_explanation

PROGRESS = "ex.progress"  # {question id: answered right}, the session's
QUESTION_SET = "ex.qset"  # the by-hand questions' set, from 1: kept while its section is not drawn


def body(ctx):
    frame.intro(ctx, "exercises")
    progress = _progress(ctx.t)
    linked = from_link(ctx.t, "qset", lambda position: position < ex.MAX_SET)
    if linked is not None:
        session_store.put(QUESTION_SET, linked + 1)
    pickers.section_tabs(ctx, {"ex.tab.post": _post_exercises, "ex.tab.hand": _by_hand}, "ex.tab", link="section")
    show_in_link("done", ex.encode_progress(progress), "")
    show_in_link("qset", session_store.get(QUESTION_SET, 1) - 1, 0)


def _progress(t) -> dict:
    """The session's answers: the link's on the page's first run (each refused part said), else those kept."""
    linked = from_link(t, "done", lambda text: True)
    if linked is not None:
        progress, refused = ex.decode_progress(linked)
        session_store.put(PROGRESS, progress)
        if refused:
            st.warning(t("ex.progress_refused", parts=t("list.separator").join(literal(part) for part in refused)))
    progress = session_store.setdefault(PROGRESS, {})
    right = sum(progress.values())
    st.markdown(t("ex.progress", answered=len(progress), right=right))
    if progress:
        st.button(t("ex.start_over"), key="ex.start_over", on_click=_start_over)
    return progress


def _record(qid: str, verdict: ex.Verdict, key: str, right_answer: str) -> None:
    """A checked answer: its verdict (and the engine's answer it was checked against) and the progress. The first
    answer counts: once a question has one (the engine's answer then shown), another is not taken."""
    progress = session_store.get(PROGRESS)
    if qid in progress:
        return
    session_store.put(f"{key}.verdict", (session_store.get(STATE).model_key, verdict, right_answer))
    if verdict.answered:
        progress[qid] = verdict.right


def _start_over() -> None:
    """Every answer forgotten, and the verdicts shown: each question takes a first answer again."""
    session_store.get(PROGRESS).clear()
    for key in [key for key in session_store.keys() if str(key).endswith(".verdict")]:
        session_store.pop(key)


def _answered(qid: str) -> bool:
    return qid in session_store.get(PROGRESS)


def _verdict_line(ctx, qid: str, key: str, right_answer: str) -> bool:
    """The result of the question's first answer (with the engine's answer if it was wrong), or why the last text
    was not an answer; True once the learner has answered it (the explanation may then be shown)."""
    t, progress = ctx.t, session_store.get(PROGRESS)
    model_key, verdict, checked_against = session_store.get(f"{key}.verdict", (None, None, right_answer))
    if verdict is not None and not verdict.answered and model_key == ctx.state.model_key:
        st.warning(t(f"ex.refused.{verdict.code}", n=ex.MAX_ANSWER_CHARS))
    if qid not in progress:
        return False
    if progress[qid]:
        st.success(t("ex.right"))
    else:  # the answer the first one was checked against, whatever the settings are now
        st.error(t("ex.wrong", answer=checked_against if verdict is not None and verdict.answered else right_answer))
    st.caption(t("ex.first_counts"))
    return True


# ---- the post's exercises -----------------------------------------------------------------------------------------

# Each exercise's link: the page it opens, the settings of its prepared state and the page's view (the step shown).
PREPARED = {
    "positions": ("positional", {"pos_encoding": "none"}, {"step": "pos"}),
    "attentions": ("cross_attention", {}, {"step": "weights"}),
    "d_k": ("attention", {"d_k": 256, "d_v": 256, "attn_divisor": 1.0}, {"step": "weights"}),
    "ffn": ("ffn", {}, {}),
    "decoder_passes": ("generate", {}, {}),
    "residual": ("add_norm", {"residual": False}, {"step": "add1"}),
    "probabilities": ("output", {}, {"step": "probs"}),
    "greedy": ("generate", {}, {}),
}
# The generation settings of the generation exercises' links, whose page's generation their checker grades (at most
# GENERATED tokens, greedy: a translator's default is its beam search; the greedy exercise's beam as the checker's:
# its width, ranked by log P alone).
PREPARED_GENERATION = {
    "decoder_passes": {"strategy": "greedy", "max_len": ex.GENERATED},
    "greedy": {"strategy": "beam", "width": ex.BEAM_WIDTH, "alpha": 0.0, "max_len": ex.GENERATED},
}


def _post_exercises(ctx):
    for number, key in enumerate(ex.POST_EXERCISES, start=FIRST):
        title = ctx.t("ex.title", n=number, question=ctx.t(f"ex.{key}.question"))
        box = st.expander(title, key=f"ex.open.{key}", on_change="rerun")
        if box.open:  # an exercise runs its experiment only while open
            with box:
                _post_exercise(ctx, key)


def _post_exercise(ctx, key: str):
    t = ctx.t
    url = prepared_link(ctx.state, key)
    page = PREPARED[key][0]
    st.markdown(t(f"ex.{key}.task") + "\n\n" + t("ex.link", url=url, page=t(f"page.{page}")))
    CONTROLS.get(key, lambda c: None)(ctx)
    _back_to_preset(ctx, key)
    try:
        answer = _answer(ctx, key)
    except ValueError as error:  # a generation from numbers that are not finite: no token can be chosen
        st.error(t("gen.failed", error=session.refusal(t, error)))
        return
    if answer is None:
        st.info(t(f"ex.{key}.none"))
        return
    qid, widget = ex.post_exercise_id(key), f"ex.answer.{key}"
    shown = t(f"ex.{key}.choice.{answer.value}") if answer.form == "choice" else literal(str(answer.value))
    done = _answered(qid)
    with st.form(f"ex.form.{key}", border=False):
        if answer.form == "choice":
            st.radio(t("ex.your_answer"), ex.CHOICES[key], index=None, key=widget, disabled=done,
                     format_func=lambda code: t(f"ex.{key}.choice.{code}"))
        else:
            st.text_input(t(f"ex.answer.{answer.form}"), key=widget, disabled=done)
        st.form_submit_button(t("ex.check"), disabled=done, on_click=lambda: _record(
            qid, ex.check_answer(answer, session_store.get(widget)), widget, shown))
    if _verdict_line(ctx, qid, widget, shown):
        st.markdown(t(f"ex.{key}.why", **_evidence(ctx, key, answer.evidence)))


def _back_to_preset(ctx, key: str) -> None:
    """Where the exercise's settings are changed from the preset's (d_k = 256, the residual off, ...): a button that
    sets them back, so that the other pages do not stay in the exercise's state."""
    fields = PREPARED[key][1]
    preset = engine.PRESETS[ctx.state.preset]
    changed = {field: getattr(preset, field) for field in fields
               if getattr(ctx.config, field) != getattr(preset, field)}
    if changed:
        st.button(ctx.t("ex.back_to_preset"), key=f"ex.back.{key}", icon=":material/undo:",
                  on_click=sidebar.use_settings, args=(changed,))


def prepared_link(state, key: str) -> str:
    """The address (relative to the app's) of the exercise's prepared state: a new tab opens it as any link."""
    page, _, view = PREPARED[key]
    return f"{page}?{urlencode(encode(prepared_state(state, key)) | encode_view(view))}"


def prepared_state(state, key: str):
    """The state the exercise's link opens: the current one with the exercise's settings."""
    settings = PREPARED[key][1]
    prepared = state.with_settings(**settings) if settings else state
    gen = PREPARED_GENERATION.get(key)
    return prepared if gen is None else _with_generation(prepared, gen)


def _with_generation(state, gen: dict):
    """The state with these generation settings, written against its model's defaults (a translator's own, which a
    link leaves out)."""
    checkpoint = translator_settings(state.model)
    return state.replace(gen=generation.changed({**generation.settings(state.gen, checkpoint), **gen}, checkpoint))


def _answer(ctx, key: str) -> ex.Answer | None:
    """The engine's answer to an exercise in the current state (the costly ones cached per model key)."""
    if key == "attentions":
        return ex.cross_attention_keys(ctx.trace)
    if key == "probabilities":
        return ex.next_token(ctx.trace)
    if key == "ffn":
        return ex.ffn_weights(ctx.model)
    if key in PREPARED_GENERATION:
        return _generation_answer(key, prepared_state(ctx.state, key))
    if key == "d_k":
        return _saturation(ctx.trace[f"{ex.first_attention(ctx.config)}.weights"].shape[-1])
    return _experiment(key, ctx.state.model_key)


@st.cache_resource(max_entries=8, show_spinner=False)
def _saturation(n_keys: int) -> ex.Answer:
    return ex.saturation(n_keys)


@st.cache_resource(max_entries=32, show_spinner=False, hash_funcs=CACHE_HASH)
def _experiment(key: str, model_key) -> ex.Answer:
    model = runs.run_model(model_key)
    src, tgt = model_key.src, model_key.tgt
    return {"positions": lambda: ex.order_blindness(model, src),
            "residual": lambda: ex.residual_effect(model, src, tgt)}[key]()


def _generation_answer(key: str, prepared) -> ex.Answer:
    """Graded on what the generation page of the exercise's link writes, its own generation (the model, the
    translator's decoding: its beam search, length penalty, forced end, masked <pad>); the greedy exercise's greedy
    sentence as the page writes it with that strategy."""
    written = decoded(prepared.model_key, prepared.gen)
    if key == "decoder_passes":
        return ex.decoder_passes(written)
    greedy = _with_generation(prepared, {"strategy": "greedy"})
    return ex.greedy_optimal(decoded(greedy.model_key, greedy.gen), written)


def _evidence(ctx, key: str, evidence: dict) -> dict:
    """An answer's numbers as its explanation names them."""
    digits, words = ctx.state.digits, lambda tokens: literal(" ".join(tokens))
    if key == "positions":
        return {"without": fmt(evidence["without_pe"], 2), "with_pe": fmt(evidence["with_pe"], digits),
                "reversed": literal(evidence["reversed"])}
    if key == "attentions":
        return {"cross": " × ".join(map(str, evidence["cross"])), "own": " × ".join(map(str, evidence["self"])),
                "n_src": evidence["n_src"], "n_tgt": evidence["n_tgt"]}
    if key == "d_k":
        table = evidence["table"]
        rows = [f"| {d_k} | " + " | ".join(fmt(table[(d_k, divisor)][measure], 2) for measure in ("spread", "peak")
                                           for divisor in (1.0, "sqrt_dk")) + " |" for d_k in ex.SATURATION_D_K]
        head = f"| d_k | {ctx.t('ex.d_k.columns')} |\n|---|---|---|---|---|"
        return {"table": "\n\n" + "\n".join([head, *rows]) + "\n\n", "uniform": fmt(evidence["uniform"], digits),
                "samples": evidence["samples"], "n": evidence["n_keys"],
                "scaled_peak": fmt(table[(ex.SATURATION_D_K[-1], "sqrt_dk")]["peak"], 2)}
    if key == "ffn":
        shapes = ctx.t("list.separator").join(f"{name}: {' × '.join(map(str, shape))}"
                                              for name, shape in evidence["shapes"].items())
        return {"shapes": shapes, "d_model": evidence["d_model"], "d_ff": evidence["d_ff"]}
    if key == "decoder_passes":
        return {"tokens": words(evidence["tokens"]), "n": len(evidence["tokens"]), "encoder": evidence["encoder"]}
    if key == "residual":
        return {"on": fmt(evidence["gaps"]["on"], digits), "off": fmt(evidence["gaps"]["off"], 2),
                "mean_on": fmt(evidence["norm_means"]["on"], 2), "mean_off": fmt(evidence["norm_means"]["off"], 2)}
    if key == "probabilities":
        top = ctx.t("list.separator").join(f"{literal(token)} {fmt(p, digits)}" for token, p in evidence["top"])
        return {"top": top, "logit": fmt(evidence["logit"], digits)}
    (greedy, greedy_lp), (beam, beam_lp) = evidence["greedy"], evidence["beam"]
    return {"greedy": words(greedy), "greedy_lp": fmt(greedy_lp, digits), "beam": words(beam),
            "beam_lp": fmt(beam_lp, digits), "width": ex.BEAM_WIDTH}


def _positions_control(ctx):
    """Positional encoding on or off, and the source's words reversed."""
    t, off = ctx.t, ctx.config.pos_encoding == "none"
    row = pickers.row_of_widgets()
    session_store.put("ex.positions.pe_off", off)  # the state's, which the sidebar may have changed
    row.toggle(t("ex.positions.pe_off"), key="ex.positions.pe_off",
               on_change=lambda: sidebar.use_settings({"pos_encoding": "none" if session_store.widget(
                   "ex.positions.pe_off") else _preset_value(ctx, "pos_encoding")}))
    row.button(t("ex.positions.reverse"), key="ex.positions.reverse", on_click=lambda: sidebar.adopt(
        session_store.get(STATE).replace(src=" ".join(reversed(ctx.state.src.split())))))
    st.caption(t("ex.positions.now", pe=t(f"choice.{ctx.config.pos_encoding}")))
    shown = _reordered(ctx.state.model_key)
    columns = [str(i) for i in range(FIRST, shown["before"].shape[1] + FIRST)]
    for where, order in zip(st.columns(2), ("before", "after")):
        words = shown["words" if order == "before" else "reversed_words"]
        with where:
            st.markdown(literal(" ".join(words)))
            _labelled(ctx, shown[order], words, columns, f"ex.positions.{order}")
    st.markdown(f"**{t('ex.positions.difference')}**")
    _labelled(ctx, shown["difference"], shown["words"], columns, "ex.positions.difference")
    st.markdown(t("ex.positions.largest", gap=fmt(float(np.abs(shown["difference"]).max()), ctx.state.digits)))


def _labelled(ctx, matrix, words, columns, key):
    """A matrix whose rows are words: a table with the words as row labels, or a heatmap where it is too wide."""
    if as_table(matrix) and matrix.shape[1] > TABLE_COLS:
        plot(ctx, heatmap(matrix, list(words), columns, digits=ctx.state.digits), key)
    else:
        numbers(ctx, matrix, list(words), columns, labelled=True)


@st.cache_resource(max_entries=16, show_spinner=False, hash_funcs=CACHE_HASH)
def _reordered(model_key) -> dict:
    return ex.reordered(runs.run_model(model_key), model_key.src)


def _d_k_control(ctx):
    """d_k (and d_v with it) and what the scores are divided by; the largest weight per row now."""
    t, c = ctx.t, ctx.config
    row = pickers.row_of_widgets()
    divisors = _divisors(ctx)
    session_store.update({"ex.d_k.value": c.d_k, "ex.d_k.divisor": c.attn_divisor})
    sidebar.whole_number_input(row, "d_k", "ex.d_k.value", 1, APP_LIMITS["d_k"], on_change=_use_d_k, width=200)
    row.segmented_control(t("ex.d_k.divide_by"), divisors, key="ex.d_k.divisor", required=True,
                          format_func=lambda divisor: _divisor_label(t, divisor),
                          on_change=lambda: sidebar.use_settings(
                              {"attn_divisor": session_store.widget("ex.d_k.divisor")}))
    st.markdown(t("ex.d_k.now", d_k=c.d_k, divisor=fmt(c.divisor, 4),
                  peak=fmt(ex.mean_row_max(ctx.trace, ex.first_attention(c)), ctx.state.digits)))


def _divisors(ctx) -> list:
    """√d_k, 1 (not divided), and the preset's or the current divisor where it is another number (the post's 30)."""
    chosen = [ctx.config.attn_divisor, _preset_value(ctx, "attn_divisor")]
    return ["sqrt_dk", 1.0, *dict.fromkeys(d for d in chosen if d not in ("sqrt_dk", 1.0))]


def _divisor_label(t, divisor) -> str:
    if divisor == "sqrt_dk":
        return "√d_k"
    return t("ex.d_k.undivided") if divisor == 1.0 else fmt(divisor, 4)


def _use_d_k():
    width = session_store.widget("ex.d_k.value")
    sidebar.use_settings({"d_k": width, "d_v": width})


def _residual_control(ctx):
    session_store.put("ex.residual.on", ctx.config.residual)
    st.toggle(ctx.t("ctl.residual"), key="ex.residual.on",
              on_change=lambda: sidebar.use_settings({"residual": session_store.widget("ex.residual.on") is True}))


def _preset_value(ctx, field: str):
    return getattr(engine.PRESETS[ctx.state.preset], field)


CONTROLS = {"positions": _positions_control, "d_k": _d_k_control, "residual": _residual_control}


# ---- compute it by hand -------------------------------------------------------------------------------------------

def _by_hand(ctx):
    t = ctx.t
    session_store.put("hand.set", session_store.get(QUESTION_SET, 1))
    number = sidebar.whole_number_input(st, t("hand.set"), "hand.set", 1, ex.MAX_SET, width=200, on_change=lambda: (
        session_store.update({QUESTION_SET: session_store.widget("hand.set")})))
    st.caption(t("hand.tolerance", abs=fmt(ex.ABS_TOL, 2), rel=fmt(100 * ex.REL_TOL, 2)))
    for q in ex.question_set(ctx.trace, number):
        with st.container(border=True, key=f"hand.card.{q.id}"):
            _hand_question(ctx, q)
    overflowing = ex.overflowing(ctx.trace, number)
    if overflowing:
        st.info(t("hand.overflow", kinds=t("list.separator").join(t(f"hand.{k}.title") for k in overflowing)))


def _hand_question(ctx, q: ex.Question):
    t, digits = ctx.t, ctx.state.digits
    question_prompt(ctx, q)
    widget, done, shown = f"hand.answer.{q.id}", _answered(q.id), fmt(q.answer, max(digits, 6))
    with st.form(f"hand.form.{q.id}", border=False):
        st.text_input(t("ex.answer.number"), key=widget, disabled=done)
        st.form_submit_button(t("ex.check"), disabled=done, on_click=lambda: _record(
            q.id, ex.check(q, session_store.get(widget)), widget, shown))
    _verdict_line(ctx, q.id, widget, shown)
    if quiz.teaching():  # a room's teacher
        quiz_views.ask_or_answers(ctx, q, plot, card=f"hand.card.{q.id}")
    hint = st.expander(t("hand.hint"), key=f"hand.hint.{q.id}", on_change="rerun")
    if hint.open:  # the cell's arithmetic, as the drill-down writes it
        with hint:
            title = t(step_name_key(q.step))
            latex(t.words(cell_explanation(ctx.trace, q.step, q.index, title, digits).latex))


def question_prompt(ctx, q: ex.Question):
    """A by-hand question: what to compute, the step's formula and the numbers given (also the class quiz's): at
    most ex.MAX_GIVEN to combine, with the partial sums of the rest."""
    t = ctx.t
    cell = {name: value + FIRST for name, value in zip(("h", "i", "j"), q.index[-3:] if len(q.index) == 3 else
                                                       (None, *q.index)) if value is not None}
    values = _prompt_values(ctx, q, cell)
    st.markdown(f"**{t(f'hand.{q.kind}.title')}** · {t(f'hand.{q.kind}.prompt', **values)}")
    latex(t.words(ctx.trace.step(q.step).formula))
    partial = {"partial": "hand.score.partial", "sum_exp": "hand.softmax.partial", "mean": "hand.layer_norm.partial"}
    for name, key in partial.items():
        if name in q.given:
            st.markdown(t(key, **values))
    for name in ("q", "k", "row", "x", "logits"):
        if name in q.given:
            _given_vector(ctx, q, name)


def _prompt_values(ctx, q: ex.Question, cell: dict) -> dict:
    given, digits = q.given, ctx.state.digits
    values = {**cell, "column": given.get("column", 0) + FIRST}
    for name in ("score", "divisor", "gamma", "beta", "eps", "partial", "value", "max", "sum_exp", "x_j", "mean",
                 "variance"):
        if name in given:
            values[name] = fmt(given[name], digits if name != "eps" else 2)
    if "token" in given:
        values["token"] = literal(given["token"])
    if "pos" in given:
        values |= {"pos": given["pos"], "position": given["pos"] + FIRST, "d_model": given["d_model"]}
    if "from" in given:  # the score's products left to add: columns from+1 to d_k
        values |= {"cut": given["from"], "first": given["from"] + FIRST, "last": given["from"] + len(given["q"]),
                   "n": len(given["q"])}
    if "width" in given:
        values["width"] = given["width"]
    return {"d_model": ctx.config.d_model, **values}


def _given_vector(ctx, q: ex.Question, name: str):
    values = np.array(q.given[name])  # (width,)
    first = q.given.get("from", 0) + FIRST
    cols = list(ctx.model.vocab.tokens) if name == "logits" else [str(i) for i in range(first, len(values) + first)]
    label = ctx.t(f"hand.given.{name}")
    numbers(ctx, values, [label], cols, label=label if name in ("q", "k", "x") else f"\\text{{{label}}}")
