"""A real translator in Chromium at 1280 x 720 (issue 42's bar, the part a test holds): one server whose models
directory holds a test-built Marian checkpoint (NumPy-written, small sizes: the full size adds cost, which
docs/PERFORMANCE.md measures, not behaviour). A `model=` link opens it; a step page's heatmap draws with the
translator's tokens as its labels, "</s>" too, its plot not pushed under a blank band; the generation page writes
the translation the engine's beam search (the checkpoint's own decoding) and greedy decoding give; a student
following the teacher's room, in Chinese, is shown the teacher's translator page."""
import sys
import urllib.parse
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import marian  # noqa: E402
from conftest import app_server  # noqa: E402
from marian_checkpoint import write_numpy_checkpoint  # noqa: E402
from test_browser import LOCALES, no_exception, settle, url  # noqa: E402
from test_follow_browser import SCREEN, wait_until, where  # noqa: E402
from ui.core import generation  # noqa: E402
from ui.core.i18n import EN, translator  # noqa: E402
from ui.core.labels import unique  # noqa: E402

MODEL = "tiny-browser"  # the checkpoint's folder
SRC = "Hello world."
BAND = 60  # px: the most a plot may sit below its chart's top (the column labels and margins; "</s>" made 250)


@pytest.fixture(scope="module")
def translator_server(chromium, tmp_path_factory):
    """A server of this checkout whose models directory holds the checkpoint, with rooms of its own; its URL and the
    checkpoint as the engine loads it (model, generation settings)."""
    directory = tmp_path_factory.mktemp("translator-browser")
    (directory / "models" / MODEL).mkdir(parents=True)
    write_numpy_checkpoint(directory / "models" / MODEL)
    env = {"TRANSFORMER_MODELS_DIR": str(directory / "models"), "TRANSFORMER_ROOMS_DB": str(directory / "rooms.db")}
    with app_server(directory / "server.log", env) as served:
        yield served, marian.load_folder(directory / "models" / MODEL)


@pytest.fixture
def screen(chromium):
    contexts = []

    def make(lang="en"):
        contexts.append(chromium.new_context(viewport=SCREEN, locale=LOCALES[lang]))
        return contexts[-1].new_page()

    yield make
    for context in contexts:
        context.close()


def opened(page, base, name, **query):
    page.goto(url(base, name, model=MODEL, **query))
    settle(page)
    no_exception(page)
    assert page.locator('[data-testid="stAlertContentError"]').count() == 0
    assert f"model={MODEL}" in page.url


def test_a_link_opens_the_translator_and_a_step_heatmap_draws_its_tokens(translator_server, screen):
    base, (model, _) = translator_server
    page = screen()
    opened(page, base, "ffn", src=urllib.parse.quote_plus(SRC))
    tokens = unique(model.run(SRC).src_tokens)
    assert tokens[-1] == "</s>"
    chart = page.locator('[data-testid="stPlotlyChart"]').first  # enc.0.ffn.hidden: a row per source token
    chart.scroll_into_view_if_needed()
    labels = chart.locator(".yaxislayer-above .ytick text").all_text_contents()
    assert labels == tokens, labels  # each token, written as itself
    top = chart.locator(".nsewdrag").first.bounding_box()["y"] - chart.bounding_box()["y"]
    assert 0 < top <= BAND, top


def test_the_generation_page_writes_the_engines_translations(translator_server, screen):
    """The checkpoint's own decoding (transformers' beam search with its beams and length penalty), then greedy."""
    base, (model, own) = translator_server
    page = screen()
    opened(page, base, "generate", src=urllib.parse.quote_plus(SRC))
    best = generation.run(model, SRC, (), own).best
    shown = page.locator('[data-testid="stMarkdownContainer"]').filter(has_text=EN["gen.beam_best"].split("{")[0]
                                                                       .strip("* :"))
    assert shown.count() == 1 and f"{best.text or '∅'} — log P" in shown.inner_text(), shown.all_inner_texts()
    opened(page, base, "generate", src=urllib.parse.quote_plus(SRC), gen="strategy:greedy")
    greedy = generation.run(model, SRC, (("strategy", "greedy"),), own)
    line = page.locator('[data-testid="stMarkdownContainer"]').filter(has_text=EN["gen.sentence"]).first
    written = line.locator("p").first.locator("code")  # the sentence's paragraph: the note under it names </s> too
    assert written.all_text_contents() == [model.vocab.tokens[model.start_id], *greedy.tokens]


def test_a_following_student_is_shown_the_teachers_translator_page(translator_server, screen):
    """The teacher (English) opens a room on the translator's attention page; a student (Chinese) who joins by the
    room's code is shown that page with the translator: its link names the model and its heatmaps draw."""
    base, _ = translator_server
    teacher, student = screen("en"), screen("zh")
    opened(teacher, base, "attention")
    teacher.get_by_text(EN["room.section"]).click()
    teacher.get_by_role("button", name=EN["room.open"]).click()
    wait_until(teacher, lambda: "key=" in teacher.url, "the teacher's room")
    code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(teacher.url).query))["room"]
    student.goto(f"{base}/?room={code}")
    wait_until(student, lambda: where(student) == where(teacher), lambda: f"{where(student)} != {where(teacher)}")
    settle(student)
    no_exception(student)
    assert where(student)[0] == "attention" and where(student)[1]["model"] == MODEL
    assert student.locator("h1").first.inner_text().strip() == translator("zh")("page.attention").strip()
    assert student.locator('[data-testid="stPlotlyChart"] .main-svg').count() > 0
