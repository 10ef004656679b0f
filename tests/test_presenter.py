"""Presenter mode (ui/classroom/presenter.py): the link's present=1 and the sidebar's toggle, the slides of the
forward pass in the order data flows (ui/core/navigation.slides), and moving through them as the rail's keys do,
across pages; in Chromium, the rail on a projector and on a phone (every slide at a projector's 1280 x 720 in large
type with nothing wider than the screen: tests/test_readable.py, in its pass at that size)."""
import copy
import itertools
import json
import math
import re
import urllib.parse

import pytest
from playwright.sync_api import expect

import engine
import streamlit_privates
from conftest import page_title
from test_app import EN_T, goto, notes, open_link, query
from test_browser import SHOTS, no_exception, server, settle, url  # noqa: F401 (server: a fixture)
from test_vit_pages import shipped_trace
from ui.classroom import presenter
from ui.classroom.presenter import KEY, PRESENTING
from ui.core.figures import PROJECTOR, at_scale, bars, curves, heatmap
from ui.core.i18n import literal, plain_math, translator
from ui.core.labels import step_name_key
from ui.core.navigation import (CHAIN, PAGES, RAIL, STACK_SECTIONS, VISION_RAIL, page_file, slide_at, slides,
                                 vision_slides, vision_step)
from ui.core.state import encode_view


def rail(at):
    """The rail's data, or None where the page has no rail."""
    found = streamlit_privates.component(at, KEY)
    return json.loads(found.proto.json) if found else None


def press(at, event, value):
    """What the rail sends on a key or a click: a trigger of the component (with its state, as the browser sends)."""
    streamlit_privates.trigger(at, KEY, event, value)
    assert not at.exception, [e.message for e in at.exception]
    at.switch_page(page_file(page_of(at)))  # AppTest runs the page it was given, not the one the script switched to
    return at


def page_of(at):
    """The page the session shows: the one whose rail it drew last (two pages share the title "Add & LayerNorm")."""
    page = at.session_state[PRESENTING].on
    assert page_title(at) == translator(at.session_state["ctl.lang"])(f"page.{page}")
    return page


# ---- the slides, without an app -------------------------------------------------------------------------------
def slides_of(norm, enc_layers=1, dec_layers=1, decoder_only=False):
    """The slides of the opening example's model with this norm placement, these depths, decoder-only or not."""
    return slides(engine.preset("hello-world", norm_placement=norm, n_enc_layers=enc_layers, n_dec_layers=dec_layers,
                                decoder_only=decoder_only).config)


DECK = slides_of("post")  # the opening example's


def number(page: str, **view) -> int:
    """The rail's number (from 1) of the opening example's slide of this page and view."""
    return slide_at(DECK, page, view) + 1


SCALED = number("attention", step="scaled") - 1  # the position of the slide most tests open


def rail_line(page: str, step: str, title: str = "") -> re.Pattern:
    """The rail's line on the opening example's slide of this page's step: its number, and the end of its title."""
    return re.compile(rf"^{number(page, step=step)} / " + (rf".* · {re.escape(title)}$" if title else ""))


def runs(deck) -> list[list[tuple]]:
    """The rail's parts, each a list of its runs (layer as the rail names it, from 1, or None; count of slides): a
    stack's layers where it has several, the slides before and after them as runs of their own."""
    parts = []
    for part in RAIL:
        layers = [None if "layer" not in view else str(view["layer"] + 1) for p, _, view in deck if p == part]
        parts.append([(layer, len(list(run))) for layer, run in itertools.groupby(layers)])
    return parts


def test_the_slides_follow_the_data_from_the_tokens_to_the_probabilities():
    deck = slides_of("post")
    assert [part for part, _, _ in deck] == sorted((part for part, _, _ in deck), key=RAIL.index)
    pages = list(dict.fromkeys(page for _, page, _ in deck))
    assert pages == [page for page in CHAIN if page not in ("overview", "generate")]  # the navigation's order
    assert deck[0] == ("encoder", "tokens", {}) and deck[-1] == ("output", "output", {"step": "probs"})
    steps = [(page, view.get("sublayer"), view.get("step")) for _, page, view in deck if "step" in view]
    encoder_layer = [step for step in steps if step[0] in ("qkv", "attention", "multihead", "add_norm", "ffn")]
    assert encoder_layer == [("qkv", None, "q"), ("qkv", None, "k"), ("qkv", None, "v"),
                             ("attention", None, "scores"), ("attention", None, "scaled"),
                             ("attention", None, "weights"), ("attention", None, "heads"),
                             ("multihead", None, "concat"), ("multihead", None, "out"),
                             ("add_norm", 0, "add1"), ("add_norm", 0, "ln1"),  # the first sub-layer's Add & Norm
                             ("ffn", None, "hidden"), ("ffn", None, "act"), ("ffn", None, "out"),
                             ("add_norm", 1, "add2"), ("add_norm", 1, "ln2")]  # then the FFN's
    decoder = [(page, sublayer) for page, sublayer, _ in steps if page in ("masked_attention", "dec_add_norm",
                                                                          "cross_attention", "dec_ffn")]
    assert list(dict.fromkeys(decoder)) == [("masked_attention", None), ("dec_add_norm", 0), ("cross_attention", None),
                                            ("dec_add_norm", 1), ("dec_ffn", None), ("dec_add_norm", 2)]
    assert len({(page, tuple(view.items())) for _, page, view in deck}) == len(deck)  # one a step: test_declarations


def test_every_layer_of_each_stack_is_walked_in_turn():
    """Two encoder layers and three decoder layers: each layer's steps, in the one-layer order, then the next layer's;
    the layer is in the view (the pages' layer picker takes it from the link) only where a stack has several."""
    one, deep = slides_of("post"), slides_of("post", enc_layers=2, dec_layers=3)
    assert len({(page, tuple(view.items())) for _, page, view in deep}) == len(deep)

    def layer_steps(deck, pages):
        return [(page, {k: v for k, v in view.items() if k != "layer"}) for _, page, view in deck if page in pages]

    added = 0
    for pages, layers in ((("qkv", "attention", "multihead", "add_norm", "ffn"), 2),
                          (("masked_attention", "dec_add_norm", "cross_attention", "dec_ffn"), 3)):
        once = layer_steps(one, pages)
        assert layer_steps(deep, pages) == once * layers
        added += (layers - 1) * len(once)
        shown = [view["layer"] for _, page, view in deep if page in pages]
        assert shown == [layer for layer in range(layers) for _ in once]  # layer 1's steps all before layer 2's
    assert len(deep) == len(one) + added  # the other layers' steps, nothing else
    assert not [view for _, page, view in deep if "layer" in view and page not in (
        "qkv", "attention", "multihead", "add_norm", "ffn", "masked_attention", "dec_add_norm", "cross_attention",
        "dec_ffn")]
    last = slide_at(deep, "add_norm", {"layer": 0, "sublayer": 1, "step": "ln2"})  # the encoder's layer 1's last
    edges = [(page, view) for _, page, view in deep[last - 1:last + 3]]
    assert edges == [("add_norm", {"sublayer": 1, "layer": 0, "step": "add2"}),
                     ("add_norm", {"sublayer": 1, "layer": 0, "step": "ln2"}),
                     ("qkv", {"layer": 1, "step": "q"}), ("qkv", {"layer": 1, "step": "k"})]
    start = slide_at(slides_of("post", enc_layers=2), "decoder_input", {"step": "embed"})
    assert slides_of("post", enc_layers=2)[start:start + 4] == [
        ("decoder", "decoder_input", {"step": "embed"}), ("decoder", "decoder_input", {"step": "pos"}),
        ("decoder", "decoder_input", {"step": "input"}), ("decoder", "masked_attention", {"step": "q"})]


def test_pre_norm_slides_normalise_before_adding():
    pre = [view["step"] for _, page, view in slides_of("pre") if page == "add_norm"]
    assert pre == ["ln1", "add1", "ln2", "add2"]


def test_the_slide_a_page_shows_is_found_from_what_its_widgets_show():
    deck = slides_of("post")
    assert slide_at(deck, "attention", {"layer": 1, "head": 0, "step": "scaled"}) == deck.index(
        ("encoder", "attention", {"step": "scaled"}))
    assert slide_at(deck, "add_norm", {"sublayer": 1, "step": "add2"}) == slide_at(deck, "ffn", {"step": "out"}) + 1
    assert slide_at(deck, "tokens", {}) == 0
    assert slide_at(deck, "dropout", {"step": "dropout"}) is None and slide_at(deck, "attention", {}) is None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_rails_titles_are_plain_text(lang):
    """The rail's words are text, not Markdown: a step name's math is written in Unicode there (the attention
    output's "(× Wᴼ)"), never as raw LaTeX."""
    t = translator(lang)
    config = engine.preset("hello-world", n_enc_layers=2, n_dec_layers=2).config
    titles = [presenter._title(t, slide, config) for slide in slides(config)]
    assert not [title for title in titles if "$" in title or "\\" in title]
    assert any("× Wᴼ" in title for title in titles)


def test_a_projector_heatmap_has_its_numbers_and_labels_half_as_large_again():
    normal, big = (at_scale(heatmap([[0.25, -1.5]], ["a"], ["x", "y"], scale=scale), scale).to_dict()
                   for scale in (1.0, PROJECTOR))
    assert big["data"][0]["textfont"]["size"] == 1.5 * normal["data"][0]["textfont"]["size"] == 21
    assert big["layout"]["font"]["size"] == 18 and big["data"][0]["colorbar"]["tickfont"]["size"] == 18
    assert big["layout"]["xaxis"]["tickfont"]["size"] == big["layout"]["yaxis"]["tickfont"]["size"] == 18
    assert "font" not in normal["layout"] and "tickfont" not in normal["data"][0]["colorbar"]  # the theme's 12 px


@pytest.mark.parametrize("chart", [bars(["a", "b"], [0.75, 0.25]),
                                   curves([0, 1], {"loss": [2.0, 1.0]}, "step", "loss")])
def test_every_chart_on_a_projector_writes_its_labels_18_px_and_leaves_the_normal_one_alone(chart):
    """Bars and curves too (the output page's probabilities were 12 px on a projector when drawn before presenter
    mode's style sheet): each size written, the titles kept, the chart itself unchanged (it may be a drawing
    shared by every session in its state)."""
    before = copy.deepcopy(chart.to_dict())
    assert at_scale(chart, 1.0) is chart
    big = at_scale(chart, PROJECTOR).to_dict()
    assert chart.to_dict() == before
    layout = big["layout"]
    assert layout["font"] == layout["legend"]["font"] == {"size": 18}
    assert layout["xaxis"]["tickfont"] == layout["yaxis"]["tickfont"] == {"size": 18}
    for axis in ("xaxis", "yaxis"):
        title = before["layout"][axis].get("title")
        assert layout[axis].get("title") == ({**title, "font": {"size": 18}} if title else None)
    assert big["data"] == before["data"] and big["layout"]["height"] == before["layout"]["height"]


# ---- the app ---------------------------------------------------------------------------------------------------

def test_presenter_mode_is_off_by_default_and_sends_nothing():
    at = open_link("attention")
    assert rail(at) is None and "present" not in query(at)
    assert at.toggle(key="ctl.present").value is False
    assert [link.proto.page for link in at.get("page_link")]  # the neighbours' links instead


@pytest.mark.parametrize("forged", ["abc", "2", "1e9", "", "true", "yes", "\x00", "1\x00", "１", "١", " 1",
                                    "1" * 5000, "<b>1</b>", "[sign in](//ev.il)", "`1`", "$x$"])
def test_a_forged_present_value_is_ignored(forged):
    """Only 0 and 1: anything else (a NUL, a full-width or Arabic-Indic one, 5000 characters) opens the normal view,
    keeps the rest of the link, and says which part was ignored (its first 40 characters)."""
    at = open_link("attention", present=forged, step="scaled")
    assert rail(at) is None and "present" not in query(at) and query(at)["step"] == "scaled"
    assert notes(at) == [EN_T("msg.url", detail=literal(f"present={forged[:40]!r}"))]


def test_the_link_opens_presenter_mode_on_its_step_and_keeps_it():
    at = open_link("attention", present="1", step="scaled")
    data = rail(at)
    assert data["here"] == SCALED and data["count"] == len(DECK)
    assert data["where"].startswith(f"{SCALED + 1} / {len(DECK)} · ")
    assert query(at)["present"] == "1" and query(at)["step"] == "scaled" and not notes(at)
    assert not at.get("page_link") and at.toggle(key="ctl.present").value is True
    assert [[(run["layer"], len(run["slides"])) for run in part["runs"]] for part in data["parts"]] == runs(DECK)
    assert all(layer is None for part in runs(DECK) for layer, _ in part)  # one layer: no layer's run


def test_the_sidebar_toggle_turns_presenter_mode_on_and_off():
    at = open_link("qkv")
    at.toggle(key="ctl.present").set_value(True).run()
    assert query(at)["present"] == "1" and rail(at)["here"] == number("qkv", step="q") - 1
    at.toggle(key="ctl.present").set_value(False).run()
    assert "present" not in query(at) and rail(at) is None


def test_next_walks_every_step_of_the_forward_pass_across_pages():
    """Forward from the tokens to the probabilities: each move opens the next slide, on its page, with its view in
    the link (which opens it again)."""
    deck = slides_of("post")
    at = open_link("tokens", present="1")
    assert rail(at)["here"] == 0
    for position in range(1, len(deck)):
        press(at, "go", position)
        _, page, view = deck[position]
        assert (page_of(at), rail(at)["here"]) == (page, position)
        link = query(at)
        assert link["present"] == "1" and not notes(at), (position, notes(at))
        assert link.get("step", view.get("step")) == view.get("step"), (position, link)  # the default is left out


def test_previous_crosses_back_over_a_page_boundary_and_the_link_reopens_the_slide():
    at = open_link("add_norm", present="1", step="add1")
    here = number("add_norm", sublayer=0, step="add1") - 1
    assert rail(at)["here"] == here
    press(at, "go", here - 1)
    assert page_of(at) == "multihead" and query(at)["step"] == "out"
    again = open_link("multihead", **query(at))
    assert rail(again)["here"] == here - 1


def test_in_two_layers_the_keys_walk_both_layers_and_the_rail_groups_them():
    """n_layers:2: the keys go from layer 1's last step to layer 2's first (the link says layer=2, the picker shows
    it) and back; the rail's runs are the layers, the one shown first as dots; every slide of the pass opens."""
    deck = slides_of("post", enc_layers=2, dec_layers=2)
    at = open_link("add_norm", present="1", cfg="n_layers:2", sublayer="2", step="ln2")
    data = rail(at)
    last = slide_at(deck, "add_norm", {"layer": 0, "sublayer": 1, "step": "ln2"})  # layer 1's last
    assert data["count"] == len(deck) and data["here"] == last
    assert data["where"].startswith(f"{last + 1} / {len(deck)} · Encoder · Add & LayerNorm · Layer 1 · ")
    shown = [[(run["layer"], run["name"], len(run["slides"])) for run in part["runs"]] for part in data["parts"]]
    assert shown == [[(layer, layer and EN_T("present.layer", n=layer), count) for layer, count in part]
                     for part in runs(deck)]
    assert [[layer for layer, _ in part] for part in runs(deck)] == [[None, "1", "2", None]] * 2 + [[None]]
    press(at, "go", last + 1)
    assert page_of(at) == "qkv" and rail(at)["here"] == last + 1
    assert query(at)["layer"] == "2" and "step" not in query(at) and not notes(at)  # q: the page's default step
    assert at.segmented_control(key="layer.enc").value == 1  # the picker's position: layer 2
    press(at, "go", last)
    assert page_of(at) == "add_norm" and rail(at)["here"] == last and "layer" not in query(at)  # layer 1: the default
    for position in range(last + 1, len(deck)):  # on to the probabilities, through both decoder layers
        press(at, "go", position)
        _, page, view = deck[position]
        assert (page_of(at), rail(at)["here"]) == (page, position), position
        assert query(at).get("layer") == (str(view["layer"] + 1) if view.get("layer") else None), position  # 1: default
        assert not notes(at), (position, notes(at))


@pytest.mark.parametrize("forged", [-1, len(DECK), 1.5, True, "3", None, [3], math.nan, math.inf, 1e308, 2**64,
                                    {"go": 3}, "x" * 10_000])
def test_a_forged_move_is_ignored(forged):
    at = open_link("attention", present="1", step="scaled")
    press(at, "go", forged)
    assert page_of(at) == "attention" and rail(at)["here"] == SCALED and query(at)["step"] == "scaled"


def test_leaving_turns_presenter_mode_off():
    at = open_link("attention", present="1")
    press(at, "leave", True)
    assert "present" not in query(at) and rail(at) is None and at.toggle(key="ctl.present").value is False


@pytest.mark.parametrize("forged", [False, None, 0, 1, "true", "x" * 10_000, {"leave": True}, [True]])
def test_a_forged_leaving_is_ignored(forged):
    """The rail's exit sends true; any other value (a hand-made message) left presenter mode too: now it keeps it."""
    at = open_link("attention", present="1", step="scaled")
    press(at, "leave", forged)
    assert query(at)["present"] == "1" and query(at)["step"] == "scaled" and rail(at)["here"] == SCALED
    assert at.toggle(key="ctl.present").value is True and at.session_state["state"].present and not notes(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_rails_words_are_the_catalogs(lang):
    at = open_link("output", present="1", lang=lang)
    data = rail(at)
    t = translator(lang)
    assert [part["label"] for part in data["parts"]] == [t(f"present.part.{part}") for part in RAIL]
    assert data["next"] == t("present.next")
    assert data["where"].startswith(f"{number('output', step='logits')} / {len(DECK)} · {t('page.output')}")


def test_a_decoder_only_models_slides_skip_the_encoder_and_cross_attention():
    """No encoder, no cross-attention: the decoder's sub-layers 1 and 3 are the add & norm page's first and second
    choice (ui/lessons/blocks.add_norm lists a decoder-only layer's sub-layers by position)."""
    deck = slides_of("post", decoder_only=True)
    assert {part for part, _, _ in deck} == {"decoder", "output"}
    assert not {page for _, page, _ in deck} & {*PAGES["encoder"], "cross_attention"}
    norms = [(view["step"], view["sublayer"]) for _, page, view in deck if page == "dec_add_norm"]
    assert norms == [("add1", 0), ("ln1", 0), ("add3", 1), ("ln3", 1)]
    encoder = [slide for slide in DECK if slide[0] == "encoder"]
    cross = [slide for slide in DECK if slide[1] == "cross_attention" or slide[2].get("sublayer") == 1 and
             slide[1] == "dec_add_norm"]  # cross-attention and its add & norm
    assert len(deck) == len(DECK) - len(encoder) - len(cross)


# ---- in Chromium -----------------------------------------------------------------------------------------------

PROJECTOR_SCREEN = {"width": 1280, "height": 720}  # a common projector's (every slide at it: test_readable.py)


def _where(page):
    return page.locator(".present-where")


RAIL_ON_TOP = """() => [...document.querySelectorAll('.present-rail button.present-move, .present-where')].map(e => {
    const box = e.getBoundingClientRect();
    return e === document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2) ||
        e.contains(document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2));
})"""


# The sidebar's words cut short (an ellipsis: text wider than its box, formulas' own boxes aside), and the bottom of
# its last element a reader sees (a closed expander's content keeps a box below its summary, unseen).
SIDEBAR_CUT = """() => [...document.querySelectorAll('[data-testid="stSidebar"] :is(span, p, label)')]
    .filter(e => e.innerText.trim() && !e.closest('.katex') && e.scrollWidth > e.clientWidth + 1)
    .map(e => e.innerText.slice(0, 40))"""
SIDEBAR_FOOT = """() => Math.max(...[...document.querySelectorAll('[data-testid="stSidebarUserContent"] *')]
    .filter(e => e.checkVisibility({visibilityProperty: true, opacityProperty: true}))
    .map(e => e.getBoundingClientRect().bottom))"""


def test_the_rails_moves_stay_in_sight_when_the_sidebar_is_open(server, new_page):  # noqa: F811 (server)
    """A teacher who opens the sidebar on the projector (to change the sentence) still sees and clicks ← and →, reads
    the sidebar's words whole, and scrolls its foot above the rail."""
    page = new_page()
    page.set_viewport_size(PROJECTOR_SCREEN)
    page.goto(url(server, "attention", present="1"))
    settle(page)
    page.locator('[data-testid="stExpandSidebarButton"]').click()
    expect(page.locator('[data-testid="stSidebar"]')).to_have_attribute("data-collapsed", "false")
    sidebar = page.locator('[data-testid="stSidebar"]')
    page.wait_for_function("""() => document.querySelector('[data-testid="stSidebar"]').getBoundingClientRect()
                                    .left >= 0""")  # the sidebar's slide-in
    page.wait_for_timeout(500)
    assert sidebar.bounding_box()["width"] == 300 * PROJECTOR  # as much wider as its type is larger
    assert page.evaluate(RAIL_ON_TOP) == [True, True, True]
    assert page.evaluate(SIDEBAR_CUT) == []  # its words whole in large type (they were cut: "The forward pass, a…")
    page.locator('[data-testid="stSidebarContent"]').evaluate("e => { e.scrollTop = e.scrollHeight; }")
    page.wait_for_timeout(300)
    assert page.evaluate(SIDEBAR_FOOT) <= page.locator(".present-rail").bounding_box()["y"]  # its foot above the rail
    page.locator(".present-rail button.present-move").nth(1).click()
    expect(_where(page)).to_have_text(rail_line("attention", "scaled"), timeout=30_000)  # from the scores


def test_two_quick_keys_move_two_slides(server, new_page):  # noqa: F811 (server)
    """A clicker pressed twice before the page has answered the first press moves twice (the second press used to
    send the same slide again), and back again the same way, four times over. The second key's run brings back a rail
    the browser was shown two runs before: sent as a reference to the browser's copy, it missed once the first key's
    run had aged that copy out, and the rail stayed on the first key's slide in 22 of 194 pairs (Streamlit 1.67;
    .streamlit/config.toml sends every message whole)."""
    page = new_page()
    page.set_viewport_size(PROJECTOR_SCREEN)
    missed = []
    page.on("console", lambda message: missed.append(message.text) if "Cached ForwardMsg" in message.text else None)
    page.goto(url(server, "attention", present="1"))
    settle(page)
    expect(_where(page)).to_have_text(rail_line("attention", "scores"))
    for _ in range(4):
        page.keyboard.press("ArrowRight")
        page.keyboard.press("PageDown")
        expect(_where(page)).to_have_text(rail_line("attention", "weights", "Attention weights"), timeout=30_000)
        settle(page)
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("PageUp")
        expect(_where(page)).to_have_text(rail_line("attention", "scores", "Scores"), timeout=30_000)
        settle(page)
    assert "step=scores" in page.url or "step=" not in page.url, page.url
    assert not missed, missed


def test_two_quick_keys_across_a_page_boundary_open_the_next_page(server, new_page):  # noqa: F811 (server)
    """The second of two quick keys on a page's last slide reached the server after the switch to the next page and
    stopped the app (KeyError: no state of the rail it came from). It is dropped now, or taken if it came in time:
    the class is on the next page's first or second slide."""
    page = new_page()
    page.set_viewport_size(PROJECTOR_SCREEN)
    page.goto(url(server, "attention", present="1", step="heads"))
    settle(page)
    expect(_where(page)).to_have_text(rail_line("attention", "heads", "Head outputs"))  # the attention page's last
    page.wait_for_timeout(1000)  # a presenter's pause: then the second key arrives after the switch (the crash)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(_where(page)).to_have_text(re.compile(
        rf"^({number('multihead', step='concat')}|{number('multihead', step='out')}) / .* · Concat & Wᴼ · "),
                                      timeout=30_000)
    settle(page)
    no_exception(page)
    assert "/multihead?" in page.url, page.url


def test_the_keys_move_the_slides_once_the_sidebars_toggle_turned_presenter_mode_on(server, new_page):  # noqa
    """A teacher turns presenter mode on with the sidebar's toggle and presses the clicker's Page Down (or →): the
    toggle keeps the focus, and the rail took no key whose target was an input, a checkbox included, so the keys were
    dead until the teacher clicked the page."""
    page = new_page()
    page.set_viewport_size(PROJECTOR_SCREEN)
    page.goto(url(server, "attention"))
    settle(page)
    page.get_by_text(EN_T("ctl.present"), exact=True).click()
    expect(_where(page)).to_have_text(rail_line("attention", "scores", "Scores"), timeout=30_000)
    settle(page)
    assert page.evaluate("document.activeElement.type") == "checkbox"  # the toggle, in the closed sidebar
    page.keyboard.press("PageDown")
    expect(_where(page)).to_have_text(rail_line("attention", "scaled", "Scaled scores"), timeout=30_000)
    settle(page)
    page.keyboard.press("ArrowLeft")
    expect(_where(page)).to_have_text(rail_line("attention", "scores", "Scores"), timeout=30_000)


# The attention formula on a phone: wider than the phone (so not vacuous), it scrolls sideways in its own box, which
# stays inside the column, and the page itself is not wider than the screen.
WIDE_FORMULA_IN_ITS_BOX = """() => {
    const main = document.querySelector('[data-testid="stMain"]');
    const formula = document.querySelector('[data-testid="stMain"] .katex-display');
    const box = formula.getBoundingClientRect();
    return {page: main.scrollWidth > main.clientWidth, formula: formula.scrollWidth > innerWidth - 32,
            scrolls: getComputedStyle(formula).overflowX, inside: box.left >= 0 && box.right <= innerWidth};
}"""


def test_a_phone_that_follows_a_presenter_keeps_normal_type_and_a_one_line_rail(server, new_page):  # noqa: F811
    """A student's phone (400 x 800) opened with the teacher's present=1: the rail is one line at the foot (the moves,
    the slide's name, the exit), not a dot a slide squeezed into a column over the page, and the text is its normal
    size; the attention formula, wider than the phone, scrolls in its own box without widening the page."""
    page = new_page()
    page.set_viewport_size({"width": 400, "height": 800})
    page.goto(url(server, "attention", present="1", step="scaled"))
    settle(page)
    expect(_where(page)).to_have_text(re.compile(rf"^{SCALED + 1} / {len(DECK)} · "))  # attention's scaled scores
    rail = page.locator(".present-rail").bounding_box()
    assert rail["height"] < 70 and rail["y"] + rail["height"] == 800, rail
    assert page.evaluate(RAIL_ON_TOP) == [True, True, True]
    assert page.evaluate("getComputedStyle(document.documentElement).fontSize") == "16px"
    assert page.evaluate(WIDE_FORMULA_IN_ITS_BOX) == {"page": False, "formula": True, "scrolls": "auto", "inside": True}
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "presenter-phone-400x800-en.png"))


def test_a_present_value_made_to_look_like_a_link_is_shown_as_text(server, new_page):  # noqa: F811 (server)
    """A link's ignored part is quoted in the note as code: Markdown would have made it a link to another site."""
    page = new_page()
    page.goto(url(server, "attention", present=urllib.parse.quote("[sign in](//ev.il) <b>x</b> $x$")))
    settle(page)
    no_exception(page)
    note = page.locator('[data-testid="stAlert"]').filter(has_text="present=")
    expect(note).to_contain_text("present='[sign in](//ev.il) <b>x</b> $x$'")
    assert note.locator("a, b, .katex").count() == 0 and page.locator(".present-rail").count() == 0


# ---- every page in presenter mode, the step in view ------------------------------------------------------------

def component(at, key):
    """A components v2 element's data, or None where the page has none of that key."""
    found = streamlit_privates.component(at, key)
    return json.loads(found.proto.json) if found else None


OFF_THE_PASS = ["overview", "animation", "generate", "train", "dropout", "paper_vs_blog", "sizes"]


@pytest.mark.parametrize("page", OFF_THE_PASS)
def test_every_page_in_presenter_mode_is_on_the_rail(page):
    """The pages that are not slides get the rail too (presenter type is its style sheet), no slide marked, and a line
    that says how to reach the slides; no neighbour links."""
    at = open_link(page, present="1")
    data = rail(at)
    assert data is not None and data["here"] is None, page
    assert data["where"] == EN_T("present.elsewhere", count=len(DECK))
    assert at.session_state[PRESENTING].on == page


def test_the_overviews_right_arrow_and_start_open_the_first_step():
    """Where a class starts: a prominent Start button (primary, not a link) and → both open the first slide."""
    at = open_link("overview", present="1")
    start = at.button(key="present.start")
    assert start.label == EN_T("present.start") and start.proto.type == "primary" and not at.get("page_link")
    start.click().run()
    at.switch_page(page_file(page_of(at))).run()  # AppTest runs the page it was given, not the one switched to
    assert page_of(at) == "tokens" and rail(at)["here"] == 0 and query(at)["present"] == "1"
    at = open_link("overview", present="1")
    press(at, "go", 0)  # → on a page off the pass: its first slide
    assert page_of(at) == "tokens" and rail(at)["here"] == 0 and query(at)["present"] == "1"
    assert not [button for button in open_link("overview").button if button.key == "present.start"]


def test_the_vision_transformers_pages_have_their_own_rail_and_keys_walk_them():
    """On a ViT page the rail is the Vision Transformer's pass, not the text model's: the patches, the embeddings'
    steps, each layer's class-token attention map and sub-layers' steps, the head's steps. → walks them across its
    pages with the link's ViT part kept, each slide opening its step, and the link reopens it; its training page is
    off the pass; a move past the last is no move."""
    names = list(shipped_trace())
    deck = vision_slides(names, 2)
    assert len(deck) == len(names) + 2  # a slide a step, and each layer's attention map (test_declarations)
    for lang in ("en", "zh"):  # each slide's name is its own
        assert len({presenter._vision_title(translator(lang), slide) for slide in deck}) == len(deck), lang
    at = open_link("vit_patches", present="1", vimg="5", vpx="0.0=1.0")
    data = rail(at)
    assert (data["here"], data["count"]) == (0, len(deck))
    assert [part["label"] for part in data["parts"]] == [EN_T(f"present.part.{part}") for part in VISION_RAIL]
    assert data["where"] == EN_T("present.where", n=1, count=len(deck), title=EN_T("page.vit_patches"))
    for position in range(1, len(deck)):
        press(at, "go", position)
        _, page, view = deck[position]
        assert (page_of(at), rail(at)["here"]) == (page, position)
        link = query(at)
        assert {k: link[k] for k in ("vimg", "vpx", "present")} == {"vimg": "5", "vpx": "0.0=1.0", "present": "1"}
        step = vision_step(page, view)
        if step is not None:  # the slide's step is the one drawn, and named on the rail
            assert any(m.value.startswith(f"##### {EN_T(step_name_key(step))} · ") for m in at.markdown), position
            assert plain_math(EN_T(step_name_key(step))) in rail(at)["where"]
    again = open_link(deck[20][1], **{**query(at), **encode_view(deck[20][2])})
    assert rail(again)["here"] == 20  # the link reopens a slide
    press(at, "go", len(deck))  # forged: one past the last
    assert (page_of(at), rail(at)["here"]) == ("vit_head", len(deck) - 1)
    training = open_link("vit_train", present="1")
    assert rail(training)["here"] is None and rail(training)["where"] == EN_T("present.elsewhere", count=len(deck))
    press(training, "go", 0)  # → off the pass: its first slide
    assert (page_of(training), rail(training)["here"]) == ("vit_patches", 0)


VISION_DECK = vision_slides(list(shipped_trace()), 2)  # the shipped ViT's (two layers)
FIRST_SLIDES = {page: next(i for i, (_, at, _) in enumerate(deck) if at == page)
                for deck in (DECK, VISION_DECK) for page in dict.fromkeys(at for _, at, _ in deck)}


@pytest.mark.parametrize("page", list(FIRST_SLIDES))
def test_every_page_opens_on_its_first_slide(page):
    """The rule (docs/ARCHITECTURE.md, "Where a page opens"): a page opened without a view (the navigation, a neighbour
    link, a link without its view part) opens where its lesson starts, its first slide in the order data flows. The
    Add & LayerNorm pages opened on their LayerNorm, the decoder's attention pages on their masked scores and their
    weights. Every page of both rails, from navigation.slides and vision_slides."""
    assert rail(open_link(page, present="1"))["here"] == FIRST_SLIDES[page]


def test_back_from_a_page_after_the_pass_opens_its_last_slide():
    """The rail's script sends the last position for ← off the pass; the server opens it like any move."""
    assert "by > 0 ? 0 : last" in presenter.JS
    at = open_link("generate", present="1")
    press(at, "go", len(DECK) - 1)
    assert page_of(at) == "output" and rail(at)["here"] == len(DECK) - 1


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("preset", list(engine.PRESETS))
def test_no_two_slides_share_a_title(lang, preset):
    """The encoder's and the decoder's feed-forward and add & norm slides say their stack, each add & norm its
    sub-layer, in both languages, one layer or six; no title says a word twice (a step named as its page)."""
    t, config = translator(lang), engine.preset(preset).config
    titles = [presenter._title(t, slide, config) for slide in slides(config)]
    assert len(set(titles)) == len(titles)
    assert [title for title in titles if len(set(title.split(" · "))) < len(title.split(" · "))] == []
    if (preset, lang) == ("hello-world", "en"):
        assert "Decoder · Add & LayerNorm · Cross-attention · Residual add" in titles
        assert "Encoder · Feed-forward · Activation" in titles and "Decoder · Feed-forward · Activation" in titles
        assert titles[0] == "Tokens & embedding"  # a page of its own name: no stack


def test_a_presenters_step_and_a_following_students_are_scrolled_into_view():
    """The step-scroll element (ui/classroom/scroll.py) on a presenter's step page and on a following student's page,
    named by the view it shows; a reader on their own has none (their page never moves under them)."""
    from ui.classroom import follow, scroll
    assert component(open_link("attention", present="1", step="scaled"), scroll.KEY)["view"] == \
        json.dumps(["attention", {"head": 0, "step": "scaled"}], sort_keys=True)
    assert component(open_link("attention", step="scaled"), scroll.KEY) is None
    code, key = follow.store().create()
    teacher = open_link("attention", room=code, key=key, step="weights")
    assert component(teacher, scroll.KEY) is None  # a teacher not presenting scrolls their own page
    student = open_link("attention", room=code)
    assert json.loads(component(student, scroll.KEY)["view"])[1]["step"] == "weights"


@pytest.mark.parametrize("stack", ["encoder_stack", "decoder_stack"])
def test_a_following_students_stack_page_has_the_section_heading_its_step_scroll_brings_into_view(stack):
    """The stack pages' section on what each layer changes drew its heading in presenter mode only: a following
    student's page had no step heading, so it stayed at the page's top (the heatmap cut by the screen's foot) or was
    scrolled to the last page's heading as it went. Each section's heading is the first its step scroll finds."""
    from ui.classroom import follow
    for label, number in STACK_SECTIONS.items():  # the teacher's page, in the room, on each section in turn
        code, key = follow.store().create()
        open_link(stack, room=code, key=key, section=str(number + 1))
        student = open_link(stack, room=code)
        assert [m.value for m in student.markdown if m.value.startswith("#####")][0] == f"##### {EN_T(label)}"
        assert component(student, "step.scroll") is not None


def test_a_student_who_leaves_the_teachers_page_sees_the_note_at_the_top():
    """A following student's page scrolls to the teacher's step; one that opened another page on its own kept that
    scroll now and then (1 of 3 walks at 1280 x 720 on a busy machine: the new page 887 px down), and the line that
    says following is off, above the page, was out of sight. The page's top is brought into view with it."""
    from ui.classroom import follow, scroll
    code, key = follow.store().create()
    open_link("attention", room=code, key=key)
    student = open_link("attention", room=code)
    assert component(student, scroll.KEY) is not None and component(student, scroll.TOP_KEY) is None
    goto(student, "ffn")
    assert any(w.value == EN_T("room.wandered") for w in student.warning)
    assert component(student, "step.scroll.top") == {"view": json.dumps(["top", "ffn"]), "top": True}


# A page in a blank tab as the step scroll's script sees one: the main area (600 px high, scrolling) with a step heading
# 2,000 px down, and the app's script state.
SCROLL_PAGE = """<div data-testid="stApp" data-test-script-state="running">
<div data-testid="stMain" style="height: 600px; overflow: auto"><div style="height: 2000px"></div><h5>Step</h5>
<div style="height: 2000px"></div></div></div>"""


def test_the_step_scroll_waits_for_a_long_run_to_end(chromium):
    """The step scroll's script gave up waiting for the page's run to end after 5 s (a try every 100 ms, 50 tries), so
    on a busy server (a class) a slow run's step never came into view: a paper-preset slide opened with its heading
    2,138 px down (tests/test_slide_fit.py, 1 run of 3 at a load of 15). It waits as long as the run lasts; the clock is
    Playwright's, run forward."""
    from ui.classroom import scroll
    page = chromium.new_page()
    try:
        page.clock.install()
        page.set_content(SCROLL_PAGE)
        page.add_script_tag(content=scroll.JS.replace("export default function", "window.stepScroll = function"))
        page.evaluate("window.stepScroll({data: {view: 'slide'}})")
        page.clock.run_for(20_000)  # a run of 20 s
        assert page.evaluate("document.querySelector('[data-testid=stMain]').scrollTop") == 0
        page.evaluate("document.querySelector('[data-testid=stApp]').dataset.testScriptState = 'notRunning'")
        page.clock.run_for(3_000)
        assert page.evaluate("""() => Math.round(document.querySelector('h5').getBoundingClientRect().top -
                                      document.querySelector('[data-testid=stMain]').getBoundingClientRect().top)"""
                             ) == 0
    finally:
        page.close()


def heading_offset(page) -> int:
    """How far below the main area's top the step heading lies, px."""
    return page.evaluate("""() => Math.round(document.querySelector('h5').getBoundingClientRect().top -
                                  document.querySelector('[data-testid=stMain]').getBoundingClientRect().top)""")


# The blank tab's page with a chart above the step heading that the browser has not drawn yet, and without the
# browser's scroll anchoring, which holds the heading where it is only while its anchor node lasts (Streamlit
# replaces elements as a run redraws them).
CHART_ABOVE = SCROLL_PAGE.replace('<div style="height: 2000px"></div><h5>',
                                  '<div style="height: 2000px"></div><div data-testid="stPlotlyChart"></div><h5>'
                                  ).replace("overflow: auto", "overflow: auto; overflow-anchor: none")
DRAW_THE_CHART = """() => { const chart = document.querySelector('[data-testid=stPlotlyChart]');
                           chart.innerHTML = '<svg class="main-svg"></svg>'; chart.style.height = '600px'; }"""


def scroll_script_on(page, content: str, run_ms: int):
    """The step scroll's script on `content`, whose run ends after run_ms (Playwright's clock, run forward)."""
    from ui.classroom import scroll
    page.clock.install()
    page.set_content(content)
    page.add_script_tag(content=scroll.JS.replace("export default function", "window.stepScroll = function"))
    page.evaluate("window.stepScroll({data: {view: 'slide'}})")
    page.clock.run_for(run_ms)
    page.evaluate("document.querySelector('[data-testid=stApp]').dataset.testScriptState = 'notRunning'")


def test_the_step_scroll_outlasts_a_run_longer_than_its_patience_for_a_heading(chromium):
    """It gave up 30 s after the page's element arrived, run or no run: a cold server's first slide on a busy machine
    (a whole suite's) can run longer. The 30 s count once the run is over."""
    page = chromium.new_page()
    try:
        scroll_script_on(page, SCROLL_PAGE, 45_000)
        page.clock.run_for(1_000)
        assert heading_offset(page) == 0
    finally:
        page.close()


def test_the_step_scroll_puts_the_heading_back_when_a_late_chart_above_it_is_drawn(chromium):
    """It put the heading back as charts mounted for 8 s only: on a busy machine (a whole suite's, 1 walk in 4) a
    chart above the ViT's first slide was drawn later and left its heading at 674 px, under the rail. It keeps
    putting it back until every chart is drawn and the page has held still."""
    page = chromium.new_page()
    try:
        scroll_script_on(page, CHART_ABOVE, 2_000)
        page.clock.run_for(1_000)
        assert heading_offset(page) == 0
        page.clock.run_for(11_000)
        page.evaluate(DRAW_THE_CHART)
        page.clock.run_for(1_000)
        assert heading_offset(page) == 0
    finally:
        page.close()


def test_the_step_scroll_leaves_a_reader_who_scrolled_alone(chromium):
    """Once the reader scrolls (a wheel, a key, a touch, a click), the page is theirs: a chart drawn later does not
    bring the heading back."""
    page = chromium.new_page()
    try:
        scroll_script_on(page, CHART_ABOVE, 2_000)
        page.clock.run_for(1_000)
        page.evaluate("""() => { window.dispatchEvent(new WheelEvent('wheel'));
                                 document.querySelector('[data-testid=stMain]').scrollTop = 0; }""")
        page.evaluate(DRAW_THE_CHART)
        page.clock.run_for(3_000)
        assert heading_offset(page) > 2_000
    finally:
        page.close()
