"""Every page in Chromium, one pass per language: English and Chinese browsers at a laptop's and a common projector's
1280 x 720, against a real `streamlit run` server (test_browser's), one Chromium.

A pass, one test, opens every page once (and the stack pages' second section), collects what each page shows, then
checks every page for everything below and reports every failure of every page at once, not only the first. It opens
a page as a reader goes on to it, by its link in the navigation, in the session the first page's link began (a page
opened by its URL loads the whole app again: three times the CPU); a section, by its URL.

* every page: no exception and no warning, its title in the reader's language, the navigation, no `lang=` added
  to the link, nothing wider than its column (test_browser.OVERFLOWING);
* every page that draws steps: nothing overflows (OVERFLOW, more precise), no formula is a KaTeX error or cut at
  its top or bottom, the numbers in heatmap cells are at least 12 px, and the drill-down's cell is printed the same
  way (the digits rule, ui.core.format) in the drill-down, in the heatmap's cell and in the page's matrices;
* presenter mode walked with the clicker's keys from the tokens to the probabilities, on the paper preset's slides
  of its stacks' first layers (every view of its deck once, the same views as the opening example's deck:
  test_slide_fit.py; its large matrices are what must fit a projector): each slide in large type, nothing wider
  than the page, the step's heading, formula and numbers between the header and the rail (slide_fit.misfit), and
  the rail's dots staying put;
* every page (and section): axe-core's WCAG 2.1 A and AA rules find no serious or critical violation in the app's
  own markup; Streamlit's own (STREAMLIT_MARKUP) are excluded by rule and element, each with its report;
* with SCREENSHOTS=1 in the environment, for someone to look at: a full-page screenshot of every page,
  build/screenshots/{page}-{lang}.png, and of presenter mode's last slide.

One screen size: in normal mode the app's layout has no breakpoint above 640 px (the only media queries wider than a
phone are presenter mode's) and a heatmap's numbers have a fixed size, so a wider window only widens the main column,
and what overflows, scrolls sideways or is cut at 1920 x 1080 does so at 1280 x 720 first.
"""
import pprint
import re
from pathlib import Path

import numpy as np
import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

import engine
from slide_fit import FIRST_DOT, first_layers, misfit, walk
from test_browser import (ALL_PAGES, LOCALES, OVERFLOWING, SCREENSHOTS, SHOTS, TITLE_SOURCE,  # noqa: F401
                          fit_viewport_to_content, server, settle, url)  # server: a fixture
from ui.core.format import DIGITS, fmt, table
from ui.core.i18n import CATALOGS
from ui.core.labels import FIRST
from ui.core.navigation import PAGES, STACK_SECTIONS, slides
from ui.core.state import DEFAULT_SOURCE, DEFAULT_TARGET
from ui.views.draw import LATEX_CELLS, LATEX_COLS

STEP_PAGES = PAGES["encoder"] + PAGES["decoder"] + ["dropout"]  # the pages that draw steps (ui.views.steps.step)
VISITS = [(name, {}) for name in ALL_PAGES] + [  # and the stack pages' second section, what each layer changes
    (name, {"section": str(STACK_SECTIONS["stack.changes"] + 1)}) for name in ("encoder_stack", "decoder_stack")]
SCREEN = {"width": 1280, "height": 720}
SMALLEST_TEXT = 12  # px, a heatmap cell's number at the default zoom
SLIDES = "paper"  # the preset whose slides the pass walks

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

# Each drill-down: its formula's text, the text of the heatmap drawn just before it (its cells' numbers in row-major
# order, with their font size), and the code before it (the step's name in its header, its parameters' names).
DRILL_DOWNS = """() => {
    const all = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stPlotlyChart"], '
                                             + '[data-testid="stMain"] .katex-display, [data-testid="stMain"] code')];
    return all.flatMap((e, i) => {
        const text = e.innerText || '';
        if (!e.classList.contains('katex-display') || !/\\[[0-9,\\s]+\\]\\s*[=≈]/.test(text)) return [];
        const chart = all.slice(0, i).reverse().find(c => c.dataset.testid === 'stPlotlyChart');
        const formulas = all.slice(0, i).filter(c => c.classList.contains('katex-display')).map(c => c.innerText);
        const codes = all.slice(0, i).filter(c => c.tagName === 'CODE').map(c => c.innerText);
        const cells = chart ? [...chart.querySelectorAll('.heatmaplayer text')] : [];
        return [{drill: text, formulas, codes,
                 cells: cells.map(t => [t.textContent, parseFloat(getComputedStyle(t).fontSize)])}];
    });
}"""
# The drill-down's cell as it names it, e.g. Q₂[1, 3] = or LayerNorm[2, 1] ≈ (after LayerNorm's μ and σ²; ≈ where the
# value that follows is a rounding): a per-head step's head, then the row and column, counted from 1 (FIRST).
DRILL_LABEL = re.compile(r"(\d*)[′']*\[([0-9,]+)\][=≈]")

# axe-core (the version axe-playwright-python bundles): the rules of WCAG 2.1 levels A and AA, violations only.
AXE = Axe()
AXE_OPTIONS = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]},
               "resultTypes": ["violations"]}
SEVERE = {"serious", "critical"}
# Streamlit's own markup that a rule finds, by rule: the elements it is excused on, and the report upstream. The
# sidebar's navigation with sections is a <ul> whose children are a <div> per section (its header and its <li>s).
STREAMLIT_MARKUP = {
    "list": ('[data-testid="stSidebarNavItems"]', "docs/streamlit-nav-list.md"),
    "listitem": ('[data-testid="stSidebarNavItems"] > div > li', "docs/streamlit-nav-list.md"),
}
# Of the violations' elements ([rule, target] each, axe's CSS selector), which are Streamlit's (STREAMLIT_MARKUP).
STREAMLITS = """([found, excused]) => found.map(([rule, target]) => {
    const element = typeof target === 'string' && excused[rule] ? document.querySelector(target) : null;
    return Boolean(element && element.matches(excused[rule]));
})"""


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


KATEX_POWER = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789−")  # a power of ten as KaTeX writes its text

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
    cells, expected = table(matrix, digits), fmt(trace[name][index], digits).translate(KATEX_POWER)
    wrong = []
    if not _text(found["drill"]).endswith(("=" + expected, "≈" + expected)):  # ≈: a rounding (test_explain.py)
        wrong.append(("drill-down", name, index, expected, found["drill"][-40:]))
    if found["cells"] and [text for text, _ in found["cells"]] != sum(cells, []):
        wrong.append(("heatmap", name, sum(cells, []), found["cells"]))
    written = "".join(sum(cells, [])).translate(KATEX_POWER)  # 1.5×10⁻⁴ is 1.5 × 10^{−4} in a formula
    if matrix.shape[0] <= LATEX_CELLS and matrix.shape[1] <= LATEX_COLS and not any(
            written in _text(f) for f in found["formulas"]):
        wrong.append(("matrix", name, written))
    return wrong


def _drill_downs(page, trace) -> list[dict]:
    """The page's drill-downs (of the steps of `trace`), once the heatmap before each has drawn its numbers (plotly
    draws a chart's frame first, its cells after; on a loaded machine the pause between can outlast settle's quiet
    time), or after 5 s."""
    try:
        page.wait_for_function(f"() => ({DRILL_DOWNS})().every(found => found.cells.length)", timeout=5_000)
    except PlaywrightTimeoutError:
        pass  # a drill-down without numbers in its heatmap: what the checks then say
    found = []
    for item in page.evaluate(DRILL_DOWNS):
        name = next(code for code in reversed(item["codes"]) if code in trace)  # the header's, not a parameter's
        head, cell = DRILL_LABEL.search(_text(item["drill"])).groups()
        index = tuple(int(i) - FIRST for i in cell.split(","))
        item.update(name=name, index=(int(head) - FIRST, *index) if trace[name].ndim == 3 else index)
        found.append(item)
    return found


def _axe(page) -> dict:
    """axe-core's serious and critical violations on the page, the app's (rule, impact, element, its HTML) and the
    rules of Streamlit's (STREAMLIT_MARKUP) it found."""
    results = AXE.run(page, options=AXE_OPTIONS).response
    found = [(rule["id"], rule["impact"], node["target"][0], node["html"][:100])
             for rule in results["violations"] if rule["impact"] in SEVERE for node in rule["nodes"]]
    excused = {rule: selector for rule, (selector, _) in STREAMLIT_MARKUP.items()}
    streamlits = page.evaluate(STREAMLITS, [[[rule, target] for rule, _, target, _ in found], excused])
    return {"app": [f for f, streamlit in zip(found, streamlits) if not streamlit],
            "streamlit": sorted({f[0] for f, streamlit in zip(found, streamlits) if streamlit})}


def _check_page(page, trace, digits=DIGITS) -> tuple[list, int, int]:
    """The page's failures, and how many heatmap cells and drill-down cells it checked."""
    failures = [("overflow", o) for o in page.evaluate(OVERFLOW)]
    failures += [("katex-error", e) for e in page.locator('[data-testid="stMain"] .katex-error').all_inner_texts()]
    failures += [("cut formula", f) for f in page.evaluate(CUT_FORMULAS)]
    sizes = page.evaluate("""() => [...document.querySelectorAll('[data-testid="stMain"] .heatmaplayer text')]
                             .map(t => parseFloat(getComputedStyle(t).fontSize))""")
    failures += [("heatmap text", size) for size in sizes if size < SMALLEST_TEXT]
    drills = _drill_downs(page, trace)
    for found in drills:
        failures += _same_digits(found, trace, digits)
    return failures, len(sizes), len(drills)


@pytest.mark.parametrize("digits", [2, 7])
def test_the_digits_setting_prints_every_number_its_way(server, chromium, trace, digits):  # noqa: F811 (server)
    """The link's digits: the attention page's matrices, heatmap and drill-down all follow it."""
    context = chromium.new_context(viewport=SCREEN, locale=LOCALES["en"])
    try:
        page = context.new_page()
        page.goto(url(server, "attention", digits=digits))
        settle(page)
        assert f"digits={digits}" in page.url
        drills = _drill_downs(page, trace)
        assert drills and drills[0]["cells"], drills
        assert [w for found in drills for w in _same_digits(found, trace, digits)] == []
        shown = _shown(trace, drills[0])
        assert table(shown, digits) != table(shown, DIGITS)  # the setting made a difference here
    finally:
        context.close()


def test_the_checks_see_what_they_look_for(server, chromium, trace):  # noqa: F811 (server)
    """Each check fails where it should: a formula made too wide, one pushed out of its box, a heatmap cell's number
    printed with other digits, and a paragraph too pale to read (axe-core), made so in the page itself; axe-core sees
    Streamlit's markup that STREAMLIT_MARKUP excuses, and nothing of the app's, before."""
    context = chromium.new_context(viewport=SCREEN, locale=LOCALES["en"])
    try:
        page = context.new_page()
        page.goto(url(server, "attention"))
        settle(page)
        assert _check_page(page, trace)[0] == []
        assert _axe(page) == {"app": [], "streamlit": sorted(STREAMLIT_MARKUP)}
        page.evaluate("""() => {
            const text = document.querySelector('[data-testid="stMain"] .heatmaplayer text');
            text.textContent = text.textContent + '1';
            text.style.fontSize = '10px';
            document.querySelector('[data-testid="stMain"] .katex-display .katex').style.marginTop = '-30px';
            document.querySelector('[data-testid="stMain"] h1').style.width = '3000px';
            document.querySelector('[data-testid="stMain"] p').style.color = '#999';
        }""")
        kinds = {failure[0] for failure in _check_page(page, trace)[0]}
        assert kinds == {"overflow", "cut formula", "heatmap text", "heatmap"}, kinds
        assert {found[0] for found in _axe(page)["app"]} == {"color-contrast"}
    finally:
        context.close()


# ---- one pass per language and screen size ----------------------------------------------------------------------

# Each page's own facts, read at once: its exceptions, warnings, title (math as $TeX$), and navigation.
FACTS = f"""() => {{
    const texts = selector => [...document.querySelectorAll(selector)].map(e => e.innerText);
    const title = document.querySelector('h1');
    const nav = document.querySelector('[data-testid="stSidebarNav"]');
    return {{exceptions: texts('[data-testid="stException"]'), alerts: texts('[data-testid="stAlert"]'),
             title: title && ({TITLE_SOURCE})(title),
             nav: nav ? nav.textContent.replace(/\\s+/g, ' ') : ''}};
}}"""

# Presenter mode: the smallest type of each kind on the page (normal: 14 px controls, 16 px text, 12 px chart labels).
SMALLEST_TYPE = """() => {
    const main = document.querySelector('[data-testid="stMain"]');
    const px = (selector, skip) => [...main.querySelectorAll(selector)].filter(e => !(skip && e.closest(skip)))
        .map(e => parseFloat(getComputedStyle(e).fontSize));
    const least = sizes => sizes.length ? Math.min(...sizes) : null;
    const controls = ['button', 'summary', '[data-testid="stWidgetLabel"]', '[data-testid="stTab"]',
                      '[data-testid="stPageLink"]'];  // their words: 14 px, not the body's 16, when normal
    return {formula: least(px('.katex-display .katex')),
            text: least(px('[data-testid="stMarkdownContainer"] p',
                           ['[data-testid="stCaptionContainer"]', ...controls].join(', '))),
            control: least(px(controls.map(c => `${c} [data-testid="stMarkdownContainer"] p`).join(', '))),
            label: least(px('.main-svg .xtick text, .main-svg .ytick text')),
            number: least(px('.main-svg g.heatmaplayer text'))};
}"""
NORMAL_TYPE = {"formula": 19.36, "text": 16, "control": 14, "label": 12, "number": 14}  # measured, so not vacuous
# What a slide must not have: the page scrolling sideways, or a formula, matrix, table or chart to scroll sideways.
SLIDE_OVERFLOWING = """() => {
    const main = document.querySelector('[data-testid="stMain"]');
    const block = document.querySelector('[data-testid="stMainBlockContainer"]');
    const scrolled = [...block.querySelectorAll('*')].filter(e => {
        const overflow = getComputedStyle(e).overflowX;
        return (overflow === 'auto' || overflow === 'scroll') && e.clientWidth && e.scrollWidth > e.clientWidth + 2;
    });
    const right = block.getBoundingClientRect().right;
    const sticking = [...block.querySelectorAll('.katex-display, .main-svg, [data-testid="stDataFrame"]')]
        .filter(e => e.getBoundingClientRect().right > right + 1);
    return (main.scrollWidth > main.clientWidth + 1 ? ['the page'] : [])
        .concat([...scrolled, ...sticking].map(e => e.innerText.replace(/\\s+/g, ' ').slice(0, 60)));
}"""
# Plotly first draws a chart's ticks at its default 12 px, then again in the figure's sizes: large once every size is.
LARGE_TYPE = SMALLEST_TYPE.replace("() => {", "normal => {", 1).replace(
    "return {formula", "const sizes = {formula", 1).rstrip("}") + """;
    return Object.entries(sizes).every(([part, size]) => size === null || size >= 1.5 * normal[part]);
}"""


def _open(page, base, name, view, title):
    """The page, settled: by its link in the navigation once the app is loaded (and the page's title, its catalog's,
    shown, or after a minute: the checks then say what it shows), by its URL for the first page or a view."""
    links = page.locator(f'[data-testid="stSidebarNav"] a[href$="/{name}"]')
    if view or not links.count():
        page.goto(url(base, name, **view))
    else:
        links.first.click()
        try:
            shows = f"title => (h => Boolean(h) && ({TITLE_SOURCE})(h) === title)(document.querySelector('h1'))"
            page.wait_for_function(shows, arg=title, polling=100, timeout=60_000)
        except PlaywrightTimeoutError:
            pass  # reported by title_navigation_or_link_not_the_readers
    settle(page)


def _visit(page, base, name, view, trace, screenshot: Path | None, title: str) -> dict:
    """What a page shows: FACTS, its URL, what is wider than its column, axe-core's violations (_axe), on a page of
    steps its readable checks (_check_page), on the attention page its smallest type; the size of its full-page
    screenshot when one is asked."""
    _open(page, base, name, view, title)
    seen = page.evaluate(FACTS) | {"url": page.url, "wide": page.evaluate(OVERFLOWING), "axe": _axe(page)}
    if name in STEP_PAGES:
        seen["readable"], seen["cells"], seen["drills"] = _check_page(page, trace)
    if name == "attention" and not view:
        seen["type"] = page.evaluate(SMALLEST_TYPE)
    if screenshot:
        screen = page.viewport_size
        fit_viewport_to_content(page)
        page.screenshot(path=str(screenshot), full_page=True)
        seen["shot"] = screenshot.stat().st_size
        page.set_viewport_size(screen)
    return seen


def _deck() -> list:
    return slides(engine.preset(SLIDES).config)


def _walk_the_slides(page, base, normal) -> list[dict]:
    """Presenter mode from the tokens to the probabilities, the slides of SLIDES's first layers moved through with
    the clicker's keys (each layer's run opened by its first slide's link); each slide's facts."""
    deck, seen = _deck(), []
    for position in walk(page, base, deck, first_layers(deck), preset=SLIDES):
        try:
            page.wait_for_function(LARGE_TYPE, arg=normal, timeout=10_000)
        except PlaywrightTimeoutError:
            pass  # measured as it is, and reported
        fit = misfit(page)  # first: it waits for the step scroll
        seen.append({"position": position, "where": page.locator(".present-where").inner_text(), "url": page.url,
                     "type": page.evaluate(SMALLEST_TYPE), "wide": page.evaluate(SLIDE_OVERFLOWING),
                     "exceptions": page.evaluate(FACTS)["exceptions"], "misfit": fit,
                     "first_dot": page.evaluate(FIRST_DOT)})
    return seen


def _pass(base, chromium, lang, trace, training_trace) -> dict:
    """One pass: a browser of one language, every page opened once; what each page showed, by page (and section),
    and the presenter's slides."""
    context = chromium.new_context(viewport=SCREEN, locale=LOCALES[lang])
    try:
        page = context.new_page()
        seen = {"lang": lang, "pages": {}, "slides": None}
        SHOTS.mkdir(parents=True, exist_ok=True)
        for name, view in VISITS:
            shot = None if view or not SCREENSHOTS else SHOTS / f"{name}-{lang}.png"
            label = f"{name} {view}" if view else name
            seen["pages"][label] = _visit(page, base, name, view, training_trace if name == "dropout" else trace, shot,
                                          CATALOGS[lang][f"page.{name}"])
        seen["slides"] = _walk_the_slides(page, base, seen["pages"]["attention"]["type"])
        if SCREENSHOTS:
            page.screenshot(path=str(SHOTS / f"presenter-end-1280x720-{lang}.png"))
    finally:
        context.close()
    return seen


def _step_pages(seen):
    return {label: page for label, page in seen["pages"].items() if "readable" in page}


def _failures(seen, kinds) -> dict:
    """The readable checks' failures of these kinds, by page."""
    found = {label: [f for f in page["readable"] if f[0] in kinds] for label, page in _step_pages(seen).items()}
    return {label: failures for label, failures in found.items() if failures}


def exceptions_or_warnings(seen) -> dict:
    shown = {label: page["exceptions"] + page["alerts"] for label, page in seen["pages"].items()}
    return {label: texts for label, texts in shown.items() if texts}


def title_navigation_or_link_not_the_readers(seen) -> dict:
    """The catalog's title (math as $TeX$) and navigation; the browser's language was chosen, not written into the
    link (a link opens in its reader's language)."""
    catalog = CATALOGS[seen["lang"]]
    return {label: (page["title"], page["url"]) for label, page in seen["pages"].items()
            if page["title"] != catalog[f"page.{label.split()[0]}"] or "lang=" in page["url"]
            or catalog["page.paper_vs_blog"] not in page["nav"]}


def wider_than_its_column(seen) -> dict:
    """On every page no formula to scroll sideways and the page itself not wider than the window
    (test_browser.OVERFLOWING); on every page of steps nothing that clips or sticks out (OVERFLOW)."""
    wide = {label: page["wide"] for label, page in seen["pages"].items() if page["wide"]}
    return wide | _failures(seen, {"overflow"})


def katex_error_or_cut_formula(seen) -> dict:
    return _failures(seen, {"katex-error", "cut formula"})


def heatmap_number_under_12_px(seen) -> dict:
    cells = sum(page["cells"] for page in _step_pages(seen).values())
    return _failures(seen, {"heatmap text"}) | ({} if cells >= 4 * len(STEP_PAGES) else {"cells seen": cells})


def cell_printed_otherwise_in_drill_down_heatmap_or_matrix(seen) -> dict:
    drills = sum(page["drills"] for page in _step_pages(seen).values())
    return _failures(seen, {"drill-down", "heatmap", "matrix"}) | (
        {} if drills >= len(STEP_PAGES) else {"drill-downs seen": drills})


def screenshot_missing(seen) -> dict:
    """With SCREENSHOTS=1: each page's screenshot written, and more than a blank page's bytes."""
    sizes = {label: page.get("shot") for label, page in seen["pages"].items() if " " not in label}
    return {label: size for label, size in sizes.items() if SCREENSHOTS and (not size or size <= 10_000)}


def axe_serious_or_critical(seen) -> dict:
    """axe-core's WCAG 2.1 A and AA rules: no serious or critical violation in the app's markup on any page; each rule
    STREAMLIT_MARKUP excuses still finds Streamlit's markup on some page (else its exclusion is stale: remove it)."""
    found = {label: page["axe"]["app"] for label, page in seen["pages"].items() if page["axe"]["app"]}
    excused = {rule for page in seen["pages"].values() for rule in page["axe"]["streamlit"]}
    stale = sorted(set(STREAMLIT_MARKUP) - excused)
    return found | ({"excused but not found": stale} if stale else {})


def presenter_slide_small_or_too_wide(seen) -> dict:
    """Walked with the clicker's keys from the tokens to the probabilities (SLIDES's first layers): each slide's
    smallest formula, paragraph, widget's words, chart label and heatmap number is at least 1.5 times its normal size
    (the attention page's, measured in the same pass), nothing is wider than the page, the step's heading, formula
    and numbers lie between the header and the rail (slide_fit.misfit), and the rail's dots stay put."""
    normal = seen["pages"]["attention"]["type"]
    wrong = {} if normal == NORMAL_TYPE else {"normal": normal}
    for slide in seen["slides"]:
        small = {part: size for part, size in slide["type"].items() if size is not None and size < 1.5 * normal[part]}
        missing = [part for part in ("formula", "text", "control") if not slide["type"][part]]
        if small or missing or slide["wide"] or slide["exceptions"] or slide["misfit"] or \
                not slide["where"].startswith(f"{slide['position'] + 1} / "):
            wrong[slide["position"]] = (slide["where"], slide["url"], small, missing, slide["wide"],
                                        slide["exceptions"], slide["misfit"])
    dots = {slide["first_dot"] for slide in seen["slides"]}
    wrong |= {} if len(dots) == 1 else {"the rail's first dot moved": sorted(dots)}
    return wrong | ({} if len(seen["slides"]) == len(first_layers(_deck())) else {"slides seen": len(seen["slides"])})


CHECKS = [exceptions_or_warnings, title_navigation_or_link_not_the_readers, wider_than_its_column,
          katex_error_or_cut_formula, heatmap_number_under_12_px,
          cell_printed_otherwise_in_drill_down_heatmap_or_matrix, screenshot_missing, axe_serious_or_critical,
          presenter_slide_small_or_too_wide]


@pytest.mark.parametrize("lang", LOCALES)
def test_every_page_in_one_pass(server, chromium, trace, training_trace, lang):  # noqa: F811 (server)
    """One pass of a language, then every check over every page it saw: the failures of every check and every page,
    reported at once."""
    seen = _pass(server, chromium, lang, trace, training_trace)
    failures = {check.__name__: found for check in CHECKS if (found := check(seen))}
    assert not failures, pprint.pformat(failures, width=120)
