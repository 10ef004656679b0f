"""Writing a trace out: RFC 8259 JSON (non-finite numbers as strings), NPZ (no pickles) or long-form CSV."""
from __future__ import annotations

import csv
import io
import json

import numpy as np

NONFINITE = {float("inf"): "inf", float("-inf"): "-inf"}


def header(trace) -> dict:
    model = trace.model
    return {"config": {"preset": model.name, "seed": model.seed, **model.config.as_dict()},
            "src_tokens": list(trace.src_tokens), "tgt_tokens": list(trace.tgt_tokens),
            "src_ids": list(trace.src_ids), "tgt_ids": list(trace.tgt_ids),
            "unknown": [{"side": side, "word": word} for side, word in trace.unknown]}


def jsonable(array: np.ndarray):
    """Nested lists of floats, with inf, -inf and NaN written as the strings "inf", "-inf", "nan"."""
    values = np.asarray(array, dtype=float)
    if np.all(np.isfinite(values)):
        return values.tolist()
    return _replace_nonfinite(values.tolist())


def _replace_nonfinite(value):
    if isinstance(value, list):
        return [_replace_nonfinite(v) for v in value]
    if value != value:
        return "nan"
    return NONFINITE.get(value, value)


def write_json(trace, out):
    """Streams the JSON one array at a time, so the paper's 44 million parameters fit in memory."""
    head = json.dumps(header(trace), ensure_ascii=False, allow_nan=False)
    out.write(head[:-1] + ', "params": {')
    for i, (name, value) in enumerate(trace.model.params.items()):
        out.write(("," if i else "") + f"{json.dumps(name)}: {json.dumps(jsonable(value), allow_nan=False)}")
    out.write('}, "steps": [')
    for i, step in enumerate(trace.steps()):
        entry = {"name": step.name, "shape": list(step.shape), "formula": step.formula, "value": jsonable(step.value)}
        out.write(("," if i else "") + json.dumps(entry, ensure_ascii=False, allow_nan=False))
    out.write("]}\n")


def write_npz(trace, out):
    """Arrays under "step/NAME" and "param/NAME"; tokens as string arrays; the header as a JSON string."""
    arrays = {f"step/{s.name}": s.value for s in trace.steps()}
    arrays.update({f"param/{name}": value for name, value in trace.model.params.items()})
    arrays["header"] = np.array(json.dumps(header(trace), ensure_ascii=False))
    np.savez_compressed(out, **arrays)


def write_csv(trace, out):
    """One row per number: source ("step" or "param"), name, index (i,j,...), value."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["source", "name", "index", "value"])
    for source, items in (("step", ((s.name, s.value) for s in trace.steps())), ("param", trace.model.params.items())):
        for name, value in items:
            for index, x in np.ndenumerate(value):
                writer.writerow([source, name, ",".join(map(str, index)), repr(float(x))])


WRITERS = {"json": write_json, "npz": write_npz, "csv": write_csv}


def to_json_text(trace) -> str:
    buffer = io.StringIO()
    write_json(trace, buffer)
    return buffer.getvalue()
