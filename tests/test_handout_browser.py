"""The handout in Chromium: the HTML file opened with every network request refused draws every formula (no raw
LaTeX) and shows the trace's numbers; a screenshot of its first page, build/screenshots/handout-{lang}.png; and the
app's button downloads the handout of the page's state."""
from pathlib import Path

import numpy as np
import pytest

import engine
from ui.core.i18n import translator
from ui.handout.document import Settings
from ui.handout.render import handout_file

from test_browser import no_exception, server, settle  # noqa: F401 (server: a fixture)
from test_handout import RAW_LATEX, make_handout

SCREENSHOTS = Path(__file__).resolve().parents[1] / "build" / "screenshots"  # as tests/test_readable.py's


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
    assert len(heights) >= 2 * len(trace) and min(heights) > 10  # drawn, each a line or more tall
    weights = browser_page.locator("h3:has(code:text-is('enc.0.attn.weights')) ~ math mtable").first
    cells = weights.locator("mtr").evaluate_all("rows => rows.map(r => [...r.children].map(c => c.textContent))")
    shown = [[_shown_number(cell) for cell in row] for row in cells]
    np.testing.assert_allclose(shown, trace["enc.0.attn.weights"][0], rtol=1e-7)
    browser_page.set_viewport_size({"width": 900, "height": 1270})  # an A4 page's proportions
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    browser_page.screenshot(path=str(SCREENSHOTS / f"handout-{lang}.png"))


def _shown_number(text: str) -> float:
    """A matrix cell as the browser shows its MathML: 0.25, −3, 4.6769557×10−10."""
    mantissa, _, exponent = text.replace("−", "-").partition("×10")
    return float(mantissa) * 10.0 ** int(exponent or 0)


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
