"""The class quiz's panel (ui/classroom/quiz.py holds the quiz's part of a session): a student's, with the room's
question and a field for the answer, at the top of every page; the teacher's, with the class's answers and the
buttons, under the question where the teacher asked it (the exercises page, `ask_or_answers`), else at the top of the
page (a slide the teacher went on to)."""
import streamlit as st

from engine import exercises as ex
from ui.classroom import quiz, scroll
from ui.core import session_store
from ui.core.figures import bars
from ui.core.format import fmt

TEACHERS_BOX = "quiz.teachers_box"  # the teacher's panel's container
ASKED = "quiz.asked"  # session_state: (number, state, question id, whether the teacher's click in the run before
# changed it) of the room's question, while this run of the teacher's has not drawn its panel


def quiz_panel(ctx, prompt, plot):
    """The room's question at the top of the page: a student's view; for the teacher, a place kept for its panel.
    Nothing outside a room or while the room has no question. It draws with what the layers above the classroom hand
    it: the page's context ctx, prompt(ctx, q), a by-hand question's prompt (the exercises page's), and plot(ctx,
    chart, where=...), a chart at the type's scale (ui/views/draw.py). Returns what app.py calls after the page: the
    teacher's panel in the place kept, if the page did not draw it where the question was asked."""
    session_store.pop(ASKED)
    moved, asked = session_store.pop(quiz.MOVED, False), quiz.current()
    if asked is None:
        return lambda: None
    held, q = asked
    if quiz.teaching():
        session_store.put(ASKED, (held.number, held.state, q.id, moved))
    if held.state == "put_away":
        return lambda: None
    if not quiz.teaching():
        _students_quiz(ctx, held, q, prompt, plot)
        return lambda: None
    above = st.container()

    def unless_drawn():
        if session_store.pop(ASKED) is not None:
            with above:
                _teachers_panel(ctx, held.number, held.state, plot)
    return unless_drawn


def ask_or_answers(ctx, q: ex.Question, plot, card: str) -> None:
    """Under a by-hand question on the teacher's exercises page (in the container of key `card`): the class's answers
    and the buttons if it is the question asked (where the teacher just pressed "Ask the class"), else the button that
    asks it. A run after the teacher's click keeps in view what it changed: the panel, or the question put away."""
    asked = session_store.get(ASKED)
    if asked is None or asked[2] != q.id:
        _ask_button(ctx.t, q)
        return
    session_store.pop(ASKED)
    number, state, _, moved = asked
    if state == "put_away":
        _ask_button(ctx.t, q)
    else:
        _teachers_panel(ctx, number, state, plot)
    if moved:
        scroll.to_panel(f"{q.id}.{number}.{state}", card if state == "put_away" else TEACHERS_BOX,
                        "start" if state == "put_away" else "nearest")


def _ask_button(t, q: ex.Question) -> None:
    st.button(t("quiz.ask"), key=f"quiz.ask.{q.id}", on_click=quiz.ask, args=(q,), icon=":material/campaign:")


def _teachers_panel(ctx, number: int, state: str, plot) -> None:
    """The teacher's view of question `number`, read again every second while it is open (the room's answers; the
    page's context ctx is the one it was drawn with: a change of language or settings runs the whole app)."""
    live = quiz.TALLY_SECONDS if state == "open" else None
    st.fragment(run_every=live)(_teachers_quiz)(ctx, number, state, plot)


def _quiz_title(t, number: int, q: ex.Question, state: str) -> str:
    return t("quiz.title", n=number, question=t(f"hand.{q.kind}.title"), state=t(f"quiz.state.{state}"))


def _teachers_quiz(ctx, number: int, drawn: str, plot) -> None:
    """How many answered and the spread of their answers; the buttons to close, reveal and put the question away.
    Drawn (with its timer, while open) in state `drawn`: another state runs the whole app again."""
    asked = quiz.current()
    if asked is None or asked[0].number != number or asked[0].state != drawn:
        st.rerun(scope="app")
    held, q = asked
    t, answers = ctx.t, quiz.tally(number)
    box = st.container(border=True, key=TEACHERS_BOX)
    box.markdown(_quiz_title(t, number, q, held.state))
    _class_answers(box, ctx, answers, q, held.state == "revealed", plot)
    row = box.container(horizontal=True)
    if held.state == "open":
        row.button(t("quiz.close"), key="quiz.close", on_click=quiz.set_state, args=(number, "closed"))
    if held.state != "revealed":
        row.button(t("quiz.reveal"), key="quiz.reveal", type="primary", on_click=quiz.set_state,
                   args=(number, "revealed"))
    else:
        row.button(t("quiz.put_away"), key="quiz.put_away", on_click=quiz.set_state, args=(number, "put_away"))
    header = (t("quiz.csv.answer"), t("quiz.csv.right"), t("quiz.csv.time"))
    csv = quiz.answers_csv(answers, header).encode("utf-8-sig")  # with its BOM, Excel reads the Chinese headers
    row.download_button(t("quiz.export"), csv, key="quiz.export",
                        file_name=f"quiz-{number}.csv", mime="text/csv", on_click="ignore", icon=":material/download:")


def _students_quiz(ctx, held, q: ex.Question, prompt, plot) -> None:
    """The question and a field for the answer while it is open and unanswered; then the answer sent; once revealed,
    the right answer, whether this student's was right, and the class's answers."""
    t, mine = ctx.t, quiz.mine(held.number)
    box = st.container(border=True, key="quiz.students_box")  # its field's label is the exercises' fields' too
    box.markdown(_quiz_title(t, held.number, q, held.state))
    with box:
        prompt(ctx, q)
    if held.state == "open" and mine is None:
        typed = f"quiz.typed.{held.number}"
        with box.form(f"quiz.form.{held.number}", border=False):
            st.text_input(t("ex.answer.number"), key=typed)
            st.form_submit_button(t("quiz.send"), key="quiz.send",
                                  on_click=lambda: quiz.send(held.number, q, session_store.get(typed)))
        refused = session_store.pop(quiz.REFUSED)
        if refused:
            box.warning(t(refused[0], **refused[1]))
    if mine is not None:
        verdict = "" if held.state != "revealed" else " · " + t("ex.right" if mine.right else "quiz.wrong")
        box.markdown(t("quiz.yours", answer=fmt(mine.value, 6)) + verdict)
    if held.state == "revealed":
        _class_answers(box, ctx, quiz.tally(held.number), q, True, plot)


def _class_answers(box, ctx, answers, q: ex.Question, revealed: bool, plot) -> None:
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
        plot(ctx, bars([label for label, _, _ in shown], [n for _, n, _ in shown], highlight=home, digits=3,
                  counts=True), where=box)

