"""A real translator's long vocabulary on every page (issue 42): a small Marian checkpoint (d_model 16) whose
vocabulary is filled up to LONG tokens, past ui/views/vocabulary.DRAWN_WHOLE, as opus-mt's 65,001 are. Each page opens
without an error and no chart draws the whole vocabulary as an axis (a 65,001-column heatmap is ~650,000 cells no
reader can scan and the browser takes seconds to draw). The checkpoint is written with NumPy once per process."""
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.sizes import parameter_count  # noqa: E402
from marian.sizes import transformers_count  # noqa: E402
from marian_checkpoint import write_numpy_checkpoint  # noqa: E402
from test_app import EN_T, TEXT_PAGES, assert_clean, open_link, query  # noqa: E402
from ui.core.figures import as_text  # noqa: E402
from ui.core.i18n import EN  # noqa: E402
from ui.core.navigation import SECTIONS  # noqa: E402
from ui.core.runs import marian_model  # noqa: E402
from ui.views import vocabulary  # noqa: E402

MODEL = "tiny-long"  # the checkpoint's folder (a name of its own: runs.marian_model caches by name)
LONG = 2 * vocabulary.DRAWN_WHOLE + 1


@pytest.fixture(scope="session")
def long_models(tmp_path_factory) -> Path:
    models = tmp_path_factory.mktemp("long-translator")
    (models / MODEL).mkdir()
    write_numpy_checkpoint(models / MODEL, vocab_size=LONG)
    return models


@pytest.fixture
def models_dir(long_models, monkeypatch) -> Path:
    monkeypatch.setenv("TRANSFORMER_MODELS_DIR", str(long_models))
    return long_models


def heatmap_shape(chart) -> tuple[int, int]:
    z = json.loads(chart.proto.spec)["data"][0]["z"]
    return tuple(map(int, z["shape"].split(","))) if isinstance(z, dict) else (len(z), len(z[0]))


def widest_axis(at) -> int:
    """The most cells along one axis of any heatmap of the page."""
    return max((n for chart in at.get("plotly_chart") if json.loads(chart.proto.spec)["data"][0]["type"] == "heatmap"
                for n in heatmap_shape(chart)), default=0)


def sections_of(at, page):
    """The page as opened, then each of its other sections chosen in turn."""
    yield "", at
    if page in SECTIONS:
        for label in at.segmented_control(key=SECTIONS[page]).options[1:]:
            at.segmented_control(key=SECTIONS[page]).set_value(label).run()
            yield label, at


@pytest.mark.parametrize("page", TEXT_PAGES)
def test_every_page_and_section_draws_a_long_vocabulary_without_its_whole_axis(models_dir, page):
    at = open_link(page, model=MODEL)
    assert query(at)["model"] == MODEL and len(marian_model(MODEL)[0].vocab) == LONG
    for label, shown in sections_of(at, page):
        assert_clean(shown)
        assert widest_axis(shown) < LONG, (page, label)


def test_the_one_hot_product_draws_the_sentences_columns_only(models_dir):
    at = open_link("tokens", model=MODEL)
    at.segmented_control(key=SECTIONS["tokens"]).set_value(EN["tokens.tab.product"]).run()
    assert_clean(at)
    tokens = marian_model(MODEL)[0].run(at.session_state["ctl.src"]).src_tokens
    chart = next(c for c in at.get("plotly_chart") if c.proto.id.endswith("tokens.onehot.chart"))
    assert json.loads(chart.proto.spec)["layout"]["xaxis"]["ticktext"] == [as_text(t) for t in dict.fromkeys(tokens)]
    shown = len(set(tokens))
    assert EN_T("tokens.product.columns", n=shown, rest=LONG - shown) in [c.value for c in at.caption]


@pytest.mark.parametrize("step", ["logits", "probs"])
def test_the_gradients_of_the_vocabulary_draw_the_drawn_tokens(models_dir, step):
    """The backward section's gradient of a vocabulary-wide step, and of the embedding table (a row per token)."""
    model = marian_model(MODEL)[0]
    table = next(name for name, value in model.params.items() if value.shape[0] == LONG)
    at = open_link("train", model=MODEL, grad=step, param=table)
    assert_clean(at)
    shapes = [heatmap_shape(c) for c in at.get("plotly_chart") if "train.grad_" in c.proto.id]
    (n, tokens), (rows, d_model) = shapes  # the gradient's, the table's
    assert tokens == rows < LONG and d_model == model.config.d_model


def test_the_sizes_page_sets_transformers_count_beside_the_apps(models_dir):
    """transformers' num_parameters() (marian/sizes.py, held to MarianMTModel by tests/test_marian.py), then each
    item counted otherwise: the rows add up to this app's count."""
    at = open_link("sizes", model=MODEL)
    assert_clean(at)
    model = marian_model(MODEL)[0]
    assert EN_T("sizes.marian.text", name=MODEL) in [m.value for m in at.markdown]
    table = next(frame.value for frame in at.dataframe if frame.value.iloc[0, 0] == EN["sizes.marian.theirs"])
    numbers = [int(cell.replace(",", "").replace("−", "-")) for cell in table.iloc[:, 1]]
    assert numbers[0] == transformers_count(model.config, LONG) and numbers[-1] == parameter_count(model.config, LONG)
    assert sum(numbers[:-1]) == numbers[-1] and numbers[1] == LONG  # the output bias: V numbers


def test_the_decoder_input_and_the_sidebar_name_the_translators_start_token(models_dir):
    """Marian's decoder starts from <pad> (its vocabulary has no SOS): the page and the target's label say so."""
    at = open_link("decoder_input", model=MODEL)
    assert_clean(at)
    intro = at.markdown[0].value
    assert EN["intro.decoder_input.pad"] in intro and EN["intro.decoder_input.sos"] not in intro
    assert at.text_input(key="ctl.tgt").label == EN_T("ctl.tgt", start="`<pad>`")


def test_the_output_page_names_the_translators_masked_token(models_dir):
    """Marian masks <pad> (bad_words_ids), not <unk>: the intro says which."""
    at = open_link("output", model=MODEL)
    assert_clean(at)
    intro = at.markdown[0].value
    assert EN["intro.output.pad"] in intro and EN["intro.output.unk"] not in intro


def test_teacher_forcing_reads_the_translators_start_and_end_tokens(models_dir):
    at = open_link("train", model=MODEL)
    assert_clean(at)
    forcing = next(f.value for f in at.latex if "t_1, \\ldots, t_m" in f.value)
    assert r"(\text{\textless{}pad\textgreater{}}, t_1" in forcing
    assert r"t_m, \text{\textless{}/s\textgreater{}})" in forcing
    assert "SOS" not in forcing and "EOS" not in forcing
    preset = next(f.value for f in open_link("train").latex if "t_1, \\ldots, t_m" in f.value)
    assert r"(\text{SOS}, t_1" in preset and r"t_m, \text{EOS})" in preset  # the presets' own tokens
