"""Every presenter slide fits a projector's screen (1280 x 720): the step's heading, its formula and its numbers
(heatmap, chart or matrix) lie between the header and the rail, with the page scrolled to the step
(tests/slide_fit.py measures; ui/classroom/scroll.py scrolls). The paper preset's slides are measured in
test_readable's pass of each language, in the one walk that also measures their type and width: its six layers show
the same views, so its slides are those of the first layer and those outside the layers, which are every view of the
opening example's deck too (checked here). The Vision Transformer's rail (ui/core/navigation.vision_slides) is walked
here, one walk per language, its two layers' slides by those of the first, walked with the clicker's keys, each run of
them opened by its first slide's link; the same walk checks that the rail's dots stay put whatever the slide's title.
"""
import engine
import pytest

from slide_fit import FIRST_DOT, first_layers, misfit, views_but_the_layer, walk
from test_browser import no_exception, server, settle, url  # noqa: F401 (server: a fixture)
from test_presenter import OFF_THE_PASS, PROJECTOR_SCREEN
from test_vit_pages import shipped_trace
from ui.core.navigation import slides, vision_slides


def test_the_slides_measured_are_every_view_of_the_pass():
    """The paper preset's first layers (test_readable's walk) hold every view of its deck once, and every view of the
    opening example's deck, whose slides that walk stands for."""
    paper = slides(engine.preset("paper").config)
    assert len(first_layers(paper)) == len(views_but_the_layer(paper)) < len(paper)
    assert views_but_the_layer(slides(engine.preset("hello-world").config)) == views_but_the_layer(paper)


def vision_deck() -> list:
    return vision_slides(list(shipped_trace()), 2)  # the shipped Vision Transformer's: two layers


def test_the_vision_slides_measured_are_every_view_of_its_pass():
    assert len(first_layers(vision_deck())) == len(views_but_the_layer(vision_deck())) < len(vision_deck())


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_vision_slide_fits_a_projector(server, new_page, lang):  # noqa: F811 (server)
    misfits, first_dot = measure(server, new_page(lang), vision_deck())
    assert not misfits, misfits
    assert len(first_dot) == 1, first_dot


def measure(base, page, deck) -> tuple[list, set]:
    """The deck's slides of its stacks' first layers walked at 1280 x 720: those that do not fit (position, page, view,
    boxes) and the x of the rail's first dot on each."""
    page.set_viewport_size(PROJECTOR_SCREEN)
    misfits, first_dot = [], set()
    for position in walk(page, base, deck, first_layers(deck)):
        no_exception(page)
        boxes = misfit(page)
        if boxes is not None:
            misfits.append((position, *deck[position][1:], boxes))
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
