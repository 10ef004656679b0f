"""Every presenter slide fits a projector's screen (1280 x 720): the step's heading, its formula and its numbers
(heatmap, chart or matrix) lie between the header and the rail, with the page opened scrolled to the step
(tests/slide_fit.py measures; ui/classroom/scroll.py scrolls). The opening example's slides are measured in
test_readable's 1280 x 720 pass of each language, walked with the clicker's keys; the paper preset's here, one pass
per language, each slide opened by its link: its six layers show the same views, so its slides are those of the first
layer and those outside the layers. The same pass checks that the rail's dots stay put whatever the slide's title.
The Vision Transformer's rail (ui/core/navigation.vision_slides) is measured the same way, one pass per language, its
two layers' slides by those of the first.
"""
import engine
import pytest

from slide_fit import FIRST_DOT, misfit
from test_browser import no_exception, server, settle, url  # noqa: F401 (server: a fixture)
from test_presenter import OFF_THE_PASS, PROJECTOR_SCREEN
from test_vit_pages import shipped_trace
from ui.core.navigation import slides, vision_slides
from ui.core.state import encode_view


def shown_slides(preset: str) -> list[tuple[int, str, dict]]:
    """(position, page, view) of every slide of the preset's opening example; of a stack's layers, the first."""
    return [(i, page, view) for i, (_, page, view) in enumerate(slides(engine.preset(preset).config))
            if view.get("layer", 0) == 0]


def test_the_slides_measured_are_every_view_of_the_pass():
    assert len(shown_slides("hello-world")) == len(slides(engine.preset("hello-world").config)) == 60
    paper = {(page, tuple(sorted((k, v) for k, v in view.items() if k != "layer")))
             for _, page, view in slides(engine.preset("paper").config)}
    assert len(shown_slides("paper")) == len(paper) == 60


def shown_vision_slides() -> list[tuple[int, str, dict]]:
    """(position, page, view) of the shipped Vision Transformer's slides; of its layers, the first's."""
    deck = vision_slides(list(shipped_trace()), 2)
    return [(i, page, view) for i, (_, page, view) in enumerate(deck) if view.get("layer", 0) == 0]


def test_the_vision_slides_measured_are_every_view_of_its_pass():
    deck = vision_slides(list(shipped_trace()), 2)
    views = {(page, tuple(sorted((k, v) for k, v in view.items() if k != "layer"))) for _, page, view in deck}
    assert len(shown_vision_slides()) == len(views) == 1 + 4 + 17 + 4 < len(deck) == 43


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("preset", ["paper"])  # the opening example's: test_readable's 1280 x 720 passes
def test_every_slide_fits_a_projector(server, new_page, preset, lang):  # noqa: F811 (server)
    misfits, first_dot = measure(server, new_page(lang), shown_slides(preset), preset=preset)
    assert not misfits, misfits
    assert len(first_dot) == 1, first_dot


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_vision_slide_fits_a_projector(server, new_page, lang):  # noqa: F811 (server)
    misfits, first_dot = measure(server, new_page(lang), shown_vision_slides())
    assert not misfits, misfits
    assert len(first_dot) == 1, first_dot


def measure(base, page, shown, **query) -> tuple[list, set]:
    """Each slide opened by its link at 1280 x 720: those that do not fit (position, page, view, boxes) and the x of
    the rail's first dot on each."""
    page.set_viewport_size(PROJECTOR_SCREEN)
    misfits, first_dot = [], set()
    for position, name, view in shown:
        page.goto(url(base, name, present="1", **query, **encode_view(view)))
        settle(page)
        no_exception(page)
        page.wait_for_selector(".present-dots button", timeout=30_000)  # the rail, whose top the slide must stay
        page.wait_for_timeout(600)  # above; the scroll to the step, once the run is over (ui/classroom/scroll.py)
        boxes = misfit(page)
        if boxes is not None:
            misfits.append((position, name, view, boxes))
        first_dot.add(page.evaluate(FIRST_DOT))
    return misfits, first_dot


INTRO_TYPE = """() => parseFloat(getComputedStyle(
    document.querySelector('[data-testid="stMain"] [data-testid="stMarkdownContainer"] p')).fontSize)"""


def test_every_page_off_the_pass_has_presenter_type_and_the_rail(server, new_page):  # noqa: F811 (server)
    """The overview, animation, generation, training, dropout and comparison pages: the intro in projector type (the
    animation's kept 16 px) and the rail, whose → opens the first step."""
    page = new_page()
    page.set_viewport_size(PROJECTOR_SCREEN)
    for name in OFF_THE_PASS:
        page.goto(url(server, name, present="1"))
        settle(page)
        no_exception(page)
        page.wait_for_selector(".present-rail", timeout=30_000)  # its style sheet sets the type: both come with it
        assert page.evaluate(INTRO_TYPE) == 24 and page.locator(".present-rail").count() == 1, name
    page.keyboard.press("ArrowRight")  # on the sizes page, the last: off the pass, → opens the first step
    page.wait_for_url("**/tokens?**", timeout=30_000)
