"""Every step the engine records is drawn on a page a learner reaches from the navigation: for both presets, both
norm placements, the encoder-decoder and the decoder-only model, with dropout off (every page) and on (the training pass
of the dropout page); gradients are the training page's, not steps of a pass.

Each page of ui.core.navigation is opened in AppTest and every combination of its rows of buttons (layer, sub-layer,
where dropout acts...) is pressed, as the browser does. What a page draws is what ui.views.steps records as drawn: each
step it draws (formula, shape, numbers, heatmap, drill-down) and each step of a flow, whose buttons draw one step
each (test_each_button_of_a_flow_draws_its_step shows that). Nothing here lists steps or pages by hand.
"""
import sys
from pathlib import Path

import numpy as np
import pytest
from streamlit.proto.Block_pb2 import Block
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine.vit import VisionTransformer, step_table as vit_step_table  # noqa: E402
import streamlit_privates  # noqa: E402
from conftest import page_title  # noqa: E402
from test_app import APP, TEXT_PAGES  # noqa: E402
from ui.core.i18n import EN  # noqa: E402
from ui.core.labels import step_name_key  # noqa: E402
from ui.core.navigation import PAGES, neighbours, page_file  # noqa: E402
from ui.core.runs import run_vit  # noqa: E402
from ui.core.state import AppState, decode  # noqa: E402
from ui.views import steps as views_steps  # noqa: E402

SAME_STEPS = {EN["view.step"], EN["view.head"]}  # a flow's rows of buttons, one per step and one per head: the flow
# records all its steps as drawn, whichever is chosen
WEIGHTS_ROW = "vit.weights.{}"  # a ViT page's weights, keyed by the weights in use (ui/vision/vit_frame.py)
TRAINING_DROPOUT = 0.1  # the paper's P_drop; any p > 0 records the same dropout steps


def spy_on_drawn(monkeypatch, vision: bool) -> list[str]:
    """The names of the steps the pages draw of the text model's traces (or, vision, of the Vision Transformer's), as
    ui.views.steps records them, once per time drawn."""
    names = []
    record = views_steps._record_drawn

    def spy(trace, steps):
        if isinstance(trace.model, VisionTransformer) == vision:
            names.extend(steps)
        record(trace, steps)

    monkeypatch.setattr(views_steps, "_record_drawn", spy)
    return names


@pytest.fixture
def drawn(monkeypatch):
    return spy_on_drawn(monkeypatch, vision=False)


@pytest.fixture
def drawn_vit(monkeypatch):
    return spy_on_drawn(monkeypatch, vision=True)


def press(at, group, label):
    """Press a button of a row (st.segmented_control) as the browser does: it sends the button's label."""
    pressed = WidgetState(id=group.id)
    pressed.string_array_value.data[:] = [label]
    streamlit_privates.send(at, pressed)
    assert not at.exception, [e.message for e in at.exception]


def explore(at, done=frozenset()):
    """Open each tab of the page's sections (only the open one is drawn) and in each, press every combination of
    its rows of buttons, one row after the other; a row that appears after a press (the steps of another sub-layer,
    the layers of another place) is explored in its turn."""
    sections = {key: labels for key, labels in tab_rows(at.main).items() if key not in done}
    if sections:
        key, labels = next(iter(sections.items()))
        for label in labels:
            at.session_state[key] = label  # the browser sends the open tab's label
            at.run()
            explore(at, done | {key})
        return
    rows = [g for g in at.main.button_group if g.key not in done and g.label not in SAME_STEPS]
    if not rows:
        return
    row = rows[0]
    current = list(row.formatted_values)
    for i, label in enumerate(current + [label for label in row.options if label not in current]):
        if i:
            press(at, at.button_group(key=row.key), label)
        explore(at, done | {row.key})


def tab_rows(node) -> dict:
    """The keyed st.tabs under an element tree's node: {key: their labels}. A tab container's widget id ends with its
    key ($$ID-<hash>-<key>)."""
    found = {}
    proto = getattr(node, "proto", None)
    if isinstance(proto, Block) and proto.WhichOneof("type") == "tab_container" and proto.tab_container.id:
        found[proto.tab_container.id.split("-", 2)[2]] = [tab.label for tab in node.children.values()]
    for child in getattr(node, "children", {}).values():
        found |= tab_rows(child)
    return found


def recorded(preset, placement, decoder_only):
    """Every step name the engine records for the app's default sentences, with dropout off and on."""
    model = engine.preset(preset, norm_placement=placement, decoder_only=decoder_only)
    state = AppState()
    return {name for p in (0.0, TRAINING_DROPOUT) for name in model.run(state.src, state.tgt or None, dropout=p)}


@pytest.mark.parametrize("preset, placement, decoder_only", [
    ("hello-world", "post", False), ("hello-world", "pre", False), ("paper", "post", False), ("paper", "pre", False),
    ("hello-world", "post", True), ("paper", "pre", True)])
def test_every_recorded_step_is_drawn_on_a_page(preset, placement, decoder_only, drawn):
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"preset": preset, "lang": "en"})
    settings = {"norm_placement": placement, "decoder_only": decoder_only}
    changed = [f"{field}:{str(value).lower()}" for field, value in settings.items()
               if value != getattr(engine.PRESETS[preset], field)]
    if changed:
        at.query_params["cfg"] = ",".join(changed)
    at.run()
    config = at.session_state["state"].config()
    assert (config.norm_placement, config.decoder_only) == (placement, decoder_only)
    for page in TEXT_PAGES:
        before = len(drawn)
        at.switch_page(page_file(page))
        at.run()
        assert not at.exception, (page, [e.message for e in at.exception])
        assert page_title(at) == EN[f"page.{page}"]
        around = neighbours(page, decoder_only)  # a step page has both: generation, the last, has no next
        if len(drawn) > before or (around and around[1]):  # a page of steps (a stack's opens on a summary): explore it
            explore(at)
    expected = recorded(preset, placement, decoder_only)
    assert not sorted(expected - set(drawn)), f"no page draws {sorted(expected - set(drawn))}"
    assert set(drawn) <= expected, sorted(set(drawn) - expected)


@pytest.mark.parametrize("vcfg", ["", "patch:2,n_layers:3"])
def test_every_vit_step_is_drawn_on_a_vit_page(vcfg, drawn_vit):
    """The Vision Transformer's pass, at the shipped sizes and at others, is drawn on its pages (explored as the text
    model's are, but for the weights' row, which would go back to the shipped sizes)."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"lang": "en", **({"vcfg": vcfg} if vcfg else {})})
    at.run()
    vision = decode(dict(at.query_params))[0].vit
    assert at.session_state["state"].vit == vision
    for page in PAGES["vision"]:
        at.switch_page(page_file(page))
        at.run()
        assert not at.exception, (page, [e.message for e in at.exception])
        assert page_title(at) == EN[f"page.{page}"]
        explore(at, frozenset({WEIGHTS_ROW.format(vision.weights)}))
    _, model, trace, _ = run_vit(vision)
    expected = set(trace)
    assert not sorted(expected - set(drawn_vit)), f"no page draws {sorted(expected - set(drawn_vit))}"
    assert set(drawn_vit) <= expected, sorted(set(drawn_vit) - expected)
    table = vit_step_table(model.config)  # the image's steps, each layer's, the head's
    layer = sum(len(table[block]) + len([name for name in table["sublayer"] if name.endswith(str(k))])
                for k, block in model.config.sublayers["enc"].items())  # each sub-layer's, its add and norm
    assert len(expected) == len(table["image"]) + model.settings.n_layers * layer + len(table["head"])


def test_each_button_of_a_flow_draws_its_step(monkeypatch):
    """A flow records all its steps as drawn because each of its buttons draws one with ui.views.steps.step."""
    shown = []
    step = views_steps.step
    monkeypatch.setattr(views_steps, "step",  # step(ctx, name, ...)
                        lambda ctx, name, *args, **kwargs: (shown.append(name), step(ctx, name, *args, **kwargs)))
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"preset": "hello-world", "lang": "en"})
    at.run()
    at.switch_page(page_file("masked_attention"))
    at.run()
    row = next(g for g in at.main.button_group if g.label == EN["view.step"])  # the heads' flow, q to W^O's output
    flow = [f"dec.0.self_attn.{leaf}" for leaf in ("q", "k", "v", "scores", "scaled", "mask", "masked", "weights",
                                                   "heads", "concat", "out")]
    assert row.options == [f"{i}. {EN[step_name_key(name)]}" for i, name in enumerate(flow, start=1)]
    for label, name in zip(row.options, flow):
        shown.clear()
        press(at, at.button_group(key=row.key), label)
        assert [n for n in shown if n in flow] == [name], label


def test_the_dropout_page_shows_the_engines_training_pass():
    from ui.core.format import DIGITS, bmatrix

    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"preset": "hello-world", "lang": "en"})
    at.run()
    at.switch_page(page_file("dropout"))
    at.run()
    model, state = engine.preset("hello-world"), AppState()
    for seed in (0, 7):
        at.number_input(key="dropout.seed").set_value(seed).run()
        trace = model.run(state.src, state.tgt or None, dropout=TRAINING_DROPOUT, seed=seed)
        bodies = [element.value for element in at.latex]
        assert any(rf"{{\text{{Dropout}}}} = {bmatrix(trace['src.dropout'], DIGITS)}" in body for body in bodies), seed
    assert not np.array_equal(trace["src.dropout"], model.run(state.src, state.tgt or None, dropout=0.1)["src.dropout"])
