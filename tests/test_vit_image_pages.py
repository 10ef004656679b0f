"""The Vision Transformer's image pages (app_pages/vit_patches.py, app_pages/vit_embed.py): where each pixel goes in
x_p, the position embeddings' similarity by the patches' places, the pixel pad's strokes (forged ones refused whole),
and both pages through AppTest in English and Chinese with the trace's numbers, a pixel link and a weight edit; in
Chromium, a digit drawn, greyed and erased on the pad."""
import base64
import json
import urllib.parse

import numpy as np
import plotly.graph_objects as go
import pytest

import streamlit_privates
from engine import digits, vit
from engine.config import ConfigError
from test_app import goto, notes, open_editors, open_link, query
from test_browser import no_exception, server, settle, url  # noqa: F401 (server: a fixture)
from ui.core import runs
from ui.core.format import fmt
from ui.core.i18n import translator
from ui.core.state.vision import VisionState
from ui.vision import pictures, pixel_pad, pixels, vit_charts, vit_figures

FIRST_TEST_IMAGE = digits.split("test").images[0]  # (8, 8, 1): a 6


# ---- pure: the engine's and the pictures' parts -----------------------------------------------------------------

def test_each_column_of_a_flattened_patch_is_named_by_its_pixel():
    settings = vit.ViTConfig()  # 8 x 8, P = 4: patches P1 P2 / P3 P4
    where = vit.patch_pixels(settings, 1)  # P2: the top right quarter, row by row
    assert where[:5].tolist() == [[0, 4, 0], [0, 5, 0], [0, 6, 0], [0, 7, 0], [1, 4, 0]]
    assert where[-1].tolist() == [3, 7, 0]
    image = np.random.default_rng(1).random((8, 8, 1))
    trace = vit.VisionTransformer.initial(settings).run(image)
    for i in range(settings.n_patches):  # the names agree with the pass's own cut
        rows, cols, channels = vit.patch_pixels(settings, i).T
        assert np.array_equal(trace["img.patches"][i], image[rows, cols, channels])
    two = vit.ViTConfig(patch=2)
    assert vit.patch_pixels(two, 5).tolist() == [[2, 2, 0], [2, 3, 0], [3, 2, 0], [3, 3, 0]]
    for bad in (-1, 4, 1.5, True, "1"):
        with pytest.raises(ConfigError):
            vit.patch_pixels(settings, bad)


def test_the_shipped_models_positions_tell_top_from_bottom_and_random_ones_do_not():
    model = runs.shipped_vit()[0]
    similarity = vit.position_similarity(model)
    relation = vit.similarity_by_relation(similarity, model.settings)
    assert relation["column"] == pytest.approx((similarity[0, 2] + similarity[1, 3]) / 2)
    assert relation["row"] == pytest.approx((similarity[0, 1] + similarity[2, 3]) / 2)
    assert relation["farther"] == pytest.approx((similarity[0, 3] + similarity[1, 2]) / 2)
    assert relation["column"] < -0.5 and abs(relation["row"]) < 0.2  # what the page's sentence says (−0.74, 0.05)
    random = vit.VisionTransformer.initial(vit.ViTConfig(), seed=0)
    assert all(abs(v) < 0.2 for v in vit.similarity_by_relation(vit.position_similarity(random),
                                                                random.settings).values())
    maps = vit.similarity_maps(similarity, model.settings)
    assert maps.shape == (2, 2, 2, 2) and maps[1, 0, 0, 0] == similarity[2, 0]  # P3's map, at P1's place
    assert vit.similarity_by_relation(np.ones((1, 1)), vit.ViTConfig(patch=8)) == {
        "row": None, "column": None, "farther": None}


def test_the_pictures_are_valid_plotly_figures():
    model = runs.shipped_vit()[0]
    trace = model.run(FIRST_TEST_IMAGE)
    where = vit.patch_pixels(model.settings, 2)
    charts = [pictures.image_chart(FIRST_TEST_IMAGE[..., 0], 4, model.tokens[1:], 2, where),
              pictures.patch_row_chart(trace["img.patches"][2], where, "x_p^3", "P3"),
              pictures.product_chart(trace["img.patches"], model.params["img.E"], model.params["img.b_E"],
                                     trace["img.embed"], ("x_p", "E", "b_E", "x_p E + b_E", model.tokens[1:]), 1),
              pictures.similarity_maps_chart(vit.similarity_maps(vit.position_similarity(model), model.settings),
                                             model.tokens[1:])]
    for chart in charts:
        go.Figure(chart.to_dict())  # plotly's own validation
    image = charts[0].to_dict()
    numbered = [a["text"] for a in image["layout"]["annotations"] if a["text"].isdigit()]
    assert numbered == [str(j) for j in range(1, 17)]  # P3's 16 pixels, by their column in x_p^3
    assert "(5, 1)" in charts[1].to_dict()["layout"]["xaxis"]["ticktext"][0]  # x_p^3's column 1 is pixel (5, 1)


def test_every_picture_draws_a_digit_alike():
    """The image page's picture, the encoder's attention panels and the training page's thumbnails draw a digit one
    way (pictures.digit_heatmap, digit_axes, digit_bitmap): 0 white to 1 black, square pixels, row 1 at the top; the
    image page counts rows and columns from 1, on its axes and in each pixel's hover."""
    model = runs.shipped_vit()[0]
    image = FIRST_TEST_IMAGE[..., 0]
    patches = (model.settings.height // model.settings.patch, model.settings.width // model.settings.patch)
    maps = vit_charts.class_attention(model.run(FIRST_TEST_IMAGE)["enc.0.attn.weights"], patches)
    drawn = [pictures.image_chart(image, 4, model.tokens[1:]).to_dict(),
             vit_charts.attention_over_image(FIRST_TEST_IMAGE, maps, ["t"] * len(maps), model.tokens[1:]).to_dict()]
    digits_drawn = [chart["data"][0] for chart in drawn]
    for digit in digits_drawn:
        assert (digit["colorscale"], digit["zmin"], digit["zmax"]) == ([[0.0, "#ffffff"], [1.0, "#000000"]], 0, 1)
        assert np.array_equal(np.frombuffer(base64.b64decode(digit["z"]["bdata"]), digit["z"]["dtype"]).reshape(8, 8),
                              image)
    for chart in drawn:
        x, y = chart["layout"]["xaxis"], chart["layout"]["yaxis"]
        assert (x["range"], y["range"], y["scaleanchor"]) == ([-0.5, 7.5], [7.5, -0.5], "x")
    assert drawn[0]["layout"]["xaxis"]["ticktext"] == [str(c) for c in range(1, 9)]
    assert drawn[0]["data"][1]["text"][8 * 2 + 3] == f"(3, 4): {fmt(image[2, 3])}"
    assert drawn[1]["layout"]["xaxis"]["showticklabels"] is False
    thumbnail = vit_figures.picture(np.array([[[0.0], [1.0], [0.5], [2.0]]]))
    assert thumbnail.shape == (vit_figures.PIXEL, 4 * vit_figures.PIXEL)
    assert thumbnail[0, ::vit_figures.PIXEL].tolist() == [255, 0, 128, 0]  # white, black, between, black beyond 1


@pytest.mark.parametrize("payload", [
    None, "1,2,3", {}, [], [[0, 0]], [[0, 0, 1, 2]], [[8, 0, 1.0]], [[0, -1, 1.0]], [[0.5, 0, 1.0]], [[True, 0, 1.0]],
    [[0, 0, float("nan")]], [[0, 0, float("inf")]], [[0, 0, 1e300]], [[0, 0, "1"]], [[0, 0, None]], [[0, 0, True]],
    [[0, 0, 1.0]] * 65, [[0, 0, 1.0], [0, 0, -2e4]], [["0", "0", 1.0]],
])
def test_a_forged_stroke_is_refused_whole(payload):
    with pytest.raises(ValueError):
        pixels.read_strokes(payload, 8, 8)


def test_strokes_set_pixels_and_clear_blanks_every_one():
    strokes = pixels.read_strokes([[0, 0, 1], [7, 7, 0.25], [0, 0, 0]], 8, 8)
    state = pixels.drawn(VisionState(), strokes)
    assert state.pixels == (((0, 0), 0.0), ((7, 7), 0.25))
    assert len(pixels.cleared(VisionState(), 8, 8).pixels) == 64


# ---- the pages, through AppTest ---------------------------------------------------------------------------------

def open_vit(page, lang="en", **query_parts):
    return open_link(page, lang=lang, **query_parts)


def trace_of(at):
    return at.session_state["context"].trace


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_both_pages_draw_the_test_images_numbers(lang):
    at = open_vit("vit_patches", lang)
    trace = trace_of(at)
    assert np.array_equal(trace["img.patches"][0], FIRST_TEST_IMAGE[:4, :4, 0].ravel())  # P1: the top left 4 x 4
    assert streamlit_privates.component(at, pixel_pad.KEY) is not None
    assert not notes(at)
    at = open_vit("vit_embed", lang)
    model = runs.shipped_vit()[0]
    expected = FIRST_TEST_IMAGE[:4, :4, 0].ravel() @ model.params["img.E"] + model.params["img.b_E"]
    assert np.allclose(trace_of(at)["img.embed"][0], expected)
    assert not [b.key for b in at.button if b.key.startswith("paper.")]  # no text-model departures on a ViT page
    said = " ".join(m.value for m in at.markdown)
    assert ("−0.74" in said) and ("0.05" in said)  # the shipped model's column and row means


def test_a_pixel_link_changes_the_patches_the_embeddings_and_the_probabilities():
    before = trace_of(open_vit("vit_patches"))
    at = open_vit("vit_patches", vpx="0.0=1;3.3=0.5")
    after = trace_of(at)
    assert after["img.patches"][0][0] == 1.0 and after["img.patches"][0][15] == 0.5
    assert np.array_equal(after["img.patches"][1:], before["img.patches"][1:])
    assert not np.allclose(after["img.embed"][0], before["img.embed"][0])
    assert not np.allclose(after["head.probs"], before["head.probs"])
    assert query(at)["vpx"] == "0.0=1.0;3.3=0.5"


def test_the_pad_draws_clears_and_goes_back_to_the_test_image():
    at = open_vit("vit_patches")
    streamlit_privates.trigger(at, pixel_pad.KEY, "drawn", [[0, 0, 1], [0, 1, 1]])
    assert not at.exception, [e.message for e in at.exception]
    assert at.session_state.state.vit.pixels == (((0, 0), 1.0), ((0, 1), 1.0))
    assert trace_of(at)["img.patches"][0][:2].tolist() == [1.0, 1.0]
    assert query(at)["vpx"] == "0.0=1.0;0.1=1.0"
    at.button(key="vit.pad.clear").click().run()
    assert not trace_of(at)["img.patches"].any()
    at.button(key="vit.pad.reset").click().run()
    assert at.session_state.state.vit.pixels == () and "vpx" not in query(at)


@pytest.mark.hostile
@pytest.mark.parametrize("payload", [[[0, 0, 1e300]], [[0, 0, "NaN"]], "x" * 10_000, [[99, 0, 1]], {"drawn": 1}])
def test_a_forged_stroke_is_said_and_changes_nothing(payload):
    at = open_vit("vit_patches", vpx="2.2=0.75")
    streamlit_privates.trigger(at, pixel_pad.KEY, "drawn", payload)
    assert not at.exception, [e.message for e in at.exception]
    assert at.session_state.state.vit.pixels == (((2, 2), 0.75),)
    assert any("refused" in note for note in notes(at)), notes(at)


def test_one_pixel_set_exactly_and_a_forged_grey_refused():
    at = open_vit("vit_patches")
    at.session_state["open.vit.pixel"] = True
    at.run()
    at.selectbox(key="vit.pixel.row").set_value(2).run()
    at.selectbox(key="vit.pixel.col").set_value(3).run()
    slider = next(s for s in at.slider if s.key.startswith("vit.pixel.value.2.3."))
    assert slider.value == FIRST_TEST_IMAGE[2, 3, 0]
    slider.set_value(0.75).run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.session_state.state.vit.pixels == (((2, 3), 0.75),)
    assert trace_of(at)["img.patches"][0][2 * 4 + 3] == 0.75  # P1's row 3, column 4: x_p^1's column 12
    slider = next(s for s in at.slider if s.key.startswith("vit.pixel.value.2.3."))
    for forged in (float("nan"), 1e300):
        streamlit_privates.send_value(at, slider.id, double_array_value={"data": [forged]})
        assert not at.exception, [e.message for e in at.exception]
        assert at.session_state.state.vit.pixels == (((2, 3), 0.75),)


@pytest.mark.hostile
@pytest.mark.parametrize("part, value", [("vpx", "0.0=nan"), ("vpx", "0.0=1e300"), ("vpx", "9.9=1"),
                                         ("vpx", "0.0=x;;=;0.0.0=1"), ("vimg", "0"), ("vimg", "361"),
                                         ("vimg", "1e3"), ("vpx", "0.0=" + "9" * 400)])
def test_a_forged_pixel_or_image_link_is_noted_and_the_test_image_shown(part, value):
    at = open_vit("vit_patches", **{part: value})
    assert at.session_state.state.vit.pixels == () and at.session_state.state.vit.image == 0
    assert np.array_equal(trace_of(at)["img.patches"][0], FIRST_TEST_IMAGE[:4, :4, 0].ravel())
    assert notes(at) and all("ignored" in note for note in notes(at)), notes(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("patch, n", [(4, 4), (2, 16), (1, 64)])
def test_the_patch_picker_is_one_list_of_every_patch_and_in_the_link(patch, n, lang):
    """4, 16 or 64 patches (patch size 4, 2 or 1 in the sizes box): one list of P1 ... PN (a row of 64 buttons took
    three rows), the patch picked outlined and its row drawn, the link naming it from 1 and reopening it; on a
    following student's page one line names the teacher's patch."""
    sizes = {} if patch == 4 else {"vcfg": f"patch:{patch}"}
    at = open_vit("vit_patches", lang, **sizes)
    picker = at.selectbox(key="vit.patch")
    assert picker.label == translator(lang)("vit.patch") and picker.options == [f"P{i}" for i in range(1, n + 1)]
    assert not [control for control in at.get("button_group") if control.proto.id.endswith("-vit.patch")]
    picker.set_value(n - 1).run()
    assert not at.exception, [e.message for e in at.exception]
    assert query(at)["position"] == str(n)
    assert any(f"P{n}" in m.value for m in at.markdown if "x_p^{" in m.value)  # its flattened row's caption
    again = open_vit("vit_patches", lang, position=str(n), **sizes)
    assert again.selectbox(key="vit.patch").value == n - 1
    forged = open_vit("vit_patches", lang, position=str(n + 1), **sizes)
    assert forged.selectbox(key="vit.patch").value == 0 and notes(forged)
    teacher = goto(open_link("overview", lang=lang, **sizes), "vit_patches")
    teacher.button(key="room.open").click().run()
    teacher.selectbox(key="vit.patch").set_value(n - 1).run()
    student = open_link("vit_patches", lang=lang, room=teacher.session_state["room"].code)
    assert not [box for box in student.selectbox if box.key == "vit.patch"]
    assert f"{translator(lang)('vit.patch')}: **P{n}**" in [m.value for m in student.markdown]


def test_an_edit_of_e_on_the_embed_page_goes_to_the_vit_state_and_its_numbers():
    at = open_editors(open_vit("vit_embed"))  # E, 16 x 32, is edited a cell at a time: row, column, value
    at.number_input(key="edit.img.E.None.0.v.(0, 0)").set_value(2.5).run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.session_state.state.vit.edits == (("img.E", (0, 0), 2.5),)
    assert at.session_state.state.edits == ()  # the text model's are untouched
    model = runs.shipped_vit()[0]
    weight = model.params["img.E"].copy()
    weight[0, 0] = 2.5
    expected = FIRST_TEST_IMAGE[:4, :4, 0].ravel() @ weight + model.params["img.b_E"]
    assert np.allclose(trace_of(at)["img.embed"][0], expected)
    assert "vedit" in query(at)


@pytest.mark.parametrize("unfit", ["nope:0=1", "img.E:99.0=1", "img.E:0=1"])
def test_an_edit_of_no_weight_is_said_dropped_and_leaves_the_link(unfit):
    at = open_vit("vit_embed", vedit=f"{unfit};img.E:0.0=2.5")
    assert not at.exception, [e.message for e in at.exception]
    assert notes(at) == [translator("en")("msg.edits_dropped", n=1)]
    assert at.session_state.state.vit.edits == (("img.E", (0, 0), 2.5),) and query(at)["vedit"] == "img.E:0.0=2.5"
    assert at.session_state["context"].model.params["img.E"][0, 0] == 2.5  # the edit that fits still runs


# ---- in Chromium ------------------------------------------------------------------------------------------------

def drag(page, pad, cells):
    """Press on the first (row, col) square of the 8 x 8 pad, move through the others, release."""
    box = pad.bounding_box()
    at = [(box["x"] + (c + 0.5) * box["width"] / 8, box["y"] + (r + 0.5) * box["height"] / 8) for r, c in cells]
    page.mouse.move(*at[0])
    page.mouse.down()
    for x, y in at[1:]:
        page.mouse.move(x, y, steps=4)
    page.mouse.up()


def pixels_in(page) -> str:
    return urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)["vpx"][0]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_digit_drawn_on_the_pad_reaches_the_link_and_the_patches(server, new_page, lang):
    page = new_page(lang)
    page.goto(url(server, "vit_patches"))
    settle(page)
    pad = page.locator(".pad")
    drag(page, pad, [(0, 0), (0, 1), (0, 2)])  # along the top row: ink
    page.wait_for_url("**vpx=**", timeout=30_000)
    settle(page)
    no_exception(page)
    assert pixels_in(page) == "0.0=1.0;0.1=1.0;0.2=1.0"
    for tool, cell, said in ((1, (0, 2), "0.2=0.5"), (2, (0, 1), "0.1=0.0")):  # Grey, then Erase
        page.locator(".tools button").nth(tool).click()
        drag(page, pad, [cell])
        page.wait_for_function(f"() => decodeURIComponent(location.search).includes('{said}')", timeout=30_000)
        settle(page)
        no_exception(page)
    assert pixels_in(page) == "0.0=1.0;0.1=0.0;0.2=0.5"
    page.get_by_role("button", name={"en": "Back to the test image", "zh": "回到测试图像"}[lang]).click()
    page.wait_for_function("() => !location.search.includes('vpx')", timeout=30_000)
