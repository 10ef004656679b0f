"""No English on a zh-CN screen (issue 30's bar): every page, rendered in Chinese under the settings the sidebar offers,
shows no run of English words outside code, math and the example's tokens.

What a learner reads is collected from every element AppTest ran, the sidebar's included: markdown, captions, alerts,
widgets' labels, help and options, tables' headers and cells, charts' titles, axes, legends and hover text, custom
components' data. A run of two or more Latin words is English unless it is code (a `code span`, a step or parameter
name), math ($…$, a formula's symbols; words a formula writes in \\text{…} are read as text), tokens of the model's
vocabulary or the sentences, or a name in ALLOWED. A LaTeX command outside math (\\times where no formula is drawn)
fails it too.
"""
from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pytest
from streamlit.proto.Common_pb2 import StringArray

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import streamlit_privates  # noqa: E402
from engine import blog  # noqa: E402
from engine.corpus import CORPORA  # noqa: E402
from engine.presets import PAPER_VOCABULARY  # noqa: E402
from engine.tokens import split  # noqa: E402
from engine.train import TrainSettings, start_model, train  # noqa: E402
from test_app import ALL_PAGES, TEXT_PAGES, assert_clean, goto, open_link, open_page  # noqa: E402
from ui.stores.weights import DEFAULT_DIR, WeightsStore  # noqa: E402


# Latin words a Chinese text keeps, each for a reason; matched as whole words, case as written.
ALLOWED = {
    "Page Down": "a key's name, as printed on the key",
    "Page Up": "a key's name, as printed on the key",
    "Annotated Transformer": "harvardnlp's The Annotated Transformer, a name",
    "Peter Lau": "a person's name (the author of a post a note cites)",
    "Hugging Face": "a company's name (its Hub holds the real translators the app loads)",
    "log": "a function's name, as math writes it (log P on a hover label, where no formula can be drawn)",
}
LETTERS = "A-Za-zÀ-ɏ"  # Latin, with the Spanish tokens' accents
WORD = rf"[{LETTERS}][{LETTERS}'’]*(?:-[{LETTERS}]+)*"  # one-hot is one word
WORD_RUN = re.compile(rf"(?<![{LETTERS}]){WORD}(?: +{WORD})+")
RAW_LATEX = re.compile(r"\\[A-Za-z]+")  # a LaTeX command outside math: \times written where no formula is drawn
TITLE = re.compile(r"《[^》]*》")  # a cited work's title, as it was published
CODE = re.compile(r"```.*?```|`[^`]*`", re.S)
MATH = re.compile(r"\$\$.*?\$\$|\$[^$]*\$|\\\(.*?\\\)|\\\[.*?\\\]", re.S)
TEXT_IN_MATH = re.compile(r"\\(?:text|textsf|textbf|textit|mbox)\{((?:[^{}]|\{[^{}]*\})*)\}")
IDENTIFIER = re.compile(r"\S*[A-Za-z0-9][._/:=][A-Za-z0-9]\S*|\S*_\S*")  # enc.0.attn.W_Q, d_model, a URL, k=v
MARKUP = re.compile(r"<[^<>]*>|&[a-z]+;|:[a-z]+(?:-[a-z]+)*\[|:material/[a-z_]+:")  # HTML, :gray[, icons
SKIPPED_FIELDS = {"id", "form_id", "icon", "page_script_hash", "page", "js_content", "css_content", "component_name",
                  "js_source_path", "css_source_path", "theme", "selection_mode", "type", "url_path", "spec",
                  "arrow_data", "data", "json", "html_content", "bytes", "mixed", "element_type", "config",
                  "columns", "language", "url", "deferred_file_id"}  # ids, code, styles, data read apart


def english_runs(text: str, tokens: set[str] = frozenset()) -> list[str]:
    """The runs of English words in a text a Chinese reader sees: two or more Latin words of two letters or more,
    outside code, math (but for the words a formula writes as text), identifiers, markup, cited titles, ALLOWED
    names and runs made of the example's tokens alone."""
    code_free = CODE.sub(" · ", text)
    math_words = " · ".join(TEXT_IN_MATH.findall(" ".join(MATH.findall(code_free))))
    prose = TITLE.sub(" · ", MATH.sub(" · ", code_free) + " · " + math_words)
    prose = IDENTIFIER.sub(" · ", MARKUP.sub(" · ", prose))
    for name in ALLOWED:
        prose = re.sub(rf"(?<![{LETTERS}]){re.escape(name)}(?![{LETTERS}])", " · ", prose)
    lowered = {token.lower() for token in tokens}
    runs = [[word for word in run.split() if len(word) > 1] for run in WORD_RUN.findall(prose)]  # "a", "I" go along
    return [" ".join(run) for run in runs if len(run) > 1 and not all(word.lower() in lowered for word in run)] + \
        RAW_LATEX.findall(MATH.sub(" · ", code_free))


# ---- what the page shows ------------------------------------------------------------------------------------

def shown_texts(at) -> list[tuple[str, str]]:
    """(where, text) for every text the page AppTest ran shows a reader."""
    found = []
    for node in streamlit_privates.nodes(at):
        proto = getattr(node, "proto", None)
        if proto is None:
            continue
        where = getattr(node, "type", type(node).__name__)
        if where == "code":  # st.code: a command or a program, as typed in any language
            continue
        found += [(where, text) for text in _proto_strings(proto)]
        if where == "plotly_chart":
            found += [(where, text) for text in _chart_strings(json.loads(proto.spec))]
        elif where == "bidi_component":
            found += [(where, text) for text in _component_strings(proto)]
        elif isinstance(getattr(node, "value", None), pd.DataFrame):
            found += [(where, text) for text in _table_strings(node.value)]
    return [(where, text) for where, text in found if text.strip()]


def _proto_strings(message) -> list[str]:
    strings = []
    for field, value in message.ListFields():
        if field.name in SKIPPED_FIELDS:
            continue
        values = value if isinstance(value, Sequence) and not isinstance(value, str) else [value]
        for item in values:
            if isinstance(item, str):
                strings.append(item)
            elif hasattr(item, "ListFields"):
                strings += _proto_strings(item)
    return strings


def _json_strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _json_strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _json_strings(item)]
    return []


CHART_TEXT_KEYS = {"text", "ticktext", "name", "hovertemplate", "texttemplate", "title", "x", "y", "labels",
                   "customdata", "hovertext"}


def _chart_strings(spec) -> list[str]:
    """A chart's words: titles, tick labels, legends, annotations, hover text (not its colours, fonts or modes)."""
    if isinstance(spec, list):
        return [text for item in spec for text in _chart_strings(item)]
    if not isinstance(spec, dict):
        return []
    strings = []
    for key, value in spec.items():
        if key in CHART_TEXT_KEYS and not isinstance(value, dict):  # a title's dict holds its text under "text"
            strings += _json_strings(value)
        strings += _chart_strings(value)
    return strings


def _component_strings(proto) -> list[str]:
    strings = _json_strings(json.loads(proto.json)) if proto.json else []
    if proto.html_content:
        strings.append(re.sub(r"<[^>]*>", " · ", proto.html_content))
    return strings


def _table_strings(frame: pd.DataFrame) -> list[str]:
    """A table's headers, row labels and text cells."""
    labels = [*frame.columns, *frame.index]
    cells = [value for column in frame.columns for value in frame[column]]
    return [str(label) for label in labels if not isinstance(label, int)] + [c for c in cells if isinstance(c, str)]


# ---- every page and each of its choices, under the sidebar's settings -----------------------------------------

WIDGET_KEY = re.compile(r"^\$\$ID-[0-9a-f]+-")  # before a widget's own key in its id
# The settings the sidebar offers, as links: the presets, the norm's place and the activation, a decoder-only model,
# several layers and heads, the post's variants, masks (the post's SOS-only decoder step; the padded batch is a
# section of the training page), biases and the output's tied weights, presenter mode with an edit; and what a link or
# the numbers can bring: a link refused in part, trained weights, a softmax that overflows (the first settings:
# tests/test_every_page.py's Chinese run of every page). Each setting's one pass also checks that every page and choice
# runs cleanly, but where a setting's numbers are refused (REFUSED): the paper's 512-d model, say, whose wide matrices
# are heatmaps only and whose big parameters get the one-cell editor.
SETTINGS = {
    "paper": {"preset": "paper"},
    "pre-norm, GELU": {"cfg": "norm_placement:pre,activation:gelu"},
    "decoder-only": {"cfg": "decoder_only:true"},
    "layers and heads": {"cfg": "n_layers:2,n_dec_layers:3,n_heads:4,d_k:1,d_v:1"},
    "the post's PE formula, naive softmax": {"cfg": "layer_norm:paper,pos_encoding:blog,softmax:naive,"
                                                    "attn_divisor:sqrt_dk"},
    "learned positions, SOS only": {"cfg": "pos_encoding:learned", "tgt": ""},
    "biases, two embeddings, no PE": {"cfg": "attn_bias:true,ffn_bias:true,tied_output:true,shared_embeddings:false,"
                                             "pos_encoding:none"},
    "paper decoder-only, pre-norm": {"preset": "paper", "cfg": "decoder_only:true,norm_placement:pre"},
    "presenter mode, edited": {"present": "1", "edit": "enc.0.attn.W_Q:0.1.2=1.5"},
    "a link refused in part": {"cfg": "n_layers:99,activation:swish", "seed": "-1", "edit": "nothing:0=1"},
    "trained weights, 2 digits": {"weights": "trained", "digits": "2"},  # "trained": the store's id of weights
    "naive softmax overflowing": {"cfg": "softmax:naive", "edit": "unembed.b:0=1000000.0;enc.0.attn.W_Q:0.0.0=1e6",
                                  "gen": "model:current,strategy:beam"},  # NaN, and generation refused
}
REFUSED = {"naive softmax overflowing"}  # its pages say what they cannot show, in an error
IN_A_ROOM = "layers and heads"  # the setting whose teacher opens a room: each page with the room's panel, and a
# following student's read-only page beside it (its own test before; the room's words do not change with the setting)
VISION_KEYS = {"present", "digits", "vimg", "vpx", "vw", "vseed", "vcfg", "vedit"}  # what a Vision Transformer's page
# reads of a link: its own model's parts, presenter mode and the digits. The text model's settings do not reach it, so
# it is swept in a setting that names one of these (its own settings: tests/test_vit_pages.py's sweep).


EXAMPLE_TOKENS = {*PAPER_VOCABULARY, *blog.VOCABULARY,
                  *(word for pairs in CORPORA.values() for pair in pairs for text in pair for word in split(text))}


def tokens_of(at) -> set[str]:
    """The tokens a page may show: every vocabulary and corpus of the app, the model's and the sentences' words; a
    Vision Transformer's positions (CLS, P1, ...) and classes."""
    context = at.session_state["context"]
    model = context.model  # a ViT page's: its positions' and classes' names
    words = (*model.tokens, *model.classes) if context.vision else model.vocab.tokens
    return {*EXAMPLE_TOKENS, *words, *split(context.state.src), *split(context.state.tgt)}


def english_on(at, where: str, clean: bool = False) -> dict:
    """{where: the runs of English words} of the page AppTest ran, its expanders opened; clean: with no error."""
    _open_expanders(at)
    assert not at.exception, (where, [e.message for e in at.exception])
    if clean:
        assert not at.error, (where, [e.value for e in at.error])
    tokens = tokens_of(at)
    found = {}
    for element, text in shown_texts(at):
        runs = english_runs(text, tokens)
        if runs:
            found.setdefault(f"{where} · {element}", []).append((runs, text[:200]))
    return found


def _open_expanders(at) -> None:
    """Open every keyed expander: the app draws what is inside some (editors, derivations, the options) only then."""
    closed = [WIDGET_KEY.sub("", node.proto.id) for node in streamlit_privates.nodes(at)
              if getattr(node, "type", None) == "expander" and node.proto.id and not node.proto.expanded]
    for key in closed:
        at.session_state[key] = True
    if closed:
        at.run()


REPEATS = re.compile(r"^(?:heads|layer)\.|\.row$|^ctl\.lang$")  # rows of buttons whose choices repeat the words:
# heads, layers, an editor's rows; the language


def english_in_choices(at, where: str, clean: bool = False) -> dict:
    """The page as drawn, then each other choice of each row of buttons on it (sections, steps, sub-layers,
    strategies, ...; the rows a choice draws too), chosen as the browser sends it: its label. Every choice runs without
    an exception (clean: nor an error)."""
    found, done = english_on(at, where, clean), set()
    while rows := _rows_of_buttons(at, done):
        done.add(rows[0].id)
        for position, option in enumerate(rows[0].options):
            if position not in rows[0].default:
                streamlit_privates.send_value(at, rows[0].id, string_array_value=StringArray(data=[option.content]))
                found |= english_on(at, f"{where} {WIDGET_KEY.sub('', rows[0].id)}={option.content}", clean)
    return found


def _rows_of_buttons(at, done: set) -> list:
    """The rows of buttons on the page (their protos) not yet gone through, but those of REPEATS."""
    return [group.proto for group in at.get("button_group")
            if group.proto.id not in done and not REPEATS.search(WIDGET_KEY.sub("", group.proto.id))]


def english_in_setting(query: dict, room: bool = False, clean: bool = True) -> dict:
    """Every page the link's settings reach (VISION_KEYS), each choice of its rows of buttons; room: the session
    opens a room first (on every page), and a student follows it to each page; clean: every page and choice runs
    without an error."""
    at = open_page("overview", lang="zh", **query)
    if clean:
        assert_clean(at)
        assert at.session_state["state"].preset == query.get("preset", at.session_state["state"].preset)
    if room:
        at.button(key="room.open").click().run()
    found = {}
    for page in ALL_PAGES if room or VISION_KEYS & set(query) else TEXT_PAGES:
        if page != "overview":
            goto(at, page)
        if room:
            found |= english_on(open_link(page, lang="zh", room=at.session_state["room"].code), f"{page} student",
                                clean)
        found |= english_in_choices(at, page, clean)
    return found


@pytest.mark.parametrize("setting", SETTINGS)
def test_no_english_on_a_chinese_screen(setting):
    query = dict(SETTINGS[setting])
    if query.get("weights") == "trained":  # two steps of the training page's model, kept by the app's store
        query["weights"] = WeightsStore(DEFAULT_DIR).put(train(start_model(), TrainSettings(steps=2)).model)
    assert english_in_setting(query, room=setting == IN_A_ROOM, clean=setting not in REFUSED) == {}


# ---- the detector itself ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, runs", [
    ("训练在第 3 步发散：training diverged at step 3", ["training diverged at step"]),  # an engine's sentence
    ("This app has encountered an error.", ["This app has encountered an error"]),  # Streamlit's, on a crash
    ("$$\n\\text{not after}\\; x\n$$", ["not after"]),  # words a formula writes as text
    ("$$\n\\operatorname{MultiHead}(Q, K, V) = \\operatorname{Concat}(\\text{head}_1)\n$$", []),
    ("后置归一化 (Post-Norm，论文)，one-hot 乘积", []),  # a term the glossary keeps is one word
    ("形状：`enc.0.attn.W_Q` · d_model = 4", []),  # code
    ("翻译“the cat sat on the mat”", []),  # the example's tokens
    ("翻译“the cat sat on a chair”", ["the cat sat on chair"]),  # a word no vocabulary has ("a" is not counted)
    ("右方向键、Page Down 或空格", []),  # ALLOWED
    ("Peter Lau 的博客文章《The transformer's details》", []),  # a name, a cited title
    ("EOS  log P -6.54<br>hello  log P -6.78", []),  # a chart's hover text: tokens, a function's name, markup
])
def test_the_detector_finds_english_sentences_and_nothing_else(text, runs):
    assert english_runs(text, EXAMPLE_TOKENS) == runs


def test_the_collector_reaches_charts_components_widgets_and_tables():
    """In English, the page's words are found in every kind of element that holds them (so a Chinese page's are read
    there too): the overview's diagram, the attention page, the sidebar's options."""
    at = open_page("overview", lang="en")
    at.session_state["ctl.options"] = True
    at.run()
    kinds = {where.split(" · ")[1] for where in english_on(at, "overview") | english_on(goto(at, "attention"), "")}
    assert {"markdown", "caption", "latex", "selectbox", "toggle", "button", "expander", "plotly_chart",
            "bidi_component", "number_input", "page_link"} <= kinds, kinds
