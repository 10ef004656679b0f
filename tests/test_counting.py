"""One way of counting: what a person reads counts from 1 (ui.core.labels.FIRST): positions, rows, columns, heads,
layers, time steps. Only code counts from 0: step and parameter names (enc.0.attn.q), a link's edit=…:0.1.2, and
the positional encoding's pos, the paper's variable, which its labels name ("pos = 0").

Every page is rendered in both languages, and what it shows a reader (axis ticks, picker options, widget labels,
tables, the drill-down) is searched for a position counted from 0 (`shown_zeros`, in tests/test_every_page.py's run of
every page, with its other checks); so are a weight editor's row buttons and sliders,
a wide step's typed row and column, and the drill-down of every kind of step, in every setting that changes what
it writes, as the app writes it.
"""
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine.kinds import KINDS  # noqa: E402
from test_app import ALL_PAGES, assert_clean, open_page  # noqa: E402
from ui.core.i18n import CATALOGS, translator  # noqa: E402
from ui.core.labels import intro_keys, step_name_key  # noqa: E402
from ui.views.drill import cell_explanation  # noqa: E402

LANGS = ("en", "zh")
COUNTED = re.compile(r"\(0\)$|^0:|\b(?:row|column|head|layer) 0\b|[行列头层] 0\b|第 0 ", re.IGNORECASE)  # "a (0)", "0: SOS"
INDEX = re.compile(r"\[(\d+(?:, \d+)*)\]")  # a cell's index in a drill-down: [2, 3]
INDEXED = re.compile(r"(?<=[A-Za-z}\]])\[(\d+(?:, ?\d+)*)\]")  # a row or cell of a named matrix: W_E[2], A_2[2,1]
SUBSCRIPT = re.compile(r"_\{(\d+)\}")  # x̂_{2}, head_{1}
ORDER = re.compile(r"\((\d+) (?:>|\\le) (\d+)")  # the causal mask's (j > i)
WIDGET_KEY = re.compile(r"^\$\$ID-[0-9a-f]+-")  # before a widget's own key in its id
SLOT_POSITION = re.compile(r"\|[ij]=(\d+)")  # the mask's words: ⟦not-after|j=1|i=1⟧


def counted_from_zero(labels) -> list[str]:
    """The labels of one axis or one picker that count from 0: a "0" among numbers only, or a label that numbers
    something 0 ("row hello, column 0", "a (0)", "0: SOS"). A label of the formula's pos is its value."""
    labels = [str(label) for label in labels if not str(label).startswith("pos = ")]
    if labels and all(label.isdigit() for label in labels):
        return [label for label in labels if label == "0"]
    return [label for label in labels if COUNTED.search(label)]


def drill_zeros(text: str) -> list[str]:
    """The positions a drill-down's arithmetic writes that count from 0."""
    found = [index for index in INDEX.findall(text) if "0" in index.split(", ")]
    found += [n for pattern in (SUBSCRIPT, SLOT_POSITION) for n in pattern.findall(text) if n == "0"]
    return found + [" ".join(pair) for pair in ORDER.findall(text) if "0" in pair]


def indexed_zeros(text: str) -> list[str]:
    """The rows and cells of a named matrix, in any formula or text, that count from 0: W_E[0]."""
    return [index for index in INDEXED.findall(text) if "0" in re.split(r", ?", index)]


def charts(at):
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def shown_zeros(at) -> dict:
    """What the page shows a reader that counts from 0, by where it is."""
    found = {}
    for i, spec in enumerate(charts(at)):
        for axis in ("xaxis", "yaxis"):
            found[f"chart {i} {axis}"] = counted_from_zero(spec["layout"].get(axis, {}).get("ticktext", []))
        found[f"chart {i} legend"] = counted_from_zero(trace.get("name", "") for trace in spec["data"])
    for widget in [*at.selectbox, *at.radio, *at.multiselect]:
        found[f"options of {widget.label}"] = counted_from_zero(widget.options)
    for group in at.get("button_group"):
        found[f"buttons {group.proto.label}"] = counted_from_zero(option.content for option in group.proto.options)
    for widget in [*at.number_input, *at.slider]:
        found[f"label {widget.label}"] = ["0"] if re.search(r"\(0–|(?:Column|列) 0$", widget.label) else []
    for table in [*at.table, *at.dataframe]:
        frame = table.value
        found[f"table columns {list(frame.columns)}"] = counted_from_zero(frame.columns)
        found[f"table rows {list(frame.columns)}"] = [str(column) for column in frame.columns
                                                       if list(frame[column]) == list(range(len(frame))) != [0]]
    for formula in at.latex:
        if re.search(r"&(=|\\approx)", formula.value):  # a cell's arithmetic (the drill-down): = or ≈
            found[formula.value] = drill_zeros(formula.value)
    for text in [*(formula.value for formula in at.latex), *(m.value for m in at.markdown)]:
        found[f"indexed {text}"] = indexed_zeros(text)
    return {where: zeros for where, zeros in found.items() if zeros}


def other_sections(at, title) -> list[tuple[str, str]]:
    """(widget key, label) of each section of the page but the one drawn first."""
    groups = [group.proto for group in at.get("button_group") if group.proto.label == title]
    return [(WIDGET_KEY.sub("", group.id), option.content) for group in groups for option in group.options[1:]]


@pytest.mark.parametrize("lang", LANGS)
def test_the_rule_is_stated_where_a_learner_first_meets_an_index(lang):
    rule = {"en": "Everything you read counts from 1", "zh": "你读到的编号都从 1 开始"}[lang]
    at = open_page("tokens", lang=lang)
    assert any(rule in m.value for m in at.markdown)
    ids = {"en": "id 0 is row 1 of the embedding table", "zh": "id 0 是嵌入矩阵的第 1 行"}[lang]
    assert 0 in at.dataframe[0].value.iloc[:, 1].tolist()  # the token table's ids are nn.Embedding's, from 0:
    assert any(rule in m.value and ids in m.value for m in at.markdown)  # the rule names them code
    config = engine.preset("hello-world").config
    assert [page for page in ALL_PAGES if "intro.counting" in intro_keys(page, config)] == ["tokens"]  # once
    assert sum(rule in text for text in CATALOGS[lang].values()) == 1


@pytest.mark.parametrize("lang", LANGS)
def test_an_editors_rows_and_sliders_count_from_one(lang):
    at = open_page("qkv", lang=lang)
    at.session_state["open.enc.0.attn.W_Q.0"] = True  # the editor of W^Q's head 1: 4 rows of 3 columns
    at.run()
    assert_clean(at)
    rows = next(g for g in at.get("button_group") if g.proto.id.endswith(".row"))
    assert [option.content for option in rows.proto.options] == ["1", "2", "3", "4"]
    at.session_state[next(key for key in at.session_state if str(key).endswith(".row"))] = 0
    at.run()
    t = translator(lang)
    assert [s.label for s in at.slider] == [f"{t('view.col')} {j}" for j in (1, 2, 3)]
    assert shown_zeros(at) == {}


def traces():
    """Every kind of step, in each setting that changes what a drill-down writes: the blog's table and the paper's
    sinusoids, learned positions, dropout, a decoder-only model."""
    hello = engine.preset("hello-world")
    yield hello.run("Hello World", "Hola Mundo")
    yield hello.run("Hello World", "Hola Mundo", dropout=0.5, seed=1)
    yield engine.preset("hello-world", pos_encoding="learned", norm_placement="pre").run("Hello World", "Hola Mundo")
    yield engine.preset("hello-world", decoder_only=True).run("Hello World", "Hola Mundo")


@pytest.mark.parametrize("lang", LANGS)
def test_every_kind_of_drill_down_counts_from_one(lang):
    t, kinds = translator(lang), set()
    for trace in traces():
        for step in trace.steps():
            kinds.add(step.kind)
            for cell in _corners(step.value):
                explanation = cell_explanation(trace, step.name, cell, t(step_name_key(step.name)), 4)
                for text in (explanation.latex, explanation.text):
                    assert drill_zeros(text) == [], (step.name, cell, text)
                    assert drill_zeros(t.words(text)) == [], (step.name, cell, t.words(text))
    assert kinds == set(KINDS)


def _corners(value) -> list[tuple]:
    """The first and the last cell of a step (the engine's index, from 0)."""
    return sorted({(0,) * value.ndim, tuple(n - 1 for n in value.shape)})
