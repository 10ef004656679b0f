"""The exercises page through AppTest, in both languages: every exercise of the post takes a right and a wrong
answer; the by-hand questions take the engine's number, refuse what is not a number and open their cell's arithmetic;
the answers given stay in the link, and a forged part of it is refused."""
import re
import sys
from pathlib import Path

from urllib.parse import parse_qsl

import numpy as np
import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetState

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine import exercises as ex  # noqa: E402
from engine.generate import beam_search, generate  # noqa: E402
from streamlit_privates import forged_state, send  # noqa: E402
from test_app import CJK, assert_clean, open_link, query  # noqa: E402
from ui.core.format import DIGITS, fmt  # noqa: E402
from ui.core.i18n import literal, translator  # noqa: E402
from ui.core.state import AppState  # noqa: E402
from ui.lessons.exercise_views import PREPARED, prepared_link  # noqa: E402
from ui.core.runs import TRAINED_CORPUS  # noqa: E402

SRC, TGT = "Hello World", "Hola Mundo"
MODEL = engine.preset("hello-world")
TRACE = MODEL.run(SRC, TGT)
TRAINED = engine.with_words(engine.trained(TRAINED_CORPUS), SRC)  # what the generation page runs by default
GREEDY = generate(TRAINED, SRC, max_len=ex.GENERATED)
ANSWERS = {"positions": ex.order_blindness(MODEL, SRC), "attentions": ex.cross_attention_keys(TRACE),
           "d_k": ex.saturation(2), "ffn": ex.ffn_weights(MODEL),
           "decoder_passes": ex.decoder_passes(GREEDY), "residual": ex.residual_effect(MODEL, SRC, TGT),
           "probabilities": ex.next_token(TRACE),
           "greedy": ex.greedy_optimal(GREEDY, beam_search(TRAINED, SRC, width=ex.BEAM_WIDTH, max_len=ex.GENERATED,
                                                           alpha=0.0))}


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


def forge_answer(at, widget: str, value) -> None:
    """Send an answer and its form's Check as a forged message would, to a form the page draws disabled."""
    element = next(w for w in [*at.text_input, *at.radio] if w.key == widget)
    check = next(b for b in at.button if b.proto.form_id == widget.replace(".answer.", ".form."))
    send(at, forged_state(element, value), WidgetState(id=check.id, trigger_value=True))
    assert not at.exception, [e.message for e in at.exception]


def wrong_post_answer(key):
    right = ANSWERS[key]
    if right.form == "choice":
        return next(code for code in ex.CHOICES[key] if code != right.value)
    return str(right.value + 1) if right.form == "number" else "nonsense"


def said(at) -> list[str]:
    return [e.value for e in [*at.success, *at.error, *at.warning]]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_exercise_of_the_post_checks_a_right_and_a_wrong_answer(lang):
    """Half the exercises answered right, half wrong first: the first answer counts, the engine's answer is shown
    after a wrong one, and the right answer given after it is not taken (post-2:0 stays)."""
    t = translator(lang)
    at = page(lang)
    for key in ex.POST_EXERCISES:
        at.session_state[f"ex.open.{key}"] = True
    at.run()
    assert_clean(at)
    expected = []
    for number, key in enumerate(ex.POST_EXERCISES, start=1):
        right, widget, first_right = ANSWERS[key], f"ex.answer.{key}", number % 2 == 1
        given = right.value if right.form == "choice" else str(right.value)
        answer(at, widget, given if first_right else wrong_post_answer(key))
        shown = t(f"ex.{key}.choice.{right.value}") if right.form == "choice" else literal(str(right.value))
        assert (t("ex.right") if first_right else t("ex.wrong", answer=shown)) in said(at), key
        assert t("ex.first_counts") in [c.value for c in at.caption], key
        form = next(b for b in at.button if b.proto.form_id == f"ex.form.{key}")
        assert form.disabled and next(w for w in [*at.text_input, *at.radio] if w.key == widget).disabled, key
        forge_answer(at, widget, given)  # a second answer (the form is drawn disabled) is not taken
        expected.append(f"post-{number}:{int(first_right)}")
        assert query(at)["done"] == ",".join(expected), key
    assert t("ex.progress", answered=8, right=4) in [m.value for m in at.markdown]


def test_start_over_takes_a_first_answer_again():
    t = translator("en")
    at = page("en", done="post-2:0")
    at.session_state["ex.open.attentions"] = True
    at.run()
    assert t("ex.wrong", answer=literal(str(ANSWERS["attentions"].value))) in said(at)
    next(b for b in at.button if b.key == "ex.start_over").click().run()
    assert "done" not in query(at) and not said(at)
    answer(at, "ex.answer.attentions", str(ANSWERS["attentions"].value))
    assert t("ex.right") in said(at) and query(at)["done"] == "post-2:1"


@pytest.mark.parametrize("key", ["decoder_passes", "greedy"])
def test_a_generation_exercise_is_graded_on_what_its_link_shows(key):
    """Read the answer off the page the exercise's link opens (the generation page, the trained model it runs by
    default) and give it: graded right. Before, the checker graded against the pages' random model."""
    link = prepared_link(AppState(), key)
    query_of_link = dict(parse_qsl(link.split("?", 1)[1]))
    shown = open_link("generate", **query_of_link)
    if key == "decoder_passes":
        generated = next(m.value for m in shown.main.markdown if m.value.startswith("**Generated:**"))
        read = str(generated.split("\n")[0].count("`") // 2 - 1)  # the tokens written after SOS, one per pass
    else:
        best = next(m.value for m in shown.main.markdown if m.value.startswith("**Best sentence:**"))
        greedy = open_link("generate", **{**query_of_link, "gen": "max_len:6"})
        written = next(m.value for m in greedy.main.markdown if m.value.startswith("**Generated:**"))
        words = [w for w in written.split("\n")[0].split("`")[1::2] if w not in ("SOS", "EOS")]
        read = "yes" if best.split("**")[2].split("—")[0].split() == words else "no"
    at = page("en")
    at.session_state[f"ex.open.{key}"] = True
    at.run()
    answer(at, f"ex.answer.{key}", read)
    assert translator("en")("ex.right") in said(at), (key, read)


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
    for number, q in enumerate(questions):
        widget, first_right = f"hand.answer.{q.id}", number % 2 == 0
        if first_right:
            answer(at, widget, repr(q.answer))
            assert t("ex.right") in said(at), q.id
        else:
            answer(at, widget, repr(q.answer + 3 * q.tolerance))
            assert any(text.startswith(t("ex.wrong", answer="")) for text in said(at)), q.id
            forge_answer(at, widget, repr(q.answer))  # after the engine's answer is shown: not taken
        assert said(at).count(t("ex.right")) == number // 2 + 1, q.id  # the questions answered right first
    done = dict(part.split(":") for part in query(at)["done"].split(","))
    assert done == {q.id: str(int(number % 2 == 0)) for number, q in enumerate(questions)}
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
    parts = ("post-9:1", "evil-1:1", "score-0:1", "score-2:1", "<b>x</b>:1")
    refused = t("list.separator").join(literal(p) for p in parts)
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
    assert not at.session_state["context"].config.residual and t("ex.right") in said(at)  # the first answer counts
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
    beam) stopped the page with an exception; they say, as the generation page does, that no token can be chosen.
    They decode with the model the generation page runs: here the pages' own (gen=model:current), not the trained."""
    at = page(lang, cfg="softmax:naive", edit="enc.0.attn.W_Q:0.0.0=1e6", gen="model:current")
    t = translator(lang)
    for key in ("decoder_passes", "greedy"):
        at.session_state[f"ex.open.{key}"] = True
        at.run()
        assert not at.exception, [e.message for e in at.exception]
        assert any(text.startswith(t("gen.failed", error="")[:8]) for text in said(at)), said(at)
        at.session_state[f"ex.open.{key}"] = False


def test_the_d_k_control_shows_the_divisor_in_use_and_sets_any_of_them():
    """Hello World divides by the post's 30: the control shows 30 chosen (a toggle "by √d_k" showed off, and the
    undivided scores only after on-then-off); choosing 1 divides by nothing, at once."""
    at = page("en")
    at.session_state["ex.open.d_k"] = True
    at.run()
    control = at.button_group(key="ex.d_k.divisor")
    assert control.value == 30.0 and control.options[:2] == ["√d_k", "1 (not divided)"]
    assert any("divisor 30;" in m.value for m in at.markdown)
    control.set_value(1.0).run()
    assert_clean(at)
    assert query(at)["cfg"] == "attn_divisor:1.0" and any("divisor 1;" in m.value for m in at.markdown)
    at.button_group(key="ex.d_k.divisor").set_value("sqrt_dk").run()
    assert at.session_state["context"].config.attn_divisor == "sqrt_dk"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_order_exercise_shows_both_orders_with_rows_named_by_their_words(lang):
    at = page(lang)
    at.session_state["ex.open.positions"] = True
    at.run()
    assert_clean(at)
    tables = [frame.value for frame in at.dataframe]
    rows = [list(table.iloc[:, 0]) for table in tables[:3]]
    assert rows == [["Hello", "World"], ["World", "Hello"], ["Hello", "World"]]
    shown = ex.reordered(MODEL, SRC)
    written = tables[2].iloc[:, 1:].to_numpy()
    assert written.shape == shown["difference"].shape
    assert [[fmt(x, DIGITS) for x in row] for row in shown["difference"]] == written.tolist()
    largest = translator(lang)("ex.positions.largest", gap="")[:6]
    assert any(m.value.startswith(largest) for m in at.markdown)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_on_the_paper_preset_every_question_shows_the_numbers_it_needs(lang):
    """Three of six kinds showed "This matrix is 1 × 64: shown as a heatmap only" and no numbers."""
    t = translator(lang)
    at = page(lang, preset="paper", section="2")
    assert_clean(at)
    big = t("view.big", rows=1, cols=0).split("0")[0]
    assert not [c.value for c in at.caption if c.value.startswith(big)]
    partial = [t(key, **dict.fromkeys(("last", "cut", "partial", "first", "width", "column", "value", "max",
                                       "sum_exp", "d_model", "x_j", "mean", "variance"), "\0")).split("\0")[0]
               for key in ("hand.score.partial", "hand.softmax.partial", "hand.layer_norm.partial")]
    assert all(any(m.value.startswith(start) for m in at.markdown) for start in partial), partial


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_cell_without_a_finite_answer_is_not_asked_and_the_page_says_so(lang):
    t = translator(lang)
    at = page(lang, section="2", cfg="d_k:256,d_v:256,attn_divisor:1.0,softmax:naive")
    assert_clean(at)
    asked = {w.key.removeprefix("hand.answer.") for w in at.text_input if w.key.startswith("hand.answer.")}
    assert asked == {"score-1", "scaled-1", "weight-1", "pe-1"}
    kinds = t("list.separator").join(t(f"hand.{kind}.title") for kind in ("layer_norm", "prob"))
    assert t("hand.overflow", kinds=kinds) in [i.value for i in at.info]


@pytest.mark.parametrize("key, link", [("d_k", {"cfg": "d_k:256,d_v:256,attn_divisor:1.0"}),
                                       ("residual", {"cfg": "residual:false"}),
                                       ("positions", {"cfg": "pos_encoding:none"})])
def test_an_exercise_sets_its_settings_back_to_the_presets(key, link):
    at = page("en", **link)
    at.session_state[f"ex.open.{key}"] = True
    at.run()
    next(b for b in at.button if b.key == f"ex.back.{key}").click().run()
    assert_clean(at)
    assert "cfg" not in query(at) and at.session_state["context"].config == engine.preset("hello-world").config
    assert not [b for b in at.button if b.key == f"ex.back.{key}"]  # nothing left to set back


def test_a_decimal_comma_is_read_as_a_point():
    at = page("en", section="2")
    q = ex.question(TRACE, "scaled-1")
    answer(at, "hand.answer.scaled-1", repr(q.answer).replace(".", ","))
    assert query(at)["done"] == "scaled-1:1"


def test_a_chinese_explanation_lists_with_chinese_commas():
    """Exercise 7's explanation wrote "c 0.2867, ? 0.2775" with ASCII commas in Chinese prose."""
    at = page("zh")
    at.session_state["ex.open.probabilities"] = True
    at.run()
    answer(at, "ex.answer.probabilities", ANSWERS["probabilities"].value)
    why = [m.value for m in at.markdown if "softmax" in m.value and "，" in m.value]
    assert why and not re.search(r"\d, ", why[0]), why
