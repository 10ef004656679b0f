"""PyTorch as the reference: the engine's paper-mode forward pass, with PyTorch's attention biases switched on (the
paper's formulas have none), equals nn.TransformerEncoderLayer / nn.TransformerDecoderLayer (float64, dropout 0,
CPU) to 1e-9, layer by layer, head by head, logit by logit.

Every engine parameter is copied into the torch layers (strict load_state_dict, so none is left at torch's
own initialisation). The preset starts biases at 0 and LayerNorm at the identity, which would hide a
swapped or missing bias or gamma; every model here gets random biases, gammas and betas first.
"""
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from conftest import examples

import engine
from engine.presets import PAPER_VOCABULARY
from engine.tokens import EOS, SOS, UNK

TOL = dict(rtol=1e-9, atol=1e-9)
WORDS = [w for w in PAPER_VOCABULARY if w not in (UNK, SOS, EOS)]
SUBLAYERS = {"enc": ("attn", "ffn"), "dec": ("self_attn", "cross_attn", "ffn")}
TORCH_ATTN = {"attn": "self_attn", "self_attn": "self_attn", "cross_attn": "multihead_attn"}


def perturbed(model, seed):
    """The model with random biases, LayerNorm gammas and betas in place of the preset's zeros and ones."""
    rng = np.random.default_rng(seed)
    updates = {}
    for name, value in model.params.items():
        last = name.rsplit(".", 1)[-1]
        if last == "gamma":
            updates[name] = rng.uniform(0.5, 1.5, value.shape)
        elif last == "beta" or last == "b" or last.startswith("b_"):
            updates[name] = rng.normal(0.0, 0.5, value.shape)
    return model.with_params(updates)


# ---- engine parameters -> torch modules -------------------------------------------------------------------

def heads_to_rows(W):
    """(h, d_model, d) -> (h*d, d_model): torch's layout, head i in rows i*d:(i+1)*d, applied as x @ W.T."""
    return W.transpose(0, 2, 1).reshape(-1, W.shape[1])


def attention_state(P, p, prefix):
    return {
        f"{prefix}.in_proj_weight": np.concatenate([heads_to_rows(P[f"{p}.W_{m}"]) for m in "QKV"]),
        f"{prefix}.in_proj_bias": np.concatenate([P[f"{p}.b_{m}"].ravel() for m in "QKV"]),
        f"{prefix}.out_proj.weight": P[f"{p}.W_O"].T,
        f"{prefix}.out_proj.bias": P[f"{p}.b_O"],
    }


def torch_layer(model, stack, l):
    c, P, p = model.config, model.params, f"{stack}.{l}"
    cls = torch.nn.TransformerEncoderLayer if stack == "enc" else torch.nn.TransformerDecoderLayer
    activation = torch.nn.functional.silu if c.activation == "swish" else c.activation  # torch names relu, gelu
    layer = cls(c.d_model, c.n_heads, c.d_ff, dropout=0.0, activation=activation, layer_norm_eps=c.eps,
                batch_first=True, norm_first=c.norm_placement == "pre", dtype=torch.float64)
    state = {"linear1.weight": P[f"{p}.ffn.W_1"].T, "linear1.bias": P[f"{p}.ffn.b_1"],
             "linear2.weight": P[f"{p}.ffn.W_2"].T, "linear2.bias": P[f"{p}.ffn.b_2"]}
    for k, sub in enumerate(SUBLAYERS[stack], start=1):
        if sub != "ffn":
            state.update(attention_state(P, f"{p}.{sub}", TORCH_ATTN[sub]))
        state.update({f"norm{k}.weight": P[f"{p}.ln{k}.gamma"], f"norm{k}.bias": P[f"{p}.ln{k}.beta"]})
    layer.load_state_dict({name: torch.tensor(value) for name, value in state.items()}, strict=True)
    return layer.eval()


def final_norm(model, stack):
    """The LayerNorm after the stack in pre-norm mode; nothing in post-norm mode."""
    if model.config.norm_placement == "post":
        return torch.nn.Identity()
    norm = torch.nn.LayerNorm(model.config.d_model, eps=model.config.eps, dtype=torch.float64)
    norm.load_state_dict({"weight": torch.tensor(model.params[f"{stack}.ln_final.gamma"]),
                          "bias": torch.tensor(model.params[f"{stack}.ln_final.beta"])})
    return norm


def torch_input(model, ids):
    """E[ids] * sqrt(d_model) + the sinusoidal PE, written as PyTorch's tutorial writes it (exp/log form)."""
    d = model.config.d_model
    pos = torch.arange(len(ids), dtype=torch.float64)[:, None]
    freq = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * (-math.log(10000.0) / d))
    pe = torch.zeros(len(ids), d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq[: d // 2])
    return torch.tensor(model.params["embed.src"])[list(ids)] * math.sqrt(d) + pe


# ---- the comparison -----------------------------------------------------------------------------------------

def layer_output(model, stack, l):
    last = len(SUBLAYERS[stack])
    return f"{stack}.{l}.{'ln' if model.config.norm_placement == 'post' else 'add'}{last}"


def sublayer_input(model, stack, l, k):
    """The engine step a sub-layer read: its normalised input (pre-norm) or the residual stream (post-norm)."""
    if model.config.norm_placement == "pre":
        return f"{stack}.{l}.ln{k}"
    if k > 1:
        return f"{stack}.{l}.ln{k - 1}"
    if l > 0:
        return layer_output(model, stack, l - 1)
    return "src.input" if stack == "enc" else "tgt.input"


def close(actual, expected, what):
    actual = actual.detach().numpy() if isinstance(actual, torch.Tensor) else actual
    np.testing.assert_allclose(actual, expected, err_msg=what, **TOL)


def assert_attention_matches(model, trace, stack, l, layer, mask):
    """Each multi-head attention module, run on the engine's own inputs: per-head weights and output.

    The per-head q, k, v are checked too, split from the packed in_proj as torch's MHA splits it: b_K adds
    q.b_K to a whole row of scores, which softmax cancels, so no output could reveal a wrong key bias."""
    for k, sub in enumerate(SUBLAYERS[stack], start=1):
        if sub == "ffn":
            continue
        p, mha = f"{stack}.{l}.{sub}", getattr(layer, TORCH_ATTN[sub])
        x_q = torch.tensor(trace[sublayer_input(model, stack, l, k)])[None]
        x_kv = torch.tensor(trace["enc.out"])[None] if sub == "cross_attn" else x_q
        for name, x, W, b in zip("qkv", (x_q, x_kv, x_kv), mha.in_proj_weight.chunk(3), mha.in_proj_bias.chunk(3)):
            heads = torch.nn.functional.linear(x[0], W, b).view(x.shape[1], mha.num_heads, mha.head_dim)
            close(heads.transpose(0, 1), trace[f"{p}.{name}"], f"{p}.{name}")
        out, weights = mha(x_q, x_kv, x_kv, need_weights=True, average_attn_weights=False,
                           attn_mask=mask if sub == "self_attn" else None)
        close(weights[0], trace[f"{p}.weights"], f"{p}.weights")
        close(out[0], trace[f"{p}.out"], f"{p}.out")


def assert_matches_torch(model, trace):
    c = model.config
    close(torch_input(model, trace.src_ids), trace["src.input"], "src.input")
    close(torch_input(model, trace.tgt_ids), trace["tgt.input"], "tgt.input")
    n_dec = len(trace.tgt_ids)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(n_dec, dtype=torch.float64)
    np.testing.assert_array_equal(trace["dec.0.self_attn.mask"], mask.numpy())
    with torch.no_grad():  # even head counts take torch's fused encoder fast path, odd ones the Python path
        x = torch_input(model, trace.src_ids)[None]
        for l in range(c.depth("enc")):
            layer = torch_layer(model, "enc", l)
            x = layer(x)
            close(x[0], trace[layer_output(model, "enc", l)], f"encoder layer {l}")
            assert_attention_matches(model, trace, "enc", l, layer, None)
        close(final_norm(model, "enc")(x)[0], trace["enc.out"], "enc.out")

        memory = torch.tensor(trace["enc.out"])[None]
        y = torch_input(model, trace.tgt_ids)[None]
        for l in range(c.depth("dec")):
            layer = torch_layer(model, "dec", l)
            y = layer(y, memory, tgt_mask=mask, tgt_is_causal=True)
            close(y[0], trace[layer_output(model, "dec", l)], f"decoder layer {l}")
            assert_attention_matches(model, trace, "dec", l, layer, mask)
        y = final_norm(model, "dec")(y)
        close(y[0], trace["dec.out"], "dec.out")

        logits = y[0] @ torch.tensor(model.params["embed.src"]).T + torch.tensor(model.params["unembed.b"])
        close(logits, trace["logits"], "logits")
        never = torch.zeros(len(model.vocab), dtype=torch.bool)
        never[list(model.never_next)] = True  # <unk> is never a next token
        close(torch.softmax(logits.masked_fill(never, -math.inf), dim=-1), trace["probs"], "probs")


# ---- the tests ----------------------------------------------------------------------------------------------

@st.composite
def cases(draw):
    n_heads = draw(st.integers(1, 8))
    d_k = draw(st.integers(-(-8 // n_heads), 96 // n_heads))  # d_model = n_heads * d_k in 8..96
    sizes = dict(d_model=n_heads * d_k, n_heads=n_heads, d_ff=draw(st.integers(1, 160)),
                 n_enc_layers=draw(st.integers(1, 3)), n_dec_layers=draw(st.integers(1, 3)),
                 eps=draw(st.sampled_from([1e-5, 1e-6, 1e-3])))
    src = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=7))
    tgt = draw(st.lists(st.sampled_from(WORDS), min_size=0, max_size=6))  # + SOS: 1..7 decoder positions
    return sizes, src, tgt, draw(st.integers(0, 2**32 - 1))


@pytest.mark.parametrize("activation", ["relu", "gelu", "swish"])
@pytest.mark.parametrize("placement", ["post", "pre"])
@settings(max_examples=examples(40, large=150), deadline=None)  # a pull request's, or the large profile's
@given(case=cases())
def test_random_sizes_match_torch(placement, activation, case):
    sizes, src, tgt, seed = case
    model = perturbed(engine.preset("paper", seed=seed, norm_placement=placement, activation=activation,
                                    attn_bias=True, **sizes),
                      seed)
    trace = model.run(" ".join(src), " ".join(tgt))
    assert trace.src_tokens == tuple(src) and trace.tgt_tokens == (SOS, *tgt)
    assert_matches_torch(model, trace)


@pytest.mark.parametrize("placement", ["post", "pre"])
def test_paper_base_sizes_match_torch(placement):
    model = perturbed(engine.preset("paper", norm_placement=placement, attn_bias=True), seed=1)
    c = model.config
    assert (c.d_model, c.n_heads, c.d_ff, c.n_layers) == (512, 8, 2048, 6)
    assert_matches_torch(model, model.run("hello world how are you", "hola mundo cómo estás"))


def test_the_comparison_sees_a_small_error():
    """Guard against a vacuous reference: an engine trace computed with one beta moved by 1e-7 fails."""
    model = perturbed(engine.preset("paper", d_model=16, n_heads=4, d_ff=24, n_layers=2, attn_bias=True), seed=2)
    nudged = model.with_params({"enc.0.ln1.beta": model.params["enc.0.ln1.beta"] + 1e-7})
    assert_matches_torch(model, model.run("the cat sat", "el gato"))
    with pytest.raises(AssertionError, match="encoder layer 0"):
        assert_matches_torch(model, nudged.run("the cat sat", "el gato"))
