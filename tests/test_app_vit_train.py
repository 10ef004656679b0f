"""The ViT training page through AppTest: its evaluation is the engine's (accuracy, confusion counts, the images it
gets wrong) for the shipped, random and trained models; a short training through the page puts its weights in the
server's store, whose model comes back bit for bit (a new store on the same directory, and Redis), and every ViT
page and the link use them; a stopped run keeps what it learned; a click on a misclassified image opens it; forged
weights ids are refused."""
import json

import numpy as np
import pytest

from engine import digits, vit_train
from engine.vit import ViTConfig, VisionTransformer
from engine.vit_train import ViTTrainSettings, training
from test_app import assert_clean, goto, notes, open_link, open_page, query
from test_weights import assert_same_vit, redis  # noqa: F401 (a fixture)
from ui.core import runs
from ui.core.i18n import translator
from ui.stores.weights import RedisWeightsStore, WeightsStore
from ui.vision.vit_evaluation import MAX_SHOWN

T = translator("en")
TEST = digits.split("test")


def metric(at) -> str:
    return {m.label: m.value for m in at.metric}[T("vit_train.accuracy")]


def confusion(at) -> np.ndarray:
    chart = next(c for c in at.get("plotly_chart") if c.proto.id.endswith("vit_train.confusion"))
    return np.array(json.loads(chart.proto.spec)["data"][0]["z"])


def misses(at) -> list[str]:
    return [b.key for b in at.button if b.key and b.key.startswith("vit_train.open.")]


def accuracy_said(model) -> str:
    score = vit_train.accuracy(model, *TEST)
    return T("vit_train.accuracy_value", percent=f"{100 * score:.2f}", right=round(score * 360), n=360)


def test_the_shipped_models_evaluation_is_the_engines():
    at = open_page("vit_train")
    assert_clean(at)
    model, _ = vit_train.load(vit_train.SHIPPED)
    assert metric(at) == accuracy_said(model) == "96.39 % (347 of 360)"
    counts = confusion(at)
    np.testing.assert_array_equal(counts, vit_train.confusion(model, *TEST))
    assert counts.sum() == 360 and np.trace(counts) == 347
    wrong = np.flatnonzero(vit_train.predict(model, TEST.images) != TEST.labels)
    assert misses(at) == [f"vit_train.open.{i}" for i in wrong] and len(wrong) == 13
    first = at.button(key=f"vit_train.open.{wrong[0]}")
    assert first.label == T("vit_train.miss", n=wrong[0] + 1, true=TEST.labels[wrong[0]],
                            predicted=vit_train.predict(model, TEST.images[wrong[0]:wrong[0] + 1])[0])
    assert "python -m engine vit-train --steps 800 --seed 0 --out engine/data/vit-digits.npz" in [
        c.value for c in at.code]
    assert any("**96.39 %** of the 360 test images right (347 of 360)" in m.value for m in at.markdown)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_pages_say_what_the_command_reproduces_and_whose_handwriting_the_model_knows(lang):
    """The training page: the shipped weights bit for bit with the kernels that made them, and elsewhere the accuracy
    band tests/test_vit.py checks; the pad: a digit drawn in another style than the training set's may read wrong."""
    t = translator(lang)
    at = open_link("vit_train", lang=lang)
    assert_clean(at)
    reproduced = t("vit_train.reproduced", kernels=vit_train.SHIPPED_KERNELS,
                   band=f"{100 * vit_train.REPRODUCED_ACCURACY:g}")
    assert reproduced in [m.value for m in at.markdown] and "95 %" in reproduced
    pad = open_link("vit_patches", lang=lang)
    assert t("vit.pad.style") in [c.value for c in pad.caption]


def test_random_weights_are_evaluated_as_the_engine_does_and_shown_in_part():
    at = open_page("vit_train", vw="random", vseed="3")
    assert_clean(at)
    model = VisionTransformer.initial(ViTConfig(), 3)
    assert metric(at) == accuracy_said(model)
    np.testing.assert_array_equal(confusion(at), vit_train.confusion(model, *TEST))
    wrong = np.flatnonzero(vit_train.predict(model, TEST.images) != TEST.labels)
    assert len(wrong) > MAX_SHOWN and len(misses(at)) == MAX_SHOWN
    assert T("vit_train.more", n=len(wrong) - MAX_SHOWN) in [c.value for c in at.caption]


def test_a_click_on_a_misclassified_image_opens_it_on_every_vit_page():
    at = open_page("vit_train")
    index = int(misses(at)[2].rsplit(".", 1)[1])
    at.button(key=f"vit_train.open.{index}").click().run()
    assert_clean(at)
    assert at.session_state["state"].vit.image == index and query(at)["vimg"] == str(index + 1)
    assert at.button(key=f"vit_train.open.{index}").proto.type == "primary"
    goto(at, "vit_patches")
    assert at.session_state["state"].vit.image == index


def test_a_short_training_through_the_page_is_every_pages_model_and_the_store_gives_it_back(tmp_path, redis):
    at = open_page("vit_train")
    at.number_input(key="vit_train.steps").set_value(20).run()
    at.button(key="vit_train.start").click().run(timeout=300)
    assert_clean(at)
    settings = ViTTrainSettings(steps=20)
    expected = vit_train.train(VisionTransformer.initial(ViTConfig(), 0), digits.split("train"), settings)
    assert [s.value for s in at.success] == [T("vit_train.done", steps=20, loss=f"{expected.losses[-1]:.4f}")]
    weights = at.session_state["state"].vit.weights
    assert query(at)["vw"] == weights and weights not in ("", "random")
    stored = WeightsStore.from_environment().get(weights)  # another process on the same directory
    assert_same_vit(stored, expected.model)
    assert WeightsStore.from_environment().origin(weights) == {"kind": "vit_trained", "steps": 20}
    assert metric(at) == accuracy_said(expected.model)
    key = RedisWeightsStore(redis).put(stored)
    assert key == weights
    assert_same_vit(RedisWeightsStore(redis).get(key), expected.model)
    shared = open_link("vit_head", vw=weights)  # the link, in another session
    assert_clean(shared)
    np.testing.assert_array_equal(shared.session_state["context"].model.params["head.W_F"],
                                  expected.model.params["head.W_F"])
    assert shared.session_state["state"].vit.weights == weights


def test_a_stopped_run_keeps_what_it_learned():
    """Stop interrupts the script; the next run finds the last step's weights and keeps them."""
    at = open_page("vit_train")
    settings = ViTTrainSettings(steps=50, seed=2)
    updates = training(VisionTransformer.initial(ViTConfig(), 2), digits.split("train"), settings)
    kept = [next(updates) for _ in range(7)]
    at.session_state["vit_train.partial"] = {"settings": settings, "model": kept[-1].model,
                                             "losses": [u.loss for u in kept]}
    at.run()
    assert_clean(at)
    assert [s.value for s in at.success] == [T("vit_train.done_stopped", steps=7, loss=f"{kept[-1].loss:.4f}")]
    vit = at.session_state["state"].vit
    assert vit.seed == 2 and runs.weights_store().get(vit.weights) is not None
    assert_same_vit(WeightsStore.from_environment().get(vit.weights), kept[-1].model)


@pytest.mark.parametrize("forged", ["0123456789ab", "../../etc/pa", "ffffffffffff", "zzzzzzzzzzzz"])
def test_forged_weights_ids_are_refused(forged):
    at = open_link("vit_train", vw=forged)
    assert not at.exception
    assert at.session_state["state"].vit.weights == ""  # the shipped model
    assert metric(at) == "96.39 % (347 of 360)"
    assert "vw" not in query(at)
    if forged in ("0123456789ab", "ffffffffffff"):  # an id's form, which this server does not hold
        assert notes(at) == [T("msg.url", detail=T("msg.vit_weights_gone", id=forged))]
    random = open_link("vit_train", vw=forged, vcfg="patch:2", vseed="5")
    assert random.session_state["state"].vit.weights == "random" and "vw=random" in "&".join(
        f"{k}={v}" for k, v in query(random).items())
    if forged in ("0123456789ab", "ffffffffffff"):
        assert notes(random) == [T("msg.url", detail=T("msg.vit_weights_gone_random", id=forged, seed=5))]


def test_a_vision_transformers_id_is_not_a_text_models_weights():
    key = WeightsStore.from_environment().put(VisionTransformer.initial(ViTConfig(), 4))
    at = open_link("overview", weights=key)
    assert not at.exception
    assert at.session_state["state"].weights == "" and "weights" not in query(at)
    assert any(key in n for n in notes(at))


def test_a_following_student_sees_the_evaluation_and_no_controls():
    teacher = open_page("vit_train")
    teacher.button(key="room.open").click().run()
    student = open_link("vit_train", room=teacher.session_state["room"].code)
    assert_clean(student)
    assert student.session_state["context"].reading
    assert [b.key for b in student.button if b.key and b.key.startswith("vit_train.")] == []
    assert metric(student) == "96.39 % (347 of 360)"
    assert T("vit_train.miss", n=22, true=9, predicted=1) in [c.value for c in student.caption]
