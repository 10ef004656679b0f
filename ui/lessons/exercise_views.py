"""The exercises page: the post's eight exercises, each an experiment with a link to its prepared state, a control,
an answer checked against the engine's and an explanation from its numbers; cells of the current pass to compute by
hand; the session's answers, kept in the link (engine.exercises: the questions, the answers and their reading)."""
from urllib.parse import urlencode

import numpy as np
import streamlit as st

import engine
from engine import exercises as ex
from ui.classroom import quiz
from ui.core import runs, session, sidebar
from ui.core.figures import bars
from ui.core.format import fmt
from ui.core.i18n import literal
from ui.core.labels import FIRST, step_name_key
from ui.core.state import APP_LIMITS, CACHE_HASH, encode, encode_view
from ui.views import frame, pickers
from ui.views.draw import latex, numbers, plot
from ui.views.drawn import from_link, show_in_link
from ui.views.drill import cell_explanation

PROGRESS = "ex.progress"  # {question id: answered right}, the session's
QUESTION_SET = "ex.qset"  # the by-hand questions' set, from 1: kept while its section is not drawn


def body():
    frame.intro("exercises")
    ctx = session.get()
    progress = _progress(ctx.t)
    linked = from_link("qset", lambda position: position < ex.MAX_SET)
    if linked is not None:
        st.session_state[QUESTION_SET] = linked + 1
    pickers.section_tabs({"ex.tab.post": _post_exercises, "ex.tab.hand": _by_hand}, "ex.tab", link="section")
    show_in_link("done", ex.encode_progress(progress), "")
    show_in_link("qset", st.session_state.get(QUESTION_SET, 1) - 1, 0)


def _progress(t) -> dict:
    """The session's answers: the link's on the page's first run (each refused part said), else those kept."""
    linked = from_link("done", lambda text: True)
    if linked is not None:
        progress, refused = ex.decode_progress(linked)
        st.session_state[PROGRESS] = progress
        if refused:
            st.warning(t("ex.progress_refused", parts=", ".join(literal(part) for part in refused)))
    progress = st.session_state.setdefault(PROGRESS, {})
    right = sum(progress.values())
    st.markdown(t("ex.progress", answered=len(progress), right=right))
    if progress:
        st.button(t("ex.start_over"), key="ex.start_over", on_click=progress.clear)
    return progress


def _record(qid: str, verdict: ex.Verdict, key: str) -> None:
    """A checked answer: its verdict, shown while the model is the one it was checked against, and the progress."""
    st.session_state[f"{key}.verdict"] = (st.session_state.state.model_key, verdict)
    if verdict.answered:
        st.session_state[PROGRESS][qid] = verdict.right


def _verdict_line(ctx, key: str, right_answer: str) -> bool:
    """The last check's result against this model; True once the learner has answered it (the explanation may then
    be shown)."""
    t = ctx.t
    model_key, verdict = st.session_state.get(f"{key}.verdict", (None, None))
    if model_key != ctx.state.model_key:  # checked against other settings or sentences: its answer was another
        return False
    if verdict.right:
        st.success(t("ex.right"))
    elif verdict.answered:
        st.error(t("ex.wrong", answer=right_answer))
    else:
        st.warning(t(f"ex.refused.{verdict.code}", n=ex.MAX_ANSWER_CHARS))
    return verdict.answered


# ---- the post's exercises -----------------------------------------------------------------------------------------

# Each exercise's link: the page it opens, the settings of its prepared state and the page's view (the step shown).
PREPARED = {
    "positions": ("positional", {"pos_encoding": "none"}, {}),
    "attentions": ("cross_attention", {}, {"step": "weights"}),
    "d_k": ("attention", {"d_k": 256, "d_v": 256, "attn_divisor": 1.0}, {"step": "weights"}),
    "ffn": ("ffn", {}, {}),
    "decoder_passes": ("generate", {}, {}),
    "residual": ("add_norm", {"residual": False}, {"step": "add1"}),
    "probabilities": ("output", {}, {"step": "probs"}),
    "greedy": ("generate", {}, {}),
}


def _post_exercises():
    ctx = session.get()
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
    try:
        answer = _answer(ctx, key)
    except ValueError as error:  # a generation from numbers that are not finite: no token can be chosen
        st.error(t("gen.failed", error=session.refusal(t, error)))
        return
    if answer is None:
        st.info(t(f"ex.{key}.none"))
        return
    qid, widget = ex.post_exercise_id(key), f"ex.answer.{key}"
    with st.form(f"ex.form.{key}", border=False):
        if answer.form == "choice":
            st.radio(t("ex.your_answer"), ex.CHOICES[key], index=None, key=widget,
                     format_func=lambda code: t(f"ex.{key}.choice.{code}"))
        else:
            st.text_input(t(f"ex.answer.{answer.form}"), key=widget)
        st.form_submit_button(t("ex.check"), on_click=lambda: _record(
            qid, ex.check_answer(answer, st.session_state.get(widget)), widget))
    shown = t(f"ex.{key}.choice.{answer.value}") if answer.form == "choice" else literal(str(answer.value))
    if _verdict_line(ctx, widget, shown):
        st.markdown(t(f"ex.{key}.why", **_evidence(ctx, key, answer.evidence)))


def prepared_link(state, key: str) -> str:
    """The address (relative to the app's) of the exercise's prepared state: a new tab opens it as any link."""
    page, settings, view = PREPARED[key]
    prepared = state.with_settings(**settings) if settings else state
    return f"{page}?{urlencode(encode(prepared) | encode_view(view))}"


def _answer(ctx, key: str) -> ex.Answer | None:
    """The engine's answer to an exercise in the current state (the costly ones cached per model key)."""
    if key == "attentions":
        return ex.cross_attention_keys(ctx.trace)
    if key == "probabilities":
        return ex.next_token(ctx.trace)
    if key == "ffn":
        return ex.ffn_weights(ctx.model)
    return _experiment(key, ctx.state.model_key)


@st.cache_resource(max_entries=32, show_spinner=False, hash_funcs=CACHE_HASH)
def _experiment(key: str, model_key) -> ex.Answer:
    model = runs.run_model(model_key)
    src, tgt = model_key.src, model_key.tgt
    return {"positions": lambda: ex.order_blindness(model, src), "d_k": lambda: ex.saturation(model, src, tgt),
            "decoder_passes": lambda: ex.decoder_passes(model, src),
            "residual": lambda: ex.residual_effect(model, src, tgt),
            "greedy": lambda: ex.greedy_optimal(model, src)}[key]()


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
        rows = [f"| {d_k} | {fmt(table[(d_k, 'sqrt_dk')], digits)} | {fmt(table[(d_k, 1.0)], digits)} |"
                for d_k in ex.SATURATION_D_K]
        head = f"| d_k | {ctx.t('ex.d_k.columns')} |\n|---|---|---|"
        return {"table": "\n\n" + "\n".join([head, *rows]) + "\n\n", "uniform": fmt(evidence["uniform"], digits)}
    if key == "ffn":
        shapes = ", ".join(f"{name}: {' × '.join(map(str, shape))}" for name, shape in evidence["shapes"].items())
        return {"shapes": shapes, "d_model": evidence["d_model"], "d_ff": evidence["d_ff"]}
    if key == "decoder_passes":
        return {"tokens": words(evidence["tokens"]), "n": len(evidence["tokens"]), "encoder": evidence["encoder"]}
    if key == "residual":
        return {"on": fmt(evidence["gaps"]["on"], digits), "off": fmt(evidence["gaps"]["off"], 2),
                "mean_on": fmt(evidence["norm_means"]["on"], 2), "mean_off": fmt(evidence["norm_means"]["off"], 2)}
    if key == "probabilities":
        top = ", ".join(f"{literal(token)} {fmt(p, digits)}" for token, p in evidence["top"])
        return {"top": top, "logit": fmt(evidence["logit"], digits)}
    (greedy, greedy_lp), (beam, beam_lp) = evidence["greedy"], evidence["beam"]
    return {"greedy": words(greedy), "greedy_lp": fmt(greedy_lp, digits), "beam": words(beam),
            "beam_lp": fmt(beam_lp, digits), "width": ex.BEAM_WIDTH}


def _positions_control(ctx):
    """Positional encoding on or off, and the source's words reversed."""
    t, off = ctx.t, ctx.config.pos_encoding == "none"
    row = pickers.row_of_widgets()
    st.session_state["ex.positions.pe_off"] = off  # the state's, which the sidebar may have changed
    row.toggle(t("ex.positions.pe_off"), key="ex.positions.pe_off",
               on_change=lambda: sidebar.use_settings({"pos_encoding": "none" if st.session_state[
                   "ex.positions.pe_off"] else _preset_value(ctx, "pos_encoding")}))
    row.button(t("ex.positions.reverse"), key="ex.positions.reverse", on_click=lambda: sidebar.adopt(
        st.session_state.state.replace(src=" ".join(reversed(ctx.state.src.split())))))
    trace = ctx.trace
    out = "dec.out" if ctx.config.decoder_only else "enc.out"
    tokens = trace.tgt_tokens if ctx.config.decoder_only else trace.src_tokens
    st.caption(t("ex.positions.now", pe=t(f"choice.{ctx.config.pos_encoding}")))
    numbers(trace[out][:len(tokens)], list(tokens), [str(i) for i in range(FIRST, trace[out].shape[1] + FIRST)])


def _d_k_control(ctx):
    """d_k (and d_v with it) and whether the scores are divided by √d_k; the largest weight per row now."""
    t, c = ctx.t, ctx.config
    row = pickers.row_of_widgets()
    st.session_state["ex.d_k.value"], st.session_state["ex.d_k.scaled"] = c.d_k, c.attn_divisor == "sqrt_dk"
    row.number_input("d_k", 1, APP_LIMITS["d_k"], key="ex.d_k.value", width=200, on_change=_use_d_k)
    row.toggle(t("ex.d_k.scaled"), key="ex.d_k.scaled",
               on_change=lambda: sidebar.use_settings({"attn_divisor": "sqrt_dk" if st.session_state[
                   "ex.d_k.scaled"] else 1.0}))
    st.markdown(t("ex.d_k.now", d_k=c.d_k, divisor=fmt(c.divisor, 4),
                  peak=fmt(ex.mean_row_max(ctx.trace, ex.first_attention(c)), ctx.state.digits)))


def _use_d_k():
    width = int(st.session_state["ex.d_k.value"])
    sidebar.use_settings({"d_k": width, "d_v": width})


def _residual_control(ctx):
    st.session_state["ex.residual.on"] = ctx.config.residual
    st.toggle(ctx.t("ctl.residual"), key="ex.residual.on",
              on_change=lambda: sidebar.use_settings({"residual": st.session_state["ex.residual.on"] is True}))


def _preset_value(ctx, field: str):
    return getattr(engine.PRESETS[ctx.state.preset], field)


CONTROLS = {"positions": _positions_control, "d_k": _d_k_control, "residual": _residual_control}


# ---- compute it by hand -------------------------------------------------------------------------------------------

def _by_hand():
    ctx = session.get()
    t = ctx.t
    st.session_state["hand.set"] = st.session_state.get(QUESTION_SET, 1)
    number = int(st.number_input(t("hand.set"), 1, ex.MAX_SET, key="hand.set", width=200, on_change=lambda: (
        st.session_state.update({QUESTION_SET: int(st.session_state["hand.set"])}))))
    st.caption(t("hand.tolerance", abs=fmt(ex.ABS_TOL, 2), rel=fmt(100 * ex.REL_TOL, 2)))
    for q in ex.question_set(ctx.trace, number):
        with st.container(border=True):
            _hand_question(ctx, q)


def _hand_question(ctx, q: ex.Question):
    t, digits = ctx.t, ctx.state.digits
    question_prompt(ctx, q)
    widget = f"hand.answer.{q.id}"
    with st.form(f"hand.form.{q.id}", border=False):
        st.text_input(t("ex.answer.number"), key=widget)
        st.form_submit_button(t("ex.check"), on_click=lambda: _record(
            q.id, ex.check(q, st.session_state.get(widget)), widget))
    _verdict_line(ctx, widget, fmt(q.answer, max(digits, 6)))
    if quiz.teaching():  # a room's teacher
        st.button(t("quiz.ask"), key=f"quiz.ask.{q.id}", on_click=quiz.ask, args=(q,), icon=":material/campaign:")
    hint = st.expander(t("hand.hint"), key=f"hand.hint.{q.id}", on_change="rerun")
    if hint.open:  # the cell's arithmetic, as the drill-down writes it
        with hint:
            title = t(step_name_key(q.step))
            latex(t.words(cell_explanation(ctx.trace, q.step, q.index, title, digits).latex))


def question_prompt(ctx, q: ex.Question):
    """A by-hand question: what to compute, the step's formula and the numbers given (also the class quiz's)."""
    t = ctx.t
    cell = {name: value + FIRST for name, value in zip(("h", "i", "j"), q.index[-3:] if len(q.index) == 3 else
                                                       (None, *q.index)) if value is not None}
    st.markdown(f"**{t(f'hand.{q.kind}.title')}** · {t(f'hand.{q.kind}.prompt', **_prompt_values(ctx, q, cell))}")
    latex(t.words(ctx.trace.step(q.step).formula))
    for name in ("q", "k", "row", "x", "logits"):
        if name in q.given:
            _given_vector(ctx, q, name)


def _prompt_values(ctx, q: ex.Question, cell: dict) -> dict:
    given, digits = q.given, ctx.state.digits
    values = {**cell, "column": given.get("column", 0) + FIRST}
    for name in ("score", "divisor", "gamma", "beta", "eps"):
        if name in given:
            values[name] = fmt(given[name], digits if name != "eps" else 2)
    if "token" in given:
        values["token"] = literal(given["token"])
    if "pos" in given:
        values |= {"pos": given["pos"], "d_model": given["d_model"]}
    return values


def _given_vector(ctx, q: ex.Question, name: str):
    values = np.array(q.given[name])  # (width,)
    cols = list(ctx.model.vocab.tokens) if name == "logits" else [str(i) for i in range(FIRST, len(values) + FIRST)]
    label = ctx.t(f"hand.given.{name}")
    numbers(values, [label], cols, label=label if name in ("q", "k", "x") else f"\\text{{{label}}}")



# ---- the class quiz (ui/classroom/quiz.py), above every page --------------------------------------------------------

def quiz_panel() -> None:
    """The room's question at the top of the page: the teacher's view (read again every second while the question
    is open), or a student's; nothing outside a room or while the room has no question."""
    asked = quiz.current()
    if asked is None or asked[0].state == "put_away":
        return
    held, q = asked
    if quiz.teaching():
        live = quiz.TALLY_SECONDS if held.state == "open" else None
        st.fragment(run_every=live)(_teachers_quiz)(held.number, held.state)
    else:
        _students_quiz(held, q)


def _quiz_title(t, number: int, q: ex.Question, state: str) -> str:
    return t("quiz.title", n=number, question=t(f"hand.{q.kind}.title"), state=t(f"quiz.state.{state}"))


def _teachers_quiz(number: int, drawn: str) -> None:
    """How many answered and the spread of their answers; the buttons to close, reveal and put the question away.
    Drawn (with its timer, while open) in state `drawn`: another state runs the whole app again."""
    ctx, asked = session.get(), quiz.current()
    if asked is None or asked[0].number != number or asked[0].state != drawn:
        st.rerun(scope="app")
    held, q = asked
    t, answers = ctx.t, quiz.tally(number)
    box = st.container(border=True)
    box.markdown(_quiz_title(t, number, q, held.state))
    _class_answers(box, ctx, answers, q, revealed=held.state == "revealed")
    row = box.container(horizontal=True)
    if held.state == "open":
        row.button(t("quiz.close"), key="quiz.close", on_click=quiz.set_state, args=(number, "closed"))
    if held.state != "revealed":
        row.button(t("quiz.reveal"), key="quiz.reveal", type="primary", on_click=quiz.set_state,
                   args=(number, "revealed"))
    else:
        row.button(t("quiz.put_away"), key="quiz.put_away", on_click=quiz.set_state, args=(number, "put_away"))


def _students_quiz(held, q: ex.Question) -> None:
    """The question and a field for the answer while it is open and unanswered; then the answer sent; once revealed,
    the right answer, whether this student's was right, and the class's answers."""
    ctx = session.get()
    t, mine = ctx.t, quiz.mine(held.number)
    box = st.container(border=True, key="quiz.students_box")  # its field's label is the exercises' fields' too
    box.markdown(_quiz_title(t, held.number, q, held.state))
    with box:
        question_prompt(ctx, q)
    if held.state == "open" and mine is None:
        typed = f"quiz.typed.{held.number}"
        with box.form(f"quiz.form.{held.number}", border=False):
            st.text_input(t("ex.answer.number"), key=typed)
            st.form_submit_button(t("quiz.send"), key="quiz.send",
                                  on_click=lambda: quiz.send(held.number, q, st.session_state.get(typed)))
        refused = st.session_state.pop(quiz.REFUSED, None)
        if refused:
            box.warning(t(refused[0], **refused[1]))
    if mine is not None:
        verdict = "" if held.state != "revealed" else " · " + t("ex.right" if mine.right else "quiz.wrong")
        box.markdown(t("quiz.yours", answer=fmt(mine.value, 6)) + verdict)
    if held.state == "revealed":
        _class_answers(box, ctx, quiz.tally(held.number), q, revealed=True)


def _class_answers(box, ctx, answers, q: ex.Question, revealed: bool) -> None:
    """How many answered (and, once revealed, how many were right and the answer); the spread of the answers."""
    t = ctx.t
    right = sum(answer.right for answer in answers)
    line = t("quiz.count", n=len(answers))
    if revealed and answers:
        line += " · " + t("quiz.right", right=right, share=fmt(100 * right / len(answers), 3))
    box.markdown(line)
    if revealed:
        box.markdown(t("quiz.answer", answer=fmt(q.answer, 6), tolerance=fmt(q.tolerance, 2)))
    shown = quiz.spread(answers, q, ctx.state.digits, t("quiz.not_a_number"))
    if shown:
        home = next((label for label, _, contains in shown if contains), None) if revealed else None
        box.caption(t("quiz.spread.revealed" if revealed else "quiz.spread"))
        plot(bars([label for label, _, _ in shown], [n for _, n, _ in shown], highlight=home, digits=3,
                  counts=True), where=box)

