"""Check in PyTorch: rebuild the app's Transformer from torch.nn layers, run the same sentence, and print the largest
difference from the app's numbers at every step.

    python check_in_pytorch.py [trace.npz]

trace.npz is the app's NPZ export: the settings and the vocabulary ("header"), every weight ("param/NAME") and every
step's numbers ("step/NAME"). The script needs only NumPy and PyTorch. It reads the weights and the token ids and
computes everything else itself, in float64. Each layer is nn.TransformerEncoderLayer or nn.TransformerDecoderLayer
(a decoder-only model's layer is an encoder layer with the causal mask) wherever the settings allow; what torch's
layers cannot express (the blog's LayerNorm; d_k or d_v other than d_model / h, a divisor other than sqrt(d_k) or
the blog's softmax, which nn.MultiheadAttention has no place for) is written out below with torch operations. The
steps inside a layer come from the layer's own parts (its nn.MultiheadAttention, nn.LayerNorm, nn.Linear), the
layer's output from the torch layer's forward. It exits with 1 if a step differs by more than TOLERANCE.
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
# The positional encoding the blog prints for "Hello" and "World" (the "blog_table" setting), rounded by hand.
BLOG_PRINTED_PE = [[0.0, 1.0, 0.0, 1.0], [0.84, 0.99, 0.0, 1.0]]
ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}  # torch's GELU is the exact x * Phi(x), as the app's
torch.set_default_dtype(torch.float64)


def main(path=Path(__file__).with_name("trace.npz")):
    with np.load(path, allow_pickle=False) as data:
        header = json.loads(str(data["header"]))
        params = {key[len("param/"):]: torch.from_numpy(data[key]) for key in data.files if key.startswith("param/")}
        app = {key[len("step/"):]: data[key] for key in data.files if key.startswith("step/")}
    c, vocabulary = header["config"], header["vocabulary"]
    for side in ("src", "tgt"):
        if [vocabulary[i] for i in header[f"{side}_ids"]] != header[f"{side}_tokens"]:
            raise SystemExit(f"the file's {side}_ids are not its {side}_tokens in its vocabulary")
    print(f"{c['preset']}: {' '.join(header['src_tokens'])} -> {' '.join(header['tgt_tokens'])}")
    mine = {}

    def record(name, value):
        mine[name] = value
        return value

    with torch.no_grad():
        forward(record, Model(c, params), header, vocabulary)
    return compare(app, mine)


def compare(app, mine):
    """Print each step's largest difference |PyTorch - app| (0 where both hold the same inf or NaN); 1 if one is
    larger than TOLERANCE or a step of the file was not computed here, else 0."""
    worst = 0.0
    for name, expected in app.items():
        got = mine[name].numpy() if name in mine else None
        if got is None or got.shape != expected.shape:
            gap = math.inf
        else:
            same = (got == expected) | (np.isnan(got) & np.isnan(expected))
            with np.errstate(invalid="ignore"):  # inf - inf where the two differ elsewhere
                gap = float(np.nan_to_num(np.where(same, 0.0, np.abs(got - expected)), nan=math.inf).max(initial=0.0))
        worst = max(worst, gap)
        note = "" if gap <= TOLERANCE else ("  not computed here" if got is None else "  > tolerance")
        print(f"{name:<34} {gap:.2e}{note}")
    print(f"largest difference {worst:.2e} over {len(app)} steps: "
          f"{'OK' if worst <= TOLERANCE else 'DIFFERENT'} (tolerance {TOLERANCE:g})")
    return 0 if worst <= TOLERANCE else 1


# ---- the forward pass, step by step, under the app's step names ---------------------------------------------------

def forward(record, model, header, vocabulary):
    """The encoder reads the source; the decoder reads SOS + the target (a decoder-only model: source, SOS, target,
    as the file's tgt_ids) and the encoder's output; then the next token's probabilities."""
    memory = None
    if not model.c["decoder_only"]:
        memory = stack(record, model, "enc", embedding(record, model, "src", header["src_ids"]))
    y = stack(record, model, "dec", embedding(record, model, "tgt", header["tgt_ids"]), memory)
    output(record, model, y, vocabulary)


def embedding(record, model, side, ids):
    """X = E[token] * sqrt(d_model) + PE."""
    c = model.c
    table = nn.Embedding.from_pretrained(model.params[embed_name(c, side)])
    scale = math.sqrt(c["d_model"]) if c["embed_scale"] else 1.0
    x = record(f"{side}.embed", table(torch.tensor(ids)) * scale)  # (n, d_model)
    pe = record(f"{side}.pos", positional_encoding(c, model.params, len(ids)))  # (n, d_model)
    return record(f"{side}.input", x + pe)


def stack(record, model, name, x, memory=None):
    """A stack's layers, then its output: the last layer's (post-norm) or its final LayerNorm (pre-norm)."""
    c = model.c
    mask = None if name == "enc" else nn.Transformer.generate_square_subsequent_mask(len(x), dtype=torch.float64)
    for l, layer in enumerate(model.layers[name]):
        given = x
        x = layer_steps(record, c, f"{name}.{l}", layer.parts, x, memory, mask)
        if layer.whole is not None:  # the layer's output from the torch layer's own forward
            last = ("add" if c["norm_placement"] == "pre" else "ln") + str(max(sublayers(c)[name]))
            x = record(f"{name}.{l}.{last}", run_whole(layer.whole, given, memory, mask))
    if c["norm_placement"] == "pre":
        return record(f"{name}.out", layer_norm(c, model.params, f"{name}.ln_final")(x))
    return record(f"{name}.out", x.clone())


def layer_steps(record, c, p, parts, x, memory, mask):
    """Each sub-layer k: LayerNorm(x + Sublayer(x)) post-norm, x + Sublayer(LayerNorm(x)) pre-norm."""
    pre = c["norm_placement"] == "pre"
    for k, sub in sublayers(c)[p.split(".")[0]].items():
        norm = parts[f"ln{k}"]
        given = record(f"{p}.ln{k}", norm(x)) if pre else x
        if sub == "ffn":
            hidden = record(f"{p}.ffn.hidden", parts["linear1"](given))  # (n, d_ff)
            out = record(f"{p}.ffn.out", parts["linear2"](record(f"{p}.ffn.act", parts["activation"](hidden))))
        else:
            out = attention_steps(record, f"{p}.{sub}", parts[sub], given, memory if sub == "cross_attn" else given,
                                  mask if sub == "self_attn" else None)
        x = record(f"{p}.add{k}", x + out)
        if not pre:
            x = record(f"{p}.ln{k}", norm(x))
    return x


def attention_steps(record, p, attn, x_q, x_kv, mask):
    """Q, K, V per head, S = QK^T, S / divisor, + M, the weights and the output from the attention module itself."""
    q, k, v = (record(f"{p}.{m}", project(attn, x, m)) for m, x in zip("qkv", (x_q, x_kv, x_kv)))  # (h, n, d)
    scaled = record(f"{p}.scaled", record(f"{p}.scores", q @ k.transpose(-1, -2)) / divisor_of(attn))  # (h, n, m)
    if mask is not None:
        record(f"{p}.masked", scaled + record(f"{p}.mask", mask))
    out, weights = attend(attn, x_q, x_kv, mask)
    record(f"{p}.weights", weights)  # (h, n, m)
    heads = record(f"{p}.heads", weights @ v)  # (h, n, d_v)
    record(f"{p}.concat", heads.transpose(0, 1).reshape(len(x_q), -1))  # (n, h*d_v)
    return record(f"{p}.out", out)  # (n, d_model)


def output(record, model, y, vocabulary):
    """P = softmax(y W_out + b_out + M), W_out = E^T when tied, M = -inf at <unk>, never a next token."""
    c, P = model.c, model.params
    W = P[embed_name(c, "tgt")] if c["tied_output"] else P["unembed.W"].T  # (V, d_model), as F.linear takes it
    logits = record("logits", F.linear(y, W, P["unembed.b"]))  # (n, V)
    mask = torch.zeros(len(vocabulary))
    mask[vocabulary.index("<unk>")] = -math.inf
    masked = record("masked_logits", logits + record("vocab_mask", mask))
    record("probs", softmax(masked, c["softmax"]))


# ---- the model: torch.nn layers where the settings allow ----------------------------------------------------------

class Layer:
    """A layer's parts by the names its steps use (attn, self_attn, cross_attn, ln1.., linear1, activation, linear2)
    and, where torch has it, the whole nn layer (`whole`), whose parts they are."""

    def __init__(self, parts, whole=None):
        self.parts, self.whole = parts, whole


class Model:
    def __init__(self, c, params):
        self.c, self.params = c, params
        self.layers = {name: [make_layer(c, params, name, l) for l in range(depth(c, name))] for name in ("enc", "dec")}
        for name, layers in self.layers.items():
            for l, layer in enumerate(layers):
                parts = sorted({type(m).__name__ for m in layer.parts.values() if isinstance(m, nn.Module)})
                built = f"nn.{type(layer.whole).__name__}" if layer.whole else "written out"
                print(f"{name}.{l}: {built} ({', '.join(parts)})")


def make_layer(c, P, name, l):
    if attention_fits(c) and c["layer_norm"] == "paper":
        whole = torch_layer(c, P, name, l)
        return Layer({**{part: getattr(whole, theirs) for part, theirs in torch_names(c, name).items()},
                      "activation": whole.activation}, whole)
    p, parts = f"{name}.{l}", {"activation": ACTIVATIONS[c["activation"]]}
    for part in torch_names(c, name):
        if part.startswith("ln"):
            parts[part] = layer_norm(c, P, f"{p}.{part}")
        elif part.startswith("linear"):
            sizes = (c["d_model"], c["d_ff"]) if part == "linear1" else (c["d_ff"], c["d_model"])
            parts[part] = loaded(nn.Linear(*sizes), part_state(c, P, p, part))
        elif attention_fits(c):
            parts[part] = loaded(nn.MultiheadAttention(c["d_model"], c["n_heads"], batch_first=True),
                                 part_state(c, P, p, part))
        else:
            parts[part] = WrittenAttention(c, P, f"{p}.{part}")
    return Layer(parts)


def attention_fits(c):
    """Whether nn.MultiheadAttention computes the settings' attention: heads of d_model / h, sqrt(d_k), a stable
    softmax."""
    return (c["d_k"] * c["n_heads"] == c["d_model"] and c["d_v"] == c["d_k"] and c["attn_divisor"] == "sqrt_dk"
            and c["softmax"] == "stable")


def torch_layer(c, P, name, l):
    decoder = name == "dec" and not c["decoder_only"]
    kind = nn.TransformerDecoderLayer if decoder else nn.TransformerEncoderLayer
    layer = kind(c["d_model"], c["n_heads"], c["d_ff"], dropout=0.0, activation=c["activation"],
                 layer_norm_eps=c["eps"], batch_first=True, norm_first=c["norm_placement"] == "pre")
    state = {f"{theirs}.{key}": value for part, theirs in torch_names(c, name).items()
             for key, value in part_state(c, P, f"{name}.{l}", part).items()}
    return loaded(layer, state)


def torch_names(c, name):
    """The app's part of a layer -> the torch layer's attribute: a decoder-only layer's ln1, ln3 are norm1, norm2."""
    own = {"attn": "self_attn", "self_attn": "self_attn", "cross_attn": "multihead_attn"}
    subs = sublayers(c)[name]
    return {**{sub: own[sub] for sub in subs.values() if sub != "ffn"},
            **{f"ln{k}": f"norm{i}" for i, k in enumerate(subs, start=1)}, "linear1": "linear1", "linear2": "linear2"}


def part_state(c, P, p, part):
    """A part's weights in torch's layout: torch multiplies x @ W.T, the app x @ W; a bias turned off is zeros."""
    d, h = c["d_model"], c["n_heads"]
    if part.startswith("ln"):
        return {"weight": P[f"{p}.{part}.gamma"], "bias": P[f"{p}.{part}.beta"]}
    if part == "linear1":
        return {"weight": P[f"{p}.ffn.W_1"].T, "bias": weight(P, f"{p}.ffn.b_1", (c["d_ff"],))}
    if part == "linear2":
        return {"weight": P[f"{p}.ffn.W_2"].T, "bias": weight(P, f"{p}.ffn.b_2", (d,))}
    a = f"{p}.{part}"  # head i's (d_model, d_k) block is rows i*d_k:(i+1)*d_k of in_proj's Q, K or V third
    return {"in_proj_weight": torch.cat([P[f"{a}.W_{m}"].transpose(1, 2).reshape(-1, d) for m in "QKV"]),
            "in_proj_bias": torch.cat([weight(P, f"{a}.b_{m}", (h, c["d_k"])).reshape(-1) for m in "QKV"]),
            "out_proj.weight": P[f"{a}.W_O"].T, "out_proj.bias": weight(P, f"{a}.b_O", (d,))}


def loaded(module, state):
    module.load_state_dict(state, strict=True)  # every weight is the file's: none left at torch's initialisation
    return module.eval()


def weight(P, name, shape):
    """A weight of the file, or zeros where the settings have none (a bias turned off adds 0, exactly)."""
    return P[name] if name in P else torch.zeros(shape)


def run_whole(layer, x, memory, mask):
    if isinstance(layer, nn.TransformerDecoderLayer):
        return layer(x[None], memory[None], tgt_mask=mask, tgt_is_causal=True)[0]
    if mask is None:
        return layer(x[None])[0]
    return layer(x[None], src_mask=mask, is_causal=True)[0]  # a decoder-only model's layer


def project(attn, x, m):
    """Head-first projections (h, n, d) of x; nn.MultiheadAttention's from its packed in_proj, split as it splits it."""
    if isinstance(attn, WrittenAttention):
        return attn.project(x, m)
    i = "qkv".index(m)
    W, b = attn.in_proj_weight.chunk(3)[i], attn.in_proj_bias.chunk(3)[i]
    return F.linear(x, W, b).view(len(x), attn.num_heads, attn.head_dim).transpose(0, 1)


def attend(attn, x_q, x_kv, mask):
    """(output (n, d_model), weights (h, n, m)) of an attention module."""
    if isinstance(attn, WrittenAttention):
        return attn(x_q, x_kv, mask)
    out, weights = attn(x_q[None], x_kv[None], x_kv[None], attn_mask=mask, need_weights=True,
                        average_attn_weights=False)
    return out[0], weights[0]


def divisor_of(attn):
    return attn.divisor if isinstance(attn, WrittenAttention) else math.sqrt(attn.head_dim)


# ---- what torch's layers cannot express, written out --------------------------------------------------------------

class WrittenAttention(nn.Module):
    """Multi-head attention as the paper writes it, with head-first weights (h, d_model, d_k) multiplied on the right:
    head_i = softmax(Q_i K_i^T / divisor + M) V_i, MultiHead = Concat(head_1..head_h) W^O + b^O."""

    def __init__(self, c, P, p):
        super().__init__()
        h, widths = c["n_heads"], {"Q": c["d_k"], "K": c["d_k"], "V": c["d_v"]}
        self.W = {m.lower(): P[f"{p}.W_{m}"] for m in "QKV"}  # (h, d_model, d)
        self.b = {m.lower(): weight(P, f"{p}.b_{m}", (h, widths[m])) for m in "QKV"}  # (h, d)
        self.W_O, self.b_O = P[f"{p}.W_O"], weight(P, f"{p}.b_O", (c["d_model"],))
        self.divisor = math.sqrt(c["d_k"]) if c["attn_divisor"] == "sqrt_dk" else float(c["attn_divisor"])
        self.softmax = c["softmax"]

    def project(self, x, m):
        return x @ self.W[m] + self.b[m][:, None, :]  # (h, n, d)

    def forward(self, x_q, x_kv, mask=None):
        q, k, v = self.project(x_q, "q"), self.project(x_kv, "k"), self.project(x_kv, "v")
        s = q @ k.transpose(-1, -2) / self.divisor  # (h, n, m)
        weights = softmax(s if mask is None else s + mask, self.softmax)
        heads = weights @ v  # (h, n, d_v)
        return heads.transpose(0, 1).reshape(len(x_q), -1) @ self.W_O + self.b_O, weights


class BlogLayerNorm(nn.Module):
    """The blog's LayerNorm: (x - mu) / (std + eps) * gamma + beta, std the population standard deviation."""

    def __init__(self, d_model, eps):
        super().__init__()
        self.weight, self.bias, self.eps = nn.Parameter(torch.ones(d_model)), nn.Parameter(torch.zeros(d_model)), eps

    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        std = ((x - mu) ** 2).mean(-1, keepdim=True).sqrt()
        return (x - mu) / (std + self.eps) * self.weight + self.bias


def layer_norm(c, P, p):
    """nn.LayerNorm ((x - mu) / sqrt(var + eps), the paper's setting), or the blog's, with the file's gamma, beta."""
    norm = nn.LayerNorm(c["d_model"], eps=c["eps"]) if c["layer_norm"] == "paper" else BlogLayerNorm(c["d_model"],
                                                                                                        c["eps"])
    return loaded(norm, {"weight": P[f"{p}.gamma"], "bias": P[f"{p}.beta"]})


def softmax(x, form):
    """torch.softmax (it subtracts the row max), or the blog's exp(x) / sum(exp(x)) as written."""
    if form == "stable":
        return torch.softmax(x, dim=-1)
    e = torch.exp(x)
    return e / e.sum(-1, keepdim=True)


def positional_encoding(c, P, n):
    """The paper's sinusoid as PyTorch's tutorial writes it; the blog's (column j's exponent 2j / d_model, not
    2 floor(j / 2) / d_model), or its printed table with the further cells rounded to 2 decimals; a learned table;
    none."""
    d, kind = c["d_model"], c["pos_encoding"]
    if kind == "learned":
        return P["pos.learned"][:n]
    if kind == "none":
        return torch.zeros(n, d)
    pos = torch.arange(n, dtype=torch.float64)[:, None]  # (n, 1)
    if kind == "sinusoidal":
        freq = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * (-math.log(10000.0) / d))  # (ceil(d/2),)
        pe = torch.zeros(n, d)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * freq), torch.cos(pos * freq[: d // 2])
        return pe
    j = torch.arange(d, dtype=torch.float64)
    angle = pos / 10000.0 ** (2 * j / d)  # (n, d)
    pe = torch.where(j % 2 == 0, torch.sin(angle), torch.cos(angle))
    if kind == "blog":
        return pe
    pe, printed = torch.round(pe, decimals=2), torch.tensor(BLOG_PRINTED_PE)[:n, :d]
    pe[: len(printed), : printed.shape[1]] = printed
    return pe


# ---- the settings -------------------------------------------------------------------------------------------------

def sublayers(c):
    """Each stack's sub-layers by number (from 1): a decoder-only layer has no cross-attention, sub-layer 2."""
    dec = {1: "self_attn", 3: "ffn"} if c["decoder_only"] else {1: "self_attn", 2: "cross_attn", 3: "ffn"}
    return {"enc": {1: "attn", 2: "ffn"}, "dec": dec}


def depth(c, name):
    if name == "enc" and c["decoder_only"]:
        return 0
    own = c[f"n_{name}_layers"]
    return c["n_layers"] if own is None else own


def embed_name(c, side):
    return "embed.src" if side == "src" or c["shared_embeddings"] else "embed.tgt"


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
