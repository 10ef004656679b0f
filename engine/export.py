"""Writing a trace out: RFC 8259 JSON (non-finite numbers as strings), NPZ (no pickles) or long-form CSV, each with
its header (the settings, the vocabulary, the sentence's tokens and ids), so that a file is self-contained; and the
PyTorch check: the NPZ, which also holds every step's declaration, with a script that computes each step again in
PyTorch from its kind and inputs and compares it (`scripts/check_in_pytorch.py` of the checkout, which the engine
hands out and never imports: it imports torch)."""
from __future__ import annotations

import csv
import json
import zipfile
from pathlib import Path

import numpy as np

CHECK_SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "check_in_pytorch.py"

NONFINITE = {float("inf"): "inf", float("-inf"): "-inf"}


def header(trace) -> dict:
    """What makes a file self-contained: the settings, the vocabulary (a token's id is its place), the tokens and ids
    the pass read (a decoder-only model's tgt_* are its one sequence) and the words read as <unk>."""
    model = trace.model
    return {"config": {"preset": model.name, "seed": model.seed, **model.config.as_dict()},
            "vocabulary": list(model.vocab.tokens),
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


def write_json(trace, out, params: bool = True):
    """Streams the JSON one array at a time, so the paper's 44 million parameters fit in memory; params=False leaves
    the weights out (the NPZ holds them)."""
    head = json.dumps(header(trace), ensure_ascii=False, allow_nan=False)
    out.write(head[:-1] + ', "params": {')
    for i, (name, value) in enumerate(trace.model.params.items() if params else ()):
        out.write(("," if i else "") + f"{json.dumps(name)}: {json.dumps(jsonable(value), allow_nan=False)}")
    out.write('}, "steps": [')
    for i, step in enumerate(trace.steps()):
        entry = {"name": step.name, "shape": list(step.shape), "formula": step.formula, "value": jsonable(step.value)}
        out.write(("," if i else "") + json.dumps(entry, ensure_ascii=False, allow_nan=False))
    out.write("]}\n")


def write_npz(trace, out):
    """npz_arrays, compressed."""
    np.savez_compressed(out, **npz_arrays(trace))


def npz_arrays(trace) -> dict:
    """Arrays under "step/NAME" and "param/NAME"; the header and the steps' declarations (`declarations`) as JSON
    strings; the declarations' array constants (a dropout's keep mask) under "meta/NAME/KEY"."""
    entries, arrays = declarations(trace)
    arrays.update({f"step/{s.name}": s.value for s in trace.steps()})
    arrays.update({f"param/{name}": value for name, value in trace.model.params.items()})
    arrays["header"] = np.array(json.dumps(header(trace), ensure_ascii=False))
    arrays["declarations"] = np.array(json.dumps(entries, ensure_ascii=False))
    return arrays


def declarations(trace) -> tuple[list, dict]:
    """What the PyTorch check computes each step from, in computation order: its name, kind (engine/kinds.py), inputs
    (steps or parameters, by name), shape and constants; and the constants that are arrays, by "meta/NAME/KEY"."""
    entries, arrays = [], {}
    for step in trace.steps():
        meta = {}
        for key, value in step.meta.items():
            if isinstance(value, np.ndarray):
                arrays[f"meta/{step.name}/{key}"] = value
            else:
                meta[key] = value
        entries.append({"name": step.name, "kind": step.kind, "inputs": list(step.inputs),
                        "shape": list(step.shape), "meta": meta})
    return entries, arrays


def write_csv(trace, out, params: bool = True):
    """One row per number: source ("step" or "param"), name, index (i,j,...), value; first the header's rows (source
    "header": config.FIELD, or a list's name and position, e.g. vocabulary,3,hello). params=False: no weights."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["source", "name", "index", "value"])
    writer.writerows(("header", *row) for row in _header_rows(header(trace)))
    arrays = (("step", ((s.name, s.value) for s in trace.steps())),) + ((("param", trace.model.params.items()),)
                                                                       if params else ())
    for source, items in arrays:
        for name, value in items:
            for index, x in np.ndenumerate(value):
                writer.writerow([source, name, ",".join(map(str, index)), repr(float(x))])


def _header_rows(head: dict):
    """(name, index, value) of every setting (config.FIELD) and every item of the header's lists."""
    for key, value in head.items():
        if isinstance(value, dict):
            yield from ((f"{key}.{field}", "", _text(item)) for field, item in value.items())
        else:
            yield from ((key, str(i), _text(item)) for i, item in enumerate(value))


def _text(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def write_torch_check(trace, out):
    """A zip of check_in_pytorch.py and trace.npz (write_npz): `python check_in_pytorch.py` where it is unpacked
    computes every step again in PyTorch, from its declaration, and prints its largest difference from this trace."""
    with zipfile.ZipFile(out, "w") as archive:  # stored: the NPZ is compressed already
        archive.writestr("check_in_pytorch.py", CHECK_SCRIPT.read_text(encoding="utf-8"), zipfile.ZIP_DEFLATED)
        with archive.open("trace.npz", "w") as entry:  # written into the zip as made: the paper's is 340 MB
            write_npz(trace, entry)


WRITERS = {"json": write_json, "npz": write_npz, "csv": write_csv, "pytorch": write_torch_check}
BINARY = ("npz", "pytorch")  # written to bytes, not text

