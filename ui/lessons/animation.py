"""The forward pass as the animation page's frames: which numbers each frame shows, read from the page's trace (the
encoder) and a greedy generation of the same model (the decoder, one token at a time). Pure: no Streamlit here;
ui/lessons/animation_views.py plays the frames in the browser.

A frame is a dict: its `kind` (tokens, embed, attention, vectors, output), its `stage` on the rail of the whole pass
(tokens, embed, enc.<l>, enc.out, dec.<l>, output), and its numbers as arrays taken from the trace unchanged:

    frames(trace, generated)[2]["weights"] is trace["enc.0.attn.weights"]          # (h, n, n), every head
    decoder frames of step s read the last step's trace, its row s - 1 only: (h, 1, s) or (h, 1, n)

A step's newest row is the row the last step's pass computes at its position (the mask hides every later token from
it: tests/test_animation.py holds them equal within 1e-12), so the decoder's frames cost one forward pass, not one a
step (each a whole encoder and decoder: 0.5 s with a full-size translator).

`payload` turns them into the component's JSON: numbers rounded, vectors cut to their first MAX_DIMS components.
"""
from __future__ import annotations

import numpy as np

from engine.generate import generate

from ui.core.labels import top_tokens

MAX_TOKENS = 16  # source tokens the animation draws: h panels of n x n lines stay readable (and light to send)
MAX_GENERATED = 6  # tokens the decoder writes at most: each is a whole forward pass (1.5 s with the paper preset)
MAX_DIMS = 16  # a vector's components drawn as cells
DIGITS = 4  # decimals sent to the browser
TOP = 5  # the output frame's most likely tokens


def greedy(model, src: str):
    """The engine's greedy generation the decoder frames show (engine.generate, at most MAX_GENERATED tokens)."""
    return generate(model, src, max_len=min(MAX_GENERATED, model.config.max_len - 1))


def stages(config) -> list[str]:
    """The rail of the whole pass, in the order data flows."""
    return (["tokens", "embed"] + [f"enc.{l}" for l in range(config.depth("enc"))] + ["enc.out"] +
            [f"dec.{l}" for l in range(config.depth("dec"))] + ["output"])


def frames(trace, generated) -> list[dict]:
    """The encoder once (its output is reused), then for every token the decoder writes: each decoder layer's masked
    self-attention and cross-attention of the newest position, and the output layer's choice."""
    src = list(trace.src_tokens)
    config = trace.model.config
    shown = [{"kind": "tokens", "stage": "tokens", "tokens": src, "ids": [int(i) for i in trace.src_ids]},
             {"kind": "embed", "stage": "embed", "tokens": src, "embed": trace["src.embed"],
              "pos": trace["src.pos"], "input": trace["src.input"]}]
    shown += [_attention(trace, f"enc.{l}.attn", f"enc.{l}", src, src) for l in range(config.depth("enc"))]
    shown.append({"kind": "vectors", "stage": "enc.out", "tokens": src, "values": trace["enc.out"]})
    passes = generated.steps[-1].trace if generated.steps else None  # the longest prefix's, lazy
    for step_number, step in enumerate(generated.steps, start=1):
        shown += _decoder_step(passes, step, step_number, src, config.depth("dec"))
    return shown


def _decoder_step(passes, step, step_number: int, src: list, layers: int) -> list[dict]:
    """The frames of a step: its newest position's rows, read from `passes` (the last step's trace)."""
    prefix, newest, row = list(step.prefix_tokens), [step.prefix_tokens[-1]], step_number - 1
    written = {"step": step_number, "written": prefix}
    shown = []
    for l in range(layers):
        shown += [{**_attention(passes, f"dec.{l}.self_attn", f"dec.{l}", newest, prefix, row), **written},
                  {**_attention(passes, f"dec.{l}.cross_attn", f"dec.{l}", newest, src, row), **written}]
    top = top_tokens(step.probs, step.trace.model.vocab.tokens, TOP)
    shown.append({"kind": "output", "stage": "output", "top": top, "chosen": step.token, "prob": step.prob,
                  **written, "written": prefix + [step.token]})
    return shown


def _attention(trace, block: str, stage: str, queries: list, keys: list, row: int | None = None) -> dict:
    """An attention block's weights: all of them, or one query's `row` over its keys (a later one's are masked)."""
    weights = trace[f"{block}.weights"]  # (h, n_q, n_k)
    return {"kind": "attention", "stage": stage, "block": block, "queries": queries, "keys": keys,
            "weights": weights if row is None else weights[:, row:row + 1, :len(keys)]}  # (h, 1, n_k): the row


def payload(shown: list[dict]) -> list[dict]:
    """The frames as JSON for the browser: arrays as lists rounded to DIGITS decimals (None for inf and NaN), vectors'
    first MAX_DIMS components (with `dims`, how many there are)."""
    return [{key: _json(key, value) for key, value in frame.items()} | _dims(frame) for frame in shown]


def _json(key: str, value):
    if isinstance(value, np.ndarray):
        kept = value[..., :MAX_DIMS] if key in VECTOR_KEYS else value
        return np.where(np.isfinite(kept), np.round(kept, DIGITS), None).tolist()  # JSON has no inf or NaN: null
    if isinstance(value, float):
        return round(value, DIGITS)
    if key == "top":
        return [[token, round(p, DIGITS)] for token, p in value]
    return value


VECTOR_KEYS = ("embed", "pos", "input", "values")


def _dims(frame: dict) -> dict:
    vectors = [frame[key] for key in VECTOR_KEYS if key in frame]
    return {"dims": int(vectors[0].shape[-1])} if vectors else {}
