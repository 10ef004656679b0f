"""The ViT encoder and head pages: the class token's attention drawn over the image, the sub-layers' flows, the sizes
(random weights, refusals), the head's steps, its probabilities as bars and the seed's slips; their numbers are the
engine's. Pure helpers, AppTest in both languages, and Chromium at 1280 and 1920 px."""
import base64
import json
import sys
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import streamlit_privates  # noqa: E402
from engine import digits, vit_train  # noqa: E402
from engine.vit import SEED_SLIPS, ViTConfig, VisionTransformer, step_table as vit_step_table  # noqa: E402
from test_app import (STEP_HEADER, assert_clean, editor_key, goto, latex, notes, open_link, open_page,  # noqa: E402
                      query, type_cells)
from test_browser import no_exception, no_horizontal_overflow, server, settle, url  # noqa: E402, F401 (a fixture)
from ui.core.format import decimals, fmt  # noqa: E402
from ui.core.i18n import EN, ZH, translator  # noqa: E402
from ui.core.labels import description_key, step_name_key  # noqa: E402
from ui.views.draw import head_matrix  # noqa: E402
from ui.core.state.vision import RANDOM, VisionState, image  # noqa: E402
from ui.vision.vit_charts import (PLACES, attention_over_image, class_attention, prediction,  # noqa: E402
                                  self_attention, sublayers)

SHIPPED_MODEL = vit_train.load(vit_train.SHIPPED)[0]
PATCH_2 = ViTConfig(patch=2, n_layers=3)


def shipped_trace(index=0):
    return SHIPPED_MODEL.run(image(VisionState(image=index)))


def random_trace(settings):
    return VisionTransformer.initial(settings, seed=0).run(image(VisionState()))


# ---- pure ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("settings", [ViTConfig(), PATCH_2])
def test_a_layer_is_cut_into_its_pre_norm_sublayers(settings):
    trace = random_trace(settings)
    for layer in range(settings.n_layers):
        attn, mlp = sublayers(list(trace), layer)
        p = f"enc.{layer}"
        assert attn == [f"{p}.ln1", *(f"{p}.attn.{leaf}" for leaf in
                                      ("q", "k", "v", "scores", "scaled", "weights", "heads", "concat", "out")),
                        f"{p}.add1"]
        assert mlp == [f"{p}.ln2", f"{p}.ffn.hidden", f"{p}.ffn.act", f"{p}.ffn.out", f"{p}.add2"]
    assert sum(len(group) for layer in range(settings.n_layers) for group in sublayers(list(trace), layer)) == len(
        [name for name in trace if name.startswith("enc.")])


@pytest.mark.parametrize("settings", [ViTConfig(), PATCH_2])
def test_the_class_tokens_attention_is_laid_out_as_the_patches(settings):
    trace = random_trace(settings)
    weights = trace["enc.0.attn.weights"]  # (h, n, n)
    grid = (settings.height // settings.patch, settings.width // settings.patch)
    maps = class_attention(weights, grid)
    assert maps.shape == (settings.n_heads + 1, *grid)
    for h in range(settings.n_heads):
        np.testing.assert_array_equal(maps[h].ravel(), weights[h, 0, 1:])
        # patch P_k (from 1) is row (k-1) // cols, column (k-1) % cols, as patchify cuts the image
        k = settings.n_patches
        assert maps[h][(k - 1) // grid[1], (k - 1) % grid[1]] == weights[h, 0, k]
    np.testing.assert_allclose(maps[-1], weights[:, 0, 1:].mean(axis=0).reshape(grid))
    own = self_attention(weights)
    np.testing.assert_allclose(own[:-1] + maps[:-1].sum(axis=(1, 2)), 1.0)  # one softmax row each
    np.testing.assert_allclose(own[-1] + maps[-1].sum(), 1.0)


def test_the_overlay_draws_each_heads_weights_over_the_image():
    trace = shipped_trace()
    weights = trace["enc.1.attn.weights"]
    maps = class_attention(weights, (2, 2))
    picture = image(VisionState())
    chart = attention_over_image(picture, maps, [f"t{k}" for k in range(len(maps))], SHIPPED_MODEL.tokens[1:])
    wire = chart.to_dict()
    go.Figure(wire)  # plotly accepts it
    images, heats = wire["data"][0::2], wire["data"][1::2]
    assert len(heats) == len(maps) == 5
    for h, heat in enumerate(heats):
        np.testing.assert_array_equal(np.array(heat["z"]).ravel(),
                                      weights[h, 0, 1:] if h < 4 else weights[:, 0, 1:].mean(axis=0))
        assert (heat["x0"], heat["dx"]) == (1.5, 4)  # each value covers its 4 x 4 patch of pixels
        assert heat["customdata"][1][0] == f"P3 · {fmt(maps[h][1, 0], 4)}"
    np.testing.assert_array_equal(typed(images[0]["z"]).reshape(8, 8), picture[..., 0])
    written = [a["text"] for a in wire["layout"]["annotations"] if not a["text"].startswith("t")]
    assert written == [decimals(w, PLACES) for m in maps for w in m.ravel()]
    assert ([a["text"] for a in wire["layout"]["annotations"] if a["text"].startswith("t")]
            == [f"t{k}" for k in range(5)])


def test_many_patches_are_coloured_not_numbered():
    maps = class_attention(random_trace(ViTConfig(patch=1, d_model=8, n_heads=8))["enc.0.attn.weights"], (8, 8))
    wire = attention_over_image(image(VisionState()), maps, ["t"] * 9, [f"P{i}" for i in range(1, 65)]).to_dict()
    assert len(wire["data"]) == 18 and [a["text"] for a in wire["layout"]["annotations"]] == ["t"] * 9
    bottoms = [wire["layout"][f"yaxis{k}"]["domain"][0] for k in ("", 4, 7)]  # three rows of three
    np.testing.assert_allclose(bottoms, [2 / 3, 1 / 3, 0.0], atol=1e-12)


def test_the_shipped_model_reads_the_first_test_images():
    labels = digits.split("test").labels
    for index in range(5):
        answer = prediction(shipped_trace(index)["head.probs"], SHIPPED_MODEL.classes)
        assert answer.digit == str(labels[index]) and answer.probability > 0.5


# ---- AppTest ---------------------------------------------------------------------------------------------------

def chart_spec(at, key):
    chart = next(e for e in at.get("plotly_chart") if e.proto.id.endswith(f"-{key}"))
    return json.loads(chart.proto.spec)


def typed(array) -> np.ndarray:
    """A plotly typed array (figures.typed_array) as NumPy."""
    return np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_encoder_page_draws_the_class_tokens_attention_of_each_layer(lang):
    catalog = ZH if lang == "zh" else EN
    at = goto(open_page(lang=lang), "vit_encoder")
    assert_clean(at)
    for layer in (0, 1):
        if layer:
            at.button_group(key="layer.enc").set_value(1).run()
            assert_clean(at)
        weights = shipped_trace()[f"enc.{layer}.attn.weights"]
        heats = chart_spec(at, f"vit_encoder.looks.{layer}")["data"][1::2]
        for h in range(4):
            np.testing.assert_array_equal(np.array(heats[h]["z"]).ravel(), weights[h, 0, 1:])
        titles = [a["text"] for a in chart_spec(at, f"vit_encoder.looks.{layer}")["layout"]["annotations"]
                  if "<br>" in a["text"]]
        assert titles[0] == f"{catalog['view.head']} 1<br>" + catalog["vit_encoder.itself"].format(
            own=decimals(weights[0, 0, 0], PLACES))
        assert titles[-1].startswith(catalog["vit_encoder.mean"])
        assert any(f"enc.{layer}.attn.weights" in m.value for m in at.markdown)
        maps = class_attention(weights, (2, 2)).reshape(5, 4)
        heads = [f"{catalog['view.head']} {h + 1}" for h in range(4)] + [catalog["vit_encoder.mean"]]
        most = " · ".join(f"{head} → P{row.argmax() + 1} ({decimals(row.max(), PLACES)})"
                          for head, row in zip(heads, maps))
        assert any(c.value.startswith(catalog["vit_encoder.most"].format(most=most)) for c in at.caption)
    assert query(at).get("layer") == "2"


def test_the_encoder_pages_sublayers_are_flows_of_their_steps():
    at = goto(open_page(lang="en"), "vit_encoder")
    sections = at.button_group(key="vit_encoder.section")
    at.session_state["vit_encoder.section"] = EN["vit_encoder.section.attn"]
    at.run()
    assert_clean(at)
    steps = next(g for g in at.main.button_group if g.label == EN["view.step"])
    assert steps.options[0] == "1. LayerNorm" and steps.options[-1] == "11. Residual add"
    assert len(sections.options) == 3 and query(at)["section"] == "2"
    assert any(m.value.startswith("##### LayerNorm") and "`enc.0.ln1`" in m.value for m in at.markdown)
    assert not [b.key for b in at.button if b.key.startswith("paper.")]  # the text model's options are not the ViT's
    at.session_state["vit_encoder.section"] = EN["vit_encoder.section.ffn"]
    at.run()
    steps = next(g for g in at.main.button_group if g.label == EN["view.step"])
    assert [o.split(". ", 1)[1] for o in steps.options] == [EN["step.ln"], EN["step.ffn.hidden"], EN["step.ffn.act"],
                                                            EN["step.ffn.out"], EN["step.add"]]
    assert any("GELU" in m.value for m in at.markdown)


@pytest.mark.parametrize("page, section", [("vit_encoder", "attn"), ("vit_encoder", "ffn"), ("vit_head", None)])
def test_each_step_shows_the_engines_formula_description_and_numbers(page, section):
    at = goto(open_page(lang="en"), page)
    if section:
        at.session_state["vit_encoder.section"] = EN[f"vit_encoder.section.{section}"]
        at.run()
    trace, words = shipped_trace(), translator("en").words
    row = next(g for g in at.main.button_group if g.label == EN["view.step"])
    head = 0 if section == "attn" else None
    for position in range(len(row.options)):
        at.session_state[row.key] = position
        at.run()
        assert_clean(at)
        (header,) = [match for m in at.markdown if (match := STEP_HEADER.match(m.value))]
        name = header["name"]
        step = trace.step(name)
        assert (header["human"], header["description"]) == (EN[step_name_key(name)], EN[description_key(name)])
        assert header["shape"] == ", ".join(map(str, step.value.shape)) and words(step.formula) in latex(at)
        z = chart_spec(at, f"chart.{name}.{head}")["data"][0]["z"]
        np.testing.assert_array_equal(typed(z).reshape(-1, step.value.shape[-1]), head_matrix(step.value, head))
    assert name == ("head.probs" if page == "vit_head" else f"enc.0.add{1 if section == 'attn' else 2}")


def test_other_sizes_run_random_weights_and_sizes_that_do_not_fit_are_refused():
    at = goto(open_page(lang="en"), "vit_encoder")
    assert not [w for w in at.number_input if w.key.startswith("vit.size.")]  # the sizes' box is closed
    at.session_state["vit.sizes"] = True
    at.run()
    at.number_input(key="vit.size.patch.4").set_value(3).run()
    assert_clean_but_refusal(at, EN["vit_encoder.refused.patch"].format(patch=3, size=8))
    assert at.session_state["state"].vit.sizes == () and at.number_input(key="vit.size.patch.4").value == 4
    assert at.button_group(key="vit.weights.").value == ""  # the shipped model (the row is keyed by the weights)
    at.number_input(key="vit.size.patch.4").set_value(2).run()
    assert not at.exception and not at.error
    vit = at.session_state["state"].vit
    assert (vit.sizes, vit.weights) == ((("patch", 2),), RANDOM)
    assert at.button_group(key=f"vit.weights.{RANDOM}").value == RANDOM
    assert query(at)["vcfg"] == "patch:2" and query(at)["vw"] == "random"
    assert any(c.value.startswith(EN["vit_encoder.sizes.random"][:40]) for c in at.caption)
    assert len(chart_spec(at, "vit_encoder.looks.0")["data"][1]["z"]) == 4  # a 4 x 4 grid of 2 x 2 patches
    at.number_input(key="vit.size.d_model.32").set_value(30).run()
    assert_clean_but_refusal(at, EN["vit_encoder.refused.heads"].format(d_model=30, n_heads=4))
    assert at.session_state["state"].vit.sizes == (("patch", 2),)


def assert_clean_but_refusal(at, message):
    assert not at.exception, [e.message for e in at.exception]
    assert [e.value for e in at.error] == [message]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_head_page_names_the_answer_and_draws_the_probabilities(lang):
    catalog = ZH if lang == "zh" else EN
    at = goto(open_page(lang=lang), "vit_head")
    assert_clean(at)
    probs = shipped_trace()["head.probs"]
    bars = chart_spec(at, "vit_head.bars")["data"][0]
    np.testing.assert_array_equal(typed(bars["x"]), probs[0])
    assert bars["y"] == [str(d) for d in range(10)]
    assert bars["marker"]["color"][6] != bars["marker"]["color"][0]  # the answer, 6, in its own colour
    said = catalog["vit_head.answer"].format(digit="6", p=fmt(probs[0, 6], 4)) + " " + catalog["vit_head.right"].format(
        n=1, digit=6)
    assert said in [m.value for m in at.markdown]
    steps = next(g for g in at.main.button_group if g.label == catalog["view.step"])
    assert len(steps.options) == len(vit_step_table(SHIPPED_MODEL.config)["head"])  # a button a step of the head
    notes = next(m.value for m in at.markdown if SEED_SLIPS[0].written in m.value)
    for slip in SEED_SLIPS:
        assert f"${slip.written}$" in notes and f"${slip.meant}$" in notes
    assert notes.count(":gray[:small[") == len(SEED_SLIPS) + 1 and catalog["vit_head.bias_note"] in notes


def test_a_bias_of_the_head_typed_on_the_scores_step_changes_the_answer():
    at = goto(open_page(lang="en"), "vit_head")
    at.session_state["vit_head.None"] = 2  # the flow's third step: the class scores, which read W^F and b^F
    at.run()
    assert_clean(at)
    type_cells(at, editor_key(at, "head.b_F"), {"0": {"3": 100.0}})  # the column of digit 3
    assert_clean(at)
    assert at.session_state["state"].vit.edits == (("head.b_F", (3,), 100.0),)
    edited = SHIPPED_MODEL.with_params(
        {"head.b_F": np.where(np.arange(10) == 3, 100.0, SHIPPED_MODEL.params["head.b_F"])})
    probs = edited.run(image(VisionState()))["head.probs"]
    assert prediction(probs, SHIPPED_MODEL.classes).digit == "3"
    np.testing.assert_allclose(typed(chart_spec(at, "vit_head.bars")["data"][0]["x"]), probs[0], rtol=1e-12)
    assert EN["vit_head.answer"].format(digit="3", p=fmt(probs[0, 3], 4)) + " " + EN["vit_head.wrong"].format(
        n=1, digit=6) in [m.value for m in at.markdown]


def test_the_head_page_of_changed_pixels_names_no_right_digit():
    at = open_page(lang="en", vpx="0.0=1")
    goto(at, "vit_head")
    assert_clean(at)
    assert any(m.value.endswith(EN["vit_head.drawn"]) for m in at.markdown)
    assert not any(EN["vit_head.right"][:10] in m.value for m in at.markdown)


def test_a_wrong_answer_is_said_to_be_wrong():
    labels = digits.split("test").labels
    wrong = next(i for i in range(len(labels))
                 if prediction(shipped_trace(i)["head.probs"], SHIPPED_MODEL.classes).digit != str(labels[i]))
    at = open_page(lang="en", vimg=str(wrong + 1))
    goto(at, "vit_head")
    assert any(EN["vit_head.wrong"].format(n=wrong + 1, digit=labels[wrong]) in m.value for m in at.markdown)


def test_a_link_reopens_the_encoder_pages_view():
    at = open_link("vit_encoder", vcfg="n_layers:3", layer="3", section="2", head="3", step="scores")
    assert not notes(at) and at.session_state["layer.enc"] == 2 and at.session_state["heads.vit_encoder.2"] == 2
    assert at.session_state["vit_encoder.section"] == EN["vit_encoder.section.attn"]
    assert any(m.value.startswith(f"##### {EN['step.attn.scores']}") and "`enc.2.attn.scores`" in m.value
               for m in at.markdown)
    assert {k: query(at).get(k) for k in ("layer", "section", "head", "step", "vcfg")} == {
        "layer": "3", "section": "2", "head": "3", "step": "scores", "vcfg": "n_layers:3"}


@pytest.mark.parametrize("forged", [0, 9, 4096, -1])
def test_a_forged_size_is_ignored(forged):
    at = goto(open_page(lang="en"), "vit_encoder")
    at.session_state["vit.sizes"] = True
    at.run()
    widget = at.number_input(key="vit.size.patch.4")
    streamlit_privates.send_value(at, widget.id, int_value=forged)
    assert not at.exception and at.session_state["state"].vit.sizes == ()
    assert "vcfg" not in query(at)


def test_no_english_on_the_chinese_pages_of_a_teacher_nor_of_a_following_student():
    """At sizes other than the shipped model's (at those, every ViT page of a teacher in a room and of a following
    student: tests/test_no_english.py's room, IN_A_ROOM)."""
    from test_no_english import english_in_choices, english_on

    at = open_page("overview", lang="zh", vcfg="patch:2,n_heads:2")
    at.button(key="room.open").click().run()
    found = {}
    for page in ("vit_encoder", "vit_head"):
        goto(at, page)
        found |= english_in_choices(at, page)
        student = open_link(page, lang="zh", room=at.session_state["room"].code)
        assert_clean(student)
        assert not student.number_input and not student.expander  # read-only: the sizes as a line
        found |= english_on(student, f"{page} student")
    assert found == {}


# ---- Chromium --------------------------------------------------------------------------------------------------

PATCH_LABELS = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"] .annotation-text')]
    .map(a => [a.textContent, parseFloat(getComputedStyle(a).fontSize), a.getBoundingClientRect().width])"""
OVERLAPPING_LABELS = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"] .xaxislayer-above')]
    .map(axis => {
        const boxes = [...axis.querySelectorAll('.xtick text')].map(t => t.getBoundingClientRect())
            .filter(b => b.width > 0).sort((a, b) => a.left - b.left);
        return boxes.slice(1).filter((b, i) => b.left < boxes[i].right).length;
    })"""
PANEL_WIDTHS = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"] .heatmaplayer image')]
    .map(i => i.getBoundingClientRect().width)"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_vit_pages_in_chromium(server, new_page, lang):
    """Both pages at 1280 x 720 and 1920 wide: no exception, nothing wider than its column; the overlay's five
    panels at least 150 px wide with their twenty weights written at 12 px or more; the head's bars drawn."""
    page = new_page(lang)
    weights = shipped_trace()["enc.0.attn.weights"]
    for width, height in ((1280, 720), (1920, 1080)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(url(server, "vit_encoder"))
        settle(page)
        no_exception(page)
        no_horizontal_overflow(page)
        labels = page.evaluate(PATCH_LABELS)
        numbers = [text for text, _, _ in labels if "." in text and len(text) == 4]
        assert numbers == [decimals(w, PLACES) for m in class_attention(weights, (2, 2)) for w in m.ravel()]
        assert min(size for _, size, _ in labels) >= 12
        panels = page.evaluate(PANEL_WIDTHS)
        assert len(panels) == 10 and min(panels) >= 150, panels  # an image and a heat layer per panel
        page.goto(url(server, "vit_head"))
        settle(page)
        no_exception(page)
        no_horizontal_overflow(page)
        assert page.locator('[data-testid="stPlotlyChart"] .bars .point').count() == 10
        catalog = ZH if lang == "zh" else EN
        assert page.get_by_text(catalog["vit_head.right"].format(n=1, digit=6), exact=False).count() == 1


def test_a_phones_heatmaps_label_their_columns_without_overlap(server, new_page):  # noqa: F811 (server)
    """On a 400 px phone the embedding page's 4 × 32 and 5 × 32 heatmaps have a ~270-px plot: their 32 column
    labels, each written, overlapped there (~8 px a column). Every axis of the page keeps its labels apart."""
    page = new_page("en")
    page.set_viewport_size({"width": 400, "height": 800})
    page.goto(url(server, "vit_embed"))
    settle(page)
    overlaps = page.evaluate(OVERLAPPING_LABELS)
    assert len(overlaps) >= 2 and overlaps == [0] * len(overlaps), overlaps
