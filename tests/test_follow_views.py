"""Every page's view is in its link (AppTest): the sections of the training and generation pages, the generation
player's step, the dropout page's place and dropout, a stack's measure, the output's position, the padded batch's
sentence and the frame the animation stopped on; a link reopens each, and following the teacher (tests/test_follow.py)
takes what the link holds."""
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import streamlit_privates  # noqa: E402
from test_app import goto, notes, open_link, open_page, query  # noqa: E402
from ui.core.i18n import literal, translator  # noqa: E402

T = translator("en")


@pytest.mark.parametrize("page, view, widget, shown", [
    ("train", {"section": "4"}, "train.tab", T("train.tab.batch")),  # not the first section
    ("train", {"section": "4", "sentence": "2"}, "batch.sentence", 1),
    ("generate", {"section": "2"}, "gen.tab", T("gen.tab.compare")),  # greedy vs beam search
    ("generate", {"position": "3"}, "gen.step", 3),  # the player's third step
    ("train", {"grad": "enc.0.ln1"}, "train.grad_step", "grad.enc.0.ln1"),  # the gradient of a step's output
    ("train", {"grad": "enc.0.attn.scaled", "head": "2"}, "train.grad_step_head", 1),
    ("train", {"param": "dec.0.cross_attn.W_K", "phead": "2"}, "train.grad_param_head", 1),  # a weight's, box open
    ("train", {"smoothing": "0.15"}, "train.view_smoothing", 0.15),  # the loss with label smoothing
    ("dropout", {"section": "2"}, "dropout.tab", T("dropout.tab.mask")),
    ("dropout", {"place": "4", "layer": "2", "dropout": "3", "head": "2"}, "dropout.which.dec", "cross_attn.dropout"),
    ("encoder_stack", {"measure": "2"}, "enc.measure", "cosine"),
    ("output", {"position": "1"}, "output.position", 0),  # the default is the last position
])
def test_a_link_reopens_the_view_it_names(page, view, widget, shown):
    at = open_link(page, cfg="n_layers:2", **view)
    assert not notes(at)
    assert at.session_state[widget] == shown
    assert {key: query(at).get(key) for key in view} == view


def test_a_section_chosen_on_the_training_page_is_in_its_link_and_the_first_is_not():
    at = open_page("train")
    at.session_state["train.tab"] = T("train.files")
    at.run()
    assert query(at)["section"] == "3"
    at.session_state["train.tab"] = T("train.tab.loss")
    at.run()
    assert "section" not in query(at)
    goto(at, "generate")
    at.session_state["gen.tab"] = T("gen.tab.compare")
    at.run()
    assert query(at)["section"] == "2"


def test_the_generation_players_step_is_in_its_link_and_the_first_is_not():
    at = open_page("generate")
    at.button(key="gen.next").click().run()
    assert query(at)["position"] == "2"
    at.button(key="gen.prev").click().run()
    assert "position" not in query(at)


@pytest.mark.parametrize("part", [{"grad": "enc.9.ln1"}, {"param": "enc.0.attn.W_Z"}, {"smoothing": "0.07"},
                                  {"grad": "enc.0.attn.scaled", "head": "9"}])
def test_a_gradient_the_model_has_not_is_named_and_the_rest_shown(part):
    at = open_link("train", **part)
    key, value = list(part.items())[-1]
    assert notes(at) == [T("msg.url", detail=literal(f"{key}={value!r}"))]
    assert not at.exception and "param" not in query(at)


def test_the_training_pages_gradients_are_in_its_link():
    at = open_page("train")
    first = at.session_state["train.grad_step"]
    at.selectbox(key="train.grad_step").set_value("grad.dec.0.ffn.hidden").run()
    assert query(at)["grad"] == "dec.0.ffn.hidden" and "param" not in query(at)  # the weights' box is shut
    at.session_state["train.grad_param_open"] = True
    at.run()
    assert query(at)["param"] == at.session_state["train.grad_param"]  # open: the weight shown, the first too
    at.selectbox(key="train.grad_step").set_value(first).run()
    assert "grad" not in query(at)  # the first step is the default
    at.slider(key="train.view_smoothing").set_value(0.1).run()
    assert query(at)["smoothing"] == "0.1"
    at.slider(key="train.view_smoothing").set_value(0.0).run()
    assert "smoothing" not in query(at)


def player(at) -> dict:
    """The animation player's data, and its node."""
    node = streamlit_privates.component(at, "anim.player")
    return json.loads(node.proto.json), node


def test_the_animations_frame_is_in_its_link_once_the_player_stops_on_it():
    at = open_link("animation", frame="5")
    data, node = player(at)
    assert data["goto"]["frame"] == 4 and data["frame"] == 4 and query(at)["frame"] == "5" and not notes(at)
    streamlit_privates.send_value(at, node.proto.id, json_value=json.dumps({"frame": 7}))  # stopped on frame 8
    assert not at.exception and query(at)["frame"] == "8" and player(at)[0]["frame"] == 7
    assert player(at)[0]["goto"]["id"] == data["goto"]["id"]  # not moved again: the player is there
    streamlit_privates.send_value(at, node.proto.id, json_value=json.dumps({"frame": 0}))
    assert "frame" not in query(at)  # the first frame is the default
