"""The class quiz's panel at the top of every page (ui/classroom/quiz.py holds the quiz's part of a session): the room's
question, the teacher's view of the class's answers and buttons, or a student's field for an answer."""
import streamlit as st

from engine import exercises as ex
from ui.classroom import quiz
from ui.core import session, session_store
from ui.core.figures import bars
from ui.core.format import fmt


def quiz_panel(prompt, plot) -> None:
    """The room's question at the top of the page: the teacher's view (read again every second while the question
    is open), or a student's; nothing outside a room or while the room has no question. It draws with what the
    layers above the classroom hand it: prompt(ctx, q), a by-hand question's prompt (the exercises page's), and
    plot(chart, where=...), a chart at the type's scale (ui/views/draw.py)."""
    asked = quiz.current()
    if asked is None or asked[0].state == "put_away":
        return
    held, q = asked
    if quiz.teaching():
        live = quiz.TALLY_SECONDS if held.state == "open" else None
        st.fragment(run_every=live)(_teachers_quiz)(held.number, held.state, plot)
    else:
        _students_quiz(held, q, prompt, plot)


def _quiz_title(t, number: int, q: ex.Question, state: str) -> str:
    return t("quiz.title", n=number, question=t(f"hand.{q.kind}.title"), state=t(f"quiz.state.{state}"))


def _teachers_quiz(number: int, drawn: str, plot) -> None:
    """How many answered and the spread of their answers; the buttons to close, reveal and put the question away.
    Drawn (with its timer, while open) in state `drawn`: another state runs the whole app again."""
    ctx, asked = session.get(), quiz.current()
    if asked is None or asked[0].number != number or asked[0].state != drawn:
        st.rerun(scope="app")
    held, q = asked
    t, answers = ctx.t, quiz.tally(number)
    box = st.container(border=True)
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


def _students_quiz(held, q: ex.Question, prompt, plot) -> None:
    """The question and a field for the answer while it is open and unanswered; then the answer sent; once revealed,
    the right answer, whether this student's was right, and the class's answers."""
    ctx = session.get()
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
        plot(bars([label for label, _, _ in shown], [n for _, n, _ in shown], highlight=home, digits=3,
                  counts=True), where=box)

