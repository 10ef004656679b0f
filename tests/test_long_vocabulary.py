"""A model whose vocabulary is too long to draw whole (a real translator's ~65,000 tokens; here 600, which costs
the same code path in milliseconds): the output page draws each decoder position's most likely tokens, the masked
ones and those the reader looks for, labelled by token; the drill-down explains the token's own column; the embedding
editor offers the drawn tokens' rows (ui/views/vocabulary.py)."""
import json

import numpy as np
import pytest

import engine
from engine.presets import PAPER_VOCABULARY
from engine.tokens import Vocabulary
from test_app import EN, assert_clean, open_link
from ui.core import runs
from ui.core.figures import as_text
from ui.views import vocabulary

SIZE = 600  # tokens: past vocabulary.DRAWN_WHOLE


def long_model() -> engine.Model:
    """The paper preset at small sizes with SIZE tokens: the new ones' weights drawn as the preset draws its own."""
    base = engine.preset("paper", d_model=8, n_heads=2, d_ff=16, n_layers=1)
    return engine.with_words(base, *(f"w{i}" for i in range(SIZE - len(base.vocab))))


@pytest.fixture(scope="module")
def weights():
    """The model, and its id in the store the app of this process uses (cached for the process: whichever test
    first ran the app chose its directory)."""
    model = long_model()
    return model, runs.weights_store().put(model)


def heatmap_of(at, key):
    chart = next(e for e in at.get("plotly_chart") if e.proto.id.endswith(f"-chart.{key}"))
    return json.loads(chart.proto.spec)


def test_the_output_page_draws_the_likeliest_masked_and_found_tokens(weights):
    model, key = weights
    at = open_link("output", weights=key)
    assert_clean(at)
    trace = model.run(*(at.session_state["ctl.src"], at.session_state["ctl.tgt"]))  # the page's sentence pair
    likeliest = [list(np.argsort(-row, kind="stable")[:vocabulary.TOP]) for row in trace["probs"]]
    expected = list(dict.fromkeys([int(i) for row in likeliest[::-1] for i in row] + list(model.never_next)))
    spec = heatmap_of(at, "logits.None")
    assert spec["layout"]["xaxis"]["ticktext"] == [as_text(model.vocab.tokens[i]) for i in expected]  # <unk>
    assert len(expected) < SIZE and EN["vocab.drawn"].format(top=vocabulary.TOP, size=SIZE) in [
        c.value for c in at.caption]
    at.text_input(key="vocab.find.logits.None").set_value("W40").run()  # case ignored: w40, w400..w409
    found = [i for i, token in enumerate(model.vocab.tokens) if "w40" in token]
    assert len(found) == 11
    assert heatmap_of(at, "logits.None")["layout"]["xaxis"]["ticktext"][len(expected):] == [
        model.vocab.tokens[i] for i in found[:vocabulary.FOUND] if i not in expected]
    assert EN["vocab.found"].format(n=11, shown=vocabulary.FOUND, text="` w40 `") in [c.value for c in at.caption]


def test_the_drill_down_explains_the_drawn_tokens_own_column(weights):
    model, key = weights
    at = open_link("output", weights=key)
    trace = model.run(at.session_state["ctl.src"], at.session_state["ctl.tgt"])
    drawn = heatmap_of(at, "logits.None")["layout"]["xaxis"]["ticktext"]
    at.session_state["col.logits.None"] = 2  # the third token drawn
    at.run()
    token_id = model.vocab.tokens.index(drawn[2])
    formula = next(f.value for f in at.latex if r"\text{logits}[" in f.value)
    assert rf"\text{{logits}}[1, {token_id + 1}]" in formula  # counted from 1, as every index a reader sees
    assert rf"&\approx {trace['logits'][0, token_id]:.4g}\end{{aligned}}" in formula  # that token's logit, rounded


def test_an_embedding_editor_offers_the_drawn_tokens_rows_not_the_whole_table(weights):
    model, key = weights
    at = open_link("output", weights=key)
    at.session_state["open.embed.src.None"] = True
    at.run()
    assert_clean(at)
    rows = at.button_group(key="edit.embed.src.None.0.row").options
    assert [as_text(row) for row in rows] == heatmap_of(at, "logits.None")["layout"]["xaxis"]["ticktext"]
    assert len(rows) < SIZE
