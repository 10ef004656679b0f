"""What follows from the step tables, checked without an app, a browser or PyTorch, in the fast tier: a step or a
stack's section added, renamed or dropped in the declarations (engine/model.py's step_table, engine/vit.py's) that
leaves presenter mode's rail or backpropagation behind fails in `make test-fast`, not only in the slow tests that walk
the pages (tests/test_presenter.py opens every slide in the app, tests/test_step_coverage.py finds every step drawn
on a page, tests/test_backward.py compares the gradients with PyTorch's).

* The rail (ui.core.navigation.slides): one slide for each step an inference pass records, but a stack's output, which
  its stack page's sections show; the tokens page, and each stack page's sections, one slide each.
* The Vision Transformer's rail (vision_slides): one slide for each step but the patches, which the patches page
  shows; each layer's class-token attention map.
* Backward (engine.backward.loss_and_grads): a gradient for every step the loss is computed from, the logits and all
  before them, in the reverse order of the pass; inference and training passes, both placements, several layers."""
import pytest

import engine
from engine import vit
from engine.backward import loss_and_grads
from engine.vit import VisionTransformer, ViTConfig
from ui.core.navigation import FLOWS, PAGES, STACK_SECTIONS, slides, vision_slides, vision_step
from ui.core.state.vision import VisionState, image

SRC, TGT = "Hello World", "hola mundo"
SMALL = dict(d_model=16, n_heads=4, d_ff=24)  # the sizes change no step's name; the paper's own take seconds a pass
MODELS = [("hello-world", {}), ("hello-world", {"norm_placement": "pre"}),
          ("hello-world", {"n_enc_layers": 2, "n_dec_layers": 3}), ("hello-world", {"decoder_only": True}),
          ("hello-world", {"decoder_only": True, "n_dec_layers": 2, "norm_placement": "pre"}),
          ("paper", {**SMALL, "n_layers": 2}), ("paper", {**SMALL, "n_layers": 2, "norm_placement": "pre"})]
STACK_PAGES = {"enc": "encoder_stack", "dec": "decoder_stack"}


def slide_step(page: str, view: dict) -> str | None:
    """The full name of the step a text model's slide shows (its page's block, in its stack and layer), or None for a
    slide of a page or a section."""
    if "step" not in view:
        return None
    stack, side = ("enc", "src") if page in PAGES["encoder"] else ("dec", "tgt")
    layer = f"{stack}.{view.get('layer', 0)}"
    block = FLOWS[page][0] if page in FLOWS else "sublayer"  # the add & norm pages follow the placement
    prefix = {"embedding": side, "output": "", "sublayer": layer}.get(block, f"{layer}.{block}")
    return f"{prefix}.{view['step']}".lstrip(".")


@pytest.mark.parametrize("preset, overrides", MODELS)
def test_every_step_of_a_pass_has_one_slide(preset, overrides):
    model = engine.preset(preset, **overrides)
    deck = slides(model.config)
    steps = [step.name for step in model.run(SRC, TGT).steps()]
    outputs = [f"{stack}.out" for stack in STACK_PAGES if f"{stack}.out" in steps]
    shown = [slide_step(page, view) for _, page, view in deck]
    assert sorted(name for name in shown if name) == sorted(name for name in steps if name not in outputs)
    pages = [(page, view) for (_, page, view), name in zip(deck, shown) if name is None]
    assert pages == ([] if model.config.decoder_only else [("tokens", {})]) + [
        (STACK_PAGES[out.split(".")[0]], {"section": section})
        for out in outputs for section in STACK_SECTIONS.values()]


@pytest.mark.parametrize("settings", [ViTConfig(), ViTConfig(patch=2, n_layers=3)])
def test_every_vision_step_has_one_slide(settings):
    model = VisionTransformer.initial(settings, seed=0)
    names = list(model.run(image(VisionState())))
    deck = vision_slides(names, settings.n_layers)
    shown = [vision_step(page, view) for _, page, view in deck]
    patches = next(iter(vit.step_table(model.config)["image"]))  # the patches page's
    assert sorted(name for name in shown if name) == sorted(name for name in names if name != f"img.{patches}")
    at = [{"layer": layer} if settings.n_layers > 1 else {} for layer in range(settings.n_layers)]
    assert [(page, view) for (_, page, view), name in zip(deck, shown) if name is None] == [("vit_patches", {})] + [
        ("vit_encoder", {**layer, "section": 0}) for layer in at]  # each layer's class-token attention map


@pytest.mark.parametrize("dropout", [0.0, 0.1])
@pytest.mark.parametrize("preset, overrides", [(p, o) for p, o in MODELS if not o.get("decoder_only")])
def test_backward_reaches_every_step_the_loss_is_computed_from(preset, overrides, dropout):
    result = loss_and_grads(engine.preset(preset, **overrides), SRC, TGT, dropout=dropout)
    steps = [step.name for step in result.trace.steps()]
    read = steps[:steps.index("logits") + 1]  # the loss reads the logits; the masked logits and probabilities after
    assert list(result.backward) == [f"grad.{name}" for name in reversed(read)]  # them are the reader's
