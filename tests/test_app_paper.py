"""Departures from the paper, said where they happen: each step page notes, next to its formula, the options in which
the current settings do otherwise than the paper, and sets the paper's value in one click; the Paper-vs-blog page
marks what the app does now. And trained or loaded weights describe themselves in the sidebar: sizes, origin, how
long their link lives, and the learner's sentences offered back after training replaced them."""
import io
import math

import numpy as np
import pytest

import engine
from engine import blog, checkpoint
from engine.config import CHOICES
from engine.train import TRAINING_SETUP, TrainSettings, start_model, train
from test_app import assert_clean, goto, latex, open_link, open_page, query
from test_app_train import open_tab
from ui.core import departures
from ui.core.format import DIGITS, bmatrix
from ui.core.i18n import EN, ZH, translator
from ui.stores.weights import DEFAULT_DIR, WeightsStore

T = translator("en")
STEP_PAGES = ("tokens", "positional", "qkv", "attention", "multihead", "add_norm", "ffn", "output")


def shown(at) -> set:
    """The options whose departure the page notes: one button each, keyed paper.FIELD.STEP."""
    return {b.key.split(".")[1] for b in at.button if b.key and b.key.startswith("paper.")}


STEPS = {"positional": "pos", "add_norm": "ln1"}  # the step a page's departure is on, where it opens on another


@pytest.mark.parametrize("page, hello_world, paper", [
    ("tokens", {"embed_scale"}, set()),
    ("positional", {"pos_encoding"}, set()),
    ("qkv", {"d_k"}, set()),
    ("attention", {"attn_divisor", "d_k"}, set()),
    ("add_norm", {"layer_norm"}, set()),
    ("ffn", set(), set()),
    ("output", {"tied_output"}, set()),
])
def test_a_departure_is_noted_exactly_where_the_settings_depart(page, hello_world, paper):
    step = {"step": STEPS[page]} if page in STEPS else {}
    at = open_link(page, **step)
    assert_clean(at)
    assert shown(at) == hello_world
    assert shown(open_link(page, preset="paper", cfg="d_model:16,n_heads:2,d_ff:32,n_layers:1", **step)) == paper


def test_the_note_says_what_the_app_and_the_paper_do_in_the_readers_language():
    for lang, catalog in (("en", EN), ("zh", ZH)):
        at = open_page("attention", lang=lang)
        texts = [m.value for m in at.markdown]
        t = translator(lang)
        badge = f":orange-badge[{catalog['depart.badge']}] "
        note = next(text for text in texts if text.startswith(badge))
        assert t("depart.attn_divisor", divisor="30", d_k=3) in note.removeprefix(badge).split("\n\n")  # and d_k's
        assert at.button(key="paper.attn_divisor.enc.0.attn").label == catalog["depart.attn_divisor.button"]


def test_one_click_divides_by_sqrt_dk_and_every_later_number_follows():
    at = open_page("attention")
    before = at.session_state["context"].trace
    at.button(key="paper.attn_divisor.enc.0.attn").click().run()
    assert_clean(at)
    assert query(at)["cfg"] == "attn_divisor:sqrt_dk", "the link carries the paper's form"
    assert shown(at) == {"d_k"}, "the divisor is now the paper's: its note is gone"
    trace = at.session_state["context"].trace
    scaled = before["enc.0.attn.scores"] / math.sqrt(3)  # (h, n, n) the paper's scaling of the same scores
    np.testing.assert_allclose(trace["enc.0.attn.scaled"], scaled, rtol=1e-12)
    assert not np.allclose(trace["enc.0.attn.scaled"], before["enc.0.attn.scaled"])
    assert any(bmatrix(scaled[0], DIGITS) in formula for formula in latex(at)), "the page shows the paper-form numbers"
    assert not np.allclose(trace["enc.out"], before["enc.out"]), "later steps follow"
    goto(at, "multihead")
    assert shown(at) == {"d_k"}


@pytest.mark.parametrize("page, key, changed", [
    ("positional", "paper.pos_encoding.src.pos", "pos_encoding:sinusoidal"),
    ("add_norm", "paper.layer_norm.enc.0.ln1", "layer_norm:paper"),
    ("tokens", "paper.embed_scale.src.embed", "embed_scale:true"),
    ("qkv", "paper.d_k.enc.0.attn.q", "d_k:2,d_v:2"),
    ("output", "paper.tied_output.logits", "tied_output:true"),
])
def test_each_button_sets_the_papers_value(page, key, changed):
    at = open_link(page, **({"step": STEPS[page]} if page in STEPS else {}))
    at.button(key=key).click().run()
    assert_clean(at)
    assert query(at)["cfg"] == changed
    assert not shown(at)


def test_the_sinusoid_in_one_click_gives_the_papers_encoding_of_world():
    at = open_link("positional", step="pos")
    at.button(key="paper.pos_encoding.src.pos").click().run()
    row = at.session_state["context"].trace["src.pos"][1]  # (d_model,) position 1
    np.testing.assert_allclose(row, [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)], rtol=1e-12)


def test_a_departure_with_trained_weights_says_the_button_leaves_them():
    biased = engine.preset("paper", **TRAINING_SETUP["overrides"], attn_bias=True)  # PyTorch's attention, trained
    key = DEFAULT_STORE.put(train(biased, TrainSettings(steps=2)).model)
    at = open_page("qkv", preset="paper", weights=key)
    assert shown(at) == {"attn_bias"}
    assert EN["depart.drops_weights"] in [c.value for c in at.caption]
    at.button(key="paper.attn_bias.enc.0.attn.q").click().run()
    assert_clean(at)
    assert "weights" not in query(at) and "cfg" not in query(at), "the preset's own value: the paper's"
    assert not shown(at)


def test_every_departure_has_its_words_in_both_languages():
    for departure in departures.DEPARTURES:
        values = CHOICES.get(departure.field, ()) if departure.by_value else (None,)
        keys = [f"depart.{departure.field}.button"] + [
            f"depart.{departure.field}" + (f".{v}" if v else "") for v in values if v != departure.paper]
        for key in keys:
            assert key in EN and key in ZH, key


def test_the_presets_depart_where_they_say():
    hello, paper = engine.PRESETS["hello-world"], engine.PRESETS["paper"]
    departing = {d.field for d in departures.DEPARTURES if departures.departs(d, hello)}
    assert departing == {"attn_divisor", "pos_encoding", "embed_scale", "d_k", "layer_norm", "tied_output"}
    assert {d.field for d in departures.DEPARTURES if departures.departs(d, paper)} == set(), "the paper, as it is"
    head_width = next(d for d in departures.DEPARTURES if d.field == "d_k")
    assert departures.paper_settings(head_width, hello) == {"d_k": 2, "d_v": 2}
    assert departures.paper_settings(head_width, hello.replace(n_heads=3)) is None  # 4 / 3: no paper form


def test_an_old_paper_link_opens_with_its_numbers_and_a_bias_edit_noted():
    """A link made while the paper preset had PyTorch's attention biases (drawn as zeros) names no attn_bias: it now
    opens bias-free with the same numbers, and an edit of a bias, which the model no longer has, is dropped with a
    note."""
    small, sentences = dict(d_model=16, n_heads=2, d_ff=32, n_layers=1), ("Hello World", "Hola Mundo")
    old, new = (engine.preset("paper", attn_bias=bias, **small).run(*sentences) for bias in (True, False))
    np.testing.assert_array_equal(old["logits"], new["logits"])
    at = open_page("attention", preset="paper", cfg="d_model:16,n_heads:2,d_ff:32,n_layers:1",
                   edit="enc.0.attn.b_Q:0.1=0.5")
    assert not at.exception and not at.error
    assert [w.value for w in at.warning] == [T("msg.edits_dropped", n=1)] and not shown(at)


@pytest.mark.parametrize("cfg, blog_now, paper_now", [("", True, False), ("attn_divisor:sqrt_dk", False, True),
                                                      ("attn_divisor:10.0", False, False)])
def test_paper_vs_blog_marks_what_the_app_does_now(cfg, blog_now, paper_now):
    at = open_page("paper_vs_blog", **({"cfg": cfg} if cfg else {}))
    assert_clean(at)
    box = next(m.value for m in at.markdown if m.value.startswith(f"##### {EN['diff.divisor.topic']}\n"))
    now = f":orange-badge[{EN['compare.now']}]"
    assert (f":gray[{EN['compare.post']}] {now}" in box) is blog_now
    assert (f":gray[{EN['compare.side.paper']}] {now}" in box) is paper_now
    mask = next(m.value for m in at.markdown if m.value.startswith(f"##### {EN['diff.mask.topic']}\n"))
    assert f":gray[{EN['compare.side.app']}]\n" in mask and now not in mask


# ---- trained and uploaded weights describe themselves --------------------------------------------------------

DEFAULT_STORE = WeightsStore(DEFAULT_DIR)  # the directory the app's store uses in tests


def card(at) -> str:
    return at.sidebar.caption[0].value


def test_the_sidebar_describes_the_presets_model():
    assert card(open_page()) == ("**Model in use:** d_model = 4, h = 2, d_k = 3, d_ff = 8, N = 1 encoder and 1 decoder "
                                 "layer. ") + T(
        "model.from.hello-world", seed=0)
    paper = open_page(preset="paper", cfg="d_model:16,n_heads:2,d_ff:32,n_layers:1", seed="7", lang="zh")
    assert card(paper) == "**当前模型**：d_model = 16，h = 2，d_k = 8，d_ff = 32，N = 编码器 1 层、解码器 1 层。" + translator("zh")(
        "model.from.paper", seed=7)



@pytest.mark.parametrize("cfg", ["d_model:8,d_k:4,d_v:4", "d_model:8,d_k:4,d_v:4,decoder_only:true"])
def test_a_hello_world_model_too_wide_for_the_posts_numbers_does_not_claim_them(cfg):
    """The post's embeddings and W^Q ... are 4 wide: a hello-world model of d_model 8 draws every weight from the
    seed, and its card says so."""
    at = open_page(cfg=cfg)
    model = engine.preset("hello-world", d_model=8, d_k=4, d_v=4)
    assert not any(np.array_equal(model.params["embed.src"][model.vocab.id(word)][:4], row)
                   for word, row in blog.EMBEDDINGS.items())
    assert card(at).endswith(T("model.from.hello-world.random", seed=0, width=4, d_model=8)), card(at)

def test_after_training_the_sidebar_describes_the_trained_model_and_offers_the_learners_sentences_back():
    at = open_tab(open_page("train", src="the cat sleeps", tgt="el gato duerme"))
    at.number_input(key="train.steps").set_value(10).run()
    at.button(key="train.start").click().run(timeout=300)
    assert_clean(at)
    link = query(at)
    assert (link["src"], link["tgt"]) == ("Hello World", "Hola Mundo")  # a pair the model learned
    described = card(at)
    assert T("model.sizes", d_model=32, h=4, d_k=8, d_ff=64, n_enc=2, n_dec=2) in described
    assert T("model.from.trained", corpus=EN["train.corpus.en-es"], steps=10, preset=EN["preset.paper"],
             seed=0) in described
    assert "512" not in described and "512" not in at.sidebar.selectbox(key="ctl.preset").format_func("paper")
    kept = WeightsStore(DEFAULT_DIR)
    assert T("model.kept", id=link["weights"], files=kept.max_files, mb=kept.max_bytes // 2**20) in [
        c.value for c in at.sidebar.caption]
    assert [i.value for i in at.sidebar.info] == [T("model.text_replaced", src="`the cat sleeps`",
                                                    tgt="`el gato duerme`", new_src="`Hello World`",
                                                    new_tgt="`Hola Mundo`")]
    at.button(key="ctl.restore_text").click().run()
    assert_clean(at)
    assert (query(at)["src"], query(at)["tgt"]) == ("the cat sleeps", "el gato duerme")
    assert query(at)["weights"] == link["weights"], "the trained weights stay"
    assert not at.sidebar.info
    shared = open_page(**link)  # the link in another browser: the same description
    assert card(shared) == described


def test_uploaded_weights_name_their_file():
    model = train(start_model(), TrainSettings(steps=3, seed=5)).model
    buffer = io.BytesIO()
    checkpoint.save(model, buffer)
    at = open_tab(open_page("train"), "train.files")
    at.file_uploader(key="train.upload").upload("my [weights](x).npz", buffer.getvalue()).run()
    assert_clean(at)
    described = card(at)
    assert T("model.from.uploaded", file="`my [weights](x).npz`", preset=EN["preset.paper"], seed=0) in described
    assert (query(at)["src"], query(at)["tgt"]) == ("Hello World", "Hola Mundo") and not at.sidebar.info


def test_the_generation_page_says_which_model_generates():
    at = open_page("generate")
    trained = engine.trained("en-es").config
    sizes = T("model.sizes", d_model=trained.d_model, h=trained.n_heads, d_k=trained.d_k, d_ff=trained.d_ff,
              n_enc=trained.depth("enc"), n_dec=trained.depth("dec"))
    assert any(sizes in c.value and "en-es.npz" in c.value for c in at.caption)
    current = open_page("generate", gen="model:current")
    note = T("gen.m.current_note", model=card(current).split("** ", 1)[1]) + " " + EN["gen.m.untrained"]
    assert note in [c.value for c in current.caption]


def test_opening_a_generation_step_says_the_pages_now_use_the_shipped_model():
    at = open_page("generate")
    at.button(key="gen.open_step").click().run()
    assert_clean(at)
    assert query(at)["weights"]
    assert card(at).endswith(T("model.from.shipped", corpus=EN["train.corpus.en-es"], preset=EN["preset.paper"],
                               seed=0))
