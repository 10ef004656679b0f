"""The passes whose steps' inputs tests/data/step_inputs.json records: both presets, pre- and post-norm,
decoder-only, a padded batch, training with dropout, every bias and table switch, and the Vision Transformer.

    .venv/bin/python tests/step_inputs_cases.py    # rewrite the file from today's engine (review its diff)
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import engine  # noqa: E402
from engine import vit  # noqa: E402

RECORD = Path(__file__).with_name("data") / "step_inputs.json"
SRC, TGT = "Hello World", "hola mundo"
SMALL = dict(d_model=12, n_heads=3, d_ff=20, n_layers=2)
PAIRS = [("Hello World", "hola mundo"), ("the cat sat", "el gato")]
TEXT = {  # case -> (preset, overrides, a padded batch or one sentence pair, dropout rate)
    "hello-world": ("hello-world", {}, False, 0.0),
    "hello-world, dropout": ("hello-world", {}, False, 0.1),
    "paper": ("paper", {}, False, 0.0),
    "paper, dropout": ("paper", SMALL, False, 0.1),
    "paper, batch": ("paper", SMALL, True, 0.0),
    "paper, batch, dropout": ("paper", SMALL, True, 0.1),
    "attention biases": ("paper", {**SMALL, "attn_bias": True}, False, 0.0),  # PyTorch's; the paper has none
    "pre-norm": ("paper", {**SMALL, "norm_placement": "pre"}, False, 0.0),
    "pre-norm, batch, dropout": ("paper", {**SMALL, "norm_placement": "pre"}, True, 0.1),
    "decoder-only": ("paper", {**SMALL, "decoder_only": True}, False, 0.0),
    "decoder-only, pre-norm, batch": ("paper", {**SMALL, "decoder_only": True, "norm_placement": "pre"}, True, 0.0),
    "no biases, untied, learned positions": ("paper", {**SMALL, "attn_bias": False, "ffn_bias": False,
                                                        "tied_output": False, "shared_embeddings": False,
                                                        "pos_encoding": "learned"}, False, 0.0),
    "no residual, gelu": ("paper", {**SMALL, "residual": False, "activation": "gelu"}, False, 0.0),
}


def text_inputs(preset, overrides, batch, dropout) -> dict:
    model = engine.preset(preset, **overrides)
    trace = (model.run_batch(PAIRS, dropout=dropout, seed=3) if batch
             else model.run(SRC, TGT, dropout=dropout, seed=3))
    return {step.name: list(step.inputs) for step in trace.steps()}


def vit_inputs(batch: bool) -> dict:
    model = vit.VisionTransformer.initial()
    s = model.settings
    image = [[[0.5]] * s.width] * s.height
    trace = model.run([image, image] if batch else image)
    return {step.name: list(step.inputs) for step in trace.steps()}


def every_case() -> dict:
    return {**{case: text_inputs(*how) for case, how in TEXT.items()},
            "vit": vit_inputs(False), "vit, batch": vit_inputs(True)}


if __name__ == "__main__":
    cases = every_case()  # one line a step, so that a diff shows the steps whose inputs changed
    RECORD.write_text("{\n" + ",\n".join(
        f"{json.dumps(case)}: {{\n" + ",\n".join(f"  {json.dumps(name)}: {json.dumps(inputs)}"
                                                  for name, inputs in steps.items()) + "\n}"
        for case, steps in cases.items()) + "\n}\n")
