"""The app's pure helpers, without Streamlit: the URL state (ui/core/state/), number formatting (ui/core/format.py),
the catalogs (ui/core/i18n.py, ui/catalogs/) and the axis labels (ui/core/labels.py)."""
import dataclasses
import json
import math
import re
import string
import sys
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from conftest import examples  # noqa: E402
from engine.attention import softmax  # noqa: E402
from engine.blog import DIFFERENCES  # noqa: E402
from engine.config import CHOICES, LIMITS  # noqa: E402
from engine.generate import beam_search  # noqa: E402
from ui.core import format as fmt_mod, generation, model_card, state as app_state  # noqa: E402
from engine.corpus import pairs  # noqa: E402
from ui.core.format import DIGITS, DIGITS_RANGE, bmatrix, fmt, fmt_tex, printed_width, table  # noqa: E402
from ui.core.i18n import (CATALOG_DIR, CATALOGS, EN, LANGUAGES, ZH, language_of,  # noqa: E402
                          load_catalogs, translator)
from ui.core.i18n import literal  # noqa: E402
from ui.lessons.size_tables import parameter_table  # noqa: E402
from ui.core.labels import (INTRO_SETTINGS, SEED_NOTES, cell_label, indices, intro_keys, param_axes,  # noqa: E402
                            step_axes, top_tokens, unique)
from ui.core.navigation import PAGE_FOLDER, PAGES, page_file  # noqa: E402
from ui.core.state import (APP_LIMITS, MAX_CHARS, MAX_EDITS, MAX_TOKENS, MAX_WEIGHT, AppState,  # noqa: E402
                           LimitError, apply_edits, check_limits, check_weight, decode, decode_view, encode,
                           encode_view)
from ui.core.session import refusal  # noqa: E402
from ui.core.state.codecs import GenerationSettings  # noqa: E402
from ui.lessons import beam_tree  # noqa: E402
from ui.stores import rooms  # noqa: E402

PRESET_NAMES = sorted(engine.PRESETS)
HELLO = engine.preset("hello-world")


# ---- ui/core/state/link.py: the URL ----------------------------------------------------------------------------

def _field_values(field):
    """Values of one Config field as decode() would produce them (valid on their own)."""
    if field in APP_LIMITS:
        return st.integers(1, APP_LIMITS[field])
    if field in LIMITS:
        low, high = LIMITS[field]
        return st.integers(low, min(high, 600))
    if field in CHOICES:
        return st.sampled_from(CHOICES[field])
    if field == "eps":
        return st.floats(0, 1, allow_nan=False, allow_infinity=False)
    if field == "attn_divisor":
        return st.one_of(st.just("sqrt_dk"), st.floats(1e-3, 1e6, allow_nan=False, allow_infinity=False))
    return st.booleans()


CONFIG_FIELDS = sorted(engine.Config.__dataclass_fields__)
PARAM_NAMES = st.one_of(st.sampled_from(sorted(HELLO.params)),
                        st.from_regex(r"[A-Za-z_][A-Za-z0-9_.]{0,24}", fullmatch=True))
WEIGHTS = st.floats(-MAX_WEIGHT, MAX_WEIGHT, allow_nan=False, allow_infinity=False)
TEXT = st.text(max_size=120)


@st.composite
def app_states(draw):
    """Any state the app can be in (canonical: overrides differ from the preset, everything sorted)."""
    preset = draw(st.sampled_from(PRESET_NAMES))
    base = engine.PRESETS[preset]
    fields = draw(st.lists(st.sampled_from(CONFIG_FIELDS), unique=True, max_size=6))
    overrides = {f: draw(_field_values(f)) for f in fields}
    overrides = {f: v for f, v in overrides.items() if getattr(base, f) != v}
    edits = draw(st.dictionaries(st.tuples(PARAM_NAMES, st.lists(st.integers(0, 5000), min_size=1, max_size=3)
                                           .map(tuple)), WEIGHTS, max_size=12))
    chosen = draw(st.booleans())  # a language not chosen is the browser's (decode's default_lang, "en" here)
    return AppState(preset=preset, seed=draw(st.integers(0, 2**32 - 1)), src=draw(TEXT), tgt=draw(TEXT),
                    overrides=tuple(sorted(overrides.items())),
                    edits=tuple(sorted((p, i, v) for (p, i), v in edits.items())),
                    lang=draw(st.sampled_from(sorted(LANGUAGES))) if chosen else "en", lang_chosen=chosen,
                    digits=draw(st.integers(*DIGITS_RANGE)), present=draw(st.booleans()))


@settings(max_examples=examples(300), deadline=None)
@given(app_states())
def test_encode_decode_round_trip(state):
    assert decode(encode(state)) == (state, [])


@settings(max_examples=examples(200), deadline=None)
@given(app_states())
def test_round_trip_through_a_real_query_string(state):
    """What the browser's address bar holds: percent-encoded, then parsed back."""
    query = dict(parse_qsl(urlencode(encode(state)), keep_blank_values=True))
    assert decode(query) == (state, [])


def test_encoded_url_is_readable():
    state = AppState().with_edit("enc.0.attn.W_Q", (0, 1, 2), 1.5).replace(
        overrides=(("attn_divisor", "sqrt_dk"),), seed=7, tgt="hola")
    assert encode(state) == {"preset": "hello-world", "src": "Hello World", "seed": "7", "tgt": "hola",
                             "cfg": "attn_divisor:sqrt_dk", "edit": "enc.0.attn.W_Q:0.1.2=1.5"}
    assert encode(AppState()) == {"preset": "hello-world", "src": "Hello World", "tgt": "Hola Mundo"}
    assert encode(AppState(tgt=""))["tgt"] == ""  # the post's own step, SOS alone, is said, not left out
    assert decode({"tgt": ""})[0].tgt == "" and decode({})[0].tgt == "Hola Mundo"


def test_presenter_mode_is_in_the_link_only_when_on():
    assert "present" not in encode(AppState()) and decode({})[0].present is False
    assert encode(AppState(present=True))["present"] == "1" and decode({"present": "1"}) == (AppState(present=True), [])
    assert decode({"present": "0"}) == (AppState(), [])  # off, said outright
    assert AppState(present=True).model_key == AppState().model_key  # the type size only: the same engine run


def test_the_digits_are_in_the_link_when_not_the_default():
    assert "digits" not in encode(AppState()) and decode({})[0].digits == DIGITS
    assert encode(AppState(digits=6))["digits"] == "6" and decode({"digits": "6"}) == (AppState(digits=6), [])
    assert AppState(digits=6).model_key == AppState().model_key  # the printing only: the same engine run


RECORDED_LINKS = ROOT / "tests" / "data" / "links.jsonl"  # links and what the app made of them, recorded at b807a44


def test_recorded_links_read_and_write_as_they_did():
    """The link's form is an interface: links shared before a change open as they did. Each recorded case is a query
    (states the app writes, hostile ones, tampered ones: this module's and test_reliability's strategies), the browser's
    language, the state decode read, its notes in order, and the link encode writes for that state, part by part."""
    cases = [json.loads(line) for line in RECORDED_LINKS.read_text(encoding="utf-8").splitlines()]
    assert len(cases) > 100 and sum(bool(case["notes"]) for case in cases) > 50
    wrong = []
    for case in cases:
        state, notes = decode(case["query"], default_lang=case["lang"])
        made = {"state": repr(state), "notes": list(map(repr, notes)), "link": list(map(list, encode(state).items()))}
        wrong += [(case["query"], part) for part in made if made[part] != case[part]]
    assert not wrong, wrong[:5]


HOSTILE = st.one_of(st.text(max_size=60), st.text(alphabet=":;=,.-+e0123456789²٣_ \x00", max_size=60),
                    st.sampled_from(["nan", "inf", "-inf", "1e300", "²", "¹²", "-1", "", " ", "%00",
                                     "enc.0.attn.W_Q:0.0.0=nan", "enc.0.attn.W_Q:0.0", "d_model:", ":", "=", ";;"]))
QUERY_KEYS = st.sampled_from(["preset", "seed", "src", "tgt", "cfg", "edit", "lang", "digits", "present", "junk"])


def _check_invariants(state, notes):
    assert isinstance(state, AppState)
    assert all(isinstance(n, (str, LimitError)) for n in notes)  # a part quoted, or why it was refused
    assert state.preset in engine.PRESETS and state.lang in LANGUAGES
    assert isinstance(state.seed, int) and 0 <= state.seed < 2**32
    assert isinstance(state.digits, int) and DIGITS_RANGE[0] <= state.digits <= DIGITS_RANGE[1]
    assert state.present in (False, True)
    assert len(state.src) <= MAX_CHARS and len(state.tgt) <= MAX_CHARS
    assert len(state.edits) <= MAX_EDITS and list(state.edits) == sorted(state.edits)
    for _, index, value in state.edits:
        assert all(isinstance(i, int) for i in index)
        assert math.isfinite(value) and abs(value) <= MAX_WEIGHT
    assert list(state.overrides) == sorted(state.overrides)
    base = engine.PRESETS[state.preset]
    for field, value in state.overrides:
        assert getattr(base, field) != value
        base.replace(**{field: value})  # each override is valid on its own
    assert decode(encode(state)) == (state, []), "what decode accepts must survive the next URL round trip"


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(QUERY_KEYS, HOSTILE, max_size=8))
def test_decode_of_hostile_links_never_raises(query):
    state, notes = decode(query)
    _check_invariants(state, notes)


@pytest.mark.parametrize("query", [
    {"seed": "²"},  # str.isdigit() is true for superscripts, int() refuses them
    {"seed": "9" * 5000},  # more digits than int() accepts
    {"seed": "-1"}, {"seed": ""}, {"seed": str(2**32)},
    {"preset": "xyz"}, {"lang": "fr"},
    {"cfg": "d_model:abc"}, {"cfg": "d_model"}, {"cfg": "eps:nan"}, {"cfg": "attn_divisor:0"}, {"cfg": "nope:1"},
    {"cfg": "d_model:" + "9" * 5000},
    {"edit": "garbage"}, {"edit": "enc.0.attn.W_Q:0.0.0="}, {"edit": "enc.0.attn.W_Q:0.0.0=nan"},
    {"edit": "enc.0.attn.W_Q:0.0.0=inf"}, {"edit": "enc.0.attn.W_Q:0.0.0=1e300"}, {"edit": "enc.0.attn.W_Q:=1"},
    {"edit": "enc.0.attn.W_Q:0.0.²=1"},
    {"digits": "1"}, {"digits": "9"}, {"digits": "٣"}, {"digits": "4.0"}, {"digits": ""},
    {"present": "abc"}, {"present": "2"}, {"present": "1e9"}, {"present": "01"}, {"present": "１"}, {"present": ""},
    {"present": "true"}, {"present": " 1"},
])
def test_every_bad_part_of_a_link_is_noted(query):
    state, notes = decode(query)
    _check_invariants(state, notes)
    assert len(notes) == 1, notes
    assert state.overrides == () and state.edits == () and state.seed == 0 and state.preset == "hello-world"
    assert state.present is False


def test_decode_keeps_good_parts_next_to_bad_ones():
    state, notes = decode({"preset": "paper", "seed": "12", "cfg": "d_model:64,bogus:1,n_heads:4",
                           "edit": "enc.0.attn.W_Q:0.0.0=2;junk;enc.0.attn.W_K:1.2.3=-0.5", "lang": "zh"})
    assert (state.preset, state.seed, state.lang) == ("paper", 12, "zh")
    assert state.overrides == (("d_model", 64), ("n_heads", 4))
    assert state.edits == (("enc.0.attn.W_K", (1, 2, 3), -0.5), ("enc.0.attn.W_Q", (0, 0, 0), 2.0))
    assert notes == ["bogus:1", "junk"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_links_refused_weight_is_named_with_the_reason_and_the_rest_kept(lang):
    state, notes = decode({"edit": "enc.0.attn.W_Q:0.0.0=nan;enc.0.attn.W_Q:0.0.1=2;dec.0.W`x:1=inf;"
                                   "enc.0.attn.W_K:1.2=1e308"})
    assert state.edits == (("enc.0.attn.W_Q", (0, 0, 1), 2.0),)
    t = translator(lang)
    said = [refusal(t, note) if isinstance(note, ValueError) else note for note in notes]
    assert said == [t("msg.edit_bad", param="enc.0.attn.W_Q", index="0,0,0", value="` nan `"),
                    "dec.0.W`x:1=inf",  # not a weight's name: quoted whole, as any unreadable part
                    t("msg.edit_bad", param="enc.0.attn.W_K", index="1,2", value="` 1e308 `")]
    assert "1,000,000" in said[0]


def test_decode_caps_the_number_of_edits_and_the_text():
    many = ";".join(f"enc.0.attn.W_Q:0.0.{i}=1" for i in range(MAX_EDITS + 50))
    state, _ = decode({"edit": many, "src": "x" * 5000})
    assert len(state.edits) == MAX_EDITS
    assert len(state.src) == MAX_CHARS


def test_decode_language_default_comes_from_the_browser():
    assert decode({}, default_lang="zh")[0].lang == "zh"
    assert decode({"lang": "en"}, default_lang="zh")[0].lang == "en"
    assert [decode(query, default_lang="zh")[0].lang_chosen for query in ({}, {"lang": "en"}, {"lang": "fr"})] == [
        False, True, False]


def test_the_language_is_in_a_link_only_when_chosen():
    """A teacher's link opens in the reader's language, unless the teacher chose one (or opened a link with one)."""
    assert "lang" not in encode(AppState(lang="en"))
    assert "lang" not in encode(AppState(lang="zh"))
    assert encode(AppState(lang="zh", lang_chosen=True))["lang"] == "zh"
    chosen, _ = decode(encode(AppState(lang="en", lang_chosen=True)), default_lang="zh")
    assert (chosen.lang, chosen.lang_chosen) == ("en", True)
    assert decode(encode(AppState(lang="en")), default_lang="zh")[0].lang == "zh"


VIEWS = st.fixed_dictionaries({}, optional={
    "layer": st.integers(0, 7), "sublayer": st.integers(0, 2), "head": st.integers(0, 15),
    "step": st.sampled_from(["scores", "ln2", "masked_logits"]),
    "cell": st.tuples(st.integers(0, 600), st.integers(0, 2100))})


@settings(max_examples=examples(200), deadline=None)
@given(VIEWS)
def test_a_view_survives_its_link(view):
    query = dict(parse_qsl(urlencode(encode_view(view)), keep_blank_values=True))
    assert decode_view(query) == (view, [])


def test_a_view_link_is_short_and_numbers_heads_and_layers_as_shown():
    assert encode_view({"layer": 1, "head": 1, "step": "scaled", "cell": (2, 0)}) == {
        "layer": "2", "head": "2", "step": "scaled", "cell": "2.0"}
    assert encode_view({}) == {}
    assert decode_view({"head": "1", "preset": "paper", "junk": "x"}) == ({"head": 0}, [])


@pytest.mark.parametrize("part, text", [
    ("head", "0"), ("head", "-1"), ("head", "2.5"), ("head", "²"), ("head", ""), ("head", "9" * 40), ("layer", "x"),
    ("step", "1. scores"), ("step", "Scaled"), ("step", "<b>"), ("step", "s" * 41), ("step", ""),
    ("cell", "1"), ("cell", "1.2.3"), ("cell", "-1.0"), ("cell", "a.b"), ("cell", "1.nan"), ("cell", "."),
])
def test_every_bad_part_of_a_view_is_noted(part, text):
    view, notes = decode_view({part: text, "cell": "0.1"} if part != "cell" else {part: text})
    assert part not in view and len(notes) == 1 and notes[0].startswith(f"{part}=")


@settings(max_examples=examples(300), deadline=None)
@given(st.dictionaries(st.sampled_from(["layer", "sublayer", "head", "step", "cell", "junk"]), HOSTILE, max_size=6))
def test_decode_view_of_hostile_links_never_raises(query):
    view, notes = decode_view(query)
    assert len(view) + len(notes) == len(query.keys() - {"junk"})
    assert decode_view(encode_view(view)) == (view, [])
    assert ((language_of("zh-CN"), language_of("zh-TW"), language_of("en-US"), language_of(None))
            == ("zh", "zh", "en", "en"))


LINK_KEYS = ["section", "sublayer", "layer", "head", "step", "cell", "present", "weights", "cfg", "gen", "edit", "room",
             "vimg", "vpx", "vw", "vcfg", "vedit",  # the Vision Transformer's part (ui/core/state/vision.py)
             "grad", "param", "phead", "smoothing",  # the training page's (test_reliability: one value a key)
             "me"]  # a student's id for the class quiz (ui/classroom/follow.py)
SETTING_PARTS = ("cfg", "gen", "edit", "vpx", "vcfg", "vedit")  # noted as they are (80 characters), not as key=value
LINK_VALUES = ["-1", "999999", "9" * 400, "١٢", "[x](//ev.il)", "<b>x</b>", "$\\href{//ev.il}{x}$", "\x00",
               "x\n\n[x](//ev.il)", "x\r\n\r\n<b>x</b>", "x" * 10_000]


def test_every_hostile_link_part_is_refused_where_it_is_parsed():
    """Every value of LINK_VALUES under every key of LINK_KEYS (tests/test_reliability.py opens the app with each
    value once and each key once): the part's decoder refuses it and notes the part as the app quotes it, a view's
    part as `key='value'` (40 characters), a setting's as it is (80); only a view's number it can read (999999) is
    left to the page, which checks it against what it draws. Every note's detail is one code span on one line."""
    wrong = []
    for key in LINK_KEYS:
        for value in LINK_VALUES:
            if key in app_state.VIEW_KEYS:
                view, notes = decode_view({key: value})
                taken = value == "999999" and key in ("section", "sublayer", "layer", "head", "phead")
                expected = [] if taken else [f"{key}={value[:40]!r}"]
                if view != ({key: 999998} if taken else {}):
                    wrong.append((key, value[:12], view))
            elif key in ("room", "me"):
                valid = rooms.normal_code(value) if key == "room" else rooms.valid_answerer(value)
                notes, expected = ([value] if valid else []), []
            else:
                state, notes = decode({key: value})
                expected = [value[:80]] if key in SETTING_PARTS else [f"{key}={value[:40]!r}"]
                assert state == AppState(), (key, value)
            if notes != expected:
                wrong.append((key, value[:12], notes, expected))
            if not re.fullmatch(r"(`+) [^\n]* \1", literal(expected[0] if expected else value[:12])):
                wrong.append((key, value[:12], "not one code span", literal(value[:12])))
    assert not wrong, "\n".join(map(repr, wrong))


# ---- ui/core/state/: weights, edits and limits ---------------------------------------------------------

@pytest.mark.parametrize("typed, expected", [
    (1.5, 1.5), ("2.25", 2.25), (" -3 ", -3.0), (0, 0.0), (np.float32(0.5), 0.5), (MAX_WEIGHT, MAX_WEIGHT),
    (-MAX_WEIGHT, -MAX_WEIGHT), ("1e-300", 1e-300),
])
def test_check_weight_accepts_finite_numbers_in_range(typed, expected):
    assert check_weight(typed) == expected


@pytest.mark.parametrize("typed", [
    float("nan"), float("inf"), float("-inf"), 1e300, -1e300, MAX_WEIGHT * 1.000001, "nan", "inf", "abc", "",
    None, [1.0], "1,5",
])
def test_check_weight_refuses_everything_else(typed):
    with pytest.raises(ValueError):
        check_weight(typed)


def test_apply_edits_writes_cells_and_counts_the_misfits():
    edits = (("enc.0.attn.W_Q", (0, 1, 2), 7.0), ("enc.0.attn.W_Q", (1, 3, 0), -2.0), ("embed.src", (2, 3), 0.25),
             ("enc.0.attn.W_Q", (2, 0, 0), 1.0),  # head 3 of 2
             ("enc.0.attn.W_Q", (0, 0), 1.0),  # wrong number of indices
             ("no.such.param", (0,), 1.0), ("embed.src", (-1, 0), 1.0))
    before = {name: np.array(value) for name, value in HELLO.params.items()}
    model, dropped = apply_edits(HELLO, edits)
    assert dropped == 4
    expected_wq = before["enc.0.attn.W_Q"].copy()
    expected_wq[0, 1, 2], expected_wq[1, 3, 0] = 7.0, -2.0
    np.testing.assert_array_equal(model.params["enc.0.attn.W_Q"], expected_wq)
    assert model.params["embed.src"][2, 3] == 0.25
    for name, value in HELLO.params.items():  # the base model is untouched
        np.testing.assert_array_equal(value, before[name])
    untouched = [n for n in HELLO.params if n not in ("enc.0.attn.W_Q", "embed.src")]
    for name in untouched:
        np.testing.assert_array_equal(model.params[name], before[name])
    # the edited model computes what the engine computes with the same weights
    direct = HELLO.with_params({"enc.0.attn.W_Q": expected_wq, "embed.src": model.params["embed.src"]})
    np.testing.assert_array_equal(model.run("Hello World")["probs"], direct.run("Hello World")["probs"])


def test_apply_edits_without_edits_is_the_same_model():
    model, dropped = apply_edits(HELLO, ())
    assert model is HELLO and dropped == 0


def test_with_edit_and_without_edits():
    state = AppState().with_edit("b", (1,), 1.0).with_edit("a", (0, 0), 2.0).with_edit("b", (1,), 3.0)
    assert state.edits == (("a", (0, 0), 2.0), ("b", (1,), 3.0))
    assert state.without_edits("a").edits == (("b", (1,), 3.0),)
    assert state.without_edits().edits == ()
    assert state.model_key == ("hello-world", 0, "Hello World", "Hola Mundo", (), state.edits, "", "")
    assert state.replace(lang="zh").model_key == state.model_key  # the language does not change the numbers


def _cache_hash(key):
    """The hash Streamlit's caches give a model key (ui.core.runs.run and the generation and training caches)."""
    import streamlit_privates

    return streamlit_privates.cache_hash(key, app_state.CACHE_HASH)


def test_the_caches_key_a_run_by_every_number_of_its_state():
    state = AppState(preset="paper").with_edit("enc.0.attn.W_Q", (0, 1, 2), 0.1)
    assert _cache_hash(state.model_key) == _cache_hash(AppState(preset="paper").with_edit("enc.0.attn.W_Q", (0, 1, 2),
                                                                                              0.1).model_key)
    assert _cache_hash(state.model_key) == _cache_hash(state.replace(lang="zh").model_key)
    others = [state.with_edit("enc.0.attn.W_Q", (0, 1, 2), math.nextafter(0.1, 1)),  # one ulp
              state.with_edit("enc.0.attn.W_Q", (0, 2, 1), 0.1), state.replace(seed=1), state.replace(src="Hello"),
              state.replace(tgt="hola"), state.replace(overrides=(("eps", 1e-5),)), state.replace(weights="0" * 12)]
    assert len({_cache_hash(state.model_key)} | {_cache_hash(other.model_key) for other in others}) == len(others) + 1


def _limit_key(state):
    with pytest.raises(LimitError) as error:
        check_limits(state)
    return error.value.args


def test_check_limits():
    check_limits(AppState(src=" ".join(["hello"] * MAX_TOKENS)))
    assert _limit_key(AppState(src=" ".join(["hello"] * (MAX_TOKENS + 1)))) == (
        "msg.too_long", {"side": "src", "n": MAX_TOKENS + 1, "high": MAX_TOKENS})
    check_limits(AppState(tgt=" ".join(["hola"] * (MAX_TOKENS - 1))))  # + SOS = 64
    assert _limit_key(AppState(tgt=" ".join(["hola"] * MAX_TOKENS)))[1]["n"] == MAX_TOKENS + 1
    assert _limit_key(AppState(src="  ")) == ("msg.empty", {})
    for field, high in APP_LIMITS.items():
        check_limits(AppState(overrides=((field, high),)))
        assert _limit_key(AppState(overrides=((field, high + 1),))) == (
            "msg.too_big", {"field": field, "high": high, "value": high + 1})


# ---- ui/core/format.py -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("x, text", [
    (float("-inf"), "−∞"), (float("inf"), "∞"), (float("nan"), "NaN"), (0.0, "0"), (-0.0, "0"),
    (135.5517, "135.552"), (105.21, "105.21"), (-2.5, "−2.5"), (1.0, "1"), (0.001, "0.001"),
    (0.000123456, "1.23456×10⁻⁴"), (123456.0, "1.23456×10⁵"), (-1e300, "−1×10³⁰⁰"), (99999.0, "99999"),
    (1e5, "1×10⁵"), (11.46394285, "11.4639"), (1.71887693, "1.71888"),
])
def test_fmt(x, text):
    assert fmt(x) == text


@settings(max_examples=examples(500), deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_fmt_is_close_and_uses_the_minus_sign(x):
    text = fmt(x)
    assert "-" not in text and " " not in text
    mantissa, _, exponent = text.replace("−", "-").partition("×10")
    exponent = exponent.translate(str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-"))
    assert float(f"{mantissa}e{exponent or 0}") == pytest.approx(x, rel=5e-6, abs=0)
    assert len(mantissa.replace("-", "").replace(".", "").strip("0")) <= 6  # at most 6 significant digits
    assert "e" not in text  # one format: the text's power of ten is the LaTeX's
    tex = fmt_tex(x)
    assert "−" not in tex
    if exponent:
        assert tex == rf"{mantissa} \times 10^{{{exponent}}}"


def test_fmt_tex_special_values():
    assert fmt_tex(float("-inf")) == r"-\infty"
    assert fmt_tex(float("inf")) == r"\infty"
    assert fmt_tex(float("nan")) == r"\text{NaN}"
    assert fmt_tex(-0.00015) == r"-1.5 \times 10^{-4}"
    assert fmt(3.14159, digits=3) == "3.14"


@pytest.mark.parametrize("x, digits, text", [
    (105.21, 4, "105.2"), (105.21, 3, "105"), (105.21, 2, "105"), (-87.88, 2, "−88"), (0.0012345, 2, "0.0012"),
    (99999.6, 3, "100000"), (123456.0, 3, "1.23×10⁵"), (0.00012345, 3, "1.23×10⁻⁴"), (11.46394285, 4, "11.46"),
])
def test_fmt_writes_a_whole_part_in_full_whatever_the_digits(x, digits, text):
    """Fewer digits than a number's whole part has round it to a whole number, not to 1.1×10² (digits = 2)."""
    assert fmt(x, digits) == text


def _bmatrix_cells(tex):
    assert tex.startswith(r"\begin{bmatrix}") and tex.endswith(r"\end{bmatrix}")
    body = tex[len(r"\begin{bmatrix}"):-len(r"\end{bmatrix}")]
    return [row.split(" & ") for row in body.split(r" \\ ")]


def test_bmatrix_small_matrix_is_complete():
    matrix = np.array([[68.0, 105.21], [87.88, 135.5517]])
    assert bmatrix(matrix) == r"\begin{bmatrix}68 & 105.21 \\ 87.88 & 135.552\end{bmatrix}"
    assert bmatrix(np.array([1.0, float("-inf"), float("nan")])) == \
        r"\begin{bmatrix}1 & -\infty & \text{NaN}\end{bmatrix}"
    cells = _bmatrix_cells(bmatrix(np.arange(64.0).reshape(8, 8)))
    assert len(cells) == 8 and all(len(row) == 8 for row in cells)
    assert r"\cdots" not in bmatrix(np.arange(64.0).reshape(8, 8))


def test_bmatrix_elides_the_middle_of_big_matrices():
    matrix = np.arange(20 * 30, dtype=float).reshape(20, 30)
    cells = _bmatrix_cells(bmatrix(matrix))
    shown = list(range(fmt_mod.LATEX_MAX - 2)) + [None, 18, 19]
    shown_cols = list(range(fmt_mod.LATEX_MAX - 2)) + [None, 28, 29]
    assert len(cells) == len(shown)
    for row, i in zip(cells, shown):
        assert len(row) == len(shown_cols)
        for cell, j in zip(row, shown_cols):
            if i is None and j is None:
                assert cell == r"\ddots"
            elif i is None:
                assert cell == r"\vdots"
            elif j is None:
                assert cell == r"\cdots"
            else:
                assert cell == fmt_tex(matrix[i, j])
    wide = _bmatrix_cells(bmatrix(np.ones((2, 9))))  # only the long axis is elided
    assert len(wide) == 2 and wide[0][6] == r"\cdots" and r"\vdots" not in bmatrix(np.ones((2, 9)))


def test_table():
    assert table(np.array([[1.0, -2.5], [float("-inf"), 1e-7]])) == [["1", "−2.5"], ["−∞", "1×10⁻⁷"]]
    assert table(np.array([0.5, 2.0])) == [["0.5", "2"]]


# ---- ui/core/i18n.py and ui/catalogs/ --------------------------------------------------------------------------

def _placeholders(text):
    """A text's placeholders: (name, conversion, format), where a plural ({n:token|tokens}, a language's grammar)
    counts as {n}."""
    return sorted({(name, conversion or "", "" if "|" in (spec or "") else spec or "")
                   for _, name, spec, conversion in string.Formatter().parse(text) if name is not None})


@pytest.mark.parametrize("lang", sorted(set(LANGUAGES) - {"en"}))
def test_catalogs_have_the_same_keys(lang):
    assert sorted(set(EN) - set(CATALOGS[lang])) == []
    assert sorted(set(CATALOGS[lang]) - set(EN)) == []


def test_english_words_quote_chinese_only_beside_a_translation():
    """An English screen translates what it quotes from the Chinese notes: the original may stand beside the
    translation, labelled "(Chinese: …)", and nowhere else (the Concat page quoted it untranslated)."""
    quoted = re.compile(r"\(Chinese: “[^”]*”\)")
    untranslated = {key: text for key, text in EN.items()
                    if re.search(r"[\u3400-\u9fff]", quoted.sub("", text))}
    assert untranslated == {}
    beside = {key for key, text in EN.items() if quoted.search(text)}
    assert {"seednote.multihead", "seednote.add_norm", "seednote.masked_attention", "seednote.train"} <= beside


def test_catalogs_have_the_same_placeholders():
    """Every key of every catalog: the same placeholders as English's; all the keys that differ, reported at once."""
    differ = [f"{lang} {key}: {_placeholders(catalog[key])}, English {_placeholders(EN[key])}"
              for lang, catalog in CATALOGS.items() for key in sorted(EN)
              if key in catalog and _placeholders(EN[key]) != _placeholders(catalog[key])]
    assert not differ, "\n".join(differ)


def test_the_catalogs_are_the_files_of_ui_catalogs():
    """One TOML file per language, named by its code and naming its language; a text split over lines in the file
    is one line on screen, joined without the break and the next line's indent."""
    assert sorted(path.name for path in CATALOG_DIR.iterdir()) == ["en.toml", "zh.toml"]
    assert LANGUAGES == {"en": "English", "zh": "简体中文"} and list(CATALOGS) == ["en", "zh"]
    assert EN["ctl.digits_help"] == ("Significant digits of every number shown (matrices, heatmaps, a cell's "
                                     "arithmetic). Only the printing changes: the model computes with every digit.")
    assert ZH["formulas.side_by_side"].endswith("列已标出。$W^K$ 和 $W^V$ 也是这样切分的。")
    assert all(type(text) is str and "\n" not in text for catalog in CATALOGS.values() for text in catalog.values())


def test_a_new_language_is_one_file(tmp_path, monkeypatch):
    """A partial catalog dropped next to the shipped ones is a language: it names itself in the picker, the
    browser's locale and the translator find it, and every key it lacks reads in English."""
    for path in CATALOG_DIR.glob("*.toml"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    (tmp_path / "xx.toml").write_text('"lang.name" = "Xish"\n"page.overview" = "Xoverview"\n'
                                      '"msg.too_big" = "xx {field} {high} {value}"\n"word.otherwise" = "xelse"\n'
                                      '"word.comes-after" = "(xx {j} > {i})"\n', encoding="utf-8")
    catalogs = load_catalogs(tmp_path)
    assert list(catalogs) == ["en", "xx", "zh"] and catalogs["xx"]["lang.name"] == "Xish"
    assert catalogs["zh"] == ZH
    monkeypatch.setattr("ui.core.i18n.CATALOGS", catalogs)
    t = translator("xx")
    assert (t.lang, t("page.overview"), t("msg.too_big", field="d", high=8, value=9)) == ("xx", "Xoverview", "xx d 8 9")
    assert t("ctl.src") == EN["ctl.src"] == "Source sentence"  # a key the file lacks
    trace = engine.preset("hello-world").run("Hello World", "hola")  # the engine's words are the file's too
    assert t.words(trace.step("vocab_mask").formula).endswith(r"0 & \text{xelse} \end{cases}")
    assert (t.words(trace.explain("dec.0.self_attn.mask", (0, 1)).text)
            == "dec.0.self_attn.mask[0, 1] = −∞ (xx 1 > 0) = −∞")
    assert t.words(trace.explain("enc.0.ln1", (0, 0)).text).startswith("With μ ≈ ")  # a word the file lacks
    assert [language_of(locale) for locale in ("xx-YY", "xx", "zh-CN", "fr")] == ["xx", "xx", "zh", "en"]


def test_english_counts_agree_with_their_nouns():
    """{n:token|tokens} writes the count and the noun that agrees with it (the animation's player reads the same
    form, ui/lessons/animation_player.js); Chinese writes {n} and its noun.
    No "(s)" is left for a reader to sort out."""
    en, zh = translator("en"), translator("zh")
    assert [en("gen.finished", n=n, end="EOS") for n in (1, 3)] == ["The model wrote EOS after 1 step.",
                                                                    "The model wrote EOS after 3 steps."]
    assert en("overview.shapes", n_src=1, n_tgt=2, d_model=4, h=1, n_enc=0, n_dec=1) == (
        "1 source token, 2 decoder positions, d_model = 4, 1 head, 0 encoder layers and 1 decoder layer")
    assert en("msg.edits_dropped", n=np.int64(1)) == "Dropped 1 edit that no longer fit the model's sizes."
    assert zh("gen.finished", n=1, end="EOS") == ZH["gen.finished"].format(n=1, end="EOS")
    assert "1" in zh("gen.finished", n=1, end="EOS")
    assert en("nav.next", page="a|b") == "Next: a|b"  # a "|" in a value is text
    assert [key for key, text in EN.items() if "(s)" in text] == []


@pytest.mark.parametrize("lang", sorted(LANGUAGES))
def test_every_message_formats_with_its_placeholders(lang):
    t = translator(lang)
    for key, text in CATALOGS[lang].items():
        values = {name: "X" for name, _, _ in _placeholders(text)}
        result = t(key, **values)
        assert "{" not in result.replace("{{", "") and result.strip(), key


@pytest.mark.parametrize("lang", sorted(LANGUAGES))
def test_bold_words_are_closed_where_markdown_can_close_them(lang):
    """CommonMark does not end **bold** on a ** that follows punctuation and precedes a letter: "**最佳句子：**soy"
    shows its stars. The punctuation goes after the closing stars ("**最佳句子**：soy")."""
    unclosed = {key: text for key, text in CATALOGS[lang].items()
                if re.search(r"[，。：；！？）:;!?)]\*\*[\w{`]", text)}
    assert not unclosed


def test_chinese_catalog_is_chinese():
    cjk = re.compile(r"[\u3400-\u9fff]")
    for page in (p for pages in PAGES.values() for p in pages):
        assert cjk.search(ZH[f"page.{page}"]) and ZH[f"page.{page}"] != EN[f"page.{page}"]
        assert cjk.search(ZH[f"intro.{page}"])
    assert translator("zh")("msg.too_big", field="n_layers", high=8, value=64) == \
        "为保证页面流畅，n_layers 在本应用中最多为 8（请求的是 64）。"
    assert translator("fr")("page.overview") == "Overview"  # an unknown language falls back to English


def _every_value(field):
    """Every value a setting can take, as configs that differ from the default in that setting only."""
    values = CHOICES.get(field) or ({"attn_divisor": ("sqrt_dk", 30.0)}.get(field) or (True, False))
    return [engine.Config(**{field: value}) for value in values]


def test_an_intro_goes_on_with_the_current_settings():
    hello = engine.preset("hello-world").config
    assert intro_keys("overview", hello) == ["intro.overview"]
    assert intro_keys("ffn", hello) == ["intro.ffn", "intro.ffn.relu", "intro.ffn.post"]
    assert intro_keys("ffn", hello.replace(activation="gelu")) == ["intro.ffn", "intro.ffn.gelu", "intro.ffn.post"]
    assert intro_keys("dec_ffn", hello.replace(norm_placement="pre")) == ["intro.dec_ffn", "intro.dec_ffn.pre"]
    assert intro_keys("add_norm", hello.replace(norm_placement="pre")) == ["intro.add_norm", "intro.add_norm.pre",
                                                                          "intro.add_norm.blog"]
    assert intro_keys("attention", hello) == ["intro.attention", "intro.attention.number", "intro.attention.stable"]
    assert intro_keys("tokens", hello) == ["intro.tokens", "intro.tokens.no_embed_scale", "intro.counting"]
    assert intro_keys("positional", hello)[1] == "intro.positional.blog_table"


@pytest.mark.parametrize("lang", sorted(LANGUAGES))
def test_every_setting_an_intro_depends_on_has_its_text_in_every_value(lang):
    t = translator(lang)
    for page, fields in INTRO_SETTINGS.items():
        for position, field in enumerate(fields, start=1):
            texts = {t(intro_keys(page, config)[position], d_k=config.d_k, divisor=f"{config.divisor:.4g}")
                     for config in _every_value(field)}
            assert len(texts) == len(_every_value(field)) and not any("{" in text for text in texts), (page, field)
    # each note names its source by its title (the app never numbers them), its slip, and what is right
    facts = {"seednote.add_norm": ("The transformer's details", "(xᵢ − μ)²", "Transformer 讲稿整理", "(1/d) Σⱼ Xᵢⱼ"),
             "seednote.masked_attention": ("Transformer 讲稿整理", "20", "K = YW^K"),
             "seednote.masked_attention.scores": ("22", "Q(i,j) · K(i,j) / √d_k", "(QKᵀ)(i,j) = Σ_c Q(i,c) · K(j,c)"),
             "seednote.multihead": ("输入的流动过程", "512×512", "n × d_model"),
             "seednote.qkv": ("The Random Transformer", "(4 × 1)", "3.99"),
             "seednote.qkv.shapes": ("Transformer 讲稿整理", "6", "21", "∈ ℝ^(n × d_k)", "d_model × d_k", "d_model × d_v"),
             "seednote.train": ("Transformer 讲稿整理", "39", "L = (1/n₀) Σ Lᵢ", "n₀ + 1", "1 … n₀", "0 … n₀ − 1")}
    assert set(facts) == {key for keys in SEED_NOTES.values() for key in keys}
    for key, words in facts.items():
        assert all(word in t(key) for word in words), key
        assert not re.search(r"seed|种子|\b00\d\b", t(key), re.IGNORECASE), key
    assert t("intro.attention.sqrt_dk", d_k=3, divisor="1.732") in (
        "The divisor is the paper's √d_k, here √3 = 1.732.", "除数是论文的 √d_k，这里 √3 = 1.732。")


@pytest.mark.parametrize("catalog", [EN, ZH])
def test_the_text_every_setting_shows_claims_no_setting(catalog):
    """The first part of an intro shows in every setting: it names no activation, norm placement, PE or form."""
    assert not re.search(r"ReLU|GELU", catalog["intro.ffn"])
    assert not re.search(r"LayerNorm\(|Sublayer|σ", catalog["intro.add_norm"])
    assert not re.search(r"sin|正弦|√", catalog["intro.positional"] + catalog["intro.attention"])
    assert "X + Sublayer(LayerNorm(X))" in catalog["intro.add_norm.pre"]
    assert "LayerNorm(X + Sublayer(X))" in catalog["intro.add_norm.post"]
    assert "GELU，" in catalog["intro.ffn.gelu"].replace(", ", "，") and "max(0, x)" in catalog["intro.ffn.relu"]
    assert not re.search(r"paper|论文", catalog["choice.paper"].split("(")[0].split("（")[0])  # a LayerNorm form
    assert "PyTorch" in catalog["choice.paper"] and "PyTorch" in catalog["compare.ln"]


@pytest.mark.parametrize("catalog", [EN, ZH])
def test_no_text_every_divisor_shows_promises_softmax_does_not_saturate(catalog):
    """Dividing by the paper's √3 leaves the post's weights saturated (the post divides by 30 for that): the attention
    intro and the scaled scores' description, shown with every divisor, may say a larger divisor saturates less, no
    more."""
    weights = engine.preset("hello-world", attn_divisor="sqrt_dk").run("Hello World")["enc.0.attn.weights"]
    assert weights.max() > 1 - 1e-9
    for key in ("intro.attention", "desc.attn.scaled"):
        assert not re.search(r"does not saturate|stay moderate|避免|不至于", catalog[key]), key
        assert re.search(r"the larger|越大", catalog[key]), key


@pytest.mark.parametrize("catalog", [EN, ZH])
def test_the_naive_softmax_note_says_what_an_overflow_gives(catalog):
    """One score past ~709 overflows e^x: the naive softmax gives that cell ∞/∞ = NaN and the others x/∞ = 0, not a
    row of NaN."""
    from engine.attention import softmax

    with np.errstate(all="ignore"):
        row = softmax(np.array([710.0, 0.0, 1.0]), "naive")
    assert np.isnan(row[0]) and np.array_equal(row[1:], [0.0, 0.0])
    note = catalog["intro.attention.naive"]
    assert "709" in note and "∞/∞" in note and not re.search(r"row becomes NaN|整行变成 NaN", note)


@pytest.mark.parametrize("catalog", [EN, ZH])
def test_the_layer_norm_texts_say_when_the_variance_is_not_about_1(catalog):
    """The option LayerNorm ε goes up to 1: a row of variance 0.01 then comes out with variance 0.01/1.01, in both
    forms far from 1. The texts shown with every ε say so."""
    from engine.layer_norm import layer_norm

    row = np.array([[0.1, -0.1, 0.1, -0.1]])  # variance 0.01
    for form in ("paper", "blog"):
        assert np.var(layer_norm(row, np.ones(4), np.zeros(4), 1.0, form)) < 0.02, form
    for key in ("intro.add_norm", "desc.ln"):
        assert re.search(r"about 1 \(less if ε|约为 1（若 ε", catalog[key]), key


def test_the_generation_intro_says_the_encoder_runs_once():
    en, zh = EN["intro.generate"], ZH["intro.generate"]
    assert "complete forward pass" not in en and "完整的前向计算。" not in zh
    assert "The encoder needs to run only once" in en and "编码器只需运行一次" in zh
    assert "once per new token" in en and "推理时" in zh
    assert "surer" not in EN["gen.compare_why"] and "把握大得多" not in ZH["gen.compare_why"]


def test_chinese_uses_the_glossarys_terms():
    """The terms of shared/GLOSSARY.md: the three names of attention, 给出/列出 for the post's numbers (打印 is to
    print on paper), 推理 for inference, 模型规模 for the sizes together."""
    assert "缩放点积注意力" in ZH["intro.attention"] and "多头注意力" in ZH["intro.multihead"]
    assert "编码器-解码器注意力" in ZH["intro.cross_attention"]
    every = json.dumps(ZH, ensure_ascii=False)
    assert "打印" not in every and "印出" not in every and "测试模式" not in every and "束宽个" not in every
    assert "博文" not in every  # the post is 博客 on every page
    # a room's code is 房间码 (代码 is program code); no word-for-word "a word stands where", no "一个下一个"
    assert "用代码" not in every and "站在哪里" not in every and "一个下一个" not in every
    assert ZH["list.separator"] == "，"  # a list in Chinese prose, not ASCII ", "
    assert ZH["ctl.sizes"] == "模型规模" and "维度" not in ZH["msg.edits_dropped"] + ZH["msg.not_divisible"]


@pytest.mark.parametrize("catalog", [EN, ZH])
def test_no_text_names_a_spec_document_by_its_file_number(catalog):
    """"seed 002" is the project's name for the blog post's file; on screen a seed is the random seed."""
    every = json.dumps(catalog, ensure_ascii=False)
    assert not re.search(r"(?:seed|资料|种子)\s*0\d\d", every, re.IGNORECASE)


@pytest.mark.parametrize("catalog", [EN, ZH])
def test_no_text_writes_a_number_in_e_notation(catalog):
    """The app writes a power of ten one way, as fmt does (10⁻¹⁷); "1e−17" was the text's other way. Code, as
    `-1e9`, is written as code is."""
    assert {key: text for key, text in catalog.items()
            if re.search(r"\d[eE][−+-]?\d", re.sub(r"`[^`]*`", "", text))} == {}


@pytest.mark.parametrize("catalog", [EN, ZH])
def test_the_posts_099_is_cut_not_rounded(catalog):
    """The post writes cos(0.01) = 0.99995 as 0.99: rounded, it would be 1.00, so a text that says how the post's
    table was written says it cut the number (as the paper-vs-blog page does)."""
    about = [key for key, text in catalog.items() if "0.99995" in text and re.search(r"round|舍入|取整", text)]
    assert len(about) >= 2, about
    for key in about:
        assert re.search(r"\bcut\b|truncat|截断", catalog[key]), key
        assert not re.search(r"rounded by hand|手工舍入|手工取整", catalog[key]), key


def test_the_qkv_note_names_the_one_result_the_posts_slip_would_change():
    """The post's E × WK1 writes 4 for the 3.99 of "World": only the key whose column of WK1 has a 1 in that row
    reads it, 9.99 (10 with the slip); the two 6.84 multiply it by 0."""
    trace = engine.preset("hello-world").run("Hello World", "Hola Mundo")
    world, wk1 = trace["src.input"][1], trace.model.params["enc.0.attn.W_K"][0]  # (d_model,), (d_model, d_k)
    slipped = world.copy()
    slipped[1] = 4
    assert np.allclose(world @ wk1, [6.84, 9.99, 6.84]) and np.allclose(slipped @ wk1, [6.84, 10, 6.84])
    other = engine.preset("hello-world", pos_encoding="sinusoidal").run("Hello World", "Hola Mundo")
    assert not np.isclose(other["enc.0.attn.k"][0, 1, 1], 9.99)  # the note shows in every setting: it names the preset
    for lang in LANGUAGES:
        note = translator(lang)("seednote.qkv")
        assert "9.99" in note and "10" in note and "6.84" not in note, lang
        assert "Hello World" in note.split("9.99")[1], lang


def _keys_used_in_code():
    literal = re.compile(r"""\bt\(\s*["']([a-z_]+\.[a-z_.]+)["']""")
    keys = set()
    for path in list((ROOT / "ui").rglob("*.py")) + list((ROOT / PAGE_FOLDER).glob("*.py")) + [ROOT / "app.py"]:
        keys |= set(literal.findall(path.read_text(encoding="utf-8")))
    return keys


def test_every_key_the_code_asks_for_exists():
    keys = _keys_used_in_code()
    assert len(keys) > 30
    keys |= {f"page.{p}" for ps in PAGES.values() for p in ps} | {f"intro.{p}" for ps in PAGES.values() for p in ps}
    keys |= {f"section.{s}" for s in PAGES} | {f"preset.{p}" for p in engine.PRESETS}
    keys |= {f"choice.{c}" for choices in CHOICES.values() for c in choices}
    keys |= {f"ctl.{f}" for f in list(CHOICES) + ["embed_scale", "attn_bias", "ffn_bias", "shared_embeddings",
                                                   "tied_output", "eps", "seed"]}
    keys |= {"ctl.divisor.sqrt", "ctl.divisor.number", "side.src", "side.tgt"}
    keys |= {f"diff.{d['key']}.{part}" for d in DIFFERENCES for part in ("topic", "why")}
    keys |= {key for page in INTRO_SETTINGS for field in INTRO_SETTINGS[page] for config in _every_value(field)
             for key in intro_keys(page, config)} | {key for keys in SEED_NOTES.values() for key in keys}
    missing = sorted(k for k in keys if k not in EN or k not in ZH)
    assert missing == []
    assert all(Path(ROOT, page_file(p)).is_file() for ps in PAGES.values() for p in ps)


# ---- ui/core/labels.py -----------------------------------------------------------------------------------------

TRACES = [
    ("hello-world", {}, "Hello World", None),
    ("hello-world", {}, "hello hello world mars", "hola mundo hola"),
    ("hello-world", {"n_layers": 2, "norm_placement": "pre", "pos_encoding": "learned"}, "world", "a"),
    ("paper", {"d_model": 16, "n_heads": 4, "d_ff": 24, "n_layers": 2, "tied_output": False},
     "the cat sat on the mat", "el gato"),
]


@pytest.mark.parametrize("preset, overrides, src, tgt", TRACES)
def test_step_axes_has_one_label_list_per_axis(preset, overrides, src, tgt):
    trace = engine.preset(preset, **overrides).run(src, tgt)
    n_src, n_tgt = len(trace.src_tokens), len(trace.tgt_tokens)
    for name in trace:
        shape = trace[name].shape
        axes = step_axes(trace, name)
        assert [len(a) for a in axes] == list(shape), name
        for labels in axes:
            assert all(isinstance(label, str) for label in labels)
        if len(shape) == 3:  # "head 1" was English on a Chinese screen: the number only, the word the catalog's
            assert axes[0] == indices(shape[0])
    src_labels = step_axes(trace, "src.input")[0]
    assert len(set(src_labels)) == n_src, "repeated tokens get unique labels"
    assert step_axes(trace, "enc.0.attn.scores")[1:] == [src_labels, src_labels]
    tgt_labels = step_axes(trace, "tgt.input")[0]
    assert step_axes(trace, "dec.0.cross_attn.weights")[1:] == [tgt_labels, src_labels]
    assert step_axes(trace, "dec.0.self_attn.mask") == [tgt_labels, tgt_labels]
    assert step_axes(trace, "probs") == [tgt_labels, list(trace.model.vocab.tokens)]
    assert len(tgt_labels) == n_tgt


def test_repeated_tokens_are_numbered():
    trace = HELLO.run("hello world hello")
    assert step_axes(trace, "src.embed")[0] == ["hello (1)", "world", "hello (3)"]  # positions count from 1


def test_unique_numbers_only_the_labels_that_repeat():
    assert unique(["a", "b", "a", "c"]) == ["a (1)", "b", "a (3)", "c"]
    wide = indices(2048)  # an FFN weight's columns at the paper's sizes
    assert unique(wide) == wide == [str(i) for i in range(1, 2049)]
    assert unique(wide + ["5"])[4::2044] == ["5 (5)", "5 (2049)"]


def test_index_labels_are_a_new_list_each_time():
    first = indices(3)
    first.append("x")
    assert indices(3) == ["1", "2", "3"]


@pytest.mark.parametrize("preset, overrides, src, tgt", TRACES)
def test_param_axes_match_every_parameter(preset, overrides, src, tgt):
    model = engine.preset(preset, **overrides)
    for name, value in model.params.items():
        axes = param_axes(model, name, value.shape)
        assert [len(a) for a in axes] == list(value.shape), name
        if value.ndim == 3:  # per-head weights: their heads numbered, in no language
            assert axes[0] == indices(value.shape[0]), name


def test_top_tokens():
    ranked = top_tokens([0.1, 0.6, 0.3], ["a", "b", "c"], k=2)
    assert ranked == [("b", 0.6), ("c", 0.3)]
    assert top_tokens([0.2, 0.5, 0.2, 0.5], list("abcd"), k=4) == [("b", 0.5), ("d", 0.5), ("a", 0.2), ("c", 0.2)]
    ranked = top_tokens([np.nan, 0.1, 0.6, np.nan], list("abcd"), k=3)  # the naive softmax's overflow: NaN last
    assert ranked[:2] == [("c", 0.6), ("b", 0.1)] and ranked[2][0] == "a" and math.isnan(ranked[2][1])


@pytest.mark.parametrize("part", ["n_layers:64", "n_layers:13", "n_dec_layers:13", "decoder_only:maybe", "d_model:1000",
                                  "attn_divisor:1e9", "eps:5", "d_ff:0"])
def test_link_values_outside_the_app_ranges_are_refused_with_a_note(part):
    state, notes = decode({"preset": "paper", "cfg": part})
    assert state.overrides == () and notes == [part]


def test_sizes_from_a_link_derive_d_k_like_the_engine():
    state, _ = decode({"cfg": "d_model:100"})
    assert state.config().d_k == 50 == engine.preset("hello-world", d_model=100).config.d_k


@pytest.mark.parametrize("dropout", [0.0, 0.1])
@pytest.mark.parametrize("placement", ["post", "pre"])
def test_every_step_has_a_description_in_both_languages(placement, dropout):
    from ui.core.labels import description_key

    trace = engine.preset("paper", d_model=8, n_heads=2, d_ff=8, n_layers=2, norm_placement=placement).run(
        "hello", "hola", dropout=dropout)
    for name in trace:
        assert description_key(name) in EN and description_key(name) in ZH, name


@pytest.mark.parametrize("catalog", [EN, ZH], ids=["en", "zh"])
def test_no_step_header_says_the_steps_name_twice(catalog):
    """A header reads "{name} · {description}": the description adds to the name, never repeats its words or its
    symbol ("First linear layer · First linear layer: …" did)."""
    from ui.core.labels import description_key, step_name_key

    names = set()
    for options in ({}, {"norm_placement": "pre", "attn_bias": True, "pos_encoding": "learned", "tied_output": False,
                         "shared_embeddings": False}):
        names |= set(engine.preset("paper", d_model=8, n_heads=2, d_ff=8, n_layers=1, **options).run(
            "hello", "hola", dropout=0.1))
    assert {"enc.0.attn.scores", "dec.0.ffn.hidden", "dec.out", "probs", "enc.0.drop1"} <= names
    for name in names:
        title, description = catalog[step_name_key(name)], catalog[description_key(name)].casefold()
        words = re.sub(r"\$[^$]*\$", "", title).strip().casefold()
        assert words and words not in description, (name, title, description)
        assert all(symbol not in description for symbol in re.findall(r"\$[^$]*\$", title)), (name, description)


def test_a_matrix_is_called_by_its_formulas_symbol_or_in_the_readers_language():
    """Beside a glance's or a step's matrix: S_1' (head 1's scaled scores) as its formula writes S_i', else the step's
    name on screen, never the code's English leaf (\\text{scores}_1 in the Chinese app)."""
    from ui.core.labels import step_name_key, step_tex

    trace = engine.preset("paper", d_model=8, n_heads=2, d_ff=8, n_layers=1).run("hello", "hola", dropout=0.1)
    for step in trace.steps():
        if step.symbol is not None:
            assert step.symbol.replace("_{i}", "_i") in step.formula, step.name
        else:
            assert re.search(r"[\u3400-\u9fff]", step_tex(None, 0, ZH[step_name_key(step.name)])), step.name
    assert step_tex(trace.step("enc.0.attn.scaled").symbol, 0, ZH["step.attn.scaled"]) == "S_{1}'"
    assert step_tex(None, None, EN["step.attn.out"]) == r"{\text{Output projection (}\times W^O\text{)}}"
    assert step_tex(None, 1, ZH["step.attn.concat"]) == r"{\text{拼接}}_{2}"


@pytest.mark.parametrize("catalog", [EN, ZH])
def test_no_steps_name_says_its_matrix_is_a_parameter(catalog):
    """A step's name stands beside its matrix, "name = [...]": "Output projection W^O = [3×4]" said W^O (6×4) was
    the product. A TOML escape in the math ("\\t" of "\\times") would turn into a tab."""
    from ui.core.labels import PARAM_TEX

    for key, text in catalog.items():
        if key.startswith("step."):
            assert not set(re.findall(r"\$([^$]*)\$", text)) & set(PARAM_TEX.values()), key
    assert not [key for key, text in catalog.items() if re.search(r"[\x00-\x09\x0b-\x1f]", text)]
    assert "W^O" in catalog["step.attn.out"]


# ---- generation settings, their URL form, and the beam tree ----------------------------------------------

GEN = GenerationSettings()  # the link's gen part


def test_generation_settings_round_trip_through_the_url():
    pairs = generation.changed({**generation.DEFAULTS, "strategy": "top_p", "p": 0.75, "seed": 12})
    assert pairs == (("p", 0.75), ("seed", 12), ("strategy", "top_p"))
    assert GEN.encode(pairs) == "p:0.75,seed:12,strategy:top_p"
    assert GEN.decode(GEN.encode(pairs), AppState()) == (pairs, [])
    assert generation.settings(pairs)["width"] == generation.DEFAULTS["width"]


@pytest.mark.parametrize("part", ["strategy:x", "k:0", "k:101", "k:2.5", "p:0", "p:inf", "temperature:nan",
                                  "alpha:-1", "seed:-3", "max_len:31", "nothing:1", "width"])
def test_generation_link_parts_out_of_range_are_refused(part):
    assert GEN.decode(f"{part},seed:4", AppState()) == ((("seed", 4),), [part])


def test_generation_run_follows_the_settings():
    hello = engine.preset("hello-world")
    top_k = generation.run(hello, "Hello World", (("k", 100), ("seed", 3), ("strategy", "top_k")))
    assert top_k.settings["k"] == len(hello.vocab) == 11, "k is capped at the vocabulary size"
    model = engine.preset("paper", d_model=16, n_heads=2, d_ff=32, n_layers=1)
    search = generation.run(model, "good morning", (("strategy", "beam"), ("width", 2), ("max_len", 4)))
    assert search.settings == {"width": 2, "max_len": 4, "alpha": 0.6, "length_norm": "plain"}


def test_the_generation_player_plays_each_step_once_and_stops_at_the_end():
    n, player = 3, generation.Playback()
    shown = []
    player = player.toggled(n)  # play: its first tick shows the step where it was pressed
    while player.playing:
        player = player.ticked(n)
        shown.append(player.step)
    assert shown == [1, 2, 3] and not player.playing
    assert player.ticked(n) == player  # a tick after the end changes nothing
    again = player.toggled(n)  # play at the end starts over
    assert (again.step, again.playing, again.ticked(n).step) == (1, True, 1)
    paused = again.ticked(n).ticked(n).toggled(n)
    assert (paused.step, paused.playing) == (2, False)


def test_the_generation_player_moves_within_the_sentence_and_stops():
    player = generation.Playback(step=2, playing=True)
    assert player.moved(1, 3) == generation.Playback(step=3, playing=False)
    assert player.moved(-5, 3).step == 1 and player.moved(5, 3).step == 3
    assert generation.Playback(step=7).within(4).step == 4 and generation.Playback(step=0).within(4).step == 1


def test_the_architecture_diagram_changes_with_the_sizes_not_the_sentence():
    """A new sentence of the same length leaves the figure as it is (the overview shows the tokens above it)."""
    from ui.lessons.diagram import architecture

    model, t = engine.preset("hello-world"), translator("en")
    same_length = [json.dumps(architecture(t, model.run(src)).to_dict()) for src in ("Hello World", "World Hello")]
    assert same_length[0] == same_length[1] and "Hello" not in same_length[0]
    texts = [a["text"] for a in architecture(t, model.run("Hello World Hello")).to_dict()["layout"]["annotations"]]
    assert "Tokens & embedding<br><span style='font-size:10px'>3×4</span>" in texts
    assert "Decoder × 1" in texts and "解码器 × 1" in [
        a["text"] for a in architecture(translator("zh"), model.run("Hello World")).to_dict()["layout"]["annotations"]]


def _label_box(label, units_per_px):
    """The rectangle (x0, x1, y0, y1), in axis units, that an annotation's text covers: 0.6 em per Latin character,
    1 em per CJK one, 1.25 em per line, a font-size span's own size; turned a quarter by textangle ±90. Anchored as
    the annotation says (xanchor; centred vertically)."""
    lines = []
    for line in label["text"].split("<br>"):
        size = float(re.search(r"font-size:(\d+)px", line).group(1)) if "font-size" in line else label["font"]["size"]
        text = re.sub(r"<[^>]+>", "", line)
        lines.append((sum(1.0 if ord(ch) >= 0x2E80 else 0.6 for ch in text) * size, 1.25 * size))
    width, height = max(w for w, _ in lines), sum(h for _, h in lines)
    if abs(label.get("textangle", 0)) == 90:
        width, height = height, width
    w, h = width * units_per_px[0], height * units_per_px[1]
    x0 = {"left": label["x"], "right": label["x"] - w}.get(label["xanchor"], label["x"] - w / 2)
    return x0, x0 + w, label["y"] - h / 2, label["y"] + h / 2


def _crosses(segment, box, samples=400):
    (ax, ay), (hx, hy) = segment
    x0, x1, y0, y1 = box
    return any(x0 < ax + (hx - ax) * k / samples < x1 and y0 < ay + (hy - ay) * k / samples < y1
               for k in range(samples + 1))


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("preset", ["hello-world", "paper", "pre-norm"])
@pytest.mark.parametrize("width_px", [320, 360, 480, 640, 900, 1200])
def test_no_arrow_of_the_diagram_crosses_a_label(preset, lang, width_px):
    """At any width the overview's column gives the figure (480 px at 1280 x 720; 320 px when a projector zooms the
    page to 150 %), every arrow misses every text (the words in the boxes, the inputs' names under them and the
    stacks' "× N" beside their frames), and every text is inside the figure."""
    from ui.lessons.diagram import architecture

    model = engine.preset("paper", norm_placement="pre") if preset == "pre-norm" else engine.preset(preset)
    layout = architecture(translator(lang), model.run("Hello World", "hola")).to_dict()["layout"]
    (left, right), (bottom, top) = layout["xaxis"]["range"], layout["yaxis"]["range"]
    margin = layout["margin"]
    units_per_px = ((right - left) / (width_px - margin["l"] - margin["r"]),
                    (top - bottom) / (layout["height"] - margin["t"] - margin["b"]))
    arrows = [((a["ax"], a["ay"]), (a["x"], a["y"])) for a in layout["annotations"] if a["showarrow"]]
    labels = [a for a in layout["annotations"] if not a["showarrow"]]
    assert len(arrows) >= 14 and any("× 1" in a["text"] or "× 6" in a["text"] for a in labels)
    crossed = [(a["text"], arrow) for a in labels for arrow in arrows if _crosses(arrow, _label_box(a, units_per_px))]
    assert crossed == []
    inside = (left - margin["l"] * units_per_px[0], right + margin["r"] * units_per_px[0])
    assert [a["text"] for a in labels if not inside[0] <= _label_box(a, units_per_px)[0]
            or not _label_box(a, units_per_px)[1] <= inside[1]] == []  # no text cut off at the figure's sides


def test_the_stack_labels_sit_outside_their_frames():
    """The paper's figure writes N× beside each stack: left of the encoder, right of the decoder."""
    from ui.lessons.diagram import architecture

    layout = architecture(translator("en"), HELLO.run("Hello World")).to_dict()["layout"]
    frames = [shape for shape in layout["shapes"] if shape["line"].get("dash") == "dash"]
    encoder, decoder = (next(a for a in layout["annotations"] if a["text"] == f"{name} × 1")
                        for name in ("Encoder", "Decoder"))
    assert encoder["xanchor"] == "right" and encoder["x"] < frames[0]["x0"]
    assert decoder["xanchor"] == "left" and decoder["x"] > frames[1]["x1"]
    assert frames[0]["y0"] < encoder["y"] < frames[0]["y1"] and frames[1]["y0"] < decoder["y"] < frames[1]["y1"]


def test_every_box_of_the_diagram_opens_a_page_of_the_navigation():
    from ui.lessons.diagram import architecture

    figure = architecture(translator("en"), engine.preset("paper", norm_placement="pre").run("Hello", "hola"))
    click = figure.to_dict()["data"][0]
    pages = [page for section in PAGES.values() for page in section]
    assert set(click["customdata"]) <= set(pages)
    decoder = [page for page, x in zip(click["customdata"], click["x"]) if x == 1]  # the right column, bottom up
    assert decoder == ["decoder_input", "dec_add_norm", "masked_attention", "dec_add_norm", "cross_attention",
                       "dec_add_norm", "dec_ffn", "decoder_stack", "output"]  # pre-norm: each LayerNorm first


@pytest.mark.parametrize("decoder_only", [False, True])
def test_the_diagram_draws_pre_norms_order_layer_norm_sublayer_then_the_sum(decoder_only):
    """x + Sublayer(LayerNorm(x)): the norm box (titled LayerNorm, not Add & LayerNorm) under its sub-layer, a ⊕
    above the sub-layer's last box; post-norm keeps the paper's Add & Norm above the sub-layer and draws no ⊕."""
    from ui.lessons.diagram import architecture

    def drawn(placement):
        model = engine.preset("hello-world", norm_placement=placement, decoder_only=decoder_only)
        figure = architecture(translator("en"), model.run("Hello World", "hola")).to_dict()
        click, layout = figure["data"][0], figure["layout"]
        boxes = sorted(zip(click["x"], click["y"], click["customdata"], click["text"]))  # column by column, bottom up
        return boxes, [(shape["xanchor"], shape["yanchor"]) for shape in layout["shapes"] if shape["type"] == "circle"]

    post, post_sums = drawn("post")
    pre, sums = drawn("pre")
    assert post_sums == [] and all(title == EN["page.add_norm"] for _, _, page, title in post if "add_norm" in page)
    assert [title for _, _, page, title in pre if "add_norm" in page] == ["LayerNorm"] * (2 if decoder_only else 5)
    pages = [page for *_, page, _ in pre]
    sublayers = ("attention", "multihead", "ffn", "masked_attention", "cross_attention", "dec_ffn")
    for i, page in enumerate(pages):
        if "add_norm" in page:  # the next box is its sub-layer's first
            assert pages[i + 1] in ("qkv", "masked_attention", "cross_attention", "ffn", "dec_ffn"), pages
    tops = [(x, y + 0.5) for (x, y, page, _), (_, _, after, _) in zip(pre, pre[1:])
            if page in sublayers and ("add_norm" in after or after.endswith("_stack"))]
    assert sorted(sums) == tops and len(tops) == (2 if decoder_only else 5)


def test_the_diagram_has_a_box_for_every_step_page_titled_in_plain_text():
    """Every page of the encoder and the decoder is a box (Q, K, V and Concat & W^O were missing), the encoder's in
    the order data flows; plotly writes no LaTeX, so W^O is written in Unicode."""
    from ui.lessons.diagram import architecture

    for lang in LANGUAGES:
        figure = architecture(translator(lang), engine.preset("hello-world").run("Hello World")).to_dict()
        click = figure["data"][0]
        assert set(click["customdata"]) == set(PAGES["encoder"] + PAGES["decoder"])
        encoder = [page for page, x in zip(click["customdata"], click["x"]) if x == 0]
        assert encoder == ["tokens", "positional", "qkv", "attention", "multihead", "add_norm", "ffn", "add_norm",
                           "encoder_stack"]
        title = click["text"][click["customdata"].index("multihead")]
        assert title.endswith("Wᴼ") and "$" not in json.dumps(figure), title
        assert any(a["text"].startswith(title + "<br>") for a in figure["layout"]["annotations"])


def test_titles_render_their_math_and_the_navigation_writes_it_in_unicode():
    from ui.core.i18n import plain_math

    assert EN["page.multihead"] == "Concat & $W^O$" and ZH["page.multihead"] == "拼接 (Concat) 与 $W^O$"
    assert plain_math(ZH["page.multihead"]) == "拼接 (Concat) 与 Wᴼ"
    assert plain_math("Queries $Q$") == "Queries Q"
    for catalog in (EN, ZH):  # no raw W^O where markdown could render it
        assert not [key for key, text in catalog.items() if re.search(r"(?<!\$)W\^O(?!\$)", text)
                    and key.startswith(("page.", "intro.", "desc.", "step.", "seednote."))]


def test_every_step_and_parameter_has_a_name_on_screen_in_both_languages():
    """A flow's buttons and a step's header name it in the reader's language (the code's name is a caption);
    an editor names its parameter by symbol and words."""
    from ui.core.labels import PARAM_TEX, param_key, param_tex, step_name_key

    trace = engine.preset("paper", d_model=8, n_heads=2, d_ff=8, n_layers=1, attn_bias=True, norm_placement="pre",
                          pos_encoding="learned", tied_output=False, shared_embeddings=False).run(
        "hello", "hola", dropout=0.1)
    for name in trace:
        assert step_name_key(name) in EN and step_name_key(name) in ZH, name
        assert re.search(r"[\u3400-\u9fff]", ZH[step_name_key(name)]), name
    for name in trace.model.params:
        assert param_key(name) in PARAM_TEX and f"param.{param_key(name)}" in ZH, name
    assert ZH["step.attn.scores"] == "注意力分数" and EN[step_name_key("dec.0.cross_attn.out")] == \
        "Output projection ($\\times W^O$)"
    assert param_tex("enc.0.attn.W_Q", 0) == "W^Q_{1}" and param_tex("dec.1.ln2.gamma") == r"\gamma"
    assert param_key("embed.src") == "embed.src" and param_key("dec.ln_final.beta") == "beta"


@pytest.mark.parametrize("preset", ["hello-world", "paper"])
def test_an_embedding_tables_editor_says_who_else_reads_it(preset):
    """The decoder input page edits E_src when one table serves both sides, as in both presets: its words say so,
    and say the output layer reads it where it is tied (the paper preset)."""
    from ui.core.labels import param_words_key

    model = engine.preset(preset)
    assert model.embed_names["tgt"] == "embed.src" == model.run("hello", "hola").step("tgt.embed").inputs[-1]
    key = param_words_key("embed.src", model.config)
    assert key == {"hello-world": "param.embed.src.shared", "paper": "param.embed.src.shared.tied"}[preset]
    assert "target" in EN[key] and "目标语言" in ZH[key] and ("output" in EN[key]) == model.config.tied_output
    apart = dataclasses.replace(model.config, shared_embeddings=False)
    assert param_words_key("embed.src", apart) == "param.embed.src"
    assert param_words_key("embed.tgt", apart) == "param.embed.tgt" + ".tied" * model.config.tied_output


def test_step_pages_link_to_their_neighbours_in_the_order_data_flows():
    from ui.core.navigation import CHAIN, neighbours

    assert CHAIN == ["overview", *PAGES["encoder"], *PAGES["decoder"], "generate"]
    assert neighbours("tokens") == ("overview", "positional")
    assert neighbours("multihead") == ("attention", "add_norm")
    assert neighbours("encoder_stack") == ("ffn", "decoder_input")
    assert neighbours("output") == ("decoder_stack", "generate")
    assert neighbours("generate") == ("output", None) == neighbours("generate", decoder_only=True)  # the last
    assert neighbours("overview") is None and neighbours("dropout") is None


TREE_LABELS = {"logp": "log P", "score": "score", "pruned": "{n} pruned", "best": "best: {token} {logp}"}


def test_beam_tree_marks_kept_pruned_finished_and_best():
    model = engine.preset("paper", d_model=16, n_heads=2, d_ff=32, n_layers=1)
    search = beam_search(model, "good morning", width=2, max_len=3)
    figure = beam_tree.beam_tree(search, TREE_LABELS).to_dict()
    boxes = figure["layout"]["annotations"]
    kept, pruned = [n for n in search.nodes if n.kept], [n for n in search.nodes if not n.kept]
    assert len(boxes) == len(kept) + len({n.step for n in pruned})  # a step's pruned prefixes share one box
    edges = {trace["line"]["color"]: trace["x"].count(None) for trace in figure["data"]}  # None ends a segment
    best_path = search.path(search.best.node)
    assert edges["#d62728"] == len(best_path) - 1 and sum(edges.values()) == len(search.nodes) - 1
    assert sum(box["bordercolor"] == "#d62728" for box in boxes) == len(best_path)
    assert any(f"score {search.best.score:.2f}".replace("-", "−") in box["text"] for box in boxes)
    assert not any(re.search(r"-\d", box["text"] + box.get("hovertext", "")) for box in boxes)  # a minus is −
    for step in {n.step for n in pruned}:
        box = next(b for b in boxes if b["y"] == step and b["bgcolor"] == "#f2f2f2")
        here = sorted((n for n in pruned if n.step == step), key=lambda n: -n.cum_logprob)
        assert box["text"] == f"{len(here)} pruned<br>best: {here[0].token} {here[0].cum_logprob:.2f}".replace("-", "−")
        assert box["hovertext"].count("<br>") == len(here) - 1
    assert beam_tree.path_probs(search) == pytest.approx([np.exp(n.logprob) for n in best_path[1:]])


def test_a_token_in_the_beam_tree_is_text_not_markup():
    import dataclasses

    search = beam_search(HELLO, "Hello World", width=2, max_len=2)
    nodes = tuple(dataclasses.replace(n, token="<unk>") if n.step else n for n in search.nodes)
    boxes = (beam_tree.beam_tree(dataclasses.replace(search, nodes=nodes), TREE_LABELS)
             .to_dict()["layout"]["annotations"])
    assert all("<unk>" not in box["text"] for box in boxes)
    assert boxes[1]["text"].startswith("<b>&lt;unk&gt;</b> · p ") and "best: &lt;unk&gt; " in boxes[-1]["text"]


@pytest.mark.parametrize("sizes, width", [({}, 3), ({"d_model": 16, "n_heads": 2, "d_ff": 32, "n_layers": 1}, 5)])
def test_the_beam_tree_text_keeps_its_size_at_any_beam(sizes, width):
    """The tree's text is drawn at TREE_FONT_PX (plotly does not scale text with the figure) and never crowded: a
    row of at most width + 1 boxes in as many columns, a row per step. The graph it replaces shrank its text to ~5 px
    on the paper preset to fit the page; the tree's shape is the same with the paper's random weights at a smaller
    size, which runs in a fraction of the time (hello-world: the post's weights)."""
    model = engine.preset("paper", **sizes) if sizes else HELLO
    search = beam_search(model, "Hello World", width=width, max_len=10)
    layout = beam_tree.beam_tree(search, TREE_LABELS).to_dict()["layout"]
    assert (beam_tree.TREE_FONT_PX >= 12
            and {b["font"]["size"] for b in layout["annotations"]} == {beam_tree.TREE_FONT_PX})
    rows = {}
    for box in layout["annotations"]:
        rows.setdefault(box["y"], []).append(box["x"])
    assert len(rows) == 11 and max(len(columns) for columns in rows.values()) == width + 1  # 10 steps and SOS
    assert all(sorted(columns) == list(range(len(columns))) for columns in rows.values())  # one box per column
    assert layout["xaxis"]["range"] == [-0.5, width + 0.5] and layout["height"] >= beam_tree.TREE_ROW_PX * len(rows)


# ---- figures ------------------------------------------------------------------------------------------------

def test_a_heatmaps_numbers_are_the_readers_digits_at_a_readable_size():
    from ui.core import figures

    matrix = np.array([[68.0, 105.21], [87.88, 135.5517]])
    cells = figures.heatmap(matrix, ["a", "b"], ["c", "d"], digits=4).to_dict()["data"][0]
    assert cells["text"] == [["68", "105.2"], ["87.88", "135.6"]] and cells["textfont"]["size"] >= 12
    assert figures.heatmap(matrix, ["a", "b"], ["c", "d"], digits=6).to_dict()["data"][0]["text"][1] == [
        "87.88", "135.552"]
    short, tall = (figures.heatmap(np.ones((n, 2)), indices(n), ["c", "d"]).to_dict()["layout"]["height"]
                   for n in (2, 12))
    assert short == 2 * figures.ROW[1] + figures.FRAME and tall <= figures.HEIGHT[1]


@pytest.mark.parametrize("shape, digits, written", [
    ((2, 8), 4, True),  # hello-world's FFN: 8 columns of −0.03571
    ((2, 8), 8, False),  # 8 columns of −0.035714286 are wider than the narrowest plot area
    ((19, 2), 4, True), ((20, 2), 4, False),  # rows 2 × TEXT_SIZE high fit within HEIGHT
])
def test_a_heatmap_writes_its_numbers_only_where_they_fit(shape, digits, written):
    from ui.core.figures import heatmap

    matrix = np.full(shape, -1 / 28)
    cells = heatmap(matrix, indices(shape[0]), indices(shape[1]), digits=digits).to_dict()["data"][0]
    assert ("text" in cells) is written

TAGGED = ["▁Hello", "</s>", "<pad>", "a&b<br>"]  # a translator's tokens: plotly reads <s>, <br> as its tags


@pytest.mark.parametrize("cols", [2, 200])  # a narrow step's hover texts, a wide one's rows (figures._click_layer)
def test_a_heatmap_and_bars_write_a_tokens_tags_as_text(cols):
    """Plotly reads tags and entities in every text: a translator's end token "</s>" closed a strikethrough never
    opened, and the axis lost it (its margin grew at each redraw: a blank band over the heatmap in Chromium). Every
    label goes as entities that plotly writes back as the token."""
    import html

    from ui.core.figures import bars, heatmap

    def as_written(text):
        assert "<" not in text.replace("<extra></extra>", "")
        return html.unescape(text)

    labels = TAGGED[:2] + [TAGGED[2 + j % 2] for j in range(cols)]  # rows, then columns
    chart = heatmap(np.ones((2, cols)), labels[:2], labels[2:]).to_dict()
    for axis, shown in (("yaxis", labels[:2]), ("xaxis", labels[2:])):
        ticks = chart["layout"][axis]
        assert [as_written(text) for text in ticks["ticktext"]] == [shown[i] for i in ticks["tickvals"]]
    hovers = chart["data"][1:]
    if cols <= 128:
        assert [as_written(text) for text in hovers[0]["text"]] == [
            f"{row} · {col}: 1" for row in labels[:2] for col in labels[2:]]
    else:
        assert [as_written(row["meta"]) for row in hovers] == labels[:2]
        assert {as_written(text) for text in hovers[0]["text"]} == {f"{col}: " for col in TAGGED[2:]}
    names = bars(TAGGED, [0.4, 0.3, 0.2, 0.1], highlight="</s>").to_dict()["data"]
    assert [as_written(name) for name in names[0]["y"]] == TAGGED == [as_written(name) for name in names[1]["y"]]
    assert names[0]["marker"]["color"][1] != names[0]["marker"]["color"][0]  # the highlighted token still found


@pytest.mark.parametrize("matrix", [np.array([[1.0, -2.0], [3.0, -np.inf]]), np.array([[0.25, 0.75]]),
                                    np.zeros((3, 40)), np.full((2, 2), np.nan)])
def test_an_unvalidated_heatmap_is_a_valid_plotly_figure(matrix):
    """ui.core.figures.heatmap skips plotly's validation for speed: the same dicts must pass it."""
    import plotly.graph_objects as go

    from ui.core.figures import heatmap

    rows, cols = [f"r{i}" for i in range(matrix.shape[0])], [f"c{j}" for j in range(matrix.shape[1])]
    figure = heatmap(matrix, rows, cols, selected=(0, 1))
    validated = go.Figure(figure.to_dict())  # raises on any property plotly does not know or accept
    cells = validated.data[0]
    signed = bool((matrix[np.isfinite(matrix)] < 0).any())
    assert (cells.zmid == 0) is signed and cells.colorscale[0][1] == ("rgb(5,48,97)" if signed else "rgb(247,251,255)")
    assert (cells.texttemplate is not None) is (matrix.size <= 200 and matrix.shape[1] <= 8)
    assert validated.layout.shapes[0].x0 == 0.5 and validated.layout.shapes[0].y0 == -0.5


def typed_array(spec):
    """The numbers of a plotly.js typed array ({"dtype": "f8", "bdata": base64}), as plotly sends a NumPy array."""
    import base64

    return np.frombuffer(base64.b64decode(spec["bdata"]), np.dtype(spec["dtype"]))


@pytest.mark.parametrize("col_labels", [indices(300), [f"tok{j}" for j in range(300)]])
def test_a_wide_heatmap_has_one_click_trace_per_row_whose_hover_the_browser_writes(col_labels):
    import plotly.graph_objects as go

    from ui.core.figures import MARKED_COLS, heatmap

    matrix = np.arange(600.0).reshape(2, 300) / 7 - 20  # signed: −20 … 65.57
    validated = go.Figure(heatmap(matrix, ["Hello", "World"], col_labels, digits=5).to_dict())
    cells, rows = validated.data[0], validated.data[1:]
    assert cells.text is None and cells.texttemplate is None  # no numbers drawn in 600 cells, none sent
    assert [row.meta for row in rows] == ["Hello", "World"]
    step = -(-300 // MARKED_COLS)  # every step-th column marked (test_a_wide_rows_markers_...)
    for i, row in enumerate(rows):
        np.testing.assert_array_equal(typed_array(row.customdata), np.abs(matrix[i, ::step]))  # the size; the sign
        assert list(row.text) == [f"{label}: {'−' if v < 0 else ''}"  # in text
                                  for label, v in zip(col_labels[::step], matrix[i, ::step])]
        assert (row.x, row.x0, row.dx) == (None, 0, step)  # cell (i, j) at x=j, y=i
        np.testing.assert_array_equal(typed_array(row.y), np.full(len(range(0, 300, step)), i))
        assert row.hovertemplate == "%{meta} · %{text}%{customdata:.5~g}<extra></extra>"  # the reader's digits
    assert rows[0].text[0] == f"{col_labels[0]}: −" and rows[1].text[-1] == f"{col_labels[-1 - (299 % step)]}: "


@pytest.mark.parametrize("cols", [256, 257, 512, 2048])
def test_a_wide_rows_markers_are_a_few_hundred_each_on_columns_they_name(cols):
    """Each marker is an SVG node plotly draws at every redraw: a 10 x 2048 step's 20,480 kept Chromium busy for a
    minute. A row marks at most MARKED_COLS columns, evenly from the first, each where its cell is (x0 + k dx) and
    its hover naming that column and its number; the drill-down's column box reaches the others."""
    from ui.core.figures import MARKED_COLS, heatmap

    rng = np.random.default_rng(cols)
    matrix = rng.choice([-1.0, 1.0], (10, cols)) * rng.uniform(0.01, 9, (10, cols))  # no 10⁻⁴ (its own hover text)
    rows = heatmap(matrix, indices(10), indices(cols)).to_dict()["data"][1:]
    assert len(rows) == 10
    for i, row in enumerate(rows):
        marked = row["x0"] + row["dx"] * np.arange(len(typed_array(row["y"])))  # the columns, from 0
        assert len(marked) <= MARKED_COLS and marked[-1] + row["dx"] >= cols > marked[-1]  # spread to the end
        assert [text.split(":")[0] for text in row["text"]] == [str(j + 1) for j in marked]
        np.testing.assert_array_equal(typed_array(row["customdata"]), np.abs(matrix[i, marked]))
    assert (rows[0]["dx"] == 1) is (cols <= MARKED_COLS)


@pytest.mark.parametrize("digits", [4, 5])
def test_a_wide_rows_hover_number_is_fmts_where_d3_would_write_it_otherwise(digits):
    """d3's .4~g writes 12345 as 1.235e+4 and −∞ as -Infinity, fmt 12345 and −∞: such a row sends fmt's text (the
    rest keep the cheap typed numbers). The bound is where either rounds up to 10^digits (or fmt's 10⁵)."""
    import plotly.graph_objects as go

    from ui.core.figures import heatmap

    bound = 10.0 ** min(digits, 5)
    matrix = np.array([[bound - 0.6, -2.5] * 100, [bound - 0.4, 1.0] * 100, [1.0, -np.inf] * 100])
    rows = go.Figure(heatmap(matrix, ["a", "b", "c"], indices(200), digits=digits).to_dict()).data[1:]
    np.testing.assert_array_equal(typed_array(rows[0].customdata), np.abs(matrix[0]))
    assert rows[0].hovertemplate == f"%{{meta}} · %{{text}}%{{customdata:.{digits}~g}}<extra></extra>"
    assert list(rows[0].text[:3]) == ["1: ", "2: −", "3: "]  # the columns from 1 (a marker's x is from 0)
    for row, values in zip(rows[1:], matrix[1:]):
        assert list(row.customdata) == [fmt(v, digits) for v in values]
        assert list(row.text[:3]) == ["1: ", "2: ", "3: "]  # the sign is fmt's, in customdata
        assert row.hovertemplate == "%{meta} · %{text}%{customdata}<extra></extra>"
    assert list(rows[1].customdata[:2]) == ["1" + "0" * digits, "1"]  # d3: 1e+4, 1e+5
    assert list(rows[2].customdata[:2]) == ["1", "−∞"]


def test_a_small_number_is_written_one_way_in_heatmaps_bars_text_and_formulas():
    """A heatmap's cells and hover wrote 6.385e−4, a bar and a formula 6.385×10⁻⁴ (issue 30): every place writes
    the formula's power of ten and minus, a wide row's hover too, whose digits d3 writes (its own would be
    -0.0006385 and 1.234e-7): the sign goes before them, the power of ten after."""
    from ui.core.figures import bars, heatmap

    small = 6.385e-4
    chart = heatmap([[small, 0.5]], ["a"], ["1", "2"], digits=4).to_dict()
    assert chart["data"][0]["text"] == [["6.385×10⁻⁴", "0.5"]]
    assert chart["data"][1]["text"][0] == "a · 1: 6.385×10⁻⁴"
    assert bars(["x"], [small], digits=4).to_dict()["data"][1]["text"] == ["6.385×10⁻⁴"]
    assert table([[small]], 4) == [["6.385×10⁻⁴"]] and fmt_tex(small, 4) == r"6.385 \times 10^{-4}"
    row = np.array([1.234e-7, -small, -9.99996e-4, 0.5, -0.5] + [0.25] * 195)
    wide = heatmap(np.array([row, [0.5] * 200]), ["a", "b"], indices(200), digits=4).to_dict()["data"][1:]
    d3 = list(typed_array(wide[0]["customdata"])[:5])  # written by d3's .4~g: 1.234, 6.385, 1, 0.5, 0.5
    written = [f"{text}{number:.4g}{after}" for text, number, after in zip(wide[0]["text"], d3, wide[0]["hovertext"])]
    assert written == ["1: 1.234×10⁻⁷", "2: −6.385×10⁻⁴", "3: −1×10⁻³", "4: 0.5", "5: −0.5"]
    assert written == [f"{j}: {fmt(v, 4)}" for j, v in zip(range(1, 6), row)]
    assert wide[0]["hovertemplate"] == "%{meta} · %{text}%{customdata:.4~g}%{hovertext}<extra></extra>"
    assert "hovertext" not in wide[1] and "%{hovertext}" not in wide[1]["hovertemplate"]  # a row without any


def test_unvalidated_bars_and_curves_are_valid_plotly_figures():
    import plotly.graph_objects as go

    from ui.core.figures import bars, curves

    ranked = go.Figure(bars(["a", "b"], np.array([0.75, 0.25]), highlight="b").to_dict())
    assert list(ranked.data[0].marker.color) == ["#1f77b4", "#d62728"] and ranked.layout.yaxis.autorange == "reversed"
    figure = curves(range(1, 4), {"loss": np.array([3.0, 2.0, 1.5])}, "step", "loss", log_y=True)
    loss = go.Figure(figure.to_dict())  # the numbers travel as base64 blocks ({"dtype", "bdata"}), which plotly accepts
    assert loss.layout.yaxis.type == "log" and loss.layout.xaxis.title.text == "step"
    assert loss.layout.yaxis.exponentformat == "power"  # plotly's default writes 1e-9 as "1n"
    assert list(typed_array(loss.data[0].x)) == [1, 2, 3] and list(typed_array(loss.data[0].y)) == [3, 2, 1.5]


def test_every_formula_is_drawn_by_views_latex_which_gives_it_room():
    """st.latex alone lets KaTeX clip a tall first or deep last line (draw.latex); training's and generation's
    formulas used it."""
    root = Path(__file__).resolve().parents[1]
    callers = [path.relative_to(root).as_posix()
               for folder in ("ui", PAGE_FOLDER) for path in (root / folder).rglob("*.py")
               if "st.latex(" in path.read_text(encoding="utf-8")]
    assert callers == ["ui/views/draw.py"]
    assert (root / "ui/views/draw.py").read_text(encoding="utf-8").count("st.latex(") == 1


def test_the_paper_vs_blog_page_writes_its_math_as_math_and_its_chinese_in_chinese():
    """Its words (the engine's record in English, the catalog's Chinese) put a symbol in $…$ (brace-free: a
    catalog's braces are placeholders), an option's code name in `…`, and otherwise write math as the app's prose
    does (√(σ² + ε), 10⁻¹⁰): none of sqrt(3), W_Q, W^O, 4.68e-10 or eps in plain text. The Chinese quotes no
    English sentence (“We'll skip this for now” was one)."""
    for catalog in (EN, ZH):
        texts = {key: text for key, text in catalog.items() if key.startswith(("diff.", "compare."))}
        assert len(texts) > 30
        for key, text in texts.items():
            prose = re.sub(r"\$[^$]*\$|`[^`]*`", "", text)
            assert not re.search(r"sqrt|\^|\b[WQKV]_|\b[QKVZ]\d|\de[-−]\d|\beps\b", prose), (key, text)
    quotes = [quote for key, text in ZH.items() if key.startswith("diff.") for quote in re.findall("“([^”]*)”", text)]
    assert quotes and not any(re.search("[A-Za-z]+ [A-Za-z]+", quote) for quote in quotes), quotes
    printed = next(d["post"] for d in DIFFERENCES if d["key"] == "ln_rounding")
    assert translator("zh").words(printed) == r"\text{归一化值}_1 = 1.718"


def test_every_bar_has_its_number_at_the_readers_digits_without_e_notation():
    """Next-token bars: fmt's digits, a power of ten as ×10 with a superscript (6.26e-05 read badly), written by a
    text trace (plotly drops a bar's own text when the bar is under a pixel long), on an axis longer than the
    longest bar, so its number has room after it."""
    from ui.core.figures import BAR_ROOM, bars

    chart = bars(["hola", "mundo", "el"], np.array([0.9991, 6.2634e-5, 0.0]), digits=3).to_dict()
    bar, numbers = chart["data"]
    assert "text" not in bar and numbers["mode"] == "text" and numbers["y"] == bar["y"] == ["hola", "mundo", "el"]
    assert numbers["text"] == ["0.999", "6.26×10⁻⁵", "0"] and numbers["x"] == bar["x"]
    assert chart["layout"]["xaxis"]["range"] == [0, pytest.approx(0.9991 * BAR_ROOM)] and BAR_ROOM > 1
    assert chart["layout"]["xaxis"]["exponentformat"] == "power"  # a long vocabulary's ticks: 2×10⁻⁴, not "200μ"
    assert bars(["a"], np.array([np.nan])).to_dict()["layout"]["xaxis"]["range"] == [0, BAR_ROOM]


def wire(value):
    """A chart's JSON with its typed arrays as (numbers, shape), NaN as None, and without the template."""
    if isinstance(value, dict) and "bdata" in value:
        numbers = typed_array(value).reshape([int(n) for n in value.get("shape", "-1").split(",")])
        return [None if math.isnan(v) else v for v in numbers.ravel().tolist()], list(numbers.shape)
    if isinstance(value, dict):
        return {k: wire(v) for k, v in value.items() if k != "template"}
    return [wire(v) for v in value] if isinstance(value, list) else value


def sample_charts():
    from ui.core.figures import bars, curves, heatmap

    return [heatmap(np.array([[1.0, -2.0], [3.0, -np.inf]]), ["a", "b"], ["c", "d"], selected=(0, 1)),
            heatmap(np.arange(600.0).reshape(2, 300) / 7, ["Hello", "World"], indices(300)),
            heatmap(np.zeros((3, 40)), ["x", "y", "z"], [f"c{j}" for j in range(40)]),
            bars(["a", "b"], np.array([0.75, 0.25]), highlight="b"),
            curves(range(1, 4), {"loss": np.array([3.0, 2.0, 1.5])}, "step", "loss", log_y=True)]


@pytest.mark.parametrize("chart", sample_charts())
def test_a_chart_sends_what_plotly_sends_of_the_same_figure(chart):
    """ui.core.figures.Chart skips plotly's objects: what st.plotly_chart sends of it is what plotly itself sends of the
    validated figure, number for number, with an empty template."""
    import plotly.graph_objects as go
    import plotly.io
    import plotly.tools

    sent = json.loads(plotly.io.to_json(plotly.tools.return_figure_from_figure_or_data(chart, validate_figure=True),
                                        validate=False))  # as st.plotly_chart writes its spec
    assert wire(sent) == wire(json.loads(go.Figure(chart.to_dict()).to_json()))
    assert sent["layout"]["template"] == {}


def test_the_engine_writes_word_slots_not_words_inside_its_formulas():
    """Every \\text{} of the engine's LaTeX holds a name (the same in every language), a slot or a value put in;
    every slot it writes (engine/words.py) has its words in the catalogs, which hold no slot it does not write."""
    sources = "".join(path.read_text(encoding="utf-8") for path in (ROOT / "engine").glob("*.py")
                      if path.name != "words.py")  # its docstring's examples
    written = {w.replace("{{", "{").replace("}}", "}") for w in re.findall(r"\\text\{\{?([^}$]*?)\}", sources)}
    identifiers = {"EOS", "NaN", "SOS", "class", "dec", "emb", "enc", "head", "logits", "model", "out", "pos",
                   "score", "token", "top-", "warmup"}  # names, the same in both languages (x_class, E_pos: the ViT's)
    words = {w for w in written - identifiers if not w.startswith("{")}  # "{...": a token, label or slot put in
    assert words and all(re.fullmatch(r"⟦[a-z-]+⟧", w) for w in words), words
    codes = set(re.findall(r"⟦([a-z-]+)[|⟧]", sources)) | set(re.findall(r"""\bword\(["']([a-z-]+)["']""", sources))
    assert {f"word.{code}" for code in codes} == {key for key in EN if key.startswith("word.")}


def test_word_slots_are_filled_only_where_the_catalog_has_their_words():
    """A token may be any text, "⟦" and "⟧" too: only a slot of a known code with the values its words take is
    filled; anything else stays as it is, and nothing raises."""
    t = translator("zh")
    assert t.words(r"0 & \text{⟦otherwise⟧}") == r"0 & \text{其余}"
    assert t.words("−∞ ⟦comes-after|j=3|i=2⟧ = −∞") == "−∞ （位置 3 在 2 之后） = −∞"
    assert translator("en").words("0 ⟦dropped-text|x=−1.5⟧") == "0 (dropped; it was −1.5)"
    for text in ("E[⟦, 0] = ⟦nope⟧ ⟦comes-after|j=1⟧ ⟦kept", "⟧⟦", "⟦", "⟦|=⟧", "⟦comes-after|{j}=1⟧"):
        assert t.words(text) == text
    assert t.words("⟦⟦kept⟧⟧") == "⟦保留⟧"


def test_the_plain_text_arithmetic_has_its_words_in_chinese():
    model = engine.preset("hello-world")
    dropped = model.run("Hello World", dropout=0.5, seed=1)
    drop = dropped["enc.0.drop1"]
    cases = [(model.run("Hello World how", "hola mundo"), name, index) for name, index in (
        ("dec.0.self_attn.mask", (0, 1)), ("dec.0.self_attn.mask", (1, 0)), ("enc.0.ln1", (0, 1)),
        ("src.pos", (1, 1)), ("src.pos", (2, 1)), ("vocab_mask", (0,)), ("vocab_mask", (5,)))]
    cases += [(engine.preset("hello-world", pos_encoding=kind).run("Hello World"), "src.pos", (0, 1))
              for kind in ("learned", "none")]
    cases += [(dropped, "enc.0.drop1", tuple(np.argwhere(drop == 0)[0])),
              (dropped, "enc.0.drop1", tuple(np.argwhere(drop != 0)[0]))]
    explanations = [trace.explain(name, index) for trace, name, index in cases]
    english, chinese = ([translator(lang).words(e.text) for e in explanations] for lang in ("en", "zh"))
    words = re.compile(r"\b(With|and|position|after|learned|positional|printed|formula|decimals|kept|dropped|never|"
                       r"may|next)\b")
    assert [text for text in chinese if words.search(text)] == []
    assert not any("⟦" in text for text in english + chinese + [translator("zh").words(e.latex) for e in explanations])
    assert chinese[0] == "dec.0.self_attn.mask[0, 1] = −∞ （位置 1 在 0 之后） = −∞"
    assert english[0] == "dec.0.self_attn.mask[0, 1] = −∞ (position 1 comes after 0) = −∞"
    assert english[2].startswith("With μ ≈ ") and ", σ² ≈ " in english[2] and " and x̂ ≈ " in english[2]
    assert chinese[2].startswith("其中 μ ≈ ") and "，σ² ≈ " in chinese[2] and "，x̂ ≈ " in chinese[2]
    assert english[3].startswith("src.pos[1, 1] = the post's printed value (its formula: cos(")
    assert chinese[4].endswith("，保留 2 位小数) = 1") and english[4].endswith(", 2 decimals) = 1")


# ---- the paper's whole attention equations and the heads' W^Q side by side (ui.lessons.formulas) --------------------

def test_the_whole_attention_equations_follow_the_model():
    """The paper's form: MultiHead(Q,K,V) with head_i = Attention(QW_i^Q, KW_i^K, VW_i^V), then what Q, K and V are
    in the block: the sub-layer's input X (LayerNorm(X) in pre-norm), the decoder's and the encoder's output in
    cross-attention; the projection steps say the same."""
    from ui.lessons.formulas import attention_equations

    paper = attention_equations(r"\sqrt{d_k}", masked=False, cross=False, bias=False, pre_norm=False)
    assert paper == [r"\operatorname{Attention}(Q,K,V) = \operatorname{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}"
                     r"\right) V",
                     r"\operatorname{MultiHead}(Q,K,V) = \operatorname{Concat}(\text{head}_1, \ldots, \text{head}_h)"
                     r"\, W^O",
                     r"\text{head}_i = \operatorname{Attention}(Q W_i^Q,\; K W_i^K,\; V W_i^V)",
                     r"Q = K = V = X \quad (\text{⟦sublayer-input⟧})"]
    masked = attention_equations("30", masked=True, cross=False, bias=True, pre_norm=True)
    assert r"\frac{QK^\top}{30} + M\right)" in masked[0] and masked[1].endswith(r"W^O + b^O")
    assert masked[2] == (r"\text{head}_i = \operatorname{Attention}(Q W_i^Q + b_i^Q,\; K W_i^K + b_i^K,\;"
                         r" V W_i^V + b_i^V)")
    assert masked[3].startswith(r"Q = K = V = \operatorname{LayerNorm}(X) \quad")
    cross = attention_equations(r"\sqrt{d_k}", masked=False, cross=True, bias=False, pre_norm=False)
    assert cross[3] == r"Q = X_{\text{dec}},\; K = V = X_{\text{enc}} \\ (\text{⟦cross-inputs⟧})"
    pre_cross = attention_equations(r"\sqrt{d_k}", masked=False, cross=True, bias=False, pre_norm=True)[3]
    assert pre_cross.startswith(r"Q = \operatorname{LayerNorm}(X_{\text{dec}}),\; K = V = X_{\text{enc}}")
    assert not any("X W" in line for line in paper + masked + cross)  # the heads project Q, K, V, not X
    for lang, words in (("en", ("X: the sub-layer's input", "Q from the decoder, K and V from the encoder's output")),
                        ("zh", ("X：子层的输入", "Q 来自解码器，K 和 V 来自编码器的输出"))):
        assert [words[0] in translator(lang).words(paper[3]),
                words[1] in translator(lang).words(cross[3])] == [True] * 2
    pre = engine.preset("hello-world", norm_placement="pre").run("Hello World", "Hola")
    assert pre.step("enc.0.attn.q").formula == r"Q_i = \operatorname{LayerNorm}(X) W_i^Q"
    assert pre.step("dec.0.cross_attn.q").formula == r"Q_i = \operatorname{LayerNorm}(X_{\text{dec}}) W_i^Q"
    assert pre.step("dec.0.cross_attn.v").formula == r"V_i = X_{\text{enc}} W_i^V"
    assert engine.preset("hello-world").run("Hello World").step("enc.0.attn.k").formula == r"K_i = X W_i^K"
    divisor = engine.preset("hello-world").run("Hello World").step("enc.0.attn.scaled").meta["divisor_tex"]
    assert divisor == "30" and engine.preset("paper").run("Hello").step("enc.0.attn.scaled").meta[
        "divisor_tex"] == r"\sqrt{d_k}"


def test_the_heads_w_q_side_by_side_marks_the_open_heads_columns():
    from ui.lessons.formulas import DIGITS, MARK, side_by_side_tex

    W = np.arange(2 * 3 * 2, dtype=float).reshape(2, 3, 2) - 5  # (h, d_model, d_k)
    tex = side_by_side_tex(W, head=1)
    assert tex.startswith(r"\left[\begin{array}{cc|cc}") and tex.endswith(r"\end{array}\right]")
    rows = tex.removeprefix(r"\left[\begin{array}{cc|cc}").removesuffix(r"\end{array}\right]").split(r" \\ ")
    for i, row in enumerate(rows):  # row i: head 1's row i, then head 2's, the second in colour
        cells = [fmt_tex(W[h, i, c], DIGITS) for h in range(2) for c in range(2)]
        assert row.split(" & ") == cells[:2] + [rf"\textcolor{{{MARK}}}{{{cell}}}" for cell in cells[2:]]
    assert len(rows) == 3


def test_a_big_w_q_heatmap_frames_the_open_heads_columns():
    from ui.core.figures import heatmap
    from ui.lessons.formulas import MARK, mark_head

    chart = mark_head(heatmap(np.ones((2, 8)), ["0", "1"], indices(8)), head=2, d_k=2, n_heads=4)
    shapes = chart.to_dict()["layout"]["shapes"]
    assert [s["x0"] for s in shapes if s["type"] == "line"] == [1.5, 3.5, 5.5]  # between the 4 heads
    frame = shapes[-1]
    assert (frame["type"], frame["x0"], frame["x1"], frame["line"]["color"]) == ("rect", 3.5, 5.5, MARK)
    assert [trace["type"] for trace in chart.to_dict()["data"]] == ["heatmap"]  # no click layer: no drill-down


def test_printed_width_counts_the_widest_number_of_each_column():
    assert printed_width(np.array([[8, 3, 3], [9.99, 3.99, 4]])) == 4 + 4 + 1 + 2 * 2
    assert printed_width(np.array([[-1.26345, 0.187081, -2.87767]])) == 8 + 8 + 8 + 2 * 2
    assert printed_width(np.array([-np.inf, 0.0])) == 2 + 1 + 2


# ---- weight sliders and the comparison with the unedited model -----------------------------------------------

@pytest.mark.parametrize("value, low, high, step", [
    (0.0, -1.0, 1.0, 0.01), (0.5, -0.5, 1.5, 0.01), (1.0, -1.0, 3.0, 0.02), (-3.7, -11.2, 3.7, 0.1),
    (100.0, -100.0, 300.0, 2.0), (5e-7, -1.0, 1.01, 0.01),
])
def test_a_weights_slider_spans_twice_its_value_either_side_in_about_200_steps(value, low, high, step):
    assert app_state.slider_range(value)[:4] == (low, high, step, value)


@pytest.mark.parametrize("value, start", [(math.nan, 0.0), (math.inf, MAX_WEIGHT), (-math.inf, -MAX_WEIGHT),
                                          (1e300, MAX_WEIGHT), (-1e300, -MAX_WEIGHT), (MAX_WEIGHT, MAX_WEIGHT)])
def test_a_slider_for_a_weight_that_is_not_one_stays_within_the_weights_range(value, start):
    low, high, step, at, decimals = app_state.slider_range(value)
    assert at == start and (low, high) == ((-1.0, 1.0) if math.isnan(value) else (-MAX_WEIGHT, MAX_WEIGHT))


@settings(max_examples=examples(300))
@given(st.one_of(WEIGHTS, st.floats(-1e3, 1e3), st.floats(allow_nan=True, allow_infinity=True)))
def test_every_number_a_slider_can_send_is_a_weight_check_weight_takes(value):
    low, high, step, start, decimals = app_state.slider_range(value)
    assert -MAX_WEIGHT <= low <= start <= high <= MAX_WEIGHT
    assert step in {m * 10.0 ** e for m in (1, 2, 5) for e in range(-2, 5)} and decimals == max(0, -math.floor(
        math.log10(step)))
    n = round((high - low) / step)
    assert math.isclose(low + n * step, high, abs_tol=step * 1e-6)
    assert 100 <= n <= 400 or abs(start) * 3 > MAX_WEIGHT  # fewer where the weights' range cuts it
    if math.isfinite(value) and abs(value) <= MAX_WEIGHT:
        assert start == value and high - start >= min(1, 2 * abs(value)) - step and start - low >= \
            min(1, 2 * abs(value)) - step
    for k in (0, 1, n // 2, n):
        assert check_weight(round(low + k * step, decimals)) == round(low + k * step, decimals)


def test_bmatrix_around_a_cell_boxes_it_and_elides_the_rest():
    from ui.core.format import bmatrix_around

    matrix = np.arange(200.0).reshape(20, 10)
    latex, rows, cols = bmatrix_around(matrix, 12, 9)
    assert (rows, cols) == (range(8, 16), range(4, 10))
    lines = latex.removeprefix(r"\begin{bmatrix}").removesuffix(r"\end{bmatrix}").split(r" \\ ")
    assert lines[0] == r" & \vdots & \vdots & \vdots & \vdots & \vdots & \vdots" and lines[-1] == lines[0]
    assert lines[1] == r"\cdots & 84 & 85 & 86 & 87 & 88 & 89"
    assert lines[5] == r"\cdots & 124 & 125 & 126 & 127 & 128 & \boxed{129}"
    assert bmatrix_around(np.array([[1.0, 2.0]]), 0, 0) == (
        r"\begin{bmatrix}\boxed{1} & 2\end{bmatrix}", range(0, 1), range(0, 2))


def test_difference_is_zero_where_nothing_changed_even_at_minus_infinity():
    from ui.core.format import difference

    after = np.array([[1.5, -np.inf], [2.0, -np.inf]])
    before = np.array([[1.0, -np.inf], [2.0, 0.0]])
    assert difference(after, before).tolist() == [[0.5, 0.0], [0.0, -np.inf]]


def test_a_difference_heatmap_outlines_the_changed_cells():
    import plotly.graph_objects as go

    from ui.core.figures import heatmap

    figure = go.Figure(heatmap(np.array([[0.0, 0.5], [0.0, -1.0]]), ["a", "b"], ["0", "1"],
                               marked=[(0, 1), (1, 1)]).to_dict())
    frames = [(s.x0, s.y0, s.line.width) for s in figure.layout.shapes]
    assert frames == [(0.5, -0.5, 1.5), (0.5, 0.5, 1.5)]


@pytest.mark.parametrize("catalog", [EN, ZH])
def test_the_layer_norm_epsilon_is_credited_to_what_adds_it_not_to_ba_et_al(catalog):
    """Ba et al. (2016) normalise by σ with no ε; PyTorch's nn.LayerNorm puts ε under the root (ε = 10⁻⁵ by default),
    the post's code adds it to σ. Every text naming Ba et al. writes their form without ε."""
    named = {key: text for key, text in catalog.items() if re.search(r"Ba et al|Ba 等人", text)}
    assert named and all("(x − μ)/σ" in text and ("没有 ε" in text or "has no ε" in text) for text in named.values())
    for key in ("intro.add_norm.paper", "diff.layer_norm.why", "depart.layer_norm"):
        assert "PyTorch" in catalog[key] and key in named, key
    assert "10⁻⁵" in catalog["intro.add_norm.paper"]
    assert not re.search(r"Ba", catalog["compare.side.pytorch"] + catalog["depart.layer_norm.button"])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_multihead_intro_names_b_o_when_the_model_has_biases(lang):
    t = translator(lang)

    def intro(bias):
        return " ".join(t(key) for key in intro_keys("multihead", engine.preset("hello-world", attn_bias=bias).config))

    assert "$b^O$" in intro(True) and "+ $b^O$" in intro(True) and "PyTorch" in intro(True)
    assert "$b^O$" not in intro(False) and "Concat(head₁, …, headₕ)$W^O$" in intro(False)


@pytest.mark.parametrize("lang, headers, layer_norms", [
    ("en", ["Part", "Each", "Copies"], "Encoder LayerNorms (one per sub-layer)"),
    ("zh", ["部分", "每个的参数量", "个数"], "编码器层归一化（每个子层 1 个）")])
def test_the_parameter_table_says_what_its_columns_count(lang, headers, layer_norms):
    """The sizes table read "one a sub-layer" and, in Chinese, 每份/份数."""
    config = engine.preset("hello-world").config
    table = parameter_table(translator(lang), config, 11)
    assert list(table)[:3] == headers
    row = table[headers[0]].index(layer_norms)
    each = 2 * 2 * config.d_model  # a layer's two sub-layers' LayerNorms, gamma and beta each
    assert [table[header][row] for header in headers[1:]] == [str(each), str(config.depth("enc"))]


@pytest.mark.parametrize("catalog", [EN, ZH])
def test_the_naive_softmax_overflow_is_told_as_it_computes(catalog):
    """The paper-vs-post page said the post's softmax "overflows to NaN": e^x overflows to inf past ln(max float),
    and NaN comes of inf / inf, the other weights of the row being 0."""
    threshold = math.log(np.finfo(np.float64).max)
    with np.errstate(over="ignore", invalid="ignore"):
        row = softmax(np.array([threshold + 0.1, 0.0, 1.0]), "naive")
        below = softmax(np.array([threshold - 0.1, 0.0, 1.0]), "naive")
    assert np.isnan(row[0]) and list(row[1:]) == [0.0, 0.0] and np.all(np.isfinite(below))
    text = catalog["diff.softmax.why"]
    assert f"{threshold:.1f}" in text and "inf / inf" in text and "overflows to NaN" not in text


def test_the_sos_only_target_says_which_step_in_chinese():
    """"博客那一步" and then "博客演示的解码器那一步" did not say which step: the first of the decoding, whose decoder
    reads SOS alone (the post's "The first text of the decoder ... The input token is SOS")."""
    assert "first decoding step" in EN["ctl.tgt_sos"] and "第一个解码步骤" in ZH["ctl.tgt_sos"]
    assert "那一步" not in ZH["ctl.tgt_sos"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_drill_downs_plain_text_writes_its_titles_math_in_unicode(lang):
    """The plain-text drill-down of the output projection read "输出投影（\\times W^O）[1, 1]": LaTeX where none is
    drawn. Its LaTeX keeps the math."""
    title = translator(lang)("step.attn.out")
    tex, plain = cell_label(None, None, title, (0, 0))
    assert plain == title.replace(r"$\times W^O$", "× Wᴼ") + "[1, 1]" and "\\" not in plain
    assert r"\times W^O" in tex


def test_finished_trainings_keep_the_last_few_and_renew_a_key_put_again():
    from ui.lessons.training_views import FinishedRuns
    runs = FinishedRuns(most=3)
    for key in "abcd":
        runs.put(key, key.upper())
    assert [runs.get(key) for key in "abcd"] == [None, "B", "C", "D"]  # "a", the oldest, gave way
    runs.put("b", "B2")  # put again: now the newest
    runs.put("e", "E")
    assert [runs.get(key) for key in "bcde"] == ["B2", None, "D", "E"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_weights_say_what_they_learned_in_every_origin(lang):
    t = translator(lang)
    hello, paper = engine.PRESETS["hello-world"], engine.PRESETS["paper"]
    learned = lambda preset, config, origin, stored: model_card.learned(t, preset, 3, config, origin, stored)  # noqa
    assert learned("hello-world", hello, None, False) == t("learned.post", seed=3)
    assert learned("hello-world", hello.replace(d_model=8, d_k=4, d_v=4), None, False) == t("learned.random", seed=3)
    assert learned("paper", paper, None, False) == t("learned.random", seed=3)
    corpus = t("train.corpus.en-zh")
    assert learned("paper", paper, {"kind": "trained", "corpus": "en-zh", "steps": 40}, True) == t(
        "learned.trained", corpus=corpus, steps=40)
    assert learned("paper", paper, {"kind": "shipped", "corpus": "en-zh"}, True) == t(
        "learned.shipped", corpus=corpus, n=len(pairs("en-zh")))
    assert learned("paper", paper, {"kind": "uploaded", "file": "w`x.npz"}, True) == t("learned.uploaded",
                                                                                     file="`wx.npz`")
    assert learned("paper", paper, None, True) == t("learned.unknown")
