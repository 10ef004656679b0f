"""The Streamlit app run headless with streamlit.testing.v1.AppTest: the engine's formulas and numbers on the pages,
weight edits flowing to later pages, the URL state, and bad input (every page in both languages: test_every_page.py).

One thing AppTest does not do by itself, done here on purpose: the app records weight edits in the data editor's
on_change callback. `data_editor.set_value` is refused by AppTest and a session-state write does not call on_change,
so `type_cells` sends what the browser sends: the editor's JSON edit state as the widget's value.
"""
import json
import math
import re
import sys
from pathlib import Path
from urllib.parse import parse_qsl

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine.layers import layer_outputs  # noqa: E402
import streamlit_privates  # noqa: E402
from conftest import page_title  # noqa: E402
from engine.tokens import split  # noqa: E402
from ui.core import streamlit_internals  # noqa: E402
from ui.core.format import DIGITS, bmatrix, bmatrix_around, fmt, fmt_tex, table  # noqa: E402
from ui.core.i18n import CATALOGS, EN, LANGUAGES, ZH, literal, load_catalogs, translator  # noqa: E402
from ui.core.labels import SEED_NOTES, description_key, step_name_key, step_tex  # noqa: E402
from ui.core.navigation import PAGES, page_file, slides  # noqa: E402
from ui.core.state import APP_LIMITS, DEFAULT_TARGET, MAX_TOKENS  # noqa: E402
from ui.views.draw import HOLD, ROOM  # noqa: E402
from ui.views.drill import cell_explanation  # noqa: E402

APP = str(ROOT / "app.py")
ALL_PAGES = [page for pages in PAGES.values() for page in pages]
TEXT_PAGES = [page for page in ALL_PAGES if page not in PAGES["vision"]]  # the pages of the text model
EN_T, ZH_T = translator("en"), translator("zh")
CJK = re.compile(r"[\u3400-\u9fff]")
STEP_HEADER = re.compile(r"^##### (?P<human>[^\n]*?) · (?P<description>[^\n]*)\n\n"
                         r":gray\[:small\[`(?P<name>[^`]+)` · Shape: \([^)]*\) = \((?P<shape>[\d, ]+)\)\]\]"
                         r"\n\n(?P<formula>\$\$\n(?s:.*)\n\$\$)$")  # and the formula (draw.text_and_formula)
DEFAULT_QUERY = {"preset": "hello-world", "src": "Hello World", "tgt": "Hola Mundo"}  # the browser's language


# ---- helpers ------------------------------------------------------------------------------------------------

def open_page(page="overview", **query):
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    if page != "overview":
        goto(at, page)
    return at


def open_link(page, **query):
    """A link opened in a new browser tab: its page is the first the session runs."""
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    at.switch_page(page_file(page))
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def drilled(trace, name, index):
    """The arithmetic of a step's cell at `index` (the engine's, from 0) as the English drill-down writes it."""
    return cell_explanation(trace, name, index, EN[step_name_key(name)], DIGITS)


def open_options(at):
    """Open the sidebar's "Model options" expander: its widgets are drawn only while it is open."""
    at.session_state["ctl.options"] = True
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def goto(at, page):
    at.switch_page(page_file(page))
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert page_title(at) == translator(at.session_state["ctl.lang"])(f"page.{page}")
    return at


def changes(at, page):
    """Open a stack page's section on what each layer changes (lazy tabs: only the open one is drawn; the page opens on
    its layers one by one)."""
    at.session_state[f"{page[:3]}.section"] = (ZH if at.session_state["ctl.lang"] == "zh" else EN)["stack.changes"]
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


STACK_PAGES = ("encoder_stack", "decoder_stack")


def paragraphs(at):
    """Every paragraph of the page's markdown (an element may hold several, e.g. a sentence and its note)."""
    return [paragraph for element in at.markdown for paragraph in element.value.split("\n\n")]


def latex(at):
    """Every display formula on the page: st.latex's, and those written in a markdown after its text."""
    written = [block for element in at.markdown for block in re.findall(r"\n\n(\$\$\n.*?\n\$\$)(?=\n\n|$)",
                                                                        element.value, re.S)]
    return [formula_body(element.value) for element in at.latex] + [formula_body(block) for block in written]


def formula_body(value: str) -> str:
    """A formula's body, without the $$ lines and the room draw.latex puts around it (HOLD alone, after a formula of
    paper_vs_blog's)."""
    body = re.sub(r"^\$\$\n|\n\$\$$", "", value)
    return body.removeprefix(ROOM[0]).removesuffix(ROOM[1]) if body.startswith(ROOM[0]) else body.removesuffix(HOLD)


def tables(at):
    """The tables' cells, without a matrix's row labels (its column "")."""
    return [element.value.drop(columns=[""], errors="ignore").values.tolist() for element in at.dataframe]


def notes(at):
    return [w.value for w in at.warning] + [e.value for e in at.error]


def assert_clean(at):
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def query(at):
    return dict(at.query_params)


def open_editors(at):
    """Open every weight editor's expander on the page: each draws its editor only while open."""
    for expander in at.expander:
        key = expander.proto.id.rsplit("-", 1)[-1]
        if key.startswith("open."):
            at.session_state[key] = True
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def editor_key(at, param, head=None):
    if not any(e.key.startswith(f"edit.{param}.{head}.") for e in at.data_editor):
        open_editors(at)
    keys = [e.key for e in at.data_editor if e.key.startswith(f"edit.{param}.{head}.")]
    assert len(keys) == 1, (param, head, [e.key for e in at.data_editor])
    return keys[0]


def type_cells(at, key, edited_rows):
    """Type into an st.data_editor as the browser does: {row position: {column label: typed value}}."""
    editor = at.data_editor(key=key)
    streamlit_privates.send_value(at, editor.proto.id, string_value=json.dumps(
        {"edited_rows": edited_rows, "added_rows": [], "deleted_rows": []}))
    assert not at.exception, [e.message for e in at.exception]
    return at


# The flows of steps on each page (ui.views.steps.flow): their step picker's key and the steps in order.
FLOWS = {"qkv": ("qkv.0", ["q", "k", "v"]), "attention": ("attention.0", ["scores", "scaled", "weights", "heads"]),
         "multihead": ("multihead.None", ["concat", "out"]),
         "add_norm": ("add_norm.1.None", ["add1", "ln1"]), "ffn": ("ffn.None", ["hidden", "act", "out"]),
         "output": ("output.None", ["logits", "vocab_mask", "masked_logits", "probs"]),
         "masked_attention": ("masked.0", ["q", "k", "v", "scores", "scaled", "mask", "masked", "weights", "heads",
                                           "concat", "out"])}


def open_step(at, page, leaf):
    """Choose the step of a page's flow that ends in `leaf` (only the chosen step is drawn)."""
    key, leaves = FLOWS[page]
    at.session_state[key] = leaves.index(leaf)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def engine_trace(edits=(), src="Hello World", tgt=DEFAULT_TARGET, seed=0, **overrides):
    """The engine's own run with the same weights typed in: {param: {index: value}}."""
    model = engine.preset("hello-world", seed=seed, **overrides)
    changed = {}
    for param, index, value in edits:
        changed.setdefault(param, np.array(model.params[param]))[index] = value
    return (model.with_params(changed) if changed else model).run(src, tgt)


def shown(at, matrix):
    """True if the page writes this matrix out, as a bmatrix, as a table or in a heatmap's cells, in the app's number
    format at the session's digits."""
    matrix, digits = np.atleast_2d(matrix), at.session_state["state"].digits
    return any(bmatrix(matrix, digits) in body for body in latex(at)) or table(matrix, digits) in tables(at) + [
        json.loads(chart.proto.spec)["data"][0].get("text") for chart in at.get("plotly_chart")]


def overview_numbers(at):
    """(source tokens, decoder positions, d_model, heads, encoder layers, decoder layers) as the overview page states
    them."""
    line = next(m.value for m in at.markdown if "d_model = " in m.value)
    match = re.fullmatch(r"(\d+) source tokens?, (\d+) decoder positions?, d_model = (\d+), (\d+) heads?, "
                         r"(\d+) encoder layers? and (\d+) decoder layers?", line)
    assert match, line
    return tuple(int(g) for g in match.groups())


# ---- pages in both languages ----------------------------------------------------------------------------

@pytest.mark.parametrize("lang", ["en", "zh"])
def test_paper_vs_blog_shows_every_difference_both_ways(lang):
    from engine.blog import DIFFERENCES
    from ui.core.departures import RIGHT_SIDE

    at = open_page("paper_vs_blog", lang=lang)
    t = translator(lang)
    texts = [m.value for m in at.markdown]
    for difference in DIFFERENCES:
        key = difference["key"]
        shown = [text for text in texts if text.startswith(f"##### {t(f'diff.{key}.topic')}\n\n")]
        assert len(shown) == 1, key
        labels = {"post": t("compare.post"), "engine": t(f"compare.side.{RIGHT_SIDE[key]}")}  # and a mark if now
        for side in ("post", "engine"):
            assert re.search(re.escape(f":gray[{labels[side]}]") + r"( :orange-badge\[[^]]+\])?" +
                             re.escape(f"\n\n$$\n{t.words(difference[side])}{HOLD}\n$$"), shown[0]), (key, side)
        assert shown[0].endswith(t(f"diff.{key}.why"))


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("preset", ["hello-world", "paper"])
def test_the_sizes_page_shows_the_engines_counts(preset, lang):
    from engine import sizes

    at = open_page("sizes", preset=preset, lang=lang, cfg="n_dec_layers:2")
    assert_clean(at)
    t = translator(lang)
    model = engine.with_words(engine.preset(preset, n_dec_layers=2), DEFAULT_QUERY["src"], DEFAULT_QUERY["tgt"])
    parts, beside_torch, products = tables(at)
    v, paper_v = len(model.vocab), sizes.PAPER_VOCABULARY_SIZE
    number = lambda text: int(text.replace(",", "").replace("−", "-"))
    for column, vocab in ((3, v), (4, paper_v)):  # PyTorch's count, plus the items, is this model's
        assert number(beside_torch[0][column]) == sizes.torch_count(model.config, vocab)
        assert sum(number(row[column]) for row in beside_torch[:-1]) == number(beside_torch[-1][column]) == \
            sizes.parameter_count(model.config, vocab)
        assert all(number(row[1]) * int(row[2]) == number(row[column]) for row in beside_torch if row[1])
    assert parts[-1] == [t("sizes.all"), "", "", f"{sizes.parameter_count(model.config, v):,}",
                         f"{sizes.parameter_count(model.config, paper_v):,}"]
    assert [row[2] for row in parts if row[0] == t("sizes.part.dec.ffn")] == ["2"]
    gpt = sizes.parameter_count(model.config.replace(decoder_only=True), v)  # the same sizes, decoder-only
    assert gpt < sizes.parameter_count(model.config, v)
    assert any(f"**{gpt:,}**" in m.value for m in at.markdown)
    trace = model.run(DEFAULT_QUERY["src"], DEFAULT_QUERY["tgt"])
    expected = sizes.pass_products(trace)
    assert [row[0] for row in products] == list(expected)
    assert [row[2] for row in products] == [f"{p.multiply_adds:,}" for p in expected.values()]
    assert any(f"**{sum(p.multiply_adds for p in expected.values()):,}**" in m.value for m in at.markdown)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_paper_models_total_stands_beside_pytorchs(lang):
    """nn.Transformer(512, 8, 6, 6, 2048) and the 37,000 x 512 embedding count 63,084,544 (tests/test_sizes.py
    builds them); the paper model 63,082,632: its output bias, +37,000, PyTorch's two final LayerNorms, -2 x 1,024,
    and PyTorch's attention biases, which the paper's formulas do not have, -2,048 in each of 18 attention blocks."""
    at = open_page("sizes", preset="paper", lang=lang)
    assert_clean(at)
    t = translator(lang)
    assert t("sizes.torch.text", reference="nn.Transformer(512, 8, 6, 6, 2048)", d_model=512, tables=1) in [
        m.value for m in at.markdown]
    assert [row[:3] + row[4:] for row in tables(at)[1]] == [  # part, each, copies, with V = 37,000
        [t("sizes.torch.count"), "", "", "63,084,544"], [t("sizes.torch.output_bias"), "", "", "+37,000"],
        [t("sizes.torch.final_norms"), "−1,024", "2", "−2,048"],
        [t("sizes.torch.attention_biases"), "−2,048", "18", "−36,864"], [t("sizes.torch.ours"), "", "", "63,082,632"]]


def without_words(formulas: list[str]) -> list[str]:
    """Formulas without their words (\\text{…}, which the language translates: "X: the sub-layer's input")."""
    return [re.sub(r"\\text\{[^}]*\}", "", formula) for formula in formulas]


def test_language_switch_and_url_language():
    at = open_page("attention")
    english = latex(at)
    at.session_state["ctl.lang"] = "zh"
    at.run()
    assert page_title(at) == ZH["page.attention"]
    assert query(at)["lang"] == "zh"
    assert without_words(latex(at)) == without_words(english), "the language changes words, not numbers"
    assert any(ZH["view.drill"] in s.label for s in at.selectbox)  # the drill-down's list of cells
    fresh = open_page("attention", lang="zh")
    assert page_title(fresh) == ZH["page.attention"]
    assert fresh.session_state["ctl.lang"] == "zh"
    assert query(fresh)["lang"] == "zh", "a link's language was chosen: it stays"
    assert "lang" not in query(open_page("attention")), "not chosen: the reader's browser decides"


def test_a_third_language_is_one_catalog_file(tmp_path, monkeypatch):
    """A catalog file as ui/core/i18n.py loads it at start: its language is in the picker and the link; its texts show,
    the engine's formula words and drill-down text among them, and a key it lacks shows in English."""
    (tmp_path / "xx.toml").write_text('"lang.name" = "Xish"\n"page.attention" = "Xattention"\n'
                                      '"word.later" = ": xlater"\n"word.comes-after" = "(xx {j} > {i})"\n',
                                      encoding="utf-8")
    catalog = load_catalogs(tmp_path)["xx"]
    monkeypatch.setitem(CATALOGS, "xx", catalog)  # in place: ui.core.sidebar and ui.core.state hold these dicts
    monkeypatch.setitem(LANGUAGES, "xx", catalog["lang.name"])
    at = open_page("attention", lang="xx")
    assert_clean(at)
    assert page_title(at) == "Xattention" and at.sidebar.text_input(key="ctl.src").label == EN["ctl.src"]
    assert at.segmented_control(key="ctl.lang").options == ["English", "简体中文", "Xish"] and query(at)["lang"] == "xx"
    at.session_state["ctl.lang"] = "zh"
    at.run()
    assert page_title(at) == ZH["page.attention"] and query(at)["lang"] == "zh"
    at = open_step(open_page("masked_attention", lang="xx", tgt="hola"), "masked_attention", "mask")
    at.selectbox(key="cell.dec.0.self_attn.mask.0").set_value(1).run()
    at.session_state["plain.dec.0.self_attn.mask.0"] = True
    at.run()
    assert_clean(at)
    assert any(r"(2 > 1\text{: xlater})" in body for body in latex(at))  # positions from 1
    assert [c.value for c in at.code] == ["M[1, 2] = −∞ (xx 2 > 1) = −∞"]


def test_words_inside_formulas_are_chinese_in_chinese():
    at = open_step(open_page("masked_attention", lang="zh", tgt="hola"), "masked_attention", "mask")
    at.selectbox(key="cell.dec.0.self_attn.mask.0").set_value(1).run()  # row SOS, column hola: a later position
    assert_clean(at)
    assert any(r"\text{：后面的位置}" in body for body in latex(at))
    at.session_state["plain.dec.0.self_attn.mask.0"] = True
    at.run()
    assert [c.value for c in at.code] == ["M[1, 2] = −∞ （位置 2 在 1 之后） = −∞"]
    goto(at, "train")
    bodies = latex(at)
    assert any(r"\text{解码器输入}" in body for body in bodies) and any(r"\text{忽略}" in body for body in bodies)
    assert not any("decoder input" in body or "ignore" in body for body in bodies)
    at.selectbox(key="train.grad_step").set_value("grad.dec.0.self_attn.mask").run()
    assert any(r"\text{是常数：它的梯度不会传到任何参数}" in body for body in latex(at))
    at.session_state["ctl.lang"] = "en"
    at.run()
    assert any(r"\text{is a constant: its gradient reaches no parameter}" in body for body in latex(at))


def test_overview_states_the_example():
    at = open_page()
    trace = engine_trace()
    assert overview_numbers(at) == (2, 3, 4, 2, 1, 1)
    assert [m.value for m in at.metric][:2] == ["hello world", "SOS hola mundo"]
    best = int(np.argmax(trace["probs"][-1]))
    assert at.metric[2].value == trace.model.vocab.tokens[best]


# ---- the engine's formulas and numbers ---------------------------------------------------------------------

# The pages whose steps are the text model's pass, checked against it as they open (tests/test_every_page.py's English
# run of every page); test_step_coverage: dropout's; the Vision Transformer's pages draw its trace (test_vit_pages.py)
PASS_PAGES = [p for p in ALL_PAGES if p not in ("overview", "animation", "paper_vs_blog", "sizes", "generate", "train",
                                                 "dropout", "exercises", *PAGES["vision"])]


def assert_steps_are_the_engines(at):
    """Each step an English page at the first settings shows: its name, description and shape, its formula with the
    words in English, and the engine's numbers."""
    trace = engine_trace()
    bodies = latex(at)
    steps = [STEP_HEADER.match(m.value) for m in at.markdown]
    steps = [m for m in steps if m]
    assert steps, "every step page shows at least one step"
    for header in steps:
        name = header["name"]
        step = trace.step(name)
        assert header["human"] == EN[step_name_key(name)], name  # the code's name is the caption under it
        assert header["description"] == EN[description_key(name)], name
        assert header["shape"] == ", ".join(map(str, step.value.shape)), name
        assert EN_T.words(step.formula) in bodies, name  # its word slots in English
        value = step.value[0] if step.value.ndim == 3 else step.value
        assert shown(at, value), f"{name}: the engine's numbers are not on the page"


def test_hello_world_numbers_on_the_pages():
    at = open_page("attention")
    scores = matrix_shown(at, r"S_{1}")
    assert "105.2 " in scores and "135.6\\end" in scores  # DIGITS significant digits: 105.21 and 135.5517
    assert engine_trace().step("enc.0.attn.scores").formula in latex(at)
    goto(at, "multihead")
    assert matrix_shown(at, glance_name("enc.0.attn.out")).startswith(r"\begin{bmatrix}11.46 & ")
    goto(at, "add_norm")
    assert matrix_shown(at, glance_name("enc.0.ln1")).startswith(r"\begin{bmatrix}1.719 & ")


def glance_name(name):
    """What a glance calls a step without a symbol of its own: its name on screen (labels.step_tex)."""
    return step_tex(None, None, EN[step_name_key(name)])


def matrix_shown(at, tex_name):
    """The bmatrix written as `tex_name = ...` in the page's formulas (a step's, or one of a flow's glance)."""
    body = next(b for b in latex(at) if f"{tex_name} = " in b)
    return body.split(f"{tex_name} = ", 1)[1].split(r"\end{bmatrix}", 1)[0] + r"\end{bmatrix}"


def test_a_heatmap_that_writes_its_numbers_is_not_followed_by_a_table_of_them():
    at = open_page("ffn")  # the hidden layer, 3 x 8: too wide for a bmatrix, written in the heatmap's cells
    hidden = engine_trace()["enc.0.ffn.hidden"]
    assert not tables(at) and shown(at, hidden)
    goto(at, "output")  # the logits, 3 x 10: too many columns for the cells' text, so a table
    assert table(engine_trace()["logits"], DIGITS) in tables(at)


def test_second_head_and_second_sublayer():
    at = open_page("attention")
    at.session_state["heads.attention.0"] = 1  # head 2
    at.run()
    trace = engine_trace()
    assert any(r"S_{2} = " + bmatrix(trace["enc.0.attn.scores"][1], DIGITS) in b for b in latex(at))
    goto(at, "add_norm")
    at.button_group(key="add_norm.sublayer").set_value(2).run()
    assert_clean(at)
    assert shown(at, trace["enc.0.ln2"]) and shown(at, trace["enc.0.add2"])
    assert not shown(at, trace["enc.0.ln1"])


# ---- a link carries the view: head, step, layer, cell ------------------------------------------------------------

def test_a_link_opens_the_head_it_names():
    at = open_link("attention", head="2")
    assert at.session_state["heads.attention.0"] == 1  # head 2
    assert matrix_shown(at, r"S_{2}") == bmatrix(engine_trace()["enc.0.attn.scores"][1], DIGITS)
    assert query(at) == {**DEFAULT_QUERY, "head": "2"} and not notes(at)


def test_a_link_opens_the_step_it_names_not_its_label():
    at = open_link("masked_attention", step="weights", tgt="hola")
    assert STEP_HEADER.match(at.markdown[[STEP_HEADER.match(m.value) is not None for m in at.markdown].index(True)]
                             .value)["name"] == "dec.0.self_attn.weights"
    assert at.session_state["masked.0"] == FLOWS["masked_attention"][1].index("weights")
    assert query(at)["step"] == "weights" and not notes(at)


def test_a_link_opens_the_layer_it_names():
    at = open_link("qkv", cfg="n_layers:2", layer="2", head="2", step="v")
    assert at.session_state["layer.enc"] == 1 and at.session_state["heads.qkv.1"] == 1
    assert matrix_shown(at, r"V_{2}") == bmatrix(engine_trace(n_layers=2)["enc.1.attn.v"][1], DIGITS)
    assert {k: query(at)[k] for k in ("layer", "head", "step")} == {"layer": "2", "head": "2", "step": "v"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_sublayer_picker_and_the_depths_say_what_they_are(lang):
    """The Add & LayerNorm picker chooses a sub-layer (it was labelled "Input"); the depths are worded (the sidebar
    showed the field names n_enc_layers and n_dec_layers)."""
    at = open_page("add_norm", lang=lang)
    t = translator(lang)
    assert at.button_group(key="add_norm.sublayer").label == t("add_norm.sublayer") != t("view.input")
    open_options(at)
    labels = [at.number_input(key=f"ctl.{field}").label for field in ("d_model", "n_enc_layers", "n_dec_layers")]
    assert labels == ["d_model", t("ctl.n_enc_layers"), t("ctl.n_dec_layers")]


def test_a_link_opens_the_sublayer_it_names():
    at = open_link("add_norm", sublayer="2", step="ln2")  # the sub-layer's second step (the page opens on its first)
    assert at.session_state["add_norm.sublayer"] == 2 and at.session_state["add_norm.2.None"] == 1  # ln2, not add2
    trace = engine_trace()
    assert shown(at, trace["enc.0.ln2"]) and not shown(at, trace["enc.0.ln1"]) and not notes(at)
    assert query(at) == {**DEFAULT_QUERY, "sublayer": "2", "step": "ln2"}


def test_a_link_opens_the_cell_it_names():
    at = open_link("attention", step="scaled", cell="1.0")
    assert drilled(engine_trace(), "enc.0.attn.scaled", (0, 1, 0)).latex in latex(at)
    assert at.selectbox(key="cell.enc.0.attn.scaled.0").value == 2  # row 1, column 0 of 2 x 2
    assert (at.session_state["row.enc.0.attn.scaled.0"], at.session_state["col.enc.0.attn.scaled.0"]) == (1, 0)
    assert query(at) == {**DEFAULT_QUERY, "step": "scaled", "cell": "1.0"}


@pytest.mark.parametrize("part, text", [("head", "3"), ("head", "0"), ("head", "x"), ("step", "ln1"),
                                        ("step", "1. scores"), ("cell", "2.0"), ("cell", "0.5"), ("cell", "1;0"),
                                        ("layer", "2")])
def test_a_link_part_the_page_cannot_show_is_noted_and_dropped(part, text):
    at = open_link("attention", **{part: text})
    assert_clean(at)
    assert notes(at) == [EN_T("msg.url", detail=literal(f"{part}={text!r}"))]
    assert at.session_state["heads.attention.0"] == 0
    assert drilled(engine_trace(), "enc.0.attn.scores", (0, 0, 0)).latex in latex(at)
    assert query(at) == DEFAULT_QUERY


def test_a_teacher_opens_a_room_from_the_top_of_the_sidebar_and_its_code_is_large():
    """The room's panel is the sidebar's first part, above the controls (it was the last, ~1,700 px down): "Open a
    room" is one click, not behind an expander; the teacher's panel shows the QR code, then the code in large
    monospace type (KaTeX's \\Huge \\texttt), below the image, whose fullscreen button would cover it above."""
    at = open_link("attention")
    top = at.sidebar.children[0]
    assert [child.type for child in top.children.values()][:2] == ["button", "expander"]
    assert at.button(key="room.open").label == EN_T("room.open")
    at.button(key="room.open").click().run()
    code = at.session_state["room"].code
    panel = at.sidebar.children[0].children[0]
    assert [child.type for child in panel.children.values()][:4] == ["image", "caption", "latex", "code"]
    assert panel.children[2].value == "$$\n\\Huge\\texttt{" + code + "}\n$$"


def test_a_teacher_opens_a_room_from_the_overview_where_a_class_starts():
    """At 1280 x 720 the sidebar's navigation fills the first screen, its room panel under it: the overview, where a
    class starts, has "Open a room" at its top too; once the session is in a room, in its place, how students join
    (the QR code, the code, big, and the link) for the teacher, in presenter mode too; nothing for a student."""
    at = open_link("overview")
    button = at.button(key="overview.room.open")
    assert button.label == EN_T("room.open")
    button.click().run()
    code = at.session_state["room"].code
    assert code and at.session_state["room"].key and query(at)["room"] == code
    assert not [b for b in at.button if b.key == "overview.room.open"]
    card = [latex.value for latex in at.main.latex]
    assert card == ["$$\n\\Huge\\texttt{" + code + "}\n$$"]
    assert [c.value for c in at.main.code] == [f"/?room={code}"]  # AppTest has no host
    teacher = open_link("overview", room=code, key=at.session_state["room"].key, present="1")
    assert [latex.value for latex in teacher.main.latex] == card
    student = open_link("overview", room=code)
    assert not [b for b in student.button if b.key == "overview.room.open"]
    assert not student.main.latex and not student.main.code


def test_the_link_follows_the_view_and_stays_on_its_page():
    at = open_page("attention")
    at.session_state["heads.attention.0"] = 1  # head 2
    at.run()
    at.session_state["attention.1"] = 2  # weights
    at.run()
    at.selectbox(key="cell.enc.0.attn.weights.1").set_value(2).run()  # row 1, column 0
    assert query(at) == {**DEFAULT_QUERY, "head": "2", "step": "weights", "cell": "1.0"}
    student = open_link("attention", **query(at))
    assert latex(student) == latex(at) and student.session_state["heads.attention.0"] == 1
    goto(at, "multihead")  # no heads there: the attention page's view is not carried over
    assert query(at) == DEFAULT_QUERY and not notes(at)
    goto(at, "attention")
    assert at.session_state["heads.attention.0"] == 0


def test_drill_down_explains_the_chosen_cell():
    at = open_page("attention")
    trace = engine_trace()
    first = drilled(trace, "enc.0.attn.scores", (0, 0, 0))
    assert first.latex in latex(at)
    at.selectbox(key="cell.enc.0.attn.scores.0").set_value(3).run()  # row 1, column 1 of 2 x 2
    chosen = drilled(trace, "enc.0.attn.scores", (0, 1, 1))
    assert chosen.latex in latex(at) and first.latex not in latex(at)
    assert chosen.latex.startswith(r"\begin{aligned}S_{1}[2, 2] &=")  # head 1's row 2, column 2: exact terms
    assert not at.code, "the plain text is drawn only when its expander is opened"
    at.session_state["plain.enc.0.attn.scores.0"] = True
    at.run()
    assert chosen.text in [c.value for c in at.code]  # the digits setting's, as every other number
    assert chosen.text.endswith("≈ 135.6") and "9.99×" in chosen.text and DIGITS == 4  # 135.5517 rounded


def test_a_wide_steps_drill_down_column_is_typed_by_its_number():
    """Over 32 numbered columns the drill-down's column is a number input (a list of 2048 would be sent on every
    rerun), counted from 1 as its labels are; a typed fraction picks the whole column, and the row of words stays a
    list."""
    cfg = "d_model:16,n_heads:2,d_ff:256,n_layers:1"
    at = open_page("ffn", preset="paper", cfg=cfg, src="Hello World")
    trace = engine.preset("paper", d_model=16, n_heads=2, d_ff=256, n_layers=1).run("Hello World")
    at.selectbox(key="row.enc.0.ffn.hidden.None").set_value(1)
    typed = at.number_input(key="col.enc.0.ffn.hidden.None.number")
    assert typed.label == "Column (1–256)" and typed.value == 1
    typed.set_value(137.6).run()
    assert_clean(at)
    assert at.session_state["col.enc.0.ffn.hidden.None"] == 136  # column 137
    assert at.number_input(key="col.enc.0.ffn.hidden.None.number").value == 137
    shown = drilled(trace, "enc.0.ffn.hidden", (1, 136))
    assert shown.latex in latex(at) and shown.latex.startswith(r"\begin{aligned}H[2, 137] &\approx")  # row 2, col 137


# ---- edits flow to later pages ------------------------------------------------------------------------------

EDIT_CASES = [
    # page, its step, parameter, head, typed cells, the engine index, a later page, a step on it
    ("qkv", "q", "enc.0.attn.W_Q", 0, {"0": {"1": 5.0}}, (0, 0, 0), "attention", "enc.0.attn.scores"),
    ("qkv", "v", "enc.0.attn.W_V", 0, {"3": {"3": -1.5}}, (0, 3, 2), "attention", "enc.0.attn.heads"),
    ("multihead", "out", "enc.0.attn.W_O", None, {"5": {"2": 2.5}}, (5, 1), "add_norm", "enc.0.ln1"),
    ("add_norm", "ln1", "enc.0.ln1.gamma", None, {"0": {"3": 3.0}}, (2,), "ffn", "enc.0.ffn.hidden"),
    ("ffn", "out", "enc.0.ffn.W_2", None, {"7": {"4": 0.75}}, (7, 3), "encoder_stack", "enc.out"),
    ("tokens", None, "embed.src", None, {"1": {"1": 7.0}}, (2, 0), "positional", "src.input"),  # "world", id 2
    ("output", "logits", "unembed.W", None, {"0": {"hola": 4.0}}, (0, 8), "output", "logits"),
]


@pytest.mark.parametrize("page, leaf, param, head, cells, index, later, name", EDIT_CASES,
                         ids=[f"{c[2]}->{c[7]}" for c in EDIT_CASES])
def test_an_edit_changes_the_numbers_of_later_pages(page, leaf, param, head, cells, index, later, name):
    at = open_page(page)
    if leaf:
        open_step(at, page, leaf)
    before, (typed,) = engine_trace(), [v for row in cells.values() for v in row.values()]
    after = engine_trace([(param, index, typed)])
    pick = (lambda v: v[0]) if after[name].ndim == 3 else (lambda v: v)
    assert not np.allclose(pick(after[name]), pick(before[name])), "a test edit that changes nothing"
    type_cells(at, editor_key(at, param, head), cells)
    assert_clean(at)
    assert at.session_state["state"].edits == ((param, index, typed),)
    goto(at, later)
    assert_clean(at)
    assert shown(at, pick(after[name])), f"{name} does not show the engine's numbers after the edit"
    assert not shown(at, pick(before[name])), f"{name} still shows the numbers from before the edit"


def test_an_edit_survives_page_moves_and_the_language():
    at = open_page("qkv")
    type_cells(at, editor_key(at, "enc.0.attn.W_Q", 0), {"0": {"1": 5.0}, "2": {"2": -0.5}})
    edits = [("enc.0.attn.W_Q", (0, 0, 0), 5.0), ("enc.0.attn.W_Q", (0, 2, 1), -0.5)]
    after = engine_trace(edits)
    for page in ("overview", "tokens", "ffn", "attention"):
        goto(at, page)
    assert shown(at, after["enc.0.attn.scores"][0])
    assert EN_T("ctl.edits") in [c.value for c in at.sidebar.caption]
    at.session_state["ctl.lang"] = "zh"
    at.run()
    assert shown(at, after["enc.0.attn.scores"][0])
    goto(at, "qkv")
    key = editor_key(at, "enc.0.attn.W_Q", 0)  # opens the editor (a rerun) before the tree is read
    editor = at.data_editor(key=key).value
    assert editor.iloc[0, 0] == 5.0 and editor.iloc[2, 1] == -0.5 and editor.iloc[1, 0] == 1.0
    assert shown(at, after["enc.0.attn.q"][0])


@pytest.mark.parametrize("workaround", [True, False])
def test_a_session_does_not_keep_the_widgets_it_no_longer_shows(monkeypatch, workaround):
    """A clickable heatmap gets a new widget id whenever its numbers or its marked cell change; Streamlit 1.67
    forgets the old id's state but keeps its metadata, ~1.4 kB per rerun for as long as the session lives, unless
    ui/core/streamlit_internals.forget_stale_widgets drops it (docs/streamlit-widget-leak.md).
    Without it: the growth."""
    if not workaround:
        monkeypatch.setattr(streamlit_internals, "in_use", lambda: False)
    at = open_page("attention")
    key = editor_key_single(at, "enc.0.attn.W_Q")
    sizes = []
    for i in range(12):
        at.number_input(key=f"{key}.v.(0, 0, 0)").set_value(1.0 + i).run()
        at.selectbox(key="cell.enc.0.attn.scores.0").set_value(2 * (i % 2)).run()
        sizes.append(streamlit_privates.kept_widgets(at))
    assert_clean(at)
    if workaround:
        assert max(sizes[4:]) <= sizes[3], sizes
    else:  # at least one stale entry more per round
        assert all(later - earlier >= 1 for earlier, later in zip(sizes[3:], sizes[4:])), sizes


def test_reset_buttons():
    at = open_page("qkv")
    type_cells(at, editor_key(at, "enc.0.attn.W_Q", 0), {"0": {"1": 5.0}})
    open_step(at, "qkv", "k")
    type_cells(at, editor_key(at, "enc.0.attn.W_K", 0), {"1": {"2": 2.0}})
    assert len(at.session_state["state"].edits) == 2
    open_step(at, "qkv", "q")
    key = editor_key(at, "enc.0.attn.W_Q", 0)  # opens the editor (a rerun) before the tree is read
    at.button(key=f"reset.{key}").click().run()
    assert at.session_state["state"].edits == (("enc.0.attn.W_K", (0, 1, 1), 2.0),)
    assert query(at)["edit"] == "enc.0.attn.W_K:0.1.1=2.0"
    at.button(key="ctl.reset_edits").click().run()
    assert_clean(at)
    assert at.session_state["state"].edits == () and query(at) == DEFAULT_QUERY
    assert shown(at, engine_trace()["enc.0.attn.q"][0])


def test_single_cell_editor_of_a_big_parameter():
    """Parameters wider than 16 columns are edited one cell at a time (paper model, W_1 is 512 x 2048)."""
    at = open_page("ffn", preset="paper")
    key = editor_key_single(at, "enc.0.ffn.W_1")
    assert at.number_input(key=f"{key}.r.number").label == "Row (1–512)"  # 512 positions: typed, not from a list
    at.number_input(key=f"{key}.r.number").set_value(4).run()  # row 4: position 3
    at.number_input(key=f"{key}.c.number").set_value(1).run()
    at.number_input(key=f"{key}.v.(3, 0)").set_value(12.5).run()
    assert_clean(at)
    assert at.session_state["state"].edits == (("enc.0.ffn.W_1", (3, 0), 12.5),)
    assert query(at)["edit"] == "enc.0.ffn.W_1:3.0=12.5"
    model = engine.preset("paper")
    W = np.array(model.params["enc.0.ffn.W_1"])
    W[3, 0] = 12.5
    trace = model.with_params({"enc.0.ffn.W_1": W}).run("Hello World")
    assert drilled(trace, "enc.0.ffn.hidden", (0, 0)).latex in latex(at)


def test_a_word_axis_of_a_big_parameter_is_picked_from_its_words():
    at = open_page("output", preset="paper", cfg="tied_output:false")  # its own output matrix: 512 x vocabulary
    key = editor_key_single(at, "unembed.W")
    words = at.selectbox(key=f"{key}.c").options
    assert len(words) == len(engine.preset("paper").vocab) > 32 and "world" in words
    at.selectbox(key=f"{key}.c").set_value(words.index("world")).run()
    at.number_input(key=f"{key}.r.number").set_value(8).run()  # row 8
    index = (7, words.index("world"))
    at.number_input(key=f"{key}.v.{index}").set_value(-2.0).run()
    assert_clean(at)
    assert at.session_state["state"].edits == (("unembed.W", index, -2.0),)


def editor_key_single(at, param):
    if not any(n.key.startswith(f"edit.{param}.") for n in at.number_input):
        open_editors(at)
    keys = {n.key.split(".v.")[0] for n in at.number_input if n.key.startswith(f"edit.{param}.") and ".v." in n.key}
    assert len(keys) == 1, keys
    return keys.pop()


# ---- bad input never crashes and keeps the last good state ---------------------------------------------

@pytest.mark.parametrize("typed", [float("nan"), float("inf"), float("-inf"), 1e300, -2e6, "abc",
                                   "[sign in](//ev.il) $x$"])
def test_a_bad_weight_is_refused_and_the_old_value_kept(typed):
    at = open_page("qkv")
    type_cells(at, editor_key(at, "enc.0.attn.W_Q", 0), {"0": {"1": 5.0}})
    good_query, good_latex = query(at), latex(at)
    type_cells(at, editor_key(at, "enc.0.attn.W_Q", 0), {"0": {"1": typed}})
    received = json.loads(json.dumps(typed))  # what arrives from the browser
    assert [e.value for e in at.error] == [
        EN_T("msg.edit_bad", param="enc.0.attn.W_Q", index="0,0,0", value=literal(repr(received)))]
    assert query(at) == good_query and latex(at) == good_latex
    key = editor_key(at, "enc.0.attn.W_Q", 0)  # opens the editor (a rerun) before the tree is read
    assert at.data_editor(key=key).value.iloc[0, 0] == 5.0
    at.run()
    assert_clean(at)  # the message is shown once, not forever


def test_a_bad_weight_message_in_chinese():
    at = open_page("qkv", lang="zh")
    type_cells(at, editor_key(at, "enc.0.attn.W_Q", 0), {"1": {"3": float("nan")}})
    assert [e.value for e in at.error] == [ZH_T("msg.edit_bad", param="enc.0.attn.W_Q", index="0,1,2", value="` nan `")]
    assert CJK.search(at.error[0].value)


def _kept(at, before_latex):
    assert not at.exception, [e.message for e in at.exception]
    assert query(at) == DEFAULT_QUERY
    assert latex(at) == before_latex


def test_empty_source_sentence():
    at = open_page("attention")
    before = latex(at)
    at.text_input(key="ctl.src").set_value("  ").run()
    assert [e.value for e in at.error] == [EN_T("msg.kept", error=EN_T("msg.empty"))]
    _kept(at, before)


@pytest.mark.parametrize("side, words, accepted", [
    ("src", MAX_TOKENS, True), ("src", MAX_TOKENS + 1, False), ("src", 500, False),
    ("tgt", MAX_TOKENS - 1, True), ("tgt", MAX_TOKENS, False),
])
def test_sentence_length_cap(side, words, accepted):
    at = open_page("overview")
    text = " ".join(["hello" if side == "src" else "hola"] * words)
    at.text_input(key=f"ctl.{side}").set_value(text).run()
    assert not at.exception, [e.message for e in at.exception]
    received = at.session_state[f"ctl.{side}"]  # the input holds at most MAX_CHARS characters
    n = len(split(received)) + (side == "tgt")
    if accepted:
        assert_clean(at)
        assert overview_numbers(at)[0 if side == "src" else 1] == n == MAX_TOKENS
    else:
        assert n > MAX_TOKENS
        assert [e.value for e in at.error] == [EN_T("msg.kept", error=EN_T(
            "msg.too_long", side=EN_T(f"side.{side}"), n=n, high=MAX_TOKENS))]
        assert overview_numbers(at) == (2, 3, 4, 2, 1, 1) and query(at) == DEFAULT_QUERY


def test_non_divisible_head_count():
    at = open_options(open_page("attention"))
    before = latex(at)
    at.number_input(key="ctl.n_heads").set_value(3).run()
    with pytest.raises(ValueError) as refused:
        engine.preset("hello-world", n_heads=3)
    assert [e.value for e in at.error] == [EN_T("msg.kept", error=str(refused.value))]
    _kept(at, before)
    at.session_state["ctl.lang"] = "zh"
    at.run()
    open_options(at)  # the expander's label changed with the language, so it is a new, closed one
    at.number_input(key="ctl.n_heads").set_value(3).run()
    assert [e.value for e in at.error] == [translator("zh")("msg.kept", error=translator("zh")(
        "msg.not_divisible", d_model=4, n_heads=3))]
    at.number_input(key="ctl.n_heads").set_value(4).run()  # 4 divides 4: d_k = d_v = 1
    assert_clean(at)
    assert query(at)["cfg"] == "d_k:1,d_v:1,n_heads:4"
    assert shown(at, engine_trace(n_heads=4)["enc.0.attn.scores"][0])


def test_a_link_beyond_the_models_max_len_is_refused_in_the_readers_language():
    at = open_page(lang="zh", cfg="max_len:2", src="Hello World how")
    t = translator("zh")
    assert [w.value for w in at.sidebar.warning] == [t("msg.url", detail=t(
        "msg.too_long_for_model", side=t("side.src"), n=3, high=2))]


def test_the_head_and_layer_pickers_keep_a_valid_choice_when_there_are_fewer():
    at = open_options(open_page("attention"))
    at.number_input(key="ctl.n_heads").set_value(4).run()
    at.number_input(key="ctl.n_enc_layers").set_value(3).run()
    at.session_state["layer.enc"], at.session_state["heads.attention.2"] = 2, 3  # layer 3, head 4
    at.run()
    assert_clean(at)
    assert shown(at, engine_trace(n_heads=4, n_layers=3)["enc.2.attn.scores"][3])
    at.number_input(key="ctl.n_heads").set_value(2).run()
    at.number_input(key="ctl.n_enc_layers").set_value(1).run()
    assert_clean(at)
    assert query(at)["cfg"] == "d_k:2,d_v:2"  # set by the change to 4 heads, kept: the preset's d_k is 3
    assert shown(at, engine_trace(d_k=2, d_v=2)["enc.0.attn.scores"][0])


def drawn_steps(at):
    return [STEP_HEADER.match(m.value)["name"] for m in at.markdown if STEP_HEADER.match(m.value)]


def test_layers_are_numbered_from_1_on_screen_and_from_0_in_step_names():
    at = open_page("encoder_stack", cfg="n_layers:2")
    assert_clean(at)
    assert f"**{EN['stack.next_layers_input'].format(l=1, after=2)}**" in [m.value for m in at.markdown]
    assert drawn_steps(at) == ["src.input", "enc.0.ln2"]  # the stack's input, layer 1's output
    at.button_group(key="layer.enc_stack").set_value(1).run()  # the button "2"
    assert f"**{EN['stack.last_output'].format(l=2)}**" in [m.value for m in at.markdown]
    assert drawn_steps(at) == ["enc.0.ln2", "enc.out"]  # post-norm: the last layer's output is the stack's, drawn once
    assert "enc.0 is layer 1" in at.markdown[0].value
    goto(at, "add_norm")
    picker = at.button_group(key="layer.enc")
    assert picker.options == ["1", "2"] and picker.help == EN["ctl.layer_help"]
    picker.set_value(1).run()  # the button "2"
    first = next(view["step"] for _, page, view in slides(at.session_state["context"].config) if page == "add_norm")
    assert ":gray[:small[`enc.1." + first + "` · " in "".join(m.value for m in at.markdown)  # where the page opens


def chart_numbers(at, key):
    """The numbers of a keyed heatmap as the browser gets them (a plotly.js typed array), rows by columns."""
    import base64

    chart = next(e for e in at.get("plotly_chart") if e.proto.id.endswith(f"-{key}"))
    z = json.loads(chart.proto.spec)["data"][0]["z"]
    shape = tuple(int(n) for n in z["shape"].split(","))
    return np.frombuffer(base64.b64decode(z["bdata"]), np.dtype(z["dtype"])).reshape(shape)


@pytest.mark.parametrize("stack, cfg", [("enc", "n_layers:3"), ("dec", "n_layers:2,norm_placement:pre")])
def test_a_stack_page_shows_what_each_layer_changes_from_the_trace(stack, cfg):
    """Positions down, layers across: the length of every row after each layer, how far each layer moved it and the
    cosine of the turn, as NumPy computes them from the layers' outputs in the engine's trace."""
    page = {"enc": "encoder_stack", "dec": "decoder_stack"}[stack]
    at = changes(open_page(page, cfg=cfg), page)
    assert_clean(at)
    n_layers = int(cfg.split(",")[0].split(":")[1])
    trace = engine_trace(n_layers=n_layers, **({"norm_placement": "pre"} if "pre" in cfg else {}))
    last = ("add" if "pre" in cfg else "ln") + ("2" if stack == "enc" else "3")
    xs = ([trace["src.input" if stack == "enc" else "tgt.input"]]
          + [trace[f"{stack}.{l}.{last}"] for l in range(n_layers)])
    expected = {"norm": [np.linalg.norm(x, axis=1) for x in xs],
                "change": [np.linalg.norm(b - a, axis=1) for a, b in zip(xs, xs[1:])],
                "cosine": [np.sum(a * b, axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
                           for a, b in zip(xs, xs[1:])]}
    for measure in ("change", "cosine", "norm"):
        at.button_group(key=f"{stack}.measure").set_value(measure).run()
        np.testing.assert_allclose(chart_numbers(at, f"{stack}.{measure}"), np.array(expected[measure]).T)
    assert at.button_group(key=f"{stack}.section").options == ["Layer by layer", "What each layer changes"]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", STACK_PAGES)
def test_a_stack_page_opens_where_its_lesson_starts(page, lang):
    """With the app's own model (the post's, one layer) a stack page opened on what each layer changes: a heatmap of
    one column. It opens on its layer's path (docs/ARCHITECTURE.md, "Where a page opens"): the stack's input, where
    the heads look, the output, which is the stack's, and a note that one layer is all."""
    at = open_page(page, lang=lang)
    assert_clean(at)
    t, stack = translator(lang), page[:3]
    assert at.segmented_control(key=f"{stack}.section").value == t("stack.layer_by_layer")
    names = [re.search(r"`([^`]+)` · ", m.value)[1] for m in at.markdown if m.value.startswith("##### ")]
    assert names == [layer_outputs(engine_trace(), stack)[0], f"{stack}.out"]  # tgt.input in the decoder
    assert len(at.dataframe) == len(engine.PRESETS["hello-world"].sublayers[stack]) - 1  # each attention's heads
    assert t("stack.one_layer_path") in [c.value for c in at.caption]
    assert at.button(key=f"{stack}.paper_layers").label == t("stack.paper_layers",
                                                            n=engine.PRESETS["paper"].depth(stack))
    assert not [e for e in at.get("plotly_chart") if e.proto.id.endswith(f"-{stack}.change")]


@pytest.mark.parametrize("page", STACK_PAGES)
def test_an_old_link_to_a_stack_pages_section_opens_it_still(page):
    """Links named the sections by their order before a layer's path came first: section=2 (one layer in detail: where
    the heads look and the layer's output) and section=1 (what each layer changes, which a link left out as the first
    section, naming a measure alone) open the same sections now."""
    stack = page[:3]
    at = open_link(page, section="2")
    assert_clean(at)
    assert at.segmented_control(key=f"{stack}.section").value == EN["stack.layer_by_layer"] and not at.warning
    assert drawn_steps(at)[-1] == f"{stack}.out" and len(at.dataframe) >= 1
    assert "section" not in query(at)  # the page's first section now: a link leaves it out
    at = open_link(page, section="1")
    assert at.segmented_control(key=f"{stack}.section").value == EN["stack.changes"] and not at.warning
    assert chart_numbers(at, f"{stack}.change").shape == (len(engine_trace().src_tokens if stack == "enc" else
                                                                 engine_trace().tgt_tokens), 1)
    assert query(at)["section"] == "1"
    at = open_link(page, measure="2")  # the changes section was the first: its links named a measure alone
    assert at.segmented_control(key=f"{stack}.section").value == EN["stack.changes"] and not at.warning
    assert at.session_state[f"{stack}.measure"] == "cosine" and query(at) == {**DEFAULT_QUERY, "section": "1",
                                                                               "measure": "2"}


def test_a_one_layer_stack_says_so_and_opens_the_papers_layers_in_one_click():
    one = open_page("encoder_stack")
    assert EN["stack.one_layer_path"] in [c.value for c in one.caption]
    assert any(EN["stack.one_layer_note"].format(field="n_enc_layers") in c.value  # the worked example: N = 1
               for c in changes(one, "encoder_stack").caption)
    three = changes(open_page("encoder_stack", cfg="n_enc_layers:3"), "encoder_stack")
    assert three.caption and not any("n_enc_layers" in c.value for c in three.caption)
    assert not [b for b in three.main.button if b.key == "enc.paper_layers"]
    deeper_decoder = open_page("encoder_stack", cfg="n_dec_layers:3")  # 4 layers: the encoder's 1, the decoder's 3
    assert deeper_decoder.session_state["state"].config().depth("dec") == 3
    for lang, words in (("en", "This stack has one layer"), ("zh", "这个堆叠只有一层")):
        for key in ("stack.one_layer_note", "stack.one_layer_path"):
            assert translator(lang)(key, field="n_enc_layers").startswith(words), (lang, key)
    assert any(EN["stack.one_layer_note"].format(field="n_enc_layers") in c.value
               for c in changes(deeper_decoder, "encoder_stack").caption)
    button = one.button(key="enc.paper_layers")
    paper = engine.PRESETS["paper"].depth("enc")
    assert button.label == EN["stack.paper_layers"].format(n=paper)
    button.click().run()
    assert_clean(one)
    assert query(one)["preset"] == "paper" and query(one)["src"] == DEFAULT_QUERY["src"]
    assert chart_numbers(one, "enc.change").shape[1] == paper  # a column per layer, on the section it was clicked on
    assert not [b for b in one.main.button if b.key == "enc.paper_layers"]


def test_a_stack_pages_open_section_is_in_its_link():
    at = open_page("decoder_stack", cfg="n_layers:2")
    at.button_group(key="layer.dec_stack").set_value(1).run()
    assert query(at)["layer"] == "2" and "section" not in query(at)  # the first section is the default
    student = open_link("decoder_stack", **query(at))
    assert drawn_steps(student) == ["dec.0.ln3", "dec.out"] and not student.warning  # layer 2's input and output
    assert query(changes(at, "decoder_stack"))["section"] == "1"  # its number in links from before (STACK_SECTIONS)
    assert drawn_steps(open_link("decoder_stack", **query(at))) == []  # the heatmap of changes


@pytest.mark.parametrize("layer", [0, 1])
def test_a_stack_page_names_where_each_head_looks_most_in_the_chosen_layer(layer):
    at = open_page("decoder_stack", cfg="n_layers:2")
    at.button_group(key="layer.dec_stack").set_value(layer).run()
    assert_clean(at)
    trace = engine_trace(n_layers=2)
    masked, cross = (at.dataframe[i].value for i in range(2))
    for frame, block, keys in ((masked, "self_attn", trace.tgt_tokens), (cross, "cross_attn", trace.src_tokens)):
        weights = trace[f"dec.{layer}.{block}.weights"]  # (h, n_q, n_k)
        assert list(frame[""]) == list(trace.tgt_tokens)  # the query positions
        for h in range(weights.shape[0]):
            assert list(frame[f"Head {h + 1}"]) == [f"{keys[int(np.argmax(row))]} · {fmt(row.max(), DIGITS)}"
                                                    for row in weights[h]]
    assert masked["Head 1"][0] == "SOS · 1"  # the mask leaves SOS only itself to look at


@pytest.mark.parametrize("placement", ["post", "pre"])
@pytest.mark.parametrize("page", ["encoder_stack", "decoder_stack"])
def test_a_stack_page_draws_no_tensor_twice(page, placement):
    """hello-world has one layer: in post-norm its output (ln2, ln3) is the stack's output, drawn once as enc.out or
    dec.out and said to be the same; in pre-norm the stack's output is one more LayerNorm, a tensor of its own."""
    at = open_page(page, **({"cfg": "norm_placement:pre"} if placement == "pre" else {}))
    assert_clean(at)
    trace = engine_trace(**({"norm_placement": "pre"} if placement == "pre" else {}))
    drawn = drawn_steps(at)
    stack = page[:3]
    first, last = layer_outputs(trace, stack)  # the stack's input, its one layer's output
    assert drawn == ([first, f"{stack}.out"] if placement == "post" else [first, last, f"{stack}.out"])
    assert not any(np.array_equal(trace[a], trace[b]) for i, a in enumerate(drawn) for b in drawn[i + 1:])
    if placement == "post":  # last: ln2 or ln3
        assert (f"{stack}.out is layer 1's output, {last}: the same numbers, drawn once."
                in [c.value for c in at.caption])
        assert np.array_equal(trace[f"{stack}.out"], trace[last])


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page, cfg, keys", [
    ("add_norm", "", ("intro.add_norm.post", "intro.add_norm.blog")),
    ("add_norm", "norm_placement:pre,layer_norm:paper", ("intro.add_norm.pre", "intro.add_norm.paper")),
    ("ffn", "activation:gelu", ("intro.ffn.gelu", "intro.ffn.post")),
    ("ffn", "norm_placement:pre", ("intro.ffn.relu", "intro.ffn.pre")),  # x is LayerNorm(X): its FFN(x) said x
    ("dec_ffn", "norm_placement:pre", ("intro.dec_ffn.pre",)),
    ("encoder_stack", "norm_placement:pre", ("intro.encoder_stack.pre",)),
    ("attention", "attn_divisor:sqrt_dk", ("intro.attention.sqrt_dk", "intro.attention.stable")),
    ("positional", "pos_encoding:sinusoidal", ("intro.positional.sinusoidal",)),
])
def test_an_intro_says_what_the_current_settings_compute(page, cfg, keys, lang):
    at = open_page(page, lang=lang, **({"cfg": cfg} if cfg else {}))
    assert_clean(at)
    t = translator(lang)
    seed_note = [f":gray[:small[{t(key)}]]" for key in SEED_NOTES.get(page, ())]
    assert at.markdown[0].value == "\n\n".join([f"# {t(f'page.{page}')}", t(f"intro.{page}")]
                                                + [t(key, d_k=3, divisor="1.732") for key in keys] + seed_note)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_seeds_slips_are_flagged_where_their_step_is_taught(lang):
    """Each slip where its step is taught: the weights' shapes (W ∈ ℝ^(n×d_k)) with Q, K, V, the scores'
    Q_{i,j}K_{i,j} with the masked scores, the loss's sum from 0 to n₀ with the training loss."""
    at, t = open_page("add_norm", lang=lang), translator(lang)
    pages = {"add_norm": ["seednote.add_norm"], "qkv": ["seednote.qkv", "seednote.qkv.shapes"],
             "multihead": ["seednote.multihead"],
             "masked_attention": ["seednote.masked_attention", "seednote.masked_attention.scores"],
             "train": ["seednote.train"]}
    for page, keys in pages.items():
        goto(at, page)
        intro = at.main.markdown[0].value
        assert intro.endswith("\n\n".join(f":gray[:small[{t(key)}]]" for key in keys)), page  # under the intro
    goto(at, "ffn")
    assert all(t(key) not in at.main.markdown[0].value for keys in pages.values() for key in keys)


def test_sizes_within_the_caps_are_accepted():
    at = open_options(open_page("overview"))
    at.number_input(key="ctl.d_model").set_value(100).run()
    assert_clean(at)
    assert overview_numbers(at) == (2, 3, 100, 2, 1, 1)
    assert query(at)["cfg"] == "d_k:50,d_model:100,d_v:50"
    at.number_input(key="ctl.n_enc_layers").set_value(APP_LIMITS["n_enc_layers"]).run()
    assert_clean(at)
    assert (overview_numbers(at)[4:] == (12, 1)
            and query(at)["cfg"] == "d_k:50,d_model:100,d_v:50,n_dec_layers:1,n_layers:12")
    at.number_input(key="ctl.n_dec_layers").set_value(12).run()
    assert_clean(at)
    assert overview_numbers(at)[4:] == (12, 12) and query(at)["cfg"] == "d_k:50,d_model:100,d_v:50,n_layers:12"


def test_layers_beyond_the_cap_from_the_widget():
    """The browser's number input refuses more than max_value itself; a forged 64 must not get through."""
    at = open_options(open_page("overview"))
    at.session_state["ctl.n_enc_layers"] = 64
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert overview_numbers(at) == (2, 3, 4, 2, 1, 1) and query(at) == DEFAULT_QUERY


def test_preset_switch_starts_clean():
    at = open_page("qkv")
    type_cells(at, editor_key(at, "enc.0.attn.W_Q", 0), {"0": {"1": 5.0}})
    at.selectbox(key="ctl.preset").set_value("paper").run()
    goto(at, "overview")
    assert_clean(at)
    assert overview_numbers(at) == (2, 3, 512, 8, 6, 6)
    assert query(at) == {**DEFAULT_QUERY, "preset": "paper"}
    assert open_options(at).number_input(key="ctl.d_model").value == 512


def test_non_finite_numbers_are_reported_not_crashed():
    at = open_page("attention", cfg="softmax:naive", edit="enc.0.attn.W_Q:0.0.0=1000000")
    assert not at.exception and not at.error
    trace = engine_trace([("enc.0.attn.W_Q", (0, 0, 0), 1e6)], softmax="naive")
    assert trace.nonfinite
    assert [w.value for w in at.warning] == [EN_T("msg.nonfinite", step=trace.nonfinite[0])]
    assert any(r"\text{NaN}" in body for body in latex(at))


def test_a_page_warns_of_inf_or_nan_only_up_to_the_steps_it_shows():
    query = {"cfg": "softmax:naive", "edit": "enc.0.attn.W_Q:0.0.0=1000000"}  # NaN from enc.0.attn.weights on
    tokens = open_page("tokens", **query)
    assert_clean(tokens)
    assert not tokens.warning
    for page in ("attention", "output"):
        assert [w.value for w in open_page(page, **query).warning] == [
            EN_T("msg.nonfinite", step="enc.0.attn.weights")]


def test_a_page_about_the_first_encoder_layer_does_not_run_the_decoder(monkeypatch):
    decoded, embed = [], engine.model._embedding

    def spied(hook, side, *args):  # the decoder's first stage embeds the target
        if side == "tgt":
            decoded.append(hook.model.name)
        return (yield from embed(hook, side, *args))

    monkeypatch.setattr(engine.model, "_embedding", spied)
    at = open_page("attention", preset="paper")  # the overview, on the way, runs the whole pass
    decoded.clear()
    at.text_input(key="ctl.src").set_value("a sentence typed by this test alone").run()
    assert_clean(at)
    assert decoded == []
    goto(at, "cross_attention")
    assert decoded == ["paper"]


def test_a_new_word_gets_its_own_embedding_drawn_from_the_seed():
    at = open_page("tokens", src="Hello Mars")
    assert_clean(at)
    assert [i.value for i in at.info] == [EN_T("msg.new_words", words="` mars `", seed=0, n=11)]
    assert at.dataframe[0].value[EN["tokens.token"]].tolist() == ["hello", "mars"]
    mars = engine.with_words(engine.preset("hello-world"), "Mars")
    assert mars.vocab.tokens[-1] == "mars"
    assert shown(at, mars.run("Hello Mars", "Hola Mundo")["src.embed"])


def test_new_words_are_named_as_typed_not_read_as_markdown():
    """A typed word is written as code: "__bold__" was bold, and a lone "$" could open math with the next one."""
    at = open_page("tokens", src="__bold__ $ x $")
    assert_clean(at)
    (note,) = at.info
    assert "` __bold__ `" in note.value and "` $ `" in note.value


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_tokens_page_says_which_words_were_lower_cased(lang):
    """ "Hello World" is looked up as hello, world and "The" as the; the page never said so (issue 30)."""
    t = ZH_T if lang == "zh" else EN_T
    at = open_page("tokens", lang=lang)
    pairs = t("list.separator").join(f"{literal(a)} → {literal(b)}"
                                     for a, b in (("Hello", "hello"), ("World", "world")))
    said = t("tokens.case", words=pairs)
    assert said in [c.value for c in at.caption]
    at = open_page("tokens", lang=lang, preset="paper", cfg="d_model:16,n_heads:2,d_ff:16,n_layers:1",
                   src="The cat and the dog")
    assert t("tokens.case", words=f"{literal('The')} → {literal('the')}") in [c.value for c in at.caption]
    at = open_page("tokens", lang=lang, src="hello world")
    assert_clean(at)
    assert not [c.value for c in at.caption if c.value.startswith(t("tokens.case", words="")[:8])]


# ---- links ------------------------------------------------------------------------------------------------

def test_the_url_holds_the_state():
    at = open_page("qkv")
    type_cells(at, editor_key(at, "enc.0.attn.W_Q", 0), {"0": {"1": 5.0}})
    assert query(at) == {**DEFAULT_QUERY, "edit": "enc.0.attn.W_Q:0.0.0=5.0"}
    at.text_input(key="ctl.src").set_value("world hello world").run()
    at.text_input(key="ctl.tgt").set_value("hola").run()
    open_options(at).number_input(key="ctl.seed").set_value(7).run()
    at.radio(key="ctl.divisor_kind").set_value("sqrt").run()
    goto(at, "attention")
    assert_clean(at)
    link = query(at)
    assert link == {"preset": "hello-world", "src": "world hello world", "seed": "7", "tgt": "hola",
                    "cfg": "attn_divisor:sqrt_dk", "edit": "enc.0.attn.W_Q:0.0.0=5.0"}
    expected = engine_trace([("enc.0.attn.W_Q", (0, 0, 0), 5.0)], src="world hello world", tgt="hola", seed=7,
                            attn_divisor="sqrt_dk")
    assert shown(at, expected["enc.0.attn.scaled"][0])
    fresh = open_page("attention", **link)
    assert_clean(fresh)
    assert not fresh.warning
    assert latex(fresh) == latex(at) and tables(fresh) == tables(at)
    assert query(fresh) == link
    goto(fresh, "qkv")
    key = editor_key(fresh, "enc.0.attn.W_Q", 0)  # opens the editor (a rerun) before the tree is read
    assert fresh.data_editor(key=key).value.iloc[0, 0] == 5.0


@pytest.mark.parametrize("link, fragment", [
    ({"preset": "xyz"}, "xyz"),
    ({"cfg": "d_model:abc"}, "d_model:abc"),
    ({"cfg": "d_model"}, "d_model"),
    ({"cfg": "eps:nan"}, "eps:nan"),
    ({"edit": "garbage"}, "garbage"),
    ({"edit": "enc.0.attn.W_Q:0.0"}, "enc.0.attn.W_Q:0.0"),
    ({"edit": "enc.0.attn.W_Q:0.0.0="}, "enc.0.attn.W_Q:0.0.0="),
    ({"edit": "enc.0.attn.W_Q:0.0.0=nan"}, "nan"),
    ({"edit": "enc.0.attn.W_Q:0.0.0=1e300"}, "1e300"),
    ({"seed": "-1"}, "-1"),
    ({"seed": "99999999999"}, "99999999999"),
    ({"seed": "²"}, "²"),
    ({"lang": "fr"}, "fr"),
], ids=lambda v: "-".join(f"{k}={x}" for k, x in v.items()) if isinstance(v, dict) else None)
def test_a_tampered_link_is_noted_and_ignored(link, fragment):
    at = open_page("overview", **link)
    assert not at.exception, [e.message for e in at.exception]
    assert len(at.warning) == 1 and not at.error, notes(at)
    assert at.warning[0].value.startswith(EN_T("msg.url", detail="")) and fragment in at.warning[0].value
    assert overview_numbers(at) == (2, 3, 4, 2, 1, 1)
    assert query(at) == DEFAULT_QUERY


def test_an_edit_that_no_longer_fits_is_dropped_with_a_note():
    at = open_page("attention", edit="enc.0.attn.W_Q:7.7.7=1;enc.0.attn.W_Q:0.0.0=5")
    assert not at.exception and not at.error
    assert [w.value for w in at.warning] == [EN_T("msg.edits_dropped", n=1)]
    assert shown(at, engine_trace([("enc.0.attn.W_Q", (0, 0, 0), 5.0)])["enc.0.attn.scores"][0])


@pytest.mark.parametrize("link", [
    {"cfg": "n_layers:64"},
    {"preset": "paper", "cfg": "n_layers:64"},
    {"cfg": "d_model:1000"},
    {"cfg": "n_heads:3"},
    {"src": ""},
    {"src": " ".join(["hello"] * 500)},
    {"tgt": " ".join(["hola"] * 100)},
    {"cfg": "attn_divisor:1e9"},
    {"cfg": "eps:5"},
], ids=lambda v: "-".join(f"{k}={x[:20]}" for k, x in v.items()))
def test_a_link_beyond_the_app_limits_is_noted(link):
    """A link can ask for what the controls would refuse; the app must say so and not show more than its caps."""
    at = open_page("overview", **link)
    assert not at.exception, [e.message for e in at.exception]
    assert notes(at), "the link was changed or refused without a word"
    n_src, n_tgt, d_model, heads, *layers = overview_numbers(at)
    assert n_src <= MAX_TOKENS and n_tgt <= MAX_TOKENS
    assert d_model <= APP_LIMITS["d_model"] and heads <= APP_LIMITS["n_heads"] and max(layers) <= APP_LIMITS["n_layers"]


def test_deep_link_before_any_app_run():
    """A fresh server opening /tokens first runs app.py, whose st.navigation runs the link's page. (A folder called
    pages/ would put Streamlit in its legacy folder mode, which runs the page without app.py: ui/core/navigation.py.)"""
    at = AppTest.from_file(APP, default_timeout=60)
    at.switch_page(page_file("tokens"))
    at.run()
    assert_clean(at)
    assert page_title(at) == EN["page.tokens"]
    assert at.text_input(key="ctl.src").value == "Hello World"
    assert query(at) == DEFAULT_QUERY


def test_per_head_bias_editor_shows_one_heads_slice():
    """With PyTorch's attention biases the model has b_Q (h, d_k): its editor on the Q step shows head 1's d_k
    numbers, in one row."""
    at = open_page("qkv", preset="paper", cfg="attn_bias:true,d_model:8,n_heads:2,d_ff:8,n_layers:1")
    key = editor_key(at, "enc.0.attn.b_Q", 0)
    assert at.data_editor(key=key).value.shape == (1, 4)


# ---- sliders and the comparison with the unedited model -------------------------------------------------------

def slider_key(at, param, index):
    """The slider of one weight's cell (ui/views/editors._weight_slider), opening the page's editors if need be."""
    wanted = f".slider.{index}"
    if not any(s.key.startswith(f"edit.{param}.") and s.key.endswith(wanted) for s in at.slider):
        open_editors(at)
    keys = [s.key for s in at.slider if s.key.startswith(f"edit.{param}.") and s.key.endswith(wanted)]
    assert len(keys) == 1, (param, index, [s.key for s in at.slider])
    return keys[0]


SLIDER_CASES = [
    # page, the editor's row picker (grid) or None, parameter, its index, slid value, a later page, a step on it
    ("attention", None, "enc.0.attn.W_Q", (0, 0, 0), 0.57, "attention", "enc.0.attn.scores"),
    ("qkv", ("enc.0.attn.W_K", 2), "enc.0.attn.W_K", (0, 2, 1), -0.42, "attention", "enc.0.attn.weights"),
    ("tokens", ("embed.src", 1), "embed.src", (2, 3), 4.4, "positional", "src.input"),  # row 1: "world", id 2
]


@pytest.mark.parametrize("page, row, param, index, slid, later, name", SLIDER_CASES, ids=[c[2] for c in SLIDER_CASES])
def test_a_released_slider_changes_the_later_numbers_and_the_link(page, row, param, index, slid, later, name):
    at = open_page(page)
    if page == "qkv":
        open_step(at, "qkv", "k")
    before, after = engine_trace(), engine_trace([(param, index, slid)])
    pick = (lambda v: v[0]) if after[name].ndim == 3 else (lambda v: v)
    assert not np.allclose(pick(after[name]), pick(before[name])), "a test edit that changes nothing"
    if row:
        open_editors(at)
        picker = next(s for s in at.button_group if s.key.startswith(f"edit.{row[0]}.") and s.key.endswith(".row"))
        picker.set_value(row[1]).run()
    key = slider_key(at, param, index)
    at.slider(key=key).set_value(slid).run()
    assert_clean(at)
    assert at.session_state["state"].edits == ((param, index, slid),)
    view = {"step": "k"} if page == "qkv" else {}  # the link holds the step shown
    assert query(at) == {**DEFAULT_QUERY, **view, "edit": f"{param}:{'.'.join(map(str, index))}={slid!r}"}
    slider = at.slider(key=key)
    assert slider.value == slid and slider.min < slid < slider.max  # drawn again around the new value
    typed = [n.value for n in at.number_input if n.key.startswith(f"edit.{param}.") and n.key.endswith(f".v.{index}")]
    grids = [e.value for e in at.data_editor if e.key.startswith(f"edit.{param}.")]
    assert typed == [slid] or grids[0].values[row[1], index[-1]] == slid, "the typed editor shows the slid number"
    goto(at, later)
    assert shown(at, pick(after[name])), f"{name} does not show the engine's numbers after the slide"
    assert not shown(at, pick(before[name]))
    fresh = open_page(later, **query(at))
    assert_clean(fresh)
    assert fresh.session_state["state"].edits == ((param, index, slid),) and shown(fresh, pick(after[name]))


def test_a_slid_number_is_rounded_to_the_sliders_steps():
    """The browser sends min + k·step, e.g. 0.30000000000000004: the link holds 0.3."""
    at = open_page("attention")
    key = slider_key(at, "enc.0.attn.W_Q", (0, 0, 0))
    at.slider(key=key).set_value(0.1 + 0.2).run()
    assert at.session_state["state"].edits == (("enc.0.attn.W_Q", (0, 0, 0), 0.3),)
    assert query(at)["edit"] == "enc.0.attn.W_Q:0.0.0=0.3"


@pytest.mark.parametrize("forged", [math.nan, math.inf, -math.inf, 1e300, -1e300, 1.5, -1.01])
def test_a_forged_slider_number_changes_nothing(forged):
    """Streamlit replaces a non-finite number or one outside the slider's range (W_Q[0,0,0] = 0: -1 to 1) by the
    value the slider was drawn with, before the app's callback: the state, the link and the numbers stay."""
    at = open_page("attention")
    key = slider_key(at, "enc.0.attn.W_Q", (0, 0, 0))
    good_latex = latex(at)
    forge_slider(at, key, double_array_value={"data": [forged]})
    assert_clean(at)
    assert at.session_state["state"].edits == () and query(at) == DEFAULT_QUERY and latex(at) == good_latex
    assert at.slider(key=key).value == 0.0


@pytest.mark.parametrize("forged", [{"string_value": "abc"}, {"double_array_value": {"data": []}},
                                    {"double_array_value": {"data": [0.5, 0.7]}}])
def test_a_forged_slider_message_of_another_shape_changes_nothing(forged):
    at = open_page("attention")
    key = slider_key(at, "enc.0.attn.W_Q", (0, 0, 0))
    forge_slider(at, key, **forged)
    assert_clean(at)
    assert at.session_state["state"].edits == () and query(at) == DEFAULT_QUERY


def forge_slider(at, key, **value):
    return streamlit_privates.send_value(at, at.slider(key=key).id, **value)


def test_the_one_cell_editor_shows_the_matrix_with_the_chosen_cell_boxed():
    at = open_page("attention", preset="paper")
    open_editors(at)
    key = next(n.key for n in at.number_input
               if n.key.startswith("edit.enc.0.attn.W_Q.0.") and n.key.endswith(".r.number"))
    at.number_input(key=key).set_value(301).run()  # row 301: position 300
    W = engine.preset("paper").params["enc.0.attn.W_Q"][0]  # (512, 64)
    expected = bmatrix_around(W, 300, 0, digits=DIGITS)[0]
    assert rf"W^Q_{{1}} = {expected}" in latex(at)
    assert rf"\boxed{{{fmt_tex(W[300, 0], DIGITS)}}}" in expected
    assert EN_T("view.edit_window", rows="297–304", cols="1–6", n_rows=512, n_cols=64) in [c.value for c in at.caption]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_grid_editor_shows_the_matrix_with_the_chosen_cell_boxed(lang):
    """The grid (the worked example's W^Q) boxed no cell, where the one-cell editor does: its chosen cell is the
    first, then the first of the row picked for sliders, then the one last slid or typed."""
    at = open_page("qkv", lang=lang)
    key = editor_key(at, "enc.0.attn.W_Q", 0)
    W = engine.preset("hello-world").params["enc.0.attn.W_Q"][0].copy()  # (4, 3)

    def boxed(matrix, r, c):
        return rf"W^Q_{{1}} = {bmatrix_around(matrix, r, c, digits=DIGITS)[0]}" in latex(at)

    assert boxed(W, 0, 0) and not boxed(W, 1, 0)
    assert (ZH if lang == "zh" else EN)["view.edit_boxed"] in [c.value for c in at.caption]
    next(s for s in at.button_group if s.key == f"{key}.row").set_value(2).run()
    assert boxed(W, 2, 0)
    at.slider(key=slider_key(at, "enc.0.attn.W_Q", (0, 2, 1))).set_value(0.5).run()
    W[2, 1] = 0.5
    assert_clean(at)
    assert boxed(W, 2, 1)
    type_cells(at, key, {"1": {"3": 0.25}}).run()  # row 2, the column labelled 3
    W[1, 2] = 0.25
    assert boxed(W, 1, 2)


def test_the_comparison_shows_the_edited_run_minus_the_unedited_one():
    at = open_page("attention")
    assert not [t for t in at.toggle if t.key == "view.compare"], "nothing to compare before an edit"
    key = slider_key(at, "enc.0.attn.W_Q", (0, 0, 0))  # opens the editor (a rerun) before the tree is read
    at.slider(key=key).set_value(0.57).run()
    at.toggle(key="view.compare").set_value(True).run()
    assert_clean(at)
    before, after = engine_trace()["enc.0.attn.scores"][0], engine_trace([("enc.0.attn.W_Q", (0, 0, 0), 0.57)])[
        "enc.0.attn.scores"][0]
    change = after - before
    assert np.all(change != 0)
    assert rf"\Delta S_{{1}} = {bmatrix(change, DIGITS)}" in latex(at)
    captions = [c.value for c in at.caption]
    assert EN_T("view.difference", changed=4, total=4, largest=fmt(np.abs(change).max(), DIGITS)) in captions
    assert EN_T("view.unedited_value", value=fmt(before[0, 0], DIGITS), change=fmt(change[0, 0], DIGITS)) in captions
    goto(at, "qkv")  # the answer holds from page to page; W_Q[0, 0, 0] changes column 0 of head 1's q only
    q_change = (engine_trace([("enc.0.attn.W_Q", (0, 0, 0), 0.57)])["enc.0.attn.q"][0]
                - engine_trace()["enc.0.attn.q"][0])
    assert np.count_nonzero(q_change) == 2 and q_change[:, 1:].tolist() == [[0, 0], [0, 0]]
    assert rf"\Delta Q_{{1}} = {bmatrix(q_change, DIGITS)}" in latex(at)
    assert EN_T("view.difference", changed=2, total=6, largest=fmt(np.abs(q_change).max(), DIGITS)) in [
        c.value for c in at.caption]
    goto(at, "tokens")
    assert EN_T("view.unchanged") in [c.value for c in at.caption]  # the embedding comes before W_Q


# ---- names on screen, the way from step to step, the editors' place ----------------------------------------

STEP_PAGES = PAGES["encoder"] + PAGES["decoder"]


def test_steps_titles_and_editors_are_named_in_the_readers_language():
    """Chinese buttons, headers and titles (not "1. scores", not a raw W^O); an editor names its parameter by symbol
    and words, with the code's name after them for those who use the API."""
    at = open_page("attention", lang="zh")
    buttons = at.button_group(key="attention.0").options
    assert buttons == ["1. 注意力分数", "2. 缩放后的分数", "3. 注意力权重", "4. 各头的输出"]
    assert STEP_HEADER_ZH.match(next(m.value for m in at.markdown if m.value.startswith("##### "))).groups() == (
        "注意力分数", ZH["desc.attn.scores"], "enc.0.attn.scores")
    labels = [e.label for e in at.expander if e.proto.id.endswith(("open.enc.0.attn.W_Q.0", "open.enc.0.attn.W_K.0"))]
    assert labels == ["修改 $W^Q_{1}$ · 查询权重 · `enc.0.attn.W_Q`", "修改 $W^K_{1}$ · 键权重 · `enc.0.attn.W_K`"]
    goto(at, "multihead")
    assert page_title(at) == "拼接 (Concat) 与 $W^O$"
    assert at.button_group(key="multihead.None").options == ["1. 拼接", "2. 输出投影（$\\times W^O$）"]
    for page in STEP_PAGES:  # no button is a code name
        goto(at, page)
        for group in at.main.button_group:
            assert all(CJK.search(option) for option in group.options), (page, group.options)
    goto(at, "attention")
    open_step(at, "attention", "weights")
    at.session_state["ctl.lang"] = "en"
    at.run()
    assert at.button_group(key="attention.0").options[2] == "3. Attention weights"
    assert STEP_HEADER.match(next(m.value for m in at.markdown if m.value.startswith("##### ")))["name"] == \
        "enc.0.attn.weights", "the chosen step is kept when its button's label changes with the language"


STEP_HEADER_ZH = re.compile(r"^##### ([^\n]*?) · ([^\n]*)\n\n:gray\[:small\[`([^`]+)` · 形状：\(")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_step_page_ends_with_its_neighbours_which_keep_the_link(lang):
    """Two links at the end of every step page, to the pages before and after it in the order data flows, carrying
    the link's whole query (st.page_link would clear it); switching pages keeps the session's state in the link."""
    t = translator(lang)
    at = open_page("tokens", lang=lang, src="World Hello", edit="enc.0.attn.W_Q:0.0.0=2.5")
    before = query(at)
    assert before["src"] == "World Hello" and "edit" in before
    chain = ["overview", *STEP_PAGES, "generate"]
    for previous, page, following in zip(chain, chain[1:], chain[2:]):
        goto(at, page)
        links = at.page_link
        assert [link.proto.label for link in links] == [t("nav.previous", page=t(f"page.{previous}")),
                                                        t("nav.next", page=t(f"page.{following}"))], page
        assert [link.proto.page for link in links] == ["" if previous == "overview" else previous, following]
        assert all(dict(parse_qsl(link.proto.query_string)) == before for link in links), page
        assert query(at) == before, page
        last = list(at.main)[-1]
        assert last.type == "page_link" and last.proto.label == links[-1].proto.label, "the links end the page"
    goto(at, "generate")  # the last of the chain: a link back only
    assert [(link.proto.label, link.proto.page) for link in at.page_link] == [
        (t("nav.previous", page=t("page.output")), "output")]
    assert dict(parse_qsl(at.page_link[0].proto.query_string)) == before and list(at.main)[-1].type == "page_link"
    goto(at, "dropout")
    assert not at.page_link, "dropout, training and the comparison are not steps of the pass"


def _editor_places(at):
    """For each weight editor (an expander "open.<param>.<head>"), the last formula drawn before it (a step's header
    and formula are one element), past the editors and the note on the paper's form just before it: where every
    page puts its editors."""
    editors = {id(e) for e in at.expander if e.proto.id.rsplit("-", 1)[-1].startswith("open.")}
    places, drawn = [], []
    for node in at.main:
        if id(node) in editors:
            places.append(drawn[-1])
        elif node.type == "latex" or (node.type == "markdown" and STEP_HEADER.match(node.value)):
            drawn.append(node)
    return places


# The pages whose first step, where they open (docs/ARCHITECTURE.md, "Where a page opens"), reads no weight: a
# concatenation, a residual sum, a stack's summary
NO_EDITORS = ("multihead", "add_norm", "encoder_stack", "dec_add_norm", "decoder_stack")


def assert_editors_under_their_formulas(at, page):
    """Every weight editor of a step page, as it opens in English at the first settings, sits under the formula of the
    step it feeds (tests/test_every_page.py's run of every page)."""
    places = _editor_places(at)
    assert bool(places) == (page not in NO_EDITORS), "a page whose first step reads weights shows their editors"
    trace = engine_trace()
    for header in places:
        match = STEP_HEADER.match(header.value)
        assert match, page
        assert formula_body(match["formula"]) == EN_T.words(trace.step(match["name"]).formula), page


def test_the_attention_pages_editors_of_q_and_k_moved_from_the_top_to_under_the_scores():
    at = open_page("attention")
    header, _ = _editor_places(at)
    assert STEP_HEADER.match(header.value)["name"] == "enc.0.attn.scores"
    open_step(at, "attention", "weights")  # the softmax: the same editors, in the same place
    assert [STEP_HEADER.match(h.value)["name"] for h in _editor_places(at)] == ["enc.0.attn.weights"] * 2


def test_cross_attention_that_weighs_the_source_alike_says_so():
    """The worked example's cross-attention weights are all 0.5 (to 0.001): the page says why; a sentence whose
    encoder outputs differ more (their weights up to 0.013 from 1/6) has no such note."""
    at = open_page("cross_attention")
    weights = engine_trace()["dec.0.cross_attn.weights"]
    assert np.all(np.abs(weights - 0.5) < 0.01)
    assert [m.value for m in at.markdown
            if m.value.startswith(":material/info: Every weight here is within 0.01 of 1/2")]
    other = open_page("cross_attention", src="The cat sat on the mat")
    assert not np.all(np.abs(other.session_state["context"].trace["dec.0.cross_attn.weights"] - 1 / 6) < 0.01)
    assert not [m.value for m in other.markdown if "Every weight here" in m.value]
