"""Readable at a projector's and a laptop's size, in both languages: every step page at 1280 x 720 and 1920 x 1080,
English and Chinese browsers, against a real `streamlit run` server (test_browser's), one Chromium.

On each page: nothing overflows (see OVERFLOW), no formula is a KaTeX error or cut at its top or bottom, the
numbers in heatmap cells are at least 12 px, and the drill-down's cell is printed the same way (the digits rule,
ui.core.format) in the drill-down, in the heatmap's cell and in the page's matrices.
"""
import re

import numpy as np
import pytest

import engine
from test_browser import ALL_PAGES, LOCALES, no_exception, server, settle, url  # noqa: F401 (server: a fixture)
from ui.core.format import DIGITS, fmt, table
from ui.core.navigation import PAGES
from ui.core.state import DEFAULT_SOURCE, DEFAULT_TARGET
from ui.views.draw import LATEX_CELLS, LATEX_COLS

STEP_PAGES = PAGES["encoder"] + PAGES["decoder"] + ["dropout"]  # the pages that draw steps (ui.views.steps.step)
VISITS = [(name, {}) for name in STEP_PAGES] + [  # and the stack pages' second section, one layer with its step
    (name, {"section": "2"}) for name in ("encoder_stack", "decoder_stack")]
SIZES = [(1280, 720), (1920, 1080)]
SMALLEST_TEXT = 12  # px, a heatmap cell's number at the default zoom

# Overflow, precisely: in the main column, (1) an element that clips or scrolls sideways (overflow-x not visible)
# whose content is wider than it by more than 4 px (scrollWidth > clientWidth + 4: a glyph's overhang is not), or
# (2) an element outside every such clipping box that reaches beyond the main column's content box by more than
# a pixel. Left out: a data grid's own scroller (a table scrolls by design) and boxes 1 px wide, which hide text
# for screen readers on purpose. Returns a short description of each.
OVERFLOW = """() => {
    const main = document.querySelector('[data-testid="stMainBlockContainer"]');
    const style = getComputedStyle(main), box = main.getBoundingClientRect();
    const left = box.left + parseFloat(style.paddingLeft), right = box.right - parseFloat(style.paddingRight);
    const grid = e => e.closest('[data-testid="stDataFrame"], [data-testid="stDataFrameResizable"]');
    const clips = e => getComputedStyle(e).overflowX !== 'visible';
    const inClip = e => { for (let a = e.parentElement; a && a !== main; a = a.parentElement) if (clips(a)) return true;
                          return false; };
    const name = e => `${e.tagName}.${String(e.className.baseVal ?? e.className).slice(0, 40)} `
                      + `"${(e.textContent || '').replace(/\\s+/g, ' ').slice(0, 60)}"`;
    const found = [];
    for (const e of main.querySelectorAll('*')) {
        if (grid(e) || e.closest('.katex-mathml')) continue;  // KaTeX's MathML for screen readers is clipped on purpose
        if (clips(e) && e.clientWidth > 1 && e.scrollWidth > e.clientWidth + 4) found.push('scrolls: ' + name(e));
        const r = e.getBoundingClientRect();
        if (r.width && (r.right > right + 1 || r.left < left - 1) && !inClip(e)) found.push('outside: ' + name(e));
    }
    return found;
}"""

# A formula cut by its box (Streamlit's formula box hides what overflows it): glyphs above its top or below its
# bottom by more than a pixel.
CUT_FORMULAS = """() => [...document.querySelectorAll('[data-testid="stMain"] .katex-display')].filter(d => {
    const box = d.getBoundingClientRect();
    return [...d.querySelectorAll('.mord, .mop, .mopen, .mclose, .delimsizing, .mrel')].some(g => {
        const r = g.getBoundingClientRect();
        return r.height && (r.top < box.top - 1 || r.bottom > box.bottom + 1);
    });
}).map(d => d.innerText.replace(/\\s+/g, ' ').slice(0, 80))"""

# Each drill-down: its formula's text, and the text of the heatmap drawn just before it (its cells' numbers in
# row-major order, with their font size).
DRILL_DOWNS = """() => {
    const all = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stPlotlyChart"], '
                                             + '[data-testid="stMain"] .katex-display')];
    return all.flatMap((e, i) => {
        const text = e.innerText || '';
        if (!e.classList.contains('katex-display') || !/[\\w.]+\\[[0-9,\\s]+\\]\\s*=/.test(text)) return [];
        const chart = all.slice(0, i).reverse().find(c => c.dataset.testid === 'stPlotlyChart');
        const formulas = all.slice(0, i).filter(c => c.classList.contains('katex-display')).map(c => c.innerText);
        const cells = chart ? [...chart.querySelectorAll('.heatmaplayer text')] : [];
        return [{drill: text, formulas, cells: cells.map(t => [t.textContent, parseFloat(getComputedStyle(t).fontSize)])}];
    });
}"""
DRILL_LABEL = re.compile(r"([\w.]+)\[([0-9,\s]+)\]\s*=")  # enc.0.ln1[0, 1] = (after LayerNorm's μ and σ²)


@pytest.fixture(scope="module")
def model():
    """The app's default state's model: hello-world with the words of the default sentences."""
    base = engine.preset("hello-world")
    new_words = base.vocab.new_words(DEFAULT_SOURCE, DEFAULT_TARGET)
    return engine.with_words(base, *new_words) if new_words else base


@pytest.fixture(scope="module")
def trace(model):
    return model.run(DEFAULT_SOURCE, DEFAULT_TARGET)


@pytest.fixture(scope="module")
def training_trace(model):
    """The dropout page's pass at its first settings (ui.lessons.blocks.dropout: p = 0.1, seed 0)."""
    return model.run(DEFAULT_SOURCE, DEFAULT_TARGET, dropout=0.1, seed=0)


def _text(text: str) -> str:
    """A formula's or a cell's text without spaces (KaTeX writes tabs, no-break and zero-width spaces)."""
    return re.sub(r"[\s\u200b]+", "", text)


def _shown(trace, found) -> "np.ndarray":
    """The matrix the drill-down's step shows: its head's slice (the first index of a per-head step), as rows."""
    value = trace[found["name"]]
    return np.atleast_2d(value[found["index"][0]] if value.ndim == 3 else value)


def _same_digits(found: dict, trace, digits: int) -> list:
    """Where the drill-down's step is printed otherwise than table(matrix, digits): the drill-down's own last line
    (its cell's value), the heatmap's cells, the page's matrix (written out when it is at most LATEX_CELLS x
    LATEX_COLS). Returns the disagreements."""
    name, index = found["name"], found["index"]
    matrix = _shown(trace, found)
    cells, expected = table(matrix, digits), fmt(trace[name][index], digits)
    wrong = []
    if not _text(found["drill"]).endswith("=" + expected):
        wrong.append(("drill-down", name, index, expected, found["drill"][-40:]))
    if found["cells"] and [text for text, _ in found["cells"]] != sum(cells, []):
        wrong.append(("heatmap", name, sum(cells, []), found["cells"]))
    written = "".join(sum(cells, [])).replace("e", "×10")  # 1.5e−4 is 1.5 × 10^{−4} in a formula
    if matrix.shape[0] <= LATEX_CELLS and matrix.shape[1] <= LATEX_COLS and not any(
            written in _text(f) for f in found["formulas"]):
        wrong.append(("matrix", name, written))
    return wrong


def _drill_downs(page) -> list[dict]:
    found = []
    for item in page.evaluate(DRILL_DOWNS):
        name, index = DRILL_LABEL.search(item["drill"]).groups()
        item.update(name=name, index=tuple(int(i) for i in index.split(",")))
        found.append(item)
    return found


def _check_page(page, trace, digits=DIGITS) -> tuple[list, int, int]:
    """The page's failures, and how many heatmap cells and drill-down cells it checked."""
    failures = [("overflow", o) for o in page.evaluate(OVERFLOW)]
    failures += [("katex-error", e) for e in page.locator('[data-testid="stMain"] .katex-error').all_inner_texts()]
    failures += [("cut formula", f) for f in page.evaluate(CUT_FORMULAS)]
    sizes = page.evaluate("""() => [...document.querySelectorAll('[data-testid="stMain"] .heatmaplayer text')]
                             .map(t => parseFloat(getComputedStyle(t).fontSize))""")
    failures += [("heatmap text", size) for size in sizes if size < SMALLEST_TEXT]
    drills = _drill_downs(page)
    for found in drills:
        failures += _same_digits(found, trace, digits)
    return failures, len(sizes), len(drills)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_step_page_is_readable(server, chromium, trace, training_trace, size, lang):  # noqa: F811 (server)
    """One browser context per size and language; each step page visited once."""
    context = chromium.new_context(viewport={"width": size[0], "height": size[1]}, locale=LOCALES[lang])
    failures, cells, drills = {}, 0, 0
    try:
        page = context.new_page()
        for name, view in VISITS:
            page.goto(url(server, name, **view))
            settle(page)
            no_exception(page)
            found, n_cells, n_drills = _check_page(page, training_trace if name == "dropout" else trace)
            cells, drills = cells + n_cells, drills + n_drills
            if found:
                failures[f"{name} {view}" if view else name] = found
    finally:
        context.close()
    assert failures == {}
    assert cells >= 4 * len(STEP_PAGES) and drills >= len(STEP_PAGES), (cells, drills)  # the checks saw numbers


@pytest.mark.parametrize("digits", [2, 7])
def test_the_digits_setting_prints_every_number_its_way(server, chromium, trace, digits):  # noqa: F811 (server)
    """The link's digits: the attention page's matrices, heatmap and drill-down all follow it."""
    context = chromium.new_context(viewport={"width": 1280, "height": 720}, locale=LOCALES["en"])
    try:
        page = context.new_page()
        page.goto(url(server, "attention", digits=digits))
        settle(page)
        assert f"digits={digits}" in page.url
        drills = _drill_downs(page)
        assert drills and drills[0]["cells"], drills
        assert [w for found in drills for w in _same_digits(found, trace, digits)] == []
        shown = _shown(trace, drills[0])
        assert table(shown, digits) != table(shown, DIGITS)  # the setting made a difference here
    finally:
        context.close()


def test_the_checks_see_what_they_look_for(server, chromium, trace):  # noqa: F811 (server)
    """Each check fails where it should: a formula made too wide, one pushed out of its box, and a heatmap cell's
    number printed with other digits, made so in the page itself."""
    context = chromium.new_context(viewport={"width": 1280, "height": 720}, locale=LOCALES["en"])
    try:
        page = context.new_page()
        page.goto(url(server, "attention"))
        settle(page)
        assert _check_page(page, trace)[0] == []
        page.evaluate("""() => {
            const text = document.querySelector('[data-testid="stMain"] .heatmaplayer text');
            text.textContent = text.textContent + '1';
            text.style.fontSize = '10px';
            document.querySelector('[data-testid="stMain"] .katex-display .katex').style.marginTop = '-30px';
            document.querySelector('[data-testid="stMain"] h1').style.width = '3000px';
        }""")
        kinds = {failure[0] for failure in _check_page(page, trace)[0]}
        assert kinds == {"overflow", "cut formula", "heatmap text", "heatmap"}, kinds
    finally:
        context.close()
