"""The handout in Chromium: the HTML file opened with every network request refused draws every formula (no raw
LaTeX) and shows the trace's numbers; a screenshot of its first page, build/screenshots/handout-{lang}.png; printed,
every part fits an A4 page's width (build/screenshots/handout-print-{lang}.pdf); and the app's button downloads the
handout of the page's state."""
import re
from pathlib import Path

import numpy as np
import pytest

import engine
from ui.core.i18n import translator
from ui.handout.document import Settings
from engine.notation import SUPERSCRIPTS
from ui.handout.render import PAGE_MARGIN_MM, handout_file

from test_browser import no_exception, server, settle  # noqa: F401 (server: a fixture)
from test_handout import RAW_LATEX, VARIANTS, make_handout

SCREENSHOTS = Path(__file__).resolve().parents[1] / "build" / "screenshots"  # as tests/test_readable.py's
PX_PER_MM = 96 / 25.4  # CSS px
PRINTED_WIDTH = int((210 - 2 * PAGE_MARGIN_MM) * PX_PER_MM)  # an A4 page's width less its margins, CSS px
# Every element that reaches past the printed width: Chromium would shrink every page to fit the widest.
TOO_WIDE = """width => [...document.body.querySelectorAll('*')]
    .filter(e => e.getBoundingClientRect().right > width + 0.5)
    .map(e => [e.tagName, Math.round(e.getBoundingClientRect().right), e.textContent.slice(0, 60)])"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_chromium_without_network_draws_every_formula(new_page, tmp_path, lang):
    trace, page = make_handout(lang=lang, format_="html")
    path = tmp_path / "handout.html"
    path.write_text(page, encoding="utf-8")
    browser_page = new_page(lang)
    fetched = []

    def refuse(route):
        fetched.append(route.request.url)
        route.abort() if not route.request.url.startswith(("file:", "data:")) else route.continue_()

    browser_page.route("**/*", refuse)
    browser_page.goto(path.as_uri())
    shown = browser_page.inner_text("body")
    assert RAW_LATEX.findall(shown) == [] and "−∞" in shown
    assert [url for url in fetched if not url.startswith(("file:", "data:"))] == []
    assert browser_page.locator("merror").count() == 0
    assert browser_page.locator("mtext", has_text="<unk>").count() == 1  # the output mask's formula, as text
    heights = browser_page.locator('math[display="block"]').evaluate_all(
        "ms => ms.map(m => m.getBoundingClientRect().height)")
    assert len(heights) == len(trace) and min(heights) > 10  # drawn, each a line or more tall
    weights = browser_page.locator("h3:has(code:text-is('enc.0.attn.weights')) ~ table.matrix").first
    cells = weights.locator("tbody tr").evaluate_all(
        "rows => rows.map(r => [...r.children].map(c => c.textContent.trim()))")
    assert [row[0] for row in cells] == list(trace.src_tokens)  # each row labelled by its token
    shown = [[_shown_number(cell) for cell in row[1:]] for row in cells]
    np.testing.assert_allclose(shown, trace["enc.0.attn.weights"][0], rtol=1e-7)
    columns = browser_page.locator("h3:has(code:text-is('logits')) ~ figure .heat .columns span").all_inner_texts()
    assert columns == list(trace.model.vocab.tokens)  # the heatmap's columns labelled by their words
    browser_page.set_viewport_size({"width": 900, "height": 1270})  # an A4 page's proportions
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    browser_page.screenshot(path=str(SCREENSHOTS / f"handout-{lang}.png"))


def _shown_number(text: str) -> float:
    """A matrix cell as the browser shows it: 0.25, −3, 4.6769557×10⁻¹⁰."""
    mantissa, _, exponent = text.replace("−", "-").partition("×10")
    return float(mantissa) * 10.0 ** int(exponent.translate({v: k for k, v in SUPERSCRIPTS.items()}) or 0)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_printed_every_part_fits_an_a4_pages_width(new_page, tmp_path, lang):
    """Laid out for print on an A4 page's width less its margins, nothing reaches past it, in every formula variant
    (the paper's 1-layer model: heatmaps of binned cells) and at the app's 4 digits; the PDF is A4 portrait."""
    browser_page = new_page(lang)
    browser_page.emulate_media(media="print")
    browser_page.set_viewport_size({"width": PRINTED_WIDTH, "height": 1000})
    for preset, overrides in VARIANTS:
        for digits in (4, 8):
            _, page = make_handout(preset, lang, "html", digits=digits, **overrides)
            path = tmp_path / "handout.html"
            path.write_text(page, encoding="utf-8")
            browser_page.goto(path.as_uri())
            assert browser_page.evaluate(TOO_WIDE, PRINTED_WIDTH) == [], (preset, overrides, digits)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    _, page = make_handout(lang=lang, format_="html", digits=4)
    path.write_text(page, encoding="utf-8")
    browser_page.goto(path.as_uri())
    pdf = browser_page.pdf(format="A4", path=str(SCREENSHOTS / f"handout-print-{lang}.pdf"))
    size = re.search(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", pdf)
    assert size and (round(float(size[1])), round(float(size[2]))) == (596, 843)  # A4 portrait, in points


def test_the_apps_button_downloads_the_handout_of_the_page_state(server, new_page):  # noqa: F811 (server)
    query = "preset=hello-world&src=Hello+World&tgt=hola+mundo&lang=zh"
    page = new_page("zh")
    page.goto(f"{server}/overview?{query}")
    settle(page)
    no_exception(page)
    with page.expect_download() as download:
        page.get_by_role("button", name=translator("zh")("handout.download.md")).click()
    assert download.value.suggested_filename == "transformer-handout.md"
    trace = engine.preset("hello-world").run("Hello World", "hola mundo")
    settings = Settings("hello-world", 0, "Hello World", "hola mundo", 4, link=f"{server}/?{query}")
    assert Path(download.value.path()).read_text(encoding="utf-8") == handout_file(trace, translator("zh"), settings,
                                                                                    "md")
