"""A decoder-only model (GPT-style): no encoder, no cross-attention. Its forward pass equals a stack of PyTorch's
nn.TransformerEncoderLayer run with a causal mask (a decoder layer without memory) over the source, SOS and the
target read as one sequence, layer by layer and logit by logit; its trace records no enc.* and no cross_attn step."""
import pytest
import torch

import engine
from engine import sizes
from engine.presets import configure
from engine.tokens import SOS
from test_sizes import hand_built, torch_count
from test_torch_reference import attention_state, close, final_norm, perturbed, torch_input


def causal_layer(model, l):
    """Decoder layer l as nn.TransformerEncoderLayer: its self-attention, then its feed-forward network."""
    c, P, p = model.config, model.params, f"dec.{l}"
    layer = torch.nn.TransformerEncoderLayer(c.d_model, c.n_heads, c.d_ff, dropout=0.0, activation=c.activation,
                                             layer_norm_eps=c.eps, batch_first=True,
                                             norm_first=c.norm_placement == "pre", dtype=torch.float64)
    state = {"linear1.weight": P[f"{p}.ffn.W_1"].T, "linear1.bias": P[f"{p}.ffn.b_1"],
             "linear2.weight": P[f"{p}.ffn.W_2"].T, "linear2.bias": P[f"{p}.ffn.b_2"],
             **attention_state(P, f"{p}.self_attn", "self_attn")}
    for torch_k, k in ((1, 1), (2, 3)):  # the engine keeps the decoder's numbers: its sub-layer 2 is cross-attention
        state.update({f"norm{torch_k}.weight": P[f"{p}.ln{k}.gamma"], f"norm{torch_k}.bias": P[f"{p}.ln{k}.beta"]})
    layer.load_state_dict({name: torch.tensor(value) for name, value in state.items()}, strict=True)
    return layer.eval()


def model(seed=0, **overrides):
    return perturbed(engine.preset("paper", seed=seed, decoder_only=True, **overrides), seed)


@pytest.mark.parametrize("placement", ["post", "pre"])
@pytest.mark.parametrize("sizes_, src, tgt", [
    (dict(d_model=16, n_heads=4, d_ff=24, n_layers=2), "the cat sat on the mat", "el gato"),
    (dict(d_model=24, n_heads=3, d_ff=40, n_dec_layers=3, activation="gelu"), "hello world", ""),
    (dict(d_model=8, n_heads=1, d_ff=8, n_layers=1), "good morning", "buenos días"),
])
def test_a_decoder_only_pass_equals_torchs_causal_layers(placement, sizes_, src, tgt):
    m = model(norm_placement=placement, **sizes_)
    trace = m.run(src, tgt)
    ids = list(trace.tgt_ids)
    assert trace.tgt_tokens == (*src.split(), SOS, *tgt.split())
    n = len(ids)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(n, dtype=torch.float64)
    with torch.no_grad():
        y = torch_input(m, ids)[None]
        close(y[0], trace["tgt.input"], "tgt.input")
        for l in range(m.config.depth("dec")):
            y = causal_layer(m, l)(y, src_mask=mask, is_causal=True)
            last = f"dec.{l}.{'ln3' if placement == 'post' else 'add3'}"
            close(y[0], trace[last], f"decoder layer {l}")
        y = final_norm(m, "dec")(y)
        close(y[0], trace["dec.out"], "dec.out")
        logits = y[0] @ torch.tensor(m.params["embed.src"]).T + torch.tensor(m.params["unembed.b"])
        close(logits, trace["logits"], "logits")
    assert trace["probs"].shape == (n, len(m.vocab))


def test_a_decoder_only_trace_has_no_encoder_and_no_cross_attention():
    trace = model(d_model=8, n_heads=2, d_ff=8, n_layers=2).run("hello world", "hola")
    names = list(trace)
    assert not [name for name in names if name.startswith(("src.", "enc.")) or "cross_attn" in name]
    assert names[:3] == ["tgt.embed", "tgt.pos", "tgt.input"] and names[-1] == "probs"
    assert {name.split(".")[2] for name in names if name.startswith("dec.0.")} == {
        "self_attn", "add1", "ln1", "ffn", "add3", "ln3"}
    assert not [p for p in trace.model.params if p.startswith("enc.") or "cross_attn" in p or ".ln2." in p]
    full = engine.preset("paper", d_model=8, n_heads=2, d_ff=8, n_layers=2).run("hello world", "hola")
    assert set(names) < set(full)  # the same names as the encoder-decoder's, fewer of them


@pytest.mark.parametrize("overrides", [dict(), dict(shared_embeddings=False, tied_output=False),
                                       dict(norm_placement="pre", pos_encoding="learned", attn_bias=False)])
def test_the_count_equals_torchs(overrides):
    c = configure("paper", d_model=16, n_heads=4, d_ff=24, n_layers=3, decoder_only=True, **overrides)
    torch_model = hand_built(c.replace(decoder_only=False), 50)
    del torch_model.enc  # no encoder; no cross-attention (each decoder layer's second module) or its LayerNorm
    for layer in torch_model.dec:
        del layer[4], layer[1]
    if not c.shared_embeddings:
        del torch_model.src  # the decoder reads its own table; a source table would be read by no one
    if c.norm_placement == "pre":
        del torch_model.final[0]
    assert sizes.parameter_count(c, 50) == torch_count(torch_model)


def test_a_decoder_only_model_is_not_trained_here():
    with pytest.raises(ValueError, match="decoder-only"):
        from engine.backward import loss_and_grads
        loss_and_grads(model(d_model=8, n_heads=2, d_ff=8, n_layers=1), "hello", "hola")


def test_depth_and_sublayers():
    c = engine.Config(decoder_only=True, n_enc_layers=3, n_dec_layers=2)
    assert (c.depth("enc"), c.depth("dec")) == (0, 2)
    assert c.sublayers["dec"] == {1: "self_attn", 3: "ffn"}
    assert engine.Config().sublayers["dec"] == {1: "self_attn", 2: "cross_attn", 3: "ffn"}


def test_the_app_refuses_a_decoder_only_model_it_cannot_draw_yet():
    from ui.state import AppState, LimitError, check_limits

    with pytest.raises(LimitError) as refused:
        check_limits(AppState(preset="paper", overrides=(("decoder_only", True),)))
    assert refused.value.args == ("msg.not_in_app", {"field": "decoder_only"})
