"""The lessons of issue 19 in the app: the positional page's property tabs, the tokens page's one-hot product and
cosine similarity, the dropout page's mask, scale and places; each tab drawn only while open."""
import re

import numpy as np
import pytest

import engine
from engine import layers
from engine import positional as pe
from engine.dropout import Dropout
from test_app import assert_clean, engine_trace, latex, open_link, open_page, paragraphs
from ui.core.format import bmatrix, fmt, fmt_tex
from ui.core.i18n import EN, ZH, translator
from ui.core.labels import step_name_key
from ui.lessons.blocks import EVEN
from ui.lessons.positional_views import PAIR_GAP


def open_tab(at, key, label):
    at.session_state[key] = (ZH if at.session_state["ctl.lang"] == "zh" else EN)[label]
    at.run()
    assert_clean(at)
    return at


def test_the_pages_open_on_their_old_view_with_the_lessons_in_closed_tabs():
    for page, key, labels in (("positional", "pos.tab", ["pos.tab.steps", "pos.tab.table", "pos.tab.similarity",
                                                         "pos.tab.rotation", "pos.tab.order"]),
                              ("tokens", "tokens.tab", ["tokens.tab.lookup", "tokens.tab.product",
                                                        "tokens.tab.cosine"]),
                              ("dropout", "dropout.tab", ["dropout.tab.flow", "dropout.tab.mask",
                                                          "dropout.tab.places"])):
        at = open_page(page)
        assert at.button_group(key=key).options == [EN[label] for label in labels], page
        assert not any(EN["pos.order.text"] in p or EN["tokens.cosine.text"] in p for p in paragraphs(at))


@pytest.mark.parametrize("encoding", ["sinusoidal", "sinusoidal_halves", "blog", "blog_table", "learned", "none"])
def test_rotation_tab_says_what_holds_for_each_encoding_with_its_numbers(encoding):
    at = open_tab(open_page("positional", cfg=f"pos_encoding:{encoding}"), "pos.tab", "pos.tab.rotation")
    model = engine.preset("hello-world", pos_encoding=encoding)
    table = pe.positional_encoding(encoding, 100, 4, model.params.get("pos.learned"))  # positions 0..99
    if encoding == "sinusoidal_halves":  # Marian's sines then cosines, turned as the paper's pairs
        table = table[:, [0, 2, 1, 3]]
    gap = pe.rotation_gap(table, 0, 1)
    assert EN[f"pos.rotation.{encoding}"].format(gap=fmt(gap, 2), pairs=2) in paragraphs(at)
    assert (gap < 1e-12) == (encoding in ("sinusoidal", "sinusoidal_halves", "none"))
    pair = latex(at)[0].split(PAIR_GAP)[0]  # i = 0: (PE_1,0; PE_1,1) = ... \\ R_0(1) (PE_0,0; PE_0,1) = R PE = moved
    assert bmatrix(table[1, :2][:, None], 4) in pair and bmatrix(pe.rotated(table, 0, 1)[:2][:, None], 4) in pair


@pytest.mark.parametrize("encoding", ["sinusoidal", "sinusoidal_halves", "blog", "blog_table", "learned", "none"])
def test_table_tab_says_how_each_encodings_columns_wave(encoding):
    at = open_tab(open_page("positional", cfg=f"pos_encoding:{encoding}"), "pos.tab", "pos.tab.table")
    assert EN[f"pos.waves.text.{encoding}"].format(columns="1, 2, 3, 4") in paragraphs(at)


def test_order_tab_shows_the_reversed_sentence_weights_are_the_permuted_ones():
    at = open_tab(open_page("positional", src="hello how world", cfg="pos_encoding:sinusoidal"),
                  "pos.tab", "pos.tab.order")
    model = engine.preset("hello-world", pos_encoding="sinusoidal")
    bare = model.without_positions()
    before, after = bare.run("hello how world")["enc.0.attn.weights"], bare.run("world how hello")["enc.0.attn.weights"]
    gap = pe.permutation_gap(before, after, [2, 1, 0])
    assert gap < 1e-12
    assert EN["pos.order.same"].format(gap=fmt(gap, 2), layers=1) in paragraphs(at)
    with_pe = pe.permutation_gap(model.run("hello how world")["enc.0.attn.weights"],
                                 model.run("world how hello")["enc.0.attn.weights"], [2, 1, 0])
    assert with_pe > 1e-3
    assert EN["pos.order.with_pe"].format(setting=EN["choice.sinusoidal"], gap=fmt(with_pe, 2)) in paragraphs(at)
    captions = [c.value for c in at.caption]
    assert EN["pos.order.before"].format(sentence="hello how world") in captions
    assert EN["pos.order.after"].format(sentence="world how hello") in captions


def test_order_tab_counts_the_encoders_own_layers():
    """An encoder of its own depth (n_enc_layers 3, the decoder's N = 1): the note counts the encoder's layers."""
    at = open_tab(open_page("positional", cfg="n_enc_layers:3"), "pos.tab", "pos.tab.order")
    assert at.session_state["state"].config().depth("enc") == 3 and at.session_state["state"].config().n_layers == 1
    said = [p for p in paragraphs(at) if p.startswith(EN["pos.order.same"].split("{gap}")[0])]
    assert len(said) == 1 and "(this model has 3)" in said[0], said


@pytest.mark.parametrize("cfg", ["embed_scale:false", "embed_scale:true"])
def test_product_tab_writes_chi_w_e_as_the_lookup(cfg):
    at = open_tab(open_page("tokens", cfg=cfg), "tokens.tab", "tokens.tab.product")
    trace = engine_trace(embed_scale=cfg.endswith("true"))
    product = latex(at)[0]
    # rows named by token
    assert product.startswith(r"\chi\, W_E") and r"W_E[\text{hello}] \\ W_E[\text{world}]" in product
    assert product.endswith(bmatrix(trace["src.embed"], 4)) and (r"\sqrt{d_{\text{model}}}" in product) == (
        cfg.endswith("true"))
    assert EN["tokens.product.equal"].format(name="src.embed") in [c.value for c in at.caption]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_cosine_tab_puts_the_random_model_beside_the_shipped_trained_one(lang):
    """The hello-world preset's hello, world and SOS rows are the post's numbers, not random weights."""
    t = translator(lang)
    at = open_tab(open_page("tokens", lang=lang), "tokens.tab", "tokens.tab.cosine")
    captions = [c.value for c in at.caption]
    in_use = t("tokens.cosine.post_in_use", words="`hello` `world` `SOS`", seed=0)
    assert t("tokens.cosine.caption", model=in_use, shown=11, vocab=11) in captions
    other = t("tokens.cosine.trained_other", corpus="en-es", d_model=32)
    assert t("tokens.cosine.caption", model=other, shown=24, vocab=len(engine.trained().vocab)) in captions
    wider = open_tab(open_page("tokens", lang=lang, cfg="d_model:8"), "tokens.tab", "tokens.tab.cosine")
    random = t("tokens.cosine.caption", model=t("tokens.cosine.random_in_use", seed=0), shown=11, vocab=11)
    assert random in [c.value for c in wider.caption]  # the post's rows are 4 numbers wide: d_model 8 draws them all


def test_dropout_mask_tab_shows_the_engines_mask_and_scale():
    at = open_tab(open_page("dropout"), "dropout.tab", "dropout.tab.mask")
    keep = Dropout(0.1, 0).keep_mask("src.dropout", (2, 4))
    text = translator("en")("dropout.mask.text", kept=int(keep.sum()), cells=8, seed=0, name="src.dropout")
    assert text in paragraphs(at) and f"it keeps {int(keep.sum())} cells of these 8." in text
    assert translator("en")("dropout.mask.text", kept=1, cells=8, seed=0, name="x").count("keeps 1 cell of these 8.")
    trace = engine.preset("hello-world").run("Hello World", "Hola Mundo", dropout=0.1, seed=0)
    i, j = np.argwhere(keep)[0]
    formula = latex(at)[-1]
    assert formula.startswith(r"\frac{1}{1 - p} = \frac{1}{1 - 0.1} = 1.111")
    assert formula.endswith(f"{fmt_tex(trace['src.input'][i, j], 4)} \\cdot 1.111 = "
                            f"{fmt_tex(trace['src.dropout'][i, j], 4)}")


def test_dropout_places_mark_the_chosen_one():
    at = open_tab(open_page("dropout"), "dropout.tab", "dropout.tab.places")
    places = [m.value for m in at.markdown if m.value.startswith(EN["dropout.places.text"])][0]
    assert f"- **{EN['dropout.place.src']}: X_emb + PE** ← {EN['dropout.here']}" in places
    assert places.count(EN["dropout.here"]) == 1 and places.count("    - ") == 8  # 3 encoder + 5 decoder dropouts


def test_dropout_mask_of_attention_weights_is_the_chosen_heads():
    at = open_page("dropout", preset="paper", cfg="d_model:8,n_heads:2,d_ff:16")
    at.session_state["dropout.place"] = "enc"
    at.run()
    at.session_state["dropout.which.enc"] = "attn.dropout"
    at.session_state["heads.dropout"] = 1
    at.session_state["dropout.p"] = 0.5
    at = open_tab(at, "dropout.tab", "dropout.tab.mask")
    keep = Dropout(0.5, 0).keep_mask("enc.0.attn.dropout", (2, 2, 2))  # (h, n, n)
    assert keep[0].sum() != keep[1].sum()  # so the text tells the heads apart
    text = translator("en")("dropout.mask.text", kept=int(keep[1].sum()), cells=4, seed=0, name="enc.0.attn.dropout")
    assert text in paragraphs(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_cross_attentions_even_weights_note_names_the_step_where_the_encoders_rows_converge(lang):
    """The note's cause is read from the trace: another sentence converges elsewhere, or not at all (no cause said)."""
    t = translator(lang)
    for src, converged in (("Hello World", "enc.0.ln1"), ("how world", "enc.0.ln2"), ("how are you", None)):
        at = open_page("cross_attention", src=src, tgt="Hola", lang=lang)
        assert_clean(at)
        notes = [element.value for element in at.markdown if element.value.startswith(":material/info: ")]
        trace = engine.with_words(engine.preset("hello-world"), src, "Hola").run(src, "Hola")
        where, n = layers.convergence(trace), len(trace.src_tokens)
        assert (where and where.step) == converged
        expected = t("cross.even", n=n, tolerance=EVEN)
        if where:
            expected += "\n\n" + t("cross.even.alike", n=n, tolerance="1", name=where.step,
                                title=t(step_name_key(where.step)),
                                spread=fmt(100 * where.spread, 2), before=where.before,
                                before_title=t(step_name_key(where.before)),
                                spread_before=fmt(100 * where.spread_before, 2))
        assert notes == [":material/info: " + expected], src
        assert not re.search("feed-forward|前馈|hello|world", notes[0].split(":", 2)[-1]), notes[0]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_order_tab_claims_the_reordering_only_where_the_weights_are_numbers(lang):
    """Naive softmax with huge W^Q, W^K: the weights are NaN, so the tab does not say the two matrices agree."""
    edits = "enc.0.attn.W_Q:0.0.0=1000000;enc.0.attn.W_K:0.0.0=1000000"
    at = open_page("positional", src="hello how world", cfg="softmax:naive", edit=edits, lang=lang)
    at = open_tab(at, "pos.tab", "pos.tab.order")
    t, texts = translator(lang), paragraphs(at)
    model = engine.preset("hello-world", softmax="naive").with_cells(
        {"enc.0.attn.W_Q": [((0, 0, 0), 1e6)], "enc.0.attn.W_K": [((0, 0, 0), 1e6)]}).without_positions()
    gap = pe.permutation_gap(model.run("hello how world")["enc.0.attn.weights"],
                             model.run("world how hello")["enc.0.attn.weights"], [2, 1, 0])
    assert np.isnan(gap)
    assert t("pos.order.nonfinite", gap=fmt(gap, 2)) in texts
    assert not [p for p in texts if p == t("pos.order.same", gap=fmt(gap, 2), layers=1)]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_qkv_page_says_where_its_weights_differ_from_what_the_post_prints(lang):
    """W₁^Q's row 4 is [1, 0, 0] (the post's code) where the post's LaTeX prints [1, 1, 0]; W₂^K's row 3 too. The note
    sits under the matrix, on the Hello World preset; an edit of the row, or the paper preset, has none."""
    t = translator(lang)
    notes = [t("diff.weight_note", symbol=symbol, row=row, code=code, post=post)
             for symbol, row, code, post in (("W^Q_{1}", 4, "[1, 0, 0]", "[1, 1, 0]"),
                                             ("W^K_{2}", 3, "[1, 1, 0]", "[1, 0, 1]"))]
    captions = lambda at: [c.value for c in at.caption]  # noqa: E731
    at = open_link("qkv", lang=lang)
    assert_clean(at)
    assert all(note in captions(at) for note in notes), captions(at)
    edited = open_link("qkv", lang=lang, edit="enc.0.attn.W_Q:0.3.1=1")
    assert notes[0] not in captions(edited) and notes[1] in captions(edited)
    assert not [c for c in captions(open_link("qkv", lang=lang, preset="paper")) if c.startswith(notes[0][:8])]


@pytest.mark.parametrize("setting", ["sinusoidal", "blog", "blog_table", "learned", "none"])
def test_the_waves_words_describe_the_encoding_the_chart_draws(setting):
    """The waves' text described the paper's sine-cosine pairs sharing a frequency while the chart drew the post's
    formula (column 2 far slower than column 1). Each setting has its words; the claim about the pairs is the
    table's: a pair shares its angle (sin² + cos² = 1 in every row) in the paper's encoding only."""
    t = translator("en")
    at = open_link("positional", lang="en", cfg=f"pos_encoding:{setting}", section="2")
    assert_clean(at)
    shown = [m.value for m in at.markdown if m.value.startswith("Columns ")]
    assert shown == [t(f"pos.waves.text.{setting}", columns="1, 2, 3, 4")]
    table = pe.positional_encoding(setting, 50, 4, at.session_state["context"].model.params.get("pos.learned"))
    pairs_share = np.allclose(table[:, 0] ** 2 + table[:, 1] ** 2, 1.0)
    assert pairs_share == (setting == "sinusoidal") and ("a pair shares" in shown[0]) == pairs_share


@pytest.mark.parametrize("page", ["animation", "attention", "multihead", "masked_attention", "cross_attention",
                                  "encoder_stack", "decoder_stack", "output"])  # named here, not read from the app
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_page_of_predictions_or_attention_patterns_says_which_weights_made_them(page, lang):
    """The post's random weights, named under the intro of each page that shows what a model predicts or where its
    heads look (the stack pages' "where each head looks most" too)."""
    at = open_link(page, lang=lang)
    assert translator(lang)("learned.post", seed=0) in [c.value for c in at.caption], page


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_prediction_says_which_weights_made_it_and_offers_the_trained_model(lang):
    """The overview wrote "Next token (greedy): c, probability 0.287" with nothing saying the model is untrained. Each
    page that shows predictions or attention patterns says what its weights learned, with the trained model one click
    away; once used, the same line names its corpus and the overview predicts EOS after "SOS hola mundo"."""
    t = translator(lang)
    at = open_link("overview", lang=lang)
    assert t("learned.post", seed=0) in [c.value for c in at.caption]
    next(b for b in at.button if b.key == "learned.overview").click().run()
    assert_clean(at)
    state = at.session_state["state"]
    assert state.weights and at.session_state["context"].config.d_model == engine.trained("en-es").config.d_model
    shipped = t("learned.shipped", corpus=t("train.corpus.en-es"), n=32)
    assert shipped in [c.value for c in at.caption] and not [b for b in at.button if b.key == "learned.overview"]
    assert [m.value for m in at.metric if m.label == t("overview.next")] == ["EOS"]  # after SOS hola mundo: done
    paper = open_link("attention", lang=lang, preset="paper")
    assert t("learned.random", seed=0) in [c.value for c in paper.caption]
