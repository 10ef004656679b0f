"""What a presenter's slide shows without scrolling: the bounding boxes of the step's heading, its formula and its
numbers (from its first matrix, table or chart to its first chart: a table above a heatmap does not hide the heatmap
below the rail) against the screen and the rail (ui/classroom/presenter.py), measured on a page a walk of the slides
(`walk`) has open: `misfit(page)` is None for a slide that fits, else what does not."""
import re

from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from test_browser import settle, url
from ui.core.state import encode_view

SLIDE_BOXES = """() => {
    const main = document.querySelector('[data-testid="stMain"]');
    const rail = document.querySelector('.present-rail');
    const after = (a, b) => a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING;
    const box = e => { if (!e) return null; const r = e.getBoundingClientRect();
                       return {top: Math.round(r.top), bottom: Math.round(r.bottom)}; };
    const span = (a, b) => a && b ? {top: Math.min(a.top, b.top), bottom: Math.max(a.bottom, b.bottom)} : a || b;
    const heading = main.querySelector('[data-present-step]') || main.querySelector('h5') || main.querySelector('h1');
    const below = selector => [...main.querySelectorAll(selector)].filter(e => after(heading, e));
    const next = below('h1, h2, h3, h4, h5, [data-present-step]')[0];  // the next step's heading: the step ends there
    const formula = below('.katex-display')[0] || null;
    const numbers = below('[data-testid="stPlotlyChart"], [data-testid="stDataFrame"], [data-testid="stTable"], ' +
                          '.katex-display').filter(e => e !== formula)[0] || null;
    const chart = below('[data-testid="stPlotlyChart"]').filter(e => !next || after(e, next))[0] || null;
    const boxes = {heading: box(heading), formula: box(formula), numbers: span(box(numbers), box(chart)),
                   rail: rail ? Math.round(rail.getBoundingClientRect().top) : innerHeight, screen: innerHeight,
                   title: heading ? heading.innerText.slice(0, 60) : null};
    const parts = [boxes.heading, boxes.formula, boxes.numbers].filter(part => part);
    return {...boxes, fits: !!boxes.heading && parts.every(part => 0 <= part.top && part.bottom <= boxes.rail + 1)};
}"""
SCROLLED = 10_000  # ms: how long a slide may take to fit once its page has settled (the step scroll puts its heading
# at the top after the run, and again as charts mount: ui/classroom/scroll.py)


def misfit(page) -> dict | None:
    """None if the slide's heading, formula and numbers lie between the screen's top and the rail, once the step
    scroll has brought them there (or SCROLLED ms have passed); else the boxes."""
    try:
        page.wait_for_function(f"() => ({SLIDE_BOXES})().fits", timeout=SCROLLED)
    except PlaywrightTimeoutError:
        pass  # measured as it is, and reported
    boxes = page.evaluate(SLIDE_BOXES)
    return None if boxes["fits"] else boxes


# The x of the rail's first dot: it stays put whatever the slide's title (issue 29, item 8).
FIRST_DOT = "() => Math.round(document.querySelector('.present-dots button').getBoundingClientRect().x)"


RAIL = 60_000  # ms: how long a slide's rail may take to say it (settle's time: a page opened by its link on a loaded
# machine, its first run of a model, drew its rail after more than 30 s)
KEYS = ["ArrowRight", "PageDown", " "]  # a clicker's, and a keyboard's: each moves to the next slide


def first_layers(deck: list) -> list[int]:
    """The positions of a deck's slides outside a stack's layers and in its first layer: every view of the deck once
    (its other layers' slides show the same views)."""
    return [i for i, (_, _, view) in enumerate(deck) if view.get("layer", 0) == 0]


def views_but_the_layer(deck: list) -> set:
    return {(page, tuple(sorted((k, v) for k, v in view.items() if k != "layer"))) for _, page, view in deck}


def walk(page, base, deck: list, positions: list[int], **query):
    """Presenter mode's slides of `deck` at these positions, in order, each shown in turn on `page`: reached with the
    clicker's keys from the one before it on the rail, by its link where the walk skips slides (another layer's) or
    starts. Yields each position once its rail says so and its page has settled."""
    where, previous = page.locator(".present-where"), None
    for turn, position in enumerate(positions):
        if previous is not None and position == previous + 1:
            page.keyboard.press(KEYS[turn % len(KEYS)])  # the old slide stays until the new run: wait for its number
            expect(where).to_have_text(re.compile(rf"^{position + 1} / {len(deck)} · "), timeout=RAIL)
            settle(page)
        else:  # a page opened anew: its first run (a cold server's, on a busy machine: 30 s and more) is settle's wait
            _, name, view = deck[position]
            page.goto(url(base, name, present="1", **query, **encode_view(view)))
            settle(page)
            expect(where).to_have_text(re.compile(rf"^{position + 1} / {len(deck)} · "))
        previous = position
        yield position
