"""The training page through AppTest: the loss table and gradients are the engine's, training adopts its weights
on every page and in the URL, a link to trained weights opens them in another session of the same server, a
stopped run keeps what it learned, and uploads (good and malformed) load or are refused with a message."""
import copy
import io
import re
import types

import numpy as np
import pytest

import engine
from engine import checkpoint
from engine.config import ConfigError
from engine.backward import backward_formula, loss_and_grads
from engine.generate import generate
from engine.train import TrainSettings, start_model, train, training
from test_train import MALFORMED, zip_bytes
from conftest import page_title
from test_app import assert_clean, chart_numbers, latex, notes, open_options, open_page, paragraphs, query
from ui.core import session
from ui.core.format import DIGITS, fmt
from ui.core.i18n import EN, ZH, translator
from ui.lessons.training_views import _quoted

T = translator("en")
SMALL_CFG = "d_model:16,n_heads:2,d_ff:32,n_layers:1"


def small_model():
    return engine.preset("paper", d_model=16, n_heads=2, d_ff=32, n_layers=1)


def open_tab(at, label="train.corpus_title"):
    """Open one of the page's tabs (the loss and gradients are open at first): only the open one is drawn."""
    at.session_state["train.tab"] = (ZH if at.session_state["ctl.lang"] == "zh" else EN)[label]
    at.run()
    assert_clean(at)
    return at


def loss_table(at):
    return at.table[0].value


def test_the_loss_table_is_the_engines():
    at = open_page("train", preset="paper", cfg=SMALL_CFG, src="Hello World", tgt="hola mundo")
    assert_clean(at)
    expected = loss_and_grads(small_model(), "Hello World", "hola mundo")
    table = loss_table(at)
    assert table[EN["train.col.input"]].tolist() == ["SOS", "hola", "mundo"]
    assert table[EN["train.col.target"]].tolist() == ["hola", "mundo", "EOS"]
    assert table[EN["train.col.loss"]].tolist() == [fmt(x, DIGITS) for x in expected.token_losses]
    probs = expected.trace["probs"]
    assert table[EN["train.col.p_target"]].tolist() == [fmt(probs[i, y], DIGITS)
                                                       for i, y in enumerate(expected.target_ids)]
    assert {m.label: m.value for m in at.metric}[EN["train.mean_loss"]] == fmt(expected.loss, DIGITS)


def test_label_smoothing_changes_the_loss_as_the_engine_does():
    at = open_page("train", preset="paper", cfg=SMALL_CFG, src="Hello World", tgt="hola mundo")
    at.slider(key="train.view_smoothing").set_value(0.1).run()
    assert_clean(at)
    expected = loss_and_grads(small_model(), "Hello World", "hola mundo", label_smoothing=0.1)
    assert {m.label: m.value for m in at.metric}[EN["train.mean_loss"]] == fmt(expected.loss, DIGITS)


def test_gradients_of_a_step_and_a_weight():
    at = open_page("train", preset="paper", cfg=SMALL_CFG, src="Hello World", tgt="hola mundo")
    expected = loss_and_grads(small_model(), "Hello World", "hola mundo")
    steps = at.selectbox(key="train.grad_step")
    assert steps.options == list(expected.backward)
    steps.set_value("grad.dec.0.ln3").run()
    assert_clean(at)
    assert backward_formula(expected.trace.step("dec.0.ln3")) in latex(at)
    assert "train.grad_param" not in [s.key for s in at.selectbox]  # a weight's gradient: drawn once opened
    at.session_state["train.grad_param_open"] = True
    at.run()
    at.selectbox(key="train.grad_param").set_value("enc.0.attn.W_Q").run()
    at.selectbox(key="train.grad_param_head").set_value(1).run()
    assert_clean(at)
    np.testing.assert_allclose(chart_numbers(at, "train.grad_param_head.chart"), expected.grads["enc.0.attn.W_Q"][1],
                               rtol=1e-12)


def test_training_adopts_the_weights_everywhere_and_a_link_shares_them():
    at = open_tab(open_page("train"))
    at.number_input(key="train.steps").set_value(20).run()
    at.button(key="train.start").click().run(timeout=300)
    assert_clean(at)
    run = train(start_model(), TrainSettings(steps=20))
    assert [s.value for s in at.success] == [T("train.done", steps=20, loss=f"{run.losses[-1]:.4f}")]
    link = query(at)
    trained = run.model
    assert link["preset"] == "paper" and link["weights"]
    assert (link["src"], link["tgt"]) == ("Hello World", "Hola Mundo")
    shared = open_page("generate", **link)
    assert_clean(shared)
    expected = generate(trained, "Hello World", max_len=10)
    assert any(p.endswith(" ".join(f"`{t}`" for t in expected.tokens)) for p in paragraphs(shared))
    again = open_tab(open_page("train"))
    again.number_input(key="train.steps").set_value(20).run()
    again.button(key="train.start").click().run(timeout=300)
    assert EN["train.replayed"] in [c.value for c in again.caption], "the same settings are trained once per server"
    assert query(again)["weights"] == link["weights"]


def test_a_size_change_drops_trained_weights():
    at = open_tab(open_page("train"))
    at.number_input(key="train.steps").set_value(10).run()
    at.button(key="train.start").click().run(timeout=300)
    assert query(at).get("weights")
    open_options(at).number_input(key="ctl.d_ff").set_value(48).run()
    assert_clean(at)
    assert "weights" not in query(at)


def test_a_stopped_run_keeps_what_it_learned():
    """Stop interrupts the script; the next run finds the last step's weights and keeps them."""
    at = open_tab(open_page("train"))
    settings = TrainSettings(steps=50)
    losses, model = [], start_model()
    for update in training(model, settings):
        losses.append(update.loss)
        if update.step == 7:
            model = update.model
            break
    at.session_state["train.partial"] = {"settings": settings, "model": model, "losses": losses}
    at.run()
    assert_clean(at)
    assert at.success[0].value.startswith("Stopped after 7 steps")
    assert query(at)["weights"]


def test_the_tabs_draw_one_section_and_a_run_left_for_another_tab_keeps_what_it_learned():
    at = open_page("train")
    assert at.table and not [b for b in at.button if b.key == "train.start"]  # the loss tab only
    settings = TrainSettings(steps=50)
    update = next(training(start_model(), settings))
    at.session_state["train.partial"] = {"settings": settings, "model": update.model, "losses": [update.loss]}
    at.run()  # the run was interrupted by a click on the loss tab
    assert_clean(at)
    assert query(at)["weights"] and not [b for b in at.button if b.key == "train.start"]
    open_tab(at)
    assert at.success[0].value.startswith("Stopped after 1 steps") and at.button(key="train.start")
    assert not at.table  # the loss table is the loss tab's


def test_a_link_to_weights_this_server_does_not_hold_is_noted():
    at = open_page(weights="0123456789ab")
    assert any(T("msg.weights_gone", id="0123456789ab") in n for n in notes(at)), notes(at)
    assert "weights" not in query(at)
    bad = open_page(weights="../../etc")
    assert any("weights=" in n for n in notes(bad))


def test_upload_good_weights_and_refuse_a_malformed_file():
    model = train(start_model(), TrainSettings(steps=5)).model
    buffer = io.BytesIO()
    checkpoint.save(model, buffer)
    at = open_tab(open_page("train"), "train.files")
    at.file_uploader(key="train.upload").upload("trained.npz", buffer.getvalue()).run()
    assert_clean(at)
    assert query(at)["weights"] and query(at)["preset"] == "paper"
    np.testing.assert_array_equal(at.session_state["context"].model.params["enc.0.attn.W_Q"],
                                  model.params["enc.0.attn.W_Q"])
    bad = open_tab(open_page("train"), "train.files")
    bad.file_uploader(key="train.upload").upload("broken.npz", b"not a zip file").run()
    assert not bad.exception
    assert bad.error and bad.error[0].value.startswith("broken.npz could not be loaded: ")
    assert "weights" not in query(bad)


def english_words(markdown: str) -> list[str]:
    """Runs of two or more English words outside code spans (a code span quotes the file)."""
    return re.findall(r"[A-Za-z]{2,}(?: [A-Za-z]{2,})+", re.sub(r"`[^`]*`", "", markdown))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_refusal_the_engine_gives_no_code_is_worded_by_the_catalog(lang):
    """The training settings' and the context's fallback: the engine's English sentence is not shown as it is."""
    assert session.refusal(translator(lang), ValueError("batch_size (20) is larger than the corpus")) == \
        translator(lang)("msg.refused")


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_every_refusal_of_a_file_is_worded_in_chinese(case):
    with pytest.raises(ValueError) as error:
        checkpoint.load(MALFORMED[case][0]())
    code = error.value.code
    worded = session.refusal(translator("zh"), _quoted(error.value))
    assert worded == ZH[f"msg.{code}"].format(**_quoted(error.value).values) and not english_words(worded), worded
    assert session.refusal(T, error.value) == T(f"msg.{code}", **error.value.values)


@pytest.mark.parametrize("case, member", [("a pickle", "`meta`"), ("bad config value", "`n_heads`"),
                                          ("misshapen array", "`enc.0.ffn.W_1`")])
def test_a_malformed_upload_is_refused_in_chinese(case, member):
    build, _, code = MALFORMED[case]
    with pytest.raises(ValueError) as refused:
        checkpoint.load(build())
    at = open_tab(open_page("train", lang="zh"), "train.files")
    at.file_uploader(key="train.upload").upload("bad.npz", build()).run()
    assert not at.exception and "weights" not in query(at)
    [error] = [e.value for e in at.error]
    assert error == ZH["train.upload_bad"].format(name="bad.npz", error=ZH[f"msg.{code}"].format(
        **_quoted(refused.value).values))
    assert member in error and not english_words(error), error


def test_a_member_name_from_the_file_stays_in_a_code_span():
    """A zip member's name is the uploader's text: shown as code, cut short, never as Markdown."""
    at = open_tab(open_page("train"), "train.files")
    name = "**bold**`[x](http://e)" + "y" * 200
    at.file_uploader(key="train.upload").upload("bad.npz", zip_bytes(**{name + ".npy": b"text"})).run()
    assert at.error[0].value == T("train.upload_bad", name="bad.npz", error=T(
        "msg.ckpt_unreadable", member="`" + name[:80].replace("`", "") + "`"))


def test_the_page_in_chinese():
    at = open_tab(open_page("train", lang="zh"))
    assert page_title(at) == ZH["page.train"]
    assert at.button(key="train.start").label == ZH["train.start"]


def test_a_diverging_run_keeps_its_last_finite_weights(monkeypatch):
    import ui.lessons.training_views as views

    def diverging(model, settings):
        for update in training(model, settings.replace(steps=2)):
            yield update
        raise ConfigError("training diverged at step 3", "train_diverged", step=3, lr="0.25")

    monkeypatch.setattr(views, "training", diverging)
    at = open_tab(open_page("train"))
    at.number_input(key="train.steps").set_value(40).run()
    at.button(key="train.start").click().run(timeout=300)
    assert not at.exception
    assert [e.value for e in at.error] == [T("train.diverged", error=T("msg.train_diverged", step=3, lr="0.25"))]
    assert at.success[0].value.startswith("Stopped after 2 steps")
    assert query(at)["weights"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_learning_rate_far_too_large_is_worded_in_the_pages_language(monkeypatch, lang):
    """A scale of 1e30 makes the weights inf or NaN by the second update: the engine gives the step and the rate,
    the catalog the sentence (the engine's English sentence reached Chinese screens)."""
    import ui.lessons.training_views as views

    monkeypatch.setattr(views, "training", lambda model, settings: training(model, settings.replace(lr_scale=1e30)))
    at = open_tab(open_page("train", lang=lang))
    at.button(key="train.start").click().run(timeout=300)
    assert not at.exception
    t = translator(lang)
    with pytest.raises(ValueError) as refused:
        train(start_model(), TrainSettings(lr_scale=1e30))
    assert refused.value.code == "train_diverged" and refused.value.values["step"] == 2
    assert [e.value for e in at.error] == [t("train.diverged", error=t("msg.train_diverged", **refused.value.values))]
    assert not english_words(at.error[0].value) or lang == "en"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_batch_tab_shows_the_engines_padded_batch(lang):
    """The page's pair and two of the corpus, padded side by side; the masks and weights are the engine's batch."""
    at = open_tab(open_page("train", preset="paper", cfg=SMALL_CFG, src="Hello World", tgt="hola mundo", lang=lang),
                  "train.tab.batch")
    from ui.lessons.batch_views import BLOCK, EXAMPLES
    batch = small_model().run_batch((("Hello World", "hola mundo"),) + EXAMPLES)
    tokens = at.dataframe[1].value  # the decoder's input, one row per sentence
    assert tokens.iloc[0, 1:].tolist() == ["SOS", "hola", "mundo"] + ["<pad>"] * 5
    assert tokens.iloc[2, 1:].tolist() == ["SOS", "gracias"] + ["<pad>"] * 6
    at.segmented_control(key="batch.sentence").set_value(2).run()
    assert_clean(at)
    mask = batch[f"{BLOCK}.mask"][2, 0]  # causal + padding; the chart colours -inf as a gap (NaN)
    np.testing.assert_array_equal(chart_numbers(at, "batch.sum"), np.where(mask == -np.inf, np.nan, mask))
    np.testing.assert_array_equal(chart_numbers(at, "batch.weights"), batch[f"{BLOCK}.weights"][2, 0])
    assert np.all(chart_numbers(at, "batch.weights")[:, 2:] == 0.0)  # "thank you" has two real target tokens


def curve(at, key, position):
    """The y values of one line of a keyed chart of curves, as the browser gets them."""
    import base64
    import json

    chart = next(e for e in at.get("plotly_chart") if e.proto.id.endswith(f"-{key}"))
    y = json.loads(chart.proto.spec)["data"][position]["y"]
    return np.frombuffer(base64.b64decode(y["bdata"]), np.dtype(y["dtype"]))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_batch_tab_draws_the_recorded_trainings_only_while_asked(lang):
    """Closed, the comparison with the per-pair loop costs nothing; open, it draws the record's figures: a table,
    and per corpus both losses and both differences from the padded training, step by step."""
    at = open_tab(open_page("train", lang=lang), "train.tab.batch")
    assert not [e for e in at.get("plotly_chart") if "batch.vs_loop" in e.proto.id]
    at.session_state["batch.vs_loop"] = True
    at.run()
    assert_clean(at)
    from ui.lessons.batch_views import reading, training_record
    record, t = training_record(), translator(lang)
    table = at.table[-1].value
    es = record["corpora"]["en-es"]
    assert table.columns.tolist() == ["", t("train.corpus.en-es"), t("train.corpus.en-zh")]
    assert table.iloc[2].tolist()[1] == f"{es['speedup']:.1f}×"
    assert table.iloc[3].tolist()[1] == fmt(es["padded"]["corpus_loss"], 3)
    assert table.iloc[6, 0] == t("batch.row.agree", run=t("batch.run.per_pair"), agree="1×10⁻⁹")
    assert table.iloc[6, 1] == f"{es['agree_until']['per_pair']} / 300"
    for corpus, runs in record["corpora"].items():
        padded, loop, nudged = (np.array(runs[run]["losses"]) for run in ("padded", "per_pair", "nudged"))
        key = f"batch.vs_loop.{corpus}"
        np.testing.assert_array_equal(curve(at, key, 0), padded)
        np.testing.assert_array_equal(curve(at, key, 1), loop)
        np.testing.assert_array_equal(curve(at, key, 2), np.abs(loop - padded))
        np.testing.assert_array_equal(curve(at, key, 3), np.abs(nudged - padded))
    assert t("batch.vs_loop_intro", nudged=f"`{record['nudged']}`") in paragraphs(at)
    assert reading(reader_context(lang), record) in paragraphs(at)


def reader_context(lang):
    """What reading() reads of a page's context: its translator."""
    return types.SimpleNamespace(t=translator(lang))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_charts_reading_says_what_the_record_shows(lang):
    """It said the trainings part where a loss jumps back up near 0, and that the nudged one parts at the same
    stretch, while the shipped record's trainings agree to 1e-9 all 300 steps (2.25e-12 apart at most): it says
    what the record holds, and the step where a record's trainings first part."""
    from ui.lessons.batch_views import reading, training_record
    record, t = training_record(), translator(lang)
    assert reading(reader_context(lang), record) == t("batch.vs_loop_read.together", steps=300, gap="2.2×10⁻¹²",
                                             nudged="1.4×10⁻¹³")
    parted = copy.deepcopy(record)
    parted["corpora"]["en-zh"]["agree_until"]["nudged"] = 212
    assert reading(reader_context(lang), parted) == t("batch.vs_loop_read.parted", step=213)
