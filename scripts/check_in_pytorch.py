"""Check in PyTorch: compute every step of the app's Transformer again in PyTorch, from the same weights and token
ids, and print the largest difference from the app's numbers at each step.

    python check_in_pytorch.py [trace.npz]

trace.npz is the app's NPZ export: the settings and the vocabulary ("header"), every step's declaration
("declarations": its kind, the steps or weights it is computed from, its constants), every weight ("param/NAME")
and every step's numbers ("step/NAME"). The script needs only NumPy and PyTorch. It reads the weights and the
token ids and computes every other number itself, in float64: each step from its inputs as computed here, by the
torch operations KINDS gives its kind, with the settings as the app names them. Then each layer that torch's own
nn.TransformerEncoderLayer or nn.TransformerDecoderLayer computes (a decoder-only layer is an encoder layer with the
causal mask) runs whole on the layer's input, and its output is compared with the app's; torch's layers have no
place for the blog's LayerNorm, d_k or d_v other than d_model / h, a divisor other than sqrt(d_k), the blog's
softmax or a layer without its residual connection, whose layers are checked step by step only. A step of a kind
torch has no counterpart for is named and not checked. A difference is relative to the step's largest value where
that is above 1 (a float64 product of numbers near 1e8 is exact to about 1e-8). It exits with 1 if a difference is
larger than TOLERANCE.
"""
import json
import math
import sys
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

TOLERANCE = 1e-9
F64 = torch.float64
# The positional encoding the blog prints for "Hello" and "World" (the "blog_table" setting), rounded by hand.
BLOG_PRINTED_PE = [[0.0, 1.0, 0.0, 1.0], [0.84, 0.99, 0.0, 1.0]]
ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu, "swish": F.silu}  # torch's GELU is the exact x * Phi(x), as the app's


def main(path=Path(__file__).with_name("trace.npz")):
    with np.load(path, allow_pickle=False) as data:
        return check({key: data[key] for key in data.files})


def check(arrays):
    """Every step of the file (its arrays by name, as the NPZ holds them) computed here and compared: 1 if one
    differs by more than TOLERANCE, else 0."""
    header = json.loads(str(arrays["header"]))
    c = {**header["config"], "vocabulary": header["vocabulary"]}  # the settings, as the app's Config names them
    for side in ("src", "tgt"):
        if [c["vocabulary"][i] for i in header[f"{side}_ids"]] != header[f"{side}_tokens"]:
            raise SystemExit(f"the file's {side}_ids are not its {side}_tokens in its vocabulary")
    print(f"{c['preset']}: {' '.join(header['src_tokens'])} -> {' '.join(header['tgt_tokens'])}")
    params = {key[len("param/"):]: torch.tensor(value) for key, value in arrays.items() if key.startswith("param/")}
    app = {key[len("step/"):]: value for key, value in arrays.items() if key.startswith("step/")}
    steps = declarations(arrays)
    with torch.no_grad():
        mine = compute(c, steps, params, app)
        layers = {layer: whole_layer(c, own, params, mine) for layer, own in by_layer(steps).items()}
    return compare(app, mine, layers)


def declarations(arrays):
    """Each step's name, kind, inputs, shape and constants, in computation order; an array constant from its own
    entry "meta/NAME/KEY"."""
    steps = json.loads(str(arrays["declarations"]))
    for step in steps:
        prefix = f"meta/{step['name']}/"
        step["meta"].update({key[len(prefix):]: value for key, value in arrays.items() if key.startswith(prefix)})
    return steps


def compute(c, steps, params, app):
    """Each step from its inputs by its kind's torch operations: the steps as computed here (the app's numbers for a
    step not computed here), the file's weights."""
    mine = {}
    for step in steps:
        equation = KINDS.get(step["kind"])
        if equation is not None:
            inputs = [mine[i] if i in mine else params[i] if i in params else torch.tensor(app[i])
                      for i in step["inputs"]]
            mine[step["name"]] = equation(c, step, *inputs)
    return mine


def compare(app, mine, layers):
    """Print each step's largest difference from the app's (0 where both hold the same inf or NaN), then each whole
    torch layer's; 1 if one is larger than TOLERANCE, else 0."""
    worst, checked = 0.0, 0
    for name, expected in app.items():
        if name not in mine:
            print(f"{name:<34} not checked (no torch counterpart)")
            continue
        gap, checked = difference(mine[name].numpy(), expected), checked + 1
        worst = max(worst, gap)
        print(f"{name:<34} {gap:.2e}{'' if gap <= TOLERANCE else '  > tolerance'}")
    for layer, whole in layers.items():
        if whole is None:
            print(f"{layer}: step by step (torch's layers have no place for these settings)")
            continue
        built, output, value = whole
        gap = difference(value.numpy(), app[output])
        worst = max(worst, gap)
        print(f"{layer}: nn.{built}, its output {output} {gap:.2e}{'' if gap <= TOLERANCE else '  > tolerance'}")
    print(f"largest difference {worst:.2e} over {checked} steps: "
          f"{'OK' if worst <= TOLERANCE else 'DIFFERENT'} (tolerance {TOLERANCE:g}, relative above 1)")
    return 0 if worst <= TOLERANCE else 1


def difference(got, expected):
    """max |got - expected| over the cells, divided by the largest finite |expected| where that is above 1."""
    if got.shape != expected.shape:
        return math.inf
    same = (got == expected) | (np.isnan(got) & np.isnan(expected))
    with np.errstate(invalid="ignore"):  # inf - inf where the two differ elsewhere
        gap = float(np.nan_to_num(np.where(same, 0.0, np.abs(got - expected)), nan=math.inf).max(initial=0.0))
    return gap / max(1.0, float(np.abs(expected[np.isfinite(expected)]).max(initial=0.0)))


# ---- each kind of step in torch operations: (settings, step, *its inputs) -> its value -----------------------------

def embed(c, step, table):
    """E[token] * sqrt(d_model) (paper section 3.4), or E[token]."""
    scale = math.sqrt(c["d_model"]) if c["embed_scale"] else 1.0
    return F.embedding(torch.tensor(step["meta"]["ids"]), table) * scale  # (..., n, d_model)


def positions(c, step, *learned):
    return positional_encoding(c, learned, step["shape"][-2])  # (n, d_model)


def add(c, step, a, b):
    return a + b


def copy(c, step, x):
    return x.clone()


def project(c, step, x, W, b=None):
    """Q_i = X W_i + b_i for every head i at once: head-first weights (h, d_model, d) multiplied on the right."""
    y = x.unsqueeze(-3) @ W  # (..., h, n, d)
    return y if b is None else y + b.unsqueeze(-2)


def scores(c, step, q, k):
    return q @ k.transpose(-1, -2)  # (..., h, n_q, n_k)


def scale(c, step, s):
    return s / (math.sqrt(c["d_k"]) if c["attn_divisor"] == "sqrt_dk" else float(c["attn_divisor"]))


def mask(c, step):
    """-inf where a token is never next (<unk>, or Marian's <pad>), or after the query's position (causal); 0
    elsewhere."""
    if "never" in step["meta"]:
        ids = torch.tensor([c["vocabulary"].index(token) for token in step["meta"]["never"]], dtype=torch.long)
        return torch.zeros(step["shape"], dtype=F64).index_fill(0, ids, -math.inf)  # (V,)
    return nn.Transformer.generate_square_subsequent_mask(step["shape"][-1], dtype=F64)  # (n, n)


def softmax(c, step, x):
    """torch.softmax (it subtracts the row max), or the blog's exp(x) / sum(exp(x)) as written."""
    if c["softmax"] == "stable":
        return torch.softmax(x, dim=-1)
    e = torch.exp(x)
    return e / e.sum(-1, keepdim=True)


def weighted(c, step, weights, v):
    return weights @ v  # (..., h, n_q, d_v)


def concat(c, step, heads):
    return heads.transpose(-3, -2).flatten(-2)  # (..., n, h*d_v)


def linear(c, step, x, W, b=None):
    """x W + b, or x E^T + b with the embedding table E (the output layer tied to it); F.linear multiplies by W^T."""
    return F.linear(x, W if step["meta"].get("transpose") else W.T, b)


def layer_norm(c, step, x, gamma, beta):
    """F.layer_norm ((x - mu) / sqrt(var + eps), the paper's setting), or the blog's (x - mu) / (std + eps)."""
    if c["layer_norm"] == "paper":
        return F.layer_norm(x, gamma.shape, gamma, beta, c["eps"])
    mu = x.mean(-1, keepdim=True)
    std = ((x - mu) ** 2).mean(-1, keepdim=True).sqrt()  # the population standard deviation
    return (x - mu) / (std + c["eps"]) * gamma + beta


def activation(c, step, hidden):
    return ACTIVATIONS[c["activation"]](hidden)


def dropout(c, step, x):
    """The app's own keep mask, with the survivors divided by 1 - rate (F.dropout draws its own mask)."""
    keep, rate = torch.tensor(step["meta"]["keep"]), step["meta"]["rate"]
    return torch.where(keep, x / (1.0 - rate), torch.zeros((), dtype=F64))


KINDS = {"embed": embed, "pos": positions, "add": add, "copy": copy, "proj": project, "scores": scores,
         "scale": scale, "mask": mask, "softmax": softmax, "weighted": weighted, "concat": concat, "linear": linear,
         "layer_norm": layer_norm, "activation": activation, "dropout": dropout,
         "patches": None, "prepend": None, "row": None}  # None: the Vision Transformer's, not in this check


def positional_encoding(c, learned, n):
    """The paper's sinusoid as PyTorch's tutorial writes it, or with Marian's columns (the sines, then the cosines); the
    blog's (column j's exponent 2j / d_model, not
    2 floor(j / 2) / d_model), or its printed table with the further cells rounded to 2 decimals; a learned table;
    none."""
    d, form = c["d_model"], c["pos_encoding"]
    if form == "learned":
        return learned[0][:n]
    if form == "none":
        return torch.zeros(n, d, dtype=F64)
    pos = torch.arange(n, dtype=F64)[:, None]  # (n, 1)
    if form in ("sinusoidal", "sinusoidal_halves"):
        freq = torch.exp(torch.arange(0, d, 2, dtype=F64) * (-math.log(10000.0) / d))  # (ceil(d/2),)
        sines, cosines = torch.sin(pos * freq), torch.cos(pos * freq[: d // 2])
        if form == "sinusoidal_halves":
            return torch.cat([sines, cosines], dim=1)
        pe = torch.zeros(n, d, dtype=F64)
        pe[:, 0::2], pe[:, 1::2] = sines, cosines
        return pe
    j = torch.arange(d, dtype=F64)
    angle = pos / 10000.0 ** (2 * j / d)  # (n, d)
    pe = torch.where(j % 2 == 0, torch.sin(angle), torch.cos(angle))
    if form == "blog":
        return pe
    pe, printed = torch.round(pe, decimals=2), torch.tensor(BLOG_PRINTED_PE, dtype=F64)[:n, :d]
    pe[: len(printed), : printed.shape[1]] = printed
    return pe


# ---- whole layers: torch's nn.TransformerEncoderLayer and nn.TransformerDecoderLayer ------------------------------

def by_layer(steps):
    """The steps of each layer ("enc.0", "dec.1", ...), in computation order."""
    layers = {}
    for step in steps:
        parts = step["name"].split(".")
        if len(parts) > 2 and parts[1].isdigit():
            layers.setdefault(".".join(parts[:2]), []).append(step)
    return layers


def whole_layer(c, own, params, mine):
    """(torch's layer class name, the layer's output step, that output) of the layer whose steps are `own`, run on
    its input as computed here; None where torch's layers have no place for the settings or the pass (a dropout
    mask), or the input was not computed here. Its parts' weights are its steps' inputs: the first attention block's
    projections are the layer's self_attn, the second's (it reads the encoder's output) its multihead_attn."""
    names, kinds = {step["name"] for step in own}, {step["kind"] for step in own}
    outside = list(dict.fromkeys(i for step in own for i in step["inputs"] if i not in names and i not in params))
    if not torch_fits(c) or "dropout" in kinds or not set(outside) <= set(mine):
        return None
    x, memory = mine[outside[0]], (mine[outside[1]] if len(outside) > 1 else None)  # the input, the encoder's output
    kind = nn.TransformerDecoderLayer if memory is not None else nn.TransformerEncoderLayer
    activation = ACTIVATIONS[c["activation"]] if c["activation"] == "swish" else c["activation"]  # torch names two
    layer = kind(c["d_model"], c["n_heads"], c["d_ff"], dropout=0.0, activation=activation,
                 layer_norm_eps=c["eps"], batch_first=True, norm_first=c["norm_placement"] == "pre", dtype=F64)
    layer.load_state_dict(layer_state(own, params), strict=True)  # every weight the file's, none torch's own
    causal = nn.Transformer.generate_square_subsequent_mask(len(x), dtype=F64) if "mask" in kinds else None
    if memory is not None:
        out = layer.eval()(x[None], memory[None], tgt_mask=causal, tgt_is_causal=causal is not None)
    else:
        out = layer.eval()(x[None], src_mask=causal, is_causal=causal is not None)
    return kind.__name__, own[-1]["name"], out[0]


def torch_fits(c):
    """Whether torch's layers compute the settings' layer: heads of d_model / h, sqrt(d_k), a stable softmax, the
    paper's LayerNorm, a residual connection around each sub-layer."""
    return (c["d_k"] * c["n_heads"] == c["d_model"] and c["d_v"] == c["d_k"] and c["attn_divisor"] == "sqrt_dk"
            and c["softmax"] == "stable" and c["layer_norm"] == "paper" and c["residual"])


def layer_state(own, params):
    """The torch layer's weights from the steps' inputs, in torch's layout (it multiplies x @ W.T); a bias turned
    off (not an input) is zeros."""
    def block(step):
        return step["name"].rsplit(".", 1)[0]

    attention = list(dict.fromkeys(block(step) for step in own if step["kind"] == "proj"))
    state = {}
    for theirs, name in zip(("self_attn", "multihead_attn"), attention):
        projections = [step for step in own if step["kind"] == "proj" and block(step) == name]  # Q, K, V
        out = next(step for step in own if step["kind"] == "linear" and block(step) == name)
        W = [params[step["inputs"][1]] for step in projections]  # each (h, d_model, d)
        b = [bias(params, step, (w.shape[0], w.shape[2])) for step, w in zip(projections, W)]  # each (h, d)
        state.update({f"{theirs}.in_proj_weight": torch.cat([w.transpose(1, 2).flatten(0, 1) for w in W]),
                      f"{theirs}.in_proj_bias": torch.cat([v.flatten() for v in b]),
                      f"{theirs}.out_proj.weight": params[out["inputs"][1]].T,
                      f"{theirs}.out_proj.bias": bias(params, out, params[out["inputs"][1]].shape[1:])})
    norms = [step for step in own if step["kind"] == "layer_norm"]
    ffn = [step for step in own if step["kind"] == "linear" and block(step) not in attention]
    for i, step in enumerate(norms, start=1):
        state.update({f"norm{i}.weight": params[step["inputs"][1]], f"norm{i}.bias": params[step["inputs"][2]]})
    for i, step in enumerate(ffn, start=1):
        W = params[step["inputs"][1]]
        state.update({f"linear{i}.weight": W.T, f"linear{i}.bias": bias(params, step, W.shape[1:])})
    return state


def bias(params, step, shape):
    """A step's bias, its third input, or zeros where the settings have none (a bias turned off adds 0, exactly)."""
    return params[step["inputs"][2]] if len(step["inputs"]) > 2 else torch.zeros(shape, dtype=F64)


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
