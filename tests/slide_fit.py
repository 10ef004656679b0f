"""What a presenter's slide shows without scrolling: the bounding boxes of the step's heading, its formula and its
numbers (from its first matrix, table or chart to its first chart: a table above a heatmap does not hide the heatmap
below the rail) against the screen and the rail (ui/classroom/presenter.py). One function per
page, so a sweep that already opens every slide (tests/test_presenter.py's) measures it in the same pass:
`misfit(page)` is None for a slide that fits, else what does not."""

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
    return {heading: box(heading), formula: box(formula), numbers: span(box(numbers), box(chart)),
            rail: rail ? Math.round(rail.getBoundingClientRect().top) : innerHeight, screen: innerHeight,
            title: heading ? heading.innerText.slice(0, 60) : null};
}"""


def misfit(page) -> dict | None:
    """None if the slide's heading, formula and numbers lie between the screen's top and the rail; else the boxes."""
    boxes = page.evaluate(SLIDE_BOXES)
    return None if fits(boxes) else boxes


def fits(boxes: dict) -> bool:
    parts = [boxes[part] for part in ("heading", "formula", "numbers") if boxes[part] is not None]
    return boxes["heading"] is not None and all(0 <= part["top"] and part["bottom"] <= boxes["rail"] + 1
                                                for part in parts)


# The x of the rail's first dot: it stays put whatever the slide's title (issue 29, item 8).
FIRST_DOT = "() => Math.round(document.querySelector('.present-dots button').getBoundingClientRect().x)"
