"""The exercises page through AppTest, in both languages: every exercise of the post takes a right and a wrong
answer; the by-hand questions take the engine's number, refuse what is not a number and open their cell's arithmetic;
the answers given stay in the link, and a forged part of it is refused."""
import sys
from pathlib import Path

from urllib.parse import parse_qsl

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine import exercises as ex  # noqa: E402
from test_app import CJK, assert_clean, open_link, query  # noqa: E402
from ui.core.i18n import literal, translator  # noqa: E402
from ui.core.state import AppState  # noqa: E402
from ui.lessons.exercise_views import PREPARED, prepared_link  # noqa: E402

SRC, TGT = "Hello World", "Hola Mundo"
MODEL = engine.preset("hello-world")
TRACE = MODEL.run(SRC, TGT)
ANSWERS = {"positions": ex.order_blindness(MODEL, SRC), "attentions": ex.cross_attention_keys(TRACE),
           "d_k": ex.saturation(MODEL, SRC, TGT), "ffn": ex.ffn_weights(MODEL),
           "decoder_passes": ex.decoder_passes(MODEL, SRC), "residual": ex.residual_effect(MODEL, SRC, TGT),
           "probabilities": ex.next_token(TRACE), "greedy": ex.greedy_optimal(MODEL, SRC)}


def page(lang, **link):
    return open_link("exercises", lang=lang, **link)


def answer(at, widget: str, value) -> None:
    """Give an answer and press its form's Check."""
    element = next(w for w in [*at.text_input, *at.radio] if w.key == widget)
    element.set_value(value)
    form = widget.replace(".answer.", ".form.")
    next(b for b in at.button if b.proto.form_id == form).click()
    at.run()
    assert not at.exception, [e.message for e in at.exception]  # a wrong answer is an st.error


def wrong_post_answer(key):
    right = ANSWERS[key]
    if right.form == "choice":
        return next(code for code in ex.CHOICES[key] if code != right.value)
    return str(right.value + 1) if right.form == "number" else "nonsense"


def said(at) -> list[str]:
    return [e.value for e in [*at.success, *at.error, *at.warning]]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_exercise_of_the_post_checks_a_right_and_a_wrong_answer(lang):
    t = translator(lang)
    at = page(lang)
    for key in ex.POST_EXERCISES:
        at.session_state[f"ex.open.{key}"] = True
    at.run()
    assert_clean(at)
    for number, key in enumerate(ex.POST_EXERCISES, start=1):
        right = ANSWERS[key]
        widget = f"ex.answer.{key}"
        answer(at, widget, wrong_post_answer(key))
        shown = t(f"ex.{key}.choice.{right.value}") if right.form == "choice" else literal(str(right.value))
        assert t("ex.wrong", answer=shown) in said(at), key
        answer(at, widget, right.value if right.form == "choice" else str(right.value))
        assert t("ex.right") in said(at), key
        assert query(at)["done"].count(f"post-{number}:1") == 1
    assert query(at)["done"] == ",".join(f"post-{n}:1" for n in range(1, 9))
    assert t("ex.progress", answered=8, right=8) in [m.value for m in at.markdown]


def test_an_explanation_shows_the_engines_numbers():
    at = page("en")
    at.session_state["ex.open.attentions"] = True
    at.run()
    answer(at, "ex.answer.attentions", "2")
    why = translator("en")("ex.attentions.why", cross="2 × 3 × 2", own="2 × 3 × 3", n_src=2, n_tgt=3)
    assert why in [m.value for m in at.markdown]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_by_hand_questions_take_the_engines_number(lang):
    t = translator(lang)
    at = page(lang, section="2", qset="7")
    questions = ex.question_set(TRACE, 7)
    assert len(questions) == 6 and query(at)["qset"] == "7"
    for q in questions:
        widget = f"hand.answer.{q.id}"
        answer(at, widget, repr(q.answer + 3 * q.tolerance))
        assert any(text.startswith(t("ex.wrong", answer="")) for text in said(at)), q.id
        answer(at, widget, repr(q.answer))
        assert t("ex.right") in said(at), q.id
    done = dict(part.split(":") for part in query(at)["done"].split(","))
    assert done == {q.id: "1" for q in questions}
    if lang == "zh":
        assert not [m.value for m in at.markdown if "Right" in m.value or "answer" in m.value]


@pytest.mark.hostile
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_what_is_not_a_number_is_refused_with_a_message(lang):
    t = translator(lang)
    at = page(lang, section="2")
    widget = "hand.answer.score-1"
    for text, code in (("1/4", "expression"), ("nan", "not_finite"), ("x" * 10_000, "too_long"),
                       ("two", "not_a_number"), ("", "empty")):
        answer(at, widget, text)
        assert t(f"ex.refused.{code}", n=ex.MAX_ANSWER_CHARS) in said(at), text
    assert "done" not in query(at)  # not an answer: nothing counted
    if lang == "zh":
        assert all(CJK.search(text) for text in said(at))


def test_a_hint_opens_the_cells_arithmetic():
    at = page("en", section="2")
    q = ex.question(TRACE, "weight-1")
    at.session_state[f"hand.hint.{q.id}"] = True
    at.run()
    assert_clean(at)
    assert any("softmax" in m.value.lower() or "exp" in m.value for m in at.latex)


@pytest.mark.hostile
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_forged_progress_link_is_refused_part_by_part(lang):
    t = translator(lang)
    at = page(lang, done="post-1:1,score-2:0,post-9:1,evil-1:1,score-0:1,score-2:1,<b>x</b>:1")
    refused = ", ".join(literal(p) for p in ("post-9:1", "evil-1:1", "score-0:1", "score-2:1", "<b>x</b>:1"))
    assert t("ex.progress_refused", parts=refused) in said(at)
    assert t("ex.progress", answered=2, right=1) in [m.value for m in at.markdown]
    assert query(at)["done"] == "post-1:1,score-2:0"  # the link keeps what it could read


@pytest.mark.hostile
def test_a_progress_link_too_long_or_a_forged_set_is_refused():
    at = page("en", done="post-1:1," * 2000, qset="0")
    assert any("done=" in text for text in said(at)) and any("qset=" in text for text in said(at))
    assert "done" not in query(at) and "qset" not in query(at)


def test_the_residual_control_turns_the_option_off_and_the_link_says_so():
    """The switch changes the app's settings; the verdict given for the model before is not shown for the new one."""
    t = translator("en")
    at = page("en")
    at.session_state["ex.open.residual"] = True
    at.run()
    answer(at, "ex.answer.residual", "alone")
    assert t("ex.right") in said(at)
    next(w for w in at.toggle if w.key == "ex.residual.on").set_value(False).run()
    assert_clean(at)
    assert query(at)["cfg"] == "residual:false" and query(at)["done"] == "post-6:1"
    assert not at.session_state["context"].config.residual and t("ex.right") not in said(at)
    answer(at, "ex.answer.residual", "alone")
    why = [m.value for m in at.markdown if m.value.startswith("The largest difference")]
    assert why and "is 6 with the residual" in why[0]  # both sides compared, though the model has it off


def test_the_question_set_stays_in_the_link_on_the_other_section():
    at = page("en", section="2", qset="5")
    assert at.number_input(key="hand.set").value == 5
    at.number_input(key="hand.set").set_value(6).run()
    assert query(at)["qset"] == "6" and {q.id for q in ex.question_set(TRACE, 6)} <= {
        w.key.removeprefix("hand.answer.") for w in at.text_input}
    at.session_state["ex.tab"] = translator("en")("ex.tab.post")
    at.run()
    assert query(at)["qset"] == "6" and "section" not in query(at)


@pytest.mark.parametrize("key", ex.POST_EXERCISES)
def test_each_exercises_link_opens_its_prepared_state(key):
    """The link an exercise gives (its page, the settings it prepares, the step shown) opens in a new tab with nothing
    refused; the residual's shows the switch as a departure from the paper."""
    page_name, settings, view = PREPARED[key]
    link = prepared_link(AppState(), key)
    assert link.startswith(f"{page_name}?")
    at = open_link(page_name, **dict(parse_qsl(link.split("?", 1)[1])))
    assert_clean(at)
    assert not at.warning and at.session_state["context"].config == AppState().with_settings(**settings).config()
    if key == "residual":
        assert translator("en")("depart.residual") in " ".join(m.value for m in at.markdown)


@pytest.mark.hostile
def test_a_forged_residual_setting_is_refused_like_any_option():
    at = open_link("add_norm", cfg="residual:maybe")
    assert any("residual:maybe" in w.value for w in at.warning)
    assert at.session_state["context"].config.residual and "cfg" not in query(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_generation_exercise_on_numbers_that_overflow_says_why_it_has_no_answer(lang):
    """The naive softmax on a weight of 10⁶ makes NaN: the exercises that decode (the decoder's passes, greedy vs
    beam) stopped the page with an exception; they say, as the generation page does, that no token can be chosen."""
    at = page(lang, cfg="softmax:naive", edit="enc.0.attn.W_Q:0.0.0=1e6")
    t = translator(lang)
    for key in ("decoder_passes", "greedy"):
        at.session_state[f"ex.open.{key}"] = True
        at.run()
        assert not at.exception, [e.message for e in at.exception]
        assert any(text.startswith(t("gen.failed", error="")[:8]) for text in said(at)), said(at)
        at.session_state[f"ex.open.{key}"] = False
