"""The Vision Transformer's part of the state (ui/core/state/vision.py): the image the pages read, the learner's
pixels, weights and sizes, and its link form; hostile link parts are in test_ui_pure (LINK_KEYS) and the app's
tampered links in test_reliability (vit_states)."""
import numpy as np
import pytest

from engine import digits
from engine.config import ConfigError
from ui.core import state as app_state
from ui.core.state import vision as vision_state
from ui.core.state import AppState
from ui.core.state.vision import RANDOM, SHIPPED, VisionState, check_pixel


def test_the_image_is_the_test_splits_with_the_learners_pixels():
    state = VisionState(image=5).with_pixel(0, 7, 1.0).with_pixel(3, 2, 0.25)
    expected = np.array(digits.split("test").images[5])
    expected[0, 7, 0], expected[3, 2, 0] = 1.0, 0.25
    assert np.array_equal(vision_state.image(state), expected)
    assert vision_state.label(VisionState(image=5)) == digits.split("test").labels[5]
    assert vision_state.label(state) is None  # drawn over: no longer the test set's digit
    assert np.array_equal(vision_state.image(VisionState(image=5)), digits.split("test").images[5])


def test_a_link_gives_back_the_whole_state():
    vit = VisionState(image=359, seed=7).with_pixel(7, 7, 0.5).with_pixel(0, 0, -3.0).with_sizes(patch=2, d_model=16)
    vit = vit.with_edit("img.E", (0, 1), 1.5).with_edit("head.W_F", (3, 9), -2.0)
    state = AppState(vit=vit)
    query = app_state.encode(state)
    assert {k: query[k] for k in query if k.startswith("v")} == {
        "vimg": "360", "vpx": "0.0=-3.0;7.7=0.5", "vw": "random", "vseed": "7", "vcfg": "d_model:16,patch:2",
        "vedit": "head.W_F:3.9=-2.0;img.E:0.1=1.5"}
    assert app_state.decode(query) == (state, [])
    assert not any(k.startswith("v") for k in app_state.encode(AppState()))  # the shipped model, image 1: nothing


def test_other_sizes_take_random_weights_and_drop_the_edits():
    vit = VisionState().with_edit("img.E", (0, 0), 1.0)
    assert vit.shipped and not vit.with_sizes(patch=4).sizes  # the shipped model's own size: no change
    smaller = vit.with_sizes(patch=2)
    assert (smaller.weights, smaller.sizes, smaller.edits, smaller.shipped) == (RANDOM, (("patch", 2),), (), False)
    assert smaller.settings().n_patches == 16
    with pytest.raises(ConfigError):
        vit.with_sizes(patch=3)  # does not divide 8
    with pytest.raises(ConfigError):
        vit.with_sizes(d_model=10)  # not divisible by the 4 heads
    assert app_state.decode({"vcfg": "patch:2"})[0].vit.weights == RANDOM  # a link with sizes: random weights


@pytest.mark.parametrize("typed", [float("nan"), float("inf"), -float("inf"), 1e300, 10_000.5, "x", None, "1,5"])
def test_a_pixel_must_be_a_finite_number_within_the_engines_bound(typed):
    with pytest.raises(ValueError):
        check_pixel(typed)
    with pytest.raises(ValueError):
        VisionState().with_pixel(0, 0, typed)


THIRD = VisionState(image=2)  # vimg=3, which every link below has unless it tampers with it


@pytest.mark.parametrize("query, notes, expected", [
    ({"vimg": "361"}, ["vimg='361'"], VisionState()), ({"vimg": "0"}, ["vimg='0'"], VisionState()),
    ({"vimg": "٣"}, ["vimg='٣'"], VisionState()),
    ({"vpx": "8.0=1;0.0=nan;1.1=2;x"}, ["8.0=1", "0.0=nan", "x"], THIRD.with_pixel(1, 1, 2)),
    ({"vpx": "0.0=1e5"}, ["0.0=1e5"], THIRD), ({"vw": "../../etc"}, ["vw='../../etc'"], THIRD),
    ({"vseed": "-1"}, ["vseed='-1'"], THIRD), ({"vcfg": "patch:3"}, ["patch:3"], THIRD),
    ({"vcfg": "patch:9,d_model:16"}, ["patch:9"], THIRD.with_sizes(d_model=16)),
    ({"vcfg": "d_model:10"}, ["d_model:10"], THIRD), ({"vcfg": "eps:0.5"}, ["eps:0.5"], THIRD),
])
def test_a_link_part_that_is_not_one_is_noted_and_the_rest_kept(query, notes, expected):
    state, noted = app_state.decode({"vimg": "3", **query})
    assert (noted, state.vit) == (notes, expected)


def test_pixels_past_the_sixty_fourth_part_are_noted():
    every = [f"{row}.{col}=1" for row in range(8) for col in range(8)]
    assert len(every) == vision_state.MAX_PIXEL_EDITS
    state, notes = app_state.decode({"vpx": ";".join(every + ["0.0=0.5", "1.1=0"])})
    assert len(state.vit.pixels) == 64 and dict(state.vit.pixels)[(0, 0)] == 1.0 and notes == ["0.0=0.5;1.1=0"]
    assert app_state.decode({"vpx": ";".join(every)})[1] == []


def test_weights_are_shipped_unless_the_link_names_others():
    assert VisionState().weights == SHIPPED == "" and VisionState().shipped
    assert app_state.decode({"vw": "0123456789ab"})[0].vit.weights == "0123456789ab"  # the store's id form
