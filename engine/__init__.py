"""A pure-NumPy encoder-decoder Transformer whose forward pass records every intermediate tensor.

    import engine
    model = engine.preset("hello-world")
    trace = model.run("Hello World")
    trace["enc.0.attn.scores"]            # (h, n, n)
    trace.step("enc.0.attn.scores").formula
    trace.explain("enc.0.attn.scores", (0, 0, 1)).text
"""
from .checkpoint import trained
from .config import Config
from .model import Model
from .params import param_shapes
from .presets import DESCRIPTIONS, PRESETS, preset, with_words
from .trace import Step, Trace

__all__ = ["Config", "Model", "Step", "Trace", "DESCRIPTIONS", "PRESETS", "param_shapes", "preset", "trained",
           "with_words"]
