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
    return perturbed(engine.preset("paper", attn_bias=True, seed=seed, decoder_only=True, **overrides), seed)


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


# ---- in the app -----------------------------------------------------------------------------------------------

GPT_LINK = "decoder_only:true"  # the option as a link writes it (cfg=...)
DECODER_ONLY_PAGES = ["decoder_input", "masked_attention", "dec_add_norm", "dec_ffn", "decoder_stack", "output"]


def test_the_option_round_trips_through_the_link_and_a_forged_value_is_refused():
    from ui.core.state import AppState, check_limits, decode, encode

    state = AppState(preset="paper").with_settings(decoder_only=True)
    assert encode(state)["cfg"] == GPT_LINK
    assert decode(encode(state)) == (state, [])
    check_limits(state)  # the app draws it: no refusal
    assert decode({"cfg": "decoder_only:maybe"}) == (AppState(), ["decoder_only:maybe"])


def test_a_decoder_only_models_step_pages_skip_the_encoders():
    from ui.core.navigation import neighbours

    assert neighbours("tokens", decoder_only=True) == ("overview", "positional")  # the decoder's input embedded
    assert neighbours("decoder_input", decoder_only=True) == ("positional", "masked_attention")
    assert neighbours("dec_add_norm", decoder_only=True) == ("masked_attention", "dec_ffn")
    assert neighbours("dec_add_norm") == ("masked_attention", "cross_attention")
    assert neighbours("qkv", decoder_only=True) is None  # not a step of this model


def test_the_diagram_draws_the_decoder_alone():
    from ui.lessons.diagram import architecture
    from ui.core.i18n import EN, translator

    figure = architecture(translator("en"), model(d_model=8, n_heads=2, d_ff=8, n_layers=2).run("hello", "hola"))
    layout, click = figure.to_dict()["layout"], figure.to_dict()["data"][0]
    assert click["customdata"] == ["decoder_input", "masked_attention", "dec_add_norm", "dec_ffn", "dec_add_norm",
                                   "decoder_stack", "output"]
    assert click["y"] == sorted(click["y"]) and len(set(click["x"])) == 1  # one column, bottom up
    texts = [a["text"] for a in layout["annotations"]]
    assert "Decoder × 2" in texts and not [text for text in texts if EN["section.encoder"] in text]
    assert EN["overview.src"] not in texts and EN["overview.tgt"] in texts
    assert len([shape for shape in layout["shapes"] if shape["line"].get("dash") == "dash"]) == 1  # one stack's frame
    assert len([a for a in layout["annotations"] if a["showarrow"]]) == 7  # the input into the first box, then up


@pytest.fixture
def app():
    from test_app import open_page

    return open_page


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_page_renders_in_decoder_only_mode(app, lang):
    """The encoder's pages, cross-attention's and training's say in one line that this model has none (with a way back
    to the encoder-decoder model); every other page draws the decoder-only model."""
    from test_app import ALL_PAGES, assert_clean, goto
    from ui.core.i18n import translator
    from ui.core.navigation import ENCODER_DECODER_ONLY

    t = translator(lang)
    at = app("overview", lang=lang, cfg=GPT_LINK)
    for page in ALL_PAGES:
        goto(at, page)
        assert_clean(at)
        assert at.session_state["state"].config().decoder_only, page
        refusal = [t({"train": "msg.no_training", "animation": "msg.no_animation"}.get(page, "msg.no_encoder"))]
        assert [info.value for info in at.info if info.value in refusal] == (refusal if page in ENCODER_DECODER_ONLY
                                                                              else []), page
    intros = {page: f"intro.{page}.decoder_only" for page in ("overview", "tokens", "positional", "decoder_input")}
    for page, key in intros.items():
        goto(at, page)
        assert any(block.value.startswith(f"# {t(f'page.{page}')}\n\n{t(key)}") for block in at.markdown), page


def test_the_way_back_from_an_encoder_page_is_the_encoder_decoder_model(app):
    from test_app import goto

    at = goto(app("overview", lang="en", cfg=GPT_LINK), "attention")
    at.button(key="ctl.encoder_decoder").click().run()
    assert not at.session_state["state"].config().decoder_only and "cfg" not in dict(at.query_params)
    assert not at.info and at.session_state["state"].preset == "hello-world"


def test_the_decoder_pages_draw_only_the_sublayers_the_model_has(app):
    from test_app import goto
    from ui.core.i18n import EN

    at = goto(app("overview", lang="en", cfg=GPT_LINK), "dec_add_norm")
    assert at.button_group(key="dec_add_norm.sublayer").options == [EN["sublayer.masked"], EN["sublayer.ffn"]]
    goto(at, "dropout")
    assert at.button_group(key="dropout.place").options == [EN["dropout.place.tgt"], EN["dropout.place.dec"]]
    at.session_state["dropout.tab"] = EN["dropout.tab.places"]
    at.run()
    places = at.markdown[-1].value
    assert EN["dropout.place.dec"] in places and EN["sublayer.masked"] in places, places
    assert all(EN[key] not in places for key in ("dropout.place.src", "dropout.place.enc", "sublayer.cross")), places


def test_a_decoder_only_models_one_embedding_table_is_shared_whatever_the_option(app):
    """Without shared_embeddings a decoder-only model still has one table (embed.tgt), which embeds the source, SOS
    and the target: no page says source and target have a table each."""
    from test_app import goto
    from ui.core.i18n import EN

    model = engine.preset("hello-world", decoder_only=True, shared_embeddings=False)
    assert [name for name in model.params if name.startswith("embed.")] == ["embed.tgt"]
    at = goto(app("overview", lang="en", cfg=GPT_LINK + ",shared_embeddings:false"), "decoder_input")
    assert not any(EN["depart.shared_embeddings"] in m.value for m in at.markdown)
    assert [e.label for e in at.expander if "embed.tgt" in e.label] == [
        f"Edit $E_{{\\text{{tgt}}}}$ · {EN['param.embed.src.shared']} · `embed.tgt`"]
    goto(at, "sizes")
    assert EN["sizes.part.embed.shared"] in at.dataframe[0].value.iloc[:, 0].tolist()


def test_the_option_in_the_sidebar_writes_the_link(app):
    from test_app import open_options
    from ui.core.i18n import EN

    at = app("overview", lang="en")
    open_options(at)
    at.text_input(key="ctl.tgt").set_value("hola").run()
    assert not at.number_input(key="ctl.n_enc_layers").disabled
    assert (at.text_input(key="ctl.tgt").label, at.button(key="ctl.tgt_toggle").label) == (
        EN["ctl.tgt"].format(start=SOS), EN["ctl.tgt_sos"].format(start=SOS))
    at.toggle(key="ctl.decoder_only").set_value(True).run()
    # the decoder reads the source first: the target's label says so in the run that turns the option on
    assert (at.text_input(key="ctl.tgt").label, at.button(key="ctl.tgt_toggle").label) == (
        EN["ctl.tgt.decoder_only"].format(start=SOS), EN["ctl.tgt_sos.decoder_only"].format(start=SOS))
    at.button(key="ctl.tgt_toggle").click().run()
    assert at.button(key="ctl.tgt_toggle").label == EN["ctl.tgt_default.decoder_only"].format(target="Hola Mundo")
    at.text_input(key="ctl.tgt").set_value("hola").run()
    assert dict(at.query_params)["cfg"] == GPT_LINK and at.session_state["state"].config().decoder_only
    assert not at.exception and not at.error
    assert at.text_input(key="ctl.tgt").value == "hola" and at.session_state["state"].tgt == "hola"
    assert any(EN["model.from.hello-world.decoder_only"].format(seed=0) in c.value for c in at.sidebar.caption)


def test_the_decoder_only_model_generates_reading_the_source_first(app):
    """The pages' decoder-only model generates as the engine does; each step's decoder input is the source, then the
    tokens from SOS on, and the mask's heatmap is labelled with all of them."""
    import json

    from engine.generate import generate
    from test_app import assert_clean
    from test_app_generate import CURRENT, SMALL, chosen_line, expected_chosen, expected_sentence, markdown_line, \
        sentence_line
    from ui.core.i18n import translator

    settings = dict(d_model=16, n_heads=2, d_ff=32, n_layers=1, decoder_only=True)
    at = app("generate", gen=CURRENT, **{**SMALL, "cfg": SMALL["cfg"] + "," + GPT_LINK})
    assert_clean(at)
    expected = generate(engine.preset("paper", **settings), SMALL["src"], max_len=10)
    assert sentence_line(at) == expected_sentence(expected.tokens) and chosen_line(at) == expected_chosen(
        expected.steps[0])
    at.button(key="gen.next").click().run()
    step, source = expected.steps[1], SMALL["src"].split()
    line = translator("en")("gen.prefix.decoder_only", m=len(source), n=2)
    assert markdown_line(at, line.split(" (")[0]).startswith(line + " " + " ".join(
        f"`{t}`" for t in [*source, SOS, expected.tokens[0]]))
    mask = json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]
    assert mask["xaxis"]["ticktext"] == [*source, SOS, expected.tokens[0]] == list(step.trace.tgt_tokens)


def test_the_options_of_a_linked_decoder_only_model_keep_it(app):
    """Opened on a decoder-only link, the options show the decoder's depth and leave the model as the link made it
    (the encoder's depth widget, whose least is 1, shows the encoder-decoder model's, disabled)."""
    from test_app import open_options

    at = app("overview", lang="en", preset="paper", cfg=GPT_LINK + ",n_layers:2")
    open_options(at)
    assert (at.number_input(key="ctl.n_enc_layers").value, at.number_input(key="ctl.n_dec_layers").value) == (2, 2)
    assert at.toggle(key="ctl.decoder_only").value and at.number_input(key="ctl.n_enc_layers").disabled
    assert at.session_state["state"].overrides == (("decoder_only", True), ("n_layers", 2))
    at.number_input(key="ctl.n_dec_layers").set_value(3).run()
    assert at.session_state["state"].config().depth("dec") == 3 and at.session_state["state"].config().decoder_only


def test_the_sizes_page_of_a_decoder_only_model_counts_the_encoder_decoder_one(app):
    from test_app import goto
    from ui.core.i18n import EN, translator

    at = goto(app("overview", lang="en", cfg=GPT_LINK), "sizes")
    own = engine.preset("hello-world", decoder_only=True)
    full = own.config.replace(decoder_only=False)
    # 287 and an encoder layer's 188 (attention 96, feed-forward 76, two LayerNorms 16), cross-attention's 96 and
    # its LayerNorm's 8: the hello-world model's count
    assert sizes.parameter_count(full, len(own.vocab)) == 287 + 188 + 96 + 8 == sizes.parameter_count(
        engine.preset("hello-world").config, len(own.vocab))
    said = translator("en")("sizes.encoder_decoder", e=1, d=1, n="579")
    assert said in [m.value for m in at.markdown]
    assert EN["sizes.parameters_note"].split("**")[0] + "**287**" in [m.value for m in at.markdown][1]
    # the decoder reads the source too: its 5 positions are the 2 source tokens, SOS and the 2 target words; the
    # rule for counting a product is said once, as for the encoder-decoder model
    note = EN["sizes.products_pass.decoder_only"].format(rule=EN["sizes.products_note"], n_src=2, n_tgt=5)
    assert note in [m.value for m in at.markdown]
    assert EN["sizes.products_note"].split(";")[0] not in EN["sizes.products_pass.decoder_only"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_tokens_and_positional_pages_embed_the_decoders_one_sequence(app, lang):
    """A GPT-style model embeds tokens and adds positional encoding: the tokens page looks up, multiplies χ W_E and
    compares cosines for the source, SOS and the target, the positional page draws tgt.embed, tgt.pos, tgt.input;
    the overview counts no encoder layers, and the shared-embeddings toggle says why it does nothing here."""
    from test_app import assert_clean, goto, open_options
    from ui.core.i18n import translator

    t = translator(lang)
    at = goto(app("overview", lang=lang, cfg=GPT_LINK), "tokens")
    trace = at.session_state["context"].trace
    assert list(trace.tgt_tokens) == ["hello", "world", SOS, "hola", "mundo"]
    assert not [info.value for info in at.info if info.value == t("msg.no_encoder")]
    assert at.dataframe[0].value.iloc[:, 0].tolist() == list(trace.tgt_tokens)
    assert at.dataframe[0].value.iloc[:, 1].tolist() == list(trace.tgt_ids)
    assert any("`tgt.embed`" in m.value for m in at.markdown)
    for tab in ("tokens.tab.product", "tokens.tab.cosine"):
        at.session_state["tokens.tab"] = t(tab)
        at.run()
        assert_clean(at)
    at.session_state["tokens.tab"] = t("tokens.tab.product")
    at.run()
    assert t("tokens.product.equal", name="tgt.embed") in [c.value for c in at.caption]
    goto(at, "positional")
    assert_clean(at)
    assert not [info.value for info in at.info if info.value == t("msg.no_encoder")]
    options = at.button_group(key="positional.None").options  # the decoder's sequence, opened on its first step
    for option, step in zip(options, ("embed", "pos", "input"), strict=True):
        if option != options[0]:
            at.button_group(key="positional.None").set_value(option).run()
        headers = [m.value for m in at.markdown if m.value.startswith("##### ")]
        assert len(headers) == 1 and f"`tgt.{step}`" in headers[0], headers
    at.session_state["pos.tab"] = t("pos.tab.order")
    at.run()
    assert t("pos.order.causal") in [m.value for m in at.markdown]
    goto(at, "overview")
    shapes = t("overview.shapes.decoder_only", n_src=2, n_tgt=5, d_model=4, h=2, n_dec=1)
    assert shapes in [m.value for m in at.markdown] and "0" not in shapes.split("d_model")[1]
    open_options(at)
    toggle = at.toggle(key="ctl.shared_embeddings")
    assert toggle.disabled and toggle.help == t("ctl.shared_embeddings.decoder_only")
