"""The app in a real browser (Playwright on Debian's Chromium) against a real `streamlit run` server of this
checkout, with its .streamlit/config.toml as a classroom runs it: links in the reader's language, a weight typed
into the data grid, a click on a heatmap cell, sliders, presenter mode's keys, training, and a deep link opened
first on a fresh server. Every page in both languages: tests/test_readable.py, one pass per language (with
SCREENSHOTS=1, a screenshot of each in build/screenshots/{page}-{lang}.png).

Without /usr/bin/chromium the module is skipped, except in CI (CI=true), where a missing browser is a failure.
"""
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import expect

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine.corpus import pairs  # noqa: E402
from engine.generate import generate  # noqa: E402
from ui.core.format import DIGITS, fmt  # noqa: E402
from ui.core.i18n import EN, ZH, translator  # noqa: E402
from ui.core.navigation import HOME, PAGES, slide_at, slides  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
READY = '[data-testid="stApp"][data-test-script-state="notRunning"]'
SHOTS = ROOT / "build" / "screenshots"
SCREENSHOTS = os.environ.get("SCREENSHOTS") == "1"  # the pictures no test reads, for someone to look at: on demand
ALL_PAGES = [page for pages in PAGES.values() for page in pages]
LOCALES = {"en": "en-US", "zh": "zh-CN"}
WIDTH, MAX_HEIGHT = 1280, 6000


# ---- server and browser ---------------------------------------------------------------------------------

def _python():
    venv = ROOT / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, log_path):
        self.port = _free_port()
        self.url = f"http://localhost:{self.port}"
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.process = subprocess.Popen(
            [_python(), "-m", "streamlit", "run", "app.py", "--server.port", str(self.port),
             "--server.headless", "true", "--server.fileWatcherType", "none"],
            cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while True:
            if self.process.poll() is not None:
                self.stop()
                pytest.fail(f"streamlit exited with {self.process.returncode}:\n{Path(log_path).read_text()}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as answer:
                    if answer.read() == b"ok":
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"streamlit did not answer within 60 s:\n{Path(log_path).read_text()}")
            time.sleep(0.2)

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)  # the group of the server this test started
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.close()


@pytest.fixture(scope="session")
def server(chromium, tmp_path_factory):
    running = Server(tmp_path_factory.mktemp("streamlit") / "server.log")
    yield running.url
    running.stop()


@pytest.fixture
def fresh_server(chromium, tmp_path):
    running = Server(tmp_path / "server.log")
    yield running.url
    running.stop()


# ---- helpers ------------------------------------------------------------------------------------------------

# The page's shape, in the page itself: elements, charts, charts drawn, formulas, height, the script's state, the
# numbers drawn in heatmaps, elements still loading their code (Streamlit draws a chart's code, fetched on first use,
# as an "stSkeleton" until it arrives: a page of none but those is quiet, not drawn). Settled when it has held for
# `quiet` ms with every chart drawn, nothing loading and no script running;
# looked at every 50 ms, in the browser (no round trip per look). Returns null when settled, else the last shape seen
# when `timeout` ms ran out.
SETTLED = """([quiet, timeout]) => new Promise(resolve => {
    const shape = () => {
        const charts = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')];
        const main = document.querySelector('[data-testid="stMain"]');
        return [document.querySelectorAll('[data-testid="stElementContainer"]').length, charts.length,
                charts.filter(c => c.querySelector('.main-svg')).length,
                document.querySelectorAll('.katex').length, main ? main.scrollHeight : 0,
                document.querySelector('[data-testid="stApp"]').getAttribute('data-test-script-state'),
                document.querySelectorAll('.heatmaplayer text').length,
                document.querySelectorAll('[data-testid="stSkeleton"]').length];
    };
    const start = performance.now();
    let last = null, since = start;
    const look = () => {
        const now = shape(), at = performance.now(), text = JSON.stringify(now);
        if (text !== last || now[1] !== now[2] || now[5] !== 'notRunning' || now[7]) {
            last = text;
            since = at;
        } else if (at - since >= quiet) {
            return resolve(null);
        }
        if (at - start > timeout) return resolve(last);
        setTimeout(look, 50);
    };
    look();
})"""


def settle(page, timeout=60, quiet=700):
    """Wait for the script to finish, then for the page to stop changing (charts mount after the script)."""
    page.wait_for_selector(READY, timeout=timeout * 1000)
    page.wait_for_selector('[data-testid="stMain"] h1', timeout=timeout * 1000)
    unsettled = page.evaluate(SETTLED, [quiet, timeout * 1000])
    if unsettled is not None:
        raise AssertionError(f"the page did not settle: {unsettled}")


def url(base, page, **query):
    path = "" if page == "overview" else page
    return f"{base}/{path}" + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


def fit_viewport_to_content(page):
    """Streamlit's main area scrolls inside the window: make the window as tall as the content (capped)."""
    for _ in range(4):
        height = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
        target = min(max(height, 900), MAX_HEIGHT)
        if page.viewport_size["height"] == target:
            return
        page.set_viewport_size({"width": WIDTH, "height": target})
        settle(page)


TITLE_SOURCE = """h => {
    const copy = h.cloneNode(true);  // a formula in a title, as its TeX source: "Concat & $W^O$"
    copy.querySelectorAll('.katex').forEach(k => k.replaceWith('$' + k.querySelector('annotation').textContent + '$'));
    return copy.textContent.trim();
}"""


def expect_title(page, title, timeout=5_000):
    """The page's title is `title` (a catalog's words, math as $TeX$)."""
    heading = page.locator("h1").first
    deadline = time.monotonic() + timeout / 1000
    while (shown := heading.evaluate(TITLE_SOURCE)) != title and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert shown == title


def katex_texts(page):
    return [text.replace("\xa0", " ") for text in page.locator(".katex-display").all_inner_texts()]


OVERFLOWING = """() => {
    const main = document.querySelector('[data-testid="stMain"]');
    const scrolling = [...document.querySelectorAll('.katex-display')]
        .filter(e => e.scrollWidth > e.closest('[data-testid="stMarkdownContainer"]').clientWidth + 4);
    return (main.scrollWidth > main.clientWidth + 1 ? ['the page itself'] : [])
        .concat(scrolling.map(e => e.innerText.replace(/\\s+/g, ' ').slice(0, 80)));
}"""


def no_horizontal_overflow(page):
    """Nothing wider than its column: no formula that has to be scrolled sideways (KaTeX scrolls, not wraps)."""
    assert page.evaluate(OVERFLOWING) == []


def no_exception(page):
    exceptions = page.locator('[data-testid="stException"]')
    assert exceptions.count() == 0, exceptions.all_inner_texts()


# ---- tests ---------------------------------------------------------------------------------------------------

def test_settle_waits_for_a_chart_whose_code_arrives_late(server, new_page):
    """A chart's code is fetched on its first use; until it arrives the page is quiet with a skeleton in the chart's
    place. On a loaded machine that outlasted settle's quiet time once: the ViT overlay's test read a page with no
    chart on it. Here the code is held back until settle has been seen to wait for it."""
    page = new_page()
    held = []
    page.route("**/PlotlyChart.*.js", lambda route: held.append(route))
    page.goto(url(server, "vit_encoder"))
    page.wait_for_selector(READY)
    while not held:
        page.wait_for_timeout(50)
    assert page.evaluate(SETTLED, [700, 3_000]) is not None  # quiet for 3 s, and not settled
    held[0].continue_()
    settle(page)
    assert page.locator('[data-testid="stPlotlyChart"] .annotation-text').count() == 25  # 20 weights, 5 titles


def test_deep_link_first_on_a_fresh_server(fresh_server, new_page):
    """A fresh server whose first session opens /tokens: the link's page, run by app.py's navigation."""
    page = new_page()
    page.goto(url(fresh_server, "tokens"))
    settle(page)
    no_exception(page)
    expect_title(page, EN["page.tokens"])
    expect(page.locator('[data-testid="stSidebarNav"]')).to_contain_text(EN["page.attention"])
    expect(page.get_by_label(EN["ctl.src"])).to_have_value("Hello World")
    assert "preset=hello-world" in page.url and "/tokens" in page.url
    page.locator('[data-testid="stSidebarNav"] a[href$="/attention"]').click()
    expect_title(page, EN["page.attention"])
    settle(page)
    no_exception(page)


def test_a_click_before_the_first_run_ends_keeps_the_sentences(server, new_page):
    """A sidebar click while the page's first run is still going starts another run; Streamlit's browser then drew
    the sentence boxes from their widget's default, and the next run read the empty boxes ("The source sentence is
    empty"). The boxes' default is the state's sentence now."""
    page = new_page("en")
    page.goto(url(server, "attention"))
    summary = page.locator('[data-testid="stSidebar"] [data-testid="stExpander"] summary').last  # the classroom's
    summary.wait_for(timeout=60_000)
    summary.click()
    settle(page)
    boxes = page.locator('[data-testid="stSidebar"] [data-testid="stTextInputField"]')
    assert boxes.evaluate_all("boxes => boxes.map(box => box.value)")[:2] == ["Hello World", "Hola Mundo"]
    no_exception(page)


PHONE = {"width": 400, "height": 860}
# Each formula's scroll and its cue, as [left edge faded, right edge faded] by its mask at the start and once scrolled
# to the end (a scroll-driven animation: read a frame after the scroll). A gradient "to left" starts at the right edge.
SIDEWAYS_CUES = """async () => {
    const frame = () => new Promise(resolve => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    const clear = stop => /^(transparent|rgba\\([^)]*, 0\\))/.test(stop);
    const faded = e => {
        const mask = getComputedStyle(e).maskImage;
        if (!mask.startsWith('linear-gradient(')) return [false, false];
        const [direction, ...stops] = mask.slice(16, -1).split(/,(?![^(]*\\))/).map(part => part.trim());
        const ends = [clear(stops[0]), clear(stops[stops.length - 1])];
        return direction === 'to left' ? ends.reverse() : ends;
    };
    const cues = [];
    for (const e of document.querySelectorAll('[data-testid="stMain"] .katex-display')) {
        e.scrollLeft = 0;
        await frame();
        const start = faded(e);
        e.scrollLeft = e.scrollWidth;
        await frame();
        cues.push({wide: e.scrollWidth > e.clientWidth, start, end: faded(e),
                   text: e.innerText.replace(/\\s+/g, ' ').slice(0, 40)});
        e.scrollLeft = 0;
    }
    return cues;
}"""
SIDES = {"en": "on the left", "zh": "左侧"}  # where the sidebar is on a wide screen only


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_on_a_phone_a_wide_formula_shows_it_scrolls_and_the_overview_finds_the_sidebar(server, new_page, lang):
    """At 400 px KaTeX's wide formulas and matrices were cut at the right with no cue that they scroll sideways, and
    the overview sent the reader to the options "on the left", where a phone shows no sidebar. Now a wide formula's
    cut edge fades (the right until it is scrolled to its end, the left once scrolled) and one that fits has no fade;
    the overview names the sidebar and how a narrow screen opens it."""
    page = new_page(lang)
    page.set_viewport_size(PHONE)
    page.goto(url(server, "overview"))
    settle(page)
    assert not page.locator('[data-testid="stSidebarContent"]').is_visible() or \
        page.locator('[data-testid="stSidebar"]').bounding_box()["x"] < 0  # a phone: the sidebar is closed
    intro = page.locator('[data-testid="stMain"] [data-testid="stMarkdownContainer"]').first.inner_text()
    assert SIDES[lang] not in intro and {"en": "sidebar", "zh": "侧边栏"}[lang] in intro
    page.goto(url(server, "qkv"))
    settle(page)
    cues = page.evaluate(SIDEWAYS_CUES)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"phone-qkv-{lang}.png"))
    wide = [cue for cue in cues if cue["wide"]]
    assert wide and len(wide) < len(cues), cues  # both kinds on the page: the test can fail either way
    assert [cue for cue in wide if (cue["start"], cue["end"]) != ([False, True], [True, False])] == []
    assert [cue for cue in cues if not cue["wide"] and cue["start"] + cue["end"] != [False] * 4] == []
    no_exception(page)


def test_the_overview_opens_at_its_own_name(server, new_page):
    """The overview is the default page, which Streamlit serves at "/" only: a link to /overview (every other page
    opens at its own name) showed "Page not found" over it. A fresh browser, the link with a preset."""
    page = new_page("zh")
    page.goto(f"{server}/overview?preset=paper")
    settle(page)
    no_exception(page)
    expect_title(page, ZH["page.overview"])
    assert page.locator('[role="dialog"]').count() == 0, page.locator('[role="dialog"]').all_inner_texts()
    assert "/overview?" in page.url and "preset=paper" in page.url


# ---- links carry the whole view, in the reader's language ----------------------------------------------------

def test_a_link_opens_in_the_readers_language_unless_it_names_one(server, new_page):
    page = new_page("zh")
    page.goto(url(server, "attention", preset="hello-world"))  # a link from an English browser
    settle(page)
    expect_title(page, ZH["page.attention"])
    assert "lang=" not in page.url
    page.goto(url(server, "attention", lang="en"))  # the teacher chose English on purpose
    settle(page)
    expect_title(page, EN["page.attention"])
    assert "lang=en" in page.url
    page.get_by_role("radiogroup", name=EN["lang.label"]).get_by_role("radio", name="简体中文").click()
    page.wait_for_url(re.compile(r"lang=zh"), timeout=30_000)
    settle(page)
    expect_title(page, ZH["page.attention"])


def test_a_teachers_link_shows_a_chinese_student_the_same_head_step_and_cell(server, new_page):
    teacher = new_page("en")
    teacher.goto(url(server, "attention"))
    settle(teacher)
    head_button(teacher, EN, 2).click()
    settle(teacher)
    teacher.get_by_role("radiogroup", name=EN["view.step"]).get_by_role("radio").nth(2).click()  # 3: weights
    settle(teacher)
    chart = teacher.locator('[data-testid="stPlotlyChart"]').first  # head 2's 2 x 2 weights
    chart.scroll_into_view_if_needed()
    box = chart.bounding_box()
    teacher.mouse.click(box["x"] + box["width"] * 0.30, box["y"] + box["height"] * 0.72)  # the (world, hello) cell
    teacher.wait_for_url(re.compile(r"cell=1\.0"), timeout=30_000)
    settle(teacher)
    link = teacher.url
    assert re.search(r"/attention\?.*head=2&step=weights&cell=1\.0$", link) and "lang=" not in link, link
    explained = re.compile(r"A\s*2[\s\u200b]*\[\s*2\s*,\s*1\s*\]")  # head 2's A, row 2 (world), column 1 (hello)
    assert any(explained.search(t) for t in katex_texts(teacher))

    student = new_page("zh")
    student.goto(link)
    settle(student)
    no_exception(student)
    expect_title(student, ZH["page.attention"])
    expect(head_button(student, ZH, 2)).to_have_attribute("aria-checked", "true")
    steps = student.get_by_role("radiogroup", name=ZH["view.step"]).get_by_role("radio")
    expect(steps.nth(2)).to_have_attribute("aria-checked", "true")
    expect(drill_cell(student, ZH)).to_have_value(translator("zh")("view.cell", row="world", col="hello"))
    assert any(explained.search(t) for t in katex_texts(student))
    assert student.locator('[data-testid="stAlert"]').count() == 0
    assert student.url == link, "the student's own link is the teacher's"


# The room's code in the teacher's panel: its glyphs' size and font, its box, and the boxes of the buttons over the QR
# code (its fullscreen button, shown on hover).
ROOM_CODE = """() => {
    const sidebar = document.querySelector('[data-testid="stSidebar"]');
    const code = sidebar.querySelector('.katex-display .katex-html');
    const glyph = code.querySelector('.mord.texttt') || code.querySelector('.mord');
    const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    return {text: code.innerText.replace(/\\s+/g, ''), size: parseFloat(getComputedStyle(glyph).fontSize),
            font: getComputedStyle(glyph).fontFamily, code: box(code),
            buttons: [...sidebar.querySelectorAll('[data-testid="stElementToolbar"] button')].map(box)};
}"""


def overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_a_teachers_room_code_reads_from_the_back_of_the_room(server, new_page):
    """One click at the top of the sidebar's controls opens a room; its code is at least 40 px, monospace, and the
    QR code's fullscreen button, shown on hover, covers none of it (it covered the code's last letter)."""
    page = new_page("en")
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(url(server, "attention"))
    settle(page)
    page.get_by_role("button", name=EN["room.open"]).click()
    expect(page.locator('[data-testid="stSidebar"] .katex-display')).to_have_count(1, timeout=30_000)
    settle(page)
    code = urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)["room"][0]
    page.locator('[data-testid="stSidebar"] [data-testid="stImage"]').hover()
    page.wait_for_timeout(500)  # the toolbar's fade-in
    seen = page.evaluate(ROOM_CODE)
    assert seen["text"] == code and seen["size"] >= 40 and "Typewriter" in seen["font"], seen
    assert seen["buttons"] and not any(overlap(seen["code"], button) for button in seen["buttons"]), seen
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator('[data-testid="stSidebar"]').screenshot(path=str(SHOTS / "room-teacher-1280x720-en.png"))


def head_button(page, catalog, head):
    """The button of a head (numbered from 1) in the page's row of heads."""
    heads = page.get_by_role("radiogroup", name=catalog["view.head"], exact=True)
    return heads.get_by_role("radio", name=f"{catalog['view.head']} {head}", exact=True)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_copy_link_button_copies_what_the_page_shows(server, new_page, lang):
    page = new_page(lang)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server)
    page.goto(url(server, "qkv", step="v"))
    settle(page)
    catalog = EN if lang == "en" else ZH
    head_button(page, catalog, 2).click()
    page.wait_for_url(re.compile(r"head=2"), timeout=30_000)
    settle(page)
    copy = page.locator(".st-key-copy_link")
    copy.get_by_role("button", name=catalog["ctl.share"], exact=True).click()
    expect(copy).to_contain_text(catalog["ctl.share_done"])
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == page.url and copied.endswith("/qkv?preset=hello-world&src=Hello+World&tgt=Hola+Mundo&head=2"), \
        copied  # head 2's flow is at its own first step: the link says only what is not the default


def test_edit_a_weight_in_the_grid_changes_the_attention_page(server, new_page):
    page = new_page()
    page.goto(url(server, "qkv"))
    settle(page)
    editor = page.locator('[data-testid="stExpander"]', has_text="enc.0.attn.W_Q")  # the code name in its label
    editor.locator("summary").click()
    grid = editor.locator('[data-testid="stDataFrame"]')
    grid.wait_for()
    grid.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    box = grid.bounding_box()
    # glide-data-grid draws on a canvas: rows are 35 px under a 35 px header; the index column is ~50 px wide.
    page.mouse.dblclick(box["x"] + 90, box["y"] + 35 + 17)  # the first row, column "1"
    cell = page.locator("#portal input.gdg-input, #portal textarea.gdg-input").first
    expect(cell).to_have_value("0")  # W_Q of head 1, [0, 0], is 0 in the post's code
    cell.fill("5")
    cell.press("Enter")
    page.wait_for_url(re.compile(r"edit=enc\.0\.attn\.W_Q%3A0\.0\.0%3D5\.0"), timeout=30_000)
    settle(page)
    no_exception(page)

    model = engine.preset("hello-world")
    W = model.params["enc.0.attn.W_Q"].copy()
    W[0, 0, 0] = 5.0
    before = model.run("Hello World")["enc.0.attn.scores"][0]
    after = model.with_params({"enc.0.attn.W_Q": W}).run("Hello World")["enc.0.attn.scores"][0]
    new_cells, old_cells = [fmt(x, DIGITS) for x in after.ravel()], [fmt(x, DIGITS) for x in before.ravel()]
    assert set(new_cells).isdisjoint(old_cells)

    page.locator('[data-testid="stSidebarNav"] a[href$="/attention"]').click()
    expect_title(page, EN["page.attention"])
    scores = page.locator(".katex-display").filter(has_text=new_cells[1]).first  # S_1 at a glance
    expect(scores).to_be_visible(timeout=30_000)
    settle(page)
    no_exception(page)
    texts = katex_texts(page)
    assert any(all(number in t for number in new_cells) for t in texts), (new_cells, texts)
    assert not any(old in t for t in texts for old in ("105.2", "135.6")), texts
    assert "edit=enc.0.attn.W_Q%3A0.0.0%3D5.0" in page.url


def test_click_a_heatmap_cell_to_explain_it(server, new_page):
    page = new_page()
    page.goto(url(server, "attention"))
    settle(page)
    trace = engine.preset("hello-world").run("Hello World")
    explained = re.compile(r"S\s*1[\s\u200b]*\[\s*2\s*,\s*2\s*\]")  # head 1's row 2, column 2: from 1
    assert not any(explained.search(t) for t in katex_texts(page))
    assert any(re.search(r"S\s*1[\s\u200b]*\[\s*1\s*,\s*1\s*\]", t) for t in katex_texts(page))

    chart = page.locator('[data-testid="stPlotlyChart"]').first  # head 1's 2 x 2 scores
    chart.scroll_into_view_if_needed()
    box = chart.bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.70, box["y"] + box["height"] * 0.72)  # the (world, world) cell
    expect(page.locator(".katex-display").filter(has_text=explained)).to_have_count(1, timeout=30_000)
    settle(page)
    no_exception(page)
    text = next(t for t in katex_texts(page) if explained.search(t))
    value = float(trace["enc.0.attn.scores"][0, 1, 1])
    assert value == pytest.approx(135.5517)
    explained_tex = trace.explain("enc.0.attn.scores", (0, 1, 1), DIGITS).latex
    shown = re.search(r"\\approx\s*([0-9.]+)\s*$", explained_latex_tail(explained_tex))  # 135.5517 at 4 digits
    assert shown and shown.group(1) in text, (shown, text)
    expect(drill_cell(page, EN)).to_have_value(translator("en")("view.cell", row="world", col="world"))


# The focused element: in the sidebar or not, its link, role, name (its label, else its text) and row of buttons'
# name; and whether Tab focused it before (since tab_until began: the round is then complete).
FOCUSED = """() => {
    const e = document.activeElement;
    const again = window.tabbed.has(e);
    window.tabbed.add(e);
    return {again, sidebar: Boolean(e.closest('[data-testid="stSidebar"]')), href: e.getAttribute('href') || '',
            role: e.getAttribute('role') || '', name: e.getAttribute('aria-label') || (e.innerText || '').trim(),
            group: e.closest('[role="radiogroup"]')?.getAttribute('aria-label') || ''};
}"""


def tab_until(page, reached, presses=300) -> list[dict]:
    """Tab until reached(the focused element, FOCUSED) holds, or the round is complete; each element focused."""
    page.evaluate("() => { window.tabbed = new WeakSet(); }")
    focused = []
    for _ in range(presses):
        page.keyboard.press("Tab")
        focused.append(page.evaluate(FOCUSED))
        if focused[-1]["again"] or reached(focused[-1]):
            return focused
    return focused


def test_a_step_page_is_usable_by_keyboard_alone(server, new_page):
    """From the top of a step page, Tab alone reaches every page's link in the navigation, the page's rows of buttons
    (its heads and steps) and the drill-down's list of cells (the keyboard's way to a heatmap's cell); the arrow keys
    and Enter choose a step and a cell, which the page then shows and its link keeps."""
    page = new_page()
    page.goto(url(server, "attention"))
    settle(page)
    focused = tab_until(page, lambda _: False)
    assert focused[-1]["again"], "Tab never came round"
    linked = {urllib.parse.urlparse(f["href"]).path.strip("/") or HOME for f in focused if f["sidebar"] and f["href"]}
    assert set(ALL_PAGES) <= linked, set(ALL_PAGES) - linked
    in_page = [f for f in focused if not f["sidebar"]]
    assert {f["group"] for f in in_page if f["role"] == "radio"} >= {EN["view.head"], EN["view.step"]}, in_page
    assert any(f["role"] == "combobox" and f["name"].startswith(EN["view.drill"]) for f in in_page), in_page

    tab_until(page, lambda f: f["group"] == EN["view.step"])
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")  # the third step: the attention weights
    page.wait_for_url(re.compile(r"step=weights"), timeout=30_000)
    settle(page)
    expect(page.get_by_role("radiogroup", name=EN["view.step"]).get_by_role("radio").nth(2)).to_have_attribute(
        "aria-checked", "true")
    first_cell = drill_cell(page, EN).input_value()
    assert tab_until(page, lambda f: f["name"].startswith(EN["view.drill"]))[-1]["role"] == "combobox"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"cell="), timeout=30_000)
    settle(page)
    no_exception(page)
    assert drill_cell(page, EN).input_value() != first_cell


def drill_cell(page, catalog):
    """The drill-down's list of cells (a small matrix's), named by its title."""
    return page.get_by_role("combobox", name=re.compile("^" + re.escape(catalog["view.drill"]))).first


def test_a_box_of_the_overview_diagram_opens_its_page_in_the_same_session(server, new_page):
    page = new_page()
    page.goto(url(server, "overview", src="World%20Hello%20World"))
    settle(page)
    diagram = page.locator('[data-testid="stPlotlyChart"]').first
    for title in (EN["page.cross_attention"], EN["page.dec_ffn"]):  # a decoder box, then one the encoder shares
        diagram.scroll_into_view_if_needed()  # under the room's row and the next token's note: below 900 px
        box = diagram.locator("g.annotation", has_text=title).last.bounding_box()  # the decoder's column is right
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        expect_title(page, title, timeout=30_000)
        settle(page)
        no_exception(page)
        expect(page.get_by_label(EN["ctl.src"])).to_have_value("World Hello World")  # the session's own sentence
        assert re.search(r"/(cross_attention|dec_ffn)\?", page.url), page.url
        page.locator('[data-testid="stSidebarNav"]').get_by_text(EN["page.overview"], exact=True).click()
        settle(page)
        diagram = page.locator('[data-testid="stPlotlyChart"]').first
    assert "/dec_ffn" not in page.url


def test_next_and_previous_switch_pages_in_the_same_session_and_keep_the_link(server, new_page):
    """A step page's links lead on in this session: a sentence typed here (not in the opened link) stays, in the
    sidebar and in the address, and the Chinese reader stays in Chinese."""
    page = new_page("zh")
    page.goto(url(server, "attention", lang="zh"))
    settle(page)
    source = page.get_by_label(ZH["ctl.src"])
    source.fill("World Hello World")
    source.press("Enter")
    page.wait_for_url(re.compile(r"src=World\+Hello\+World"), timeout=30_000)
    settle(page)
    for label, title, path in (("nav.next", ZH["page.multihead"], "/multihead?"),
                               ("nav.previous", ZH["page.attention"], "/attention?")):
        page.locator('[data-testid="stPageLink"]').get_by_text(ZH[label].split("{")[0]).click()
        expect(page.locator("h1").first).to_contain_text(title.split("$")[0].strip(), timeout=30_000)
        settle(page)
        no_exception(page)
        assert path in page.url and "src=World+Hello+World" in page.url, page.url
        expect(page.get_by_label(ZH["ctl.src"])).to_have_value("World Hello World")


def test_a_wide_heatmap_names_the_cell_under_the_mouse_and_a_click_explains_it(server, new_page):
    """A matrix wider than 128 columns has one click trace per row, whose hover text the browser writes as fmt
    does: its minus (−, not plotly's -) and its power of ten (5.496×10⁻⁴, not 0.0005496). Plotly names a cell
    whose marker is within 3 px of the mouse, a neighbour of the one under it when cells are narrower (2.7 px
    here): the mouse moves a pixel at a time near each cell until the hover names it."""
    cfg = "d_model:16,n_heads:2,d_ff:256,n_layers:1"
    hidden = engine.preset("paper", d_model=16, n_heads=2, d_ff=256, n_layers=1).run("Hello World")["enc.0.ffn.hidden"]
    written = {122: "−0.03995", 123: "−9.209×10⁻⁴", 124: "5.496×10⁻⁴"}  # columns of "world", from 1
    assert {column: fmt(hidden[1, column - 1], DIGITS) for column in written} == written
    page = new_page()
    page.goto(url(server, "ffn", preset="paper", cfg=cfg))
    settle(page)
    chart = page.locator('[data-testid="stPlotlyChart"]').first  # enc.0.ffn.hidden, (2, 256)
    chart.scroll_into_view_if_needed()
    plot = chart.locator(".nsewdrag").first.bounding_box()  # the plot area: 256 columns (x from −0.5), 2 rows
    hover, y = page.locator(".hoverlayer .hovertext"), plot["y"] + plot["height"] * 0.75
    for column, shown in written.items():
        centre = plot["x"] + plot["width"] * (column - 0.5) / 256
        for x in (round(centre) + (k + 1) // 2 * (-1) ** k for k in range(16)):  # 0, −1, 1, −2 … px from its centre
            page.mouse.move(x, y)
            try:
                expect(hover).to_have_text(re.compile(rf"world · {column}: "), timeout=1_000)
                break
            except AssertionError:
                continue
        assert hover.text_content().strip() == f"world · {column}: {shown}"
    page.mouse.click(x, y)
    explained = re.compile(r"H[\s\u200b]*\[\s*2\s*,\s*124\s*\]")
    expect(page.locator(".katex-display").filter(has_text=explained)).to_have_count(1, timeout=30_000)
    settle(page)
    no_exception(page)
    expect(page.get_by_role("spinbutton", name=f"{EN['view.col']} (1–256)")).to_have_value("124")  # typed, not listed


def test_the_hover_names_the_cell_under_the_mouse_in_a_matrix_of_narrow_cells(server, new_page):
    """Q of head 1 at d_k = 64 (2 × 64, cells ~10 px wide at 1280 px): the mouse at each cell's centre, the hover
    names that cell (with 24-px markers it named the next one: plotly takes the last marker within half a marker
    of the mouse)."""
    q = engine.preset("paper", d_model=128, n_heads=2, d_ff=256, n_layers=1).run("Hello World")["enc.0.attn.q"][0]
    page = new_page()
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(url(server, "qkv", preset="paper", cfg="d_model:128,n_heads:2,d_ff:256,n_layers:1"))
    settle(page)
    chart = page.locator('[data-testid="stPlotlyChart"]').nth(1)  # Q_1, (2, 64)
    chart.scroll_into_view_if_needed()
    plot, hover = chart.locator(".nsewdrag").first.bounding_box(), page.locator(".hoverlayer .hovertext")
    for j in range(64):
        page.mouse.move(plot["x"] + plot["width"] * (j + 0.5) / 64, plot["y"] + plot["height"] * 0.75)
        expect(hover).to_have_text(f"world · {j + 1}: {fmt(q[1, j], DIGITS)}", timeout=10_000)


def test_a_colour_bar_writes_small_numbers_as_the_cells_do(server, new_page):
    """Gradients of 10⁻⁴: the colour bar's ticks say 4×10⁻⁴, as fmt does in the cells, not plotly's SI 400μ."""
    page = new_page()
    page.goto(url(server, "train", grad="enc.0.attn.scaled", head="2"))
    settle(page)
    read = "texts => texts.map(t => t.textContent.replaceAll('\\u200b', ''))"  # plotly puts zero-width spaces around
    ticks = page.locator(".colorbar text").evaluate_all(read)  # the exponent's superscript
    assert ticks and any("×10−4" in tick for tick in ticks) and not any("μ" in tick for tick in ticks), ticks


@pytest.mark.parametrize("lang, present", [("en", "0"), ("en", "1"), ("zh", "1")])
def test_a_room_opened_on_the_overview_shows_its_code_on_the_first_screen(server, new_page, lang, present):
    """A teacher at 1280 x 720 opens a room from the overview: the room's code, big, and its QR code are on the
    screen the projector shows, without scrolling (the sidebar's panel sits under its navigation, below 720 px);
    in presenter mode above the rail, with the Start button."""
    page = new_page(lang)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(url(server, "overview", present=present))
    settle(page)
    page.locator('[data-testid="stMain"] .st-key-overview-room-open button').filter(visible=True).click()
    card = page.locator(".st-key-room-card")
    expect(card.locator(".katex")).to_be_visible(timeout=30_000)
    settle(page)
    code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(page.url).query))["room"]
    assert card.locator(".katex-html").inner_text().replace("\n", "") == code
    bottom = page.locator(".present-rail").bounding_box()["y"] if present == "1" else 720
    shown = (card.locator(".katex"), card.locator("img"))
    shown += (card.locator(".st-key-present-start"),) if present == "1" else ()
    for part in shown:
        box = part.bounding_box()
        assert box["y"] >= 0 and box["y"] + box["height"] <= bottom, box
    assert card.locator(".katex").bounding_box()["height"] >= 40  # \Huge: read from the back of the room


def explained_latex_tail(latex):
    """The engine's explanation in LaTeX, without the aligned environment around it."""
    return re.sub(r"\\end\{aligned\}\s*$", "", latex).strip()


def test_a_shared_sampled_generation_plays_the_same_in_another_browser(server, new_page):
    """A link holds the sampling settings and seed: a second browser sees the same sentence; Play walks the
    steps and stops at the last one, which the link then holds, as it holds a step the slider moves to (a run of the
    player's fragment alone)."""
    query = {"preset": "paper", "cfg": "d_model:16,n_heads:2,d_ff:32,n_layers:1", "src": "good+morning",
             "gen": "max_len:4,model:current,p:0.9,seed:5,strategy:top_p"}
    model = engine.preset("paper", d_model=16, n_heads=2, d_ff=32, n_layers=1)
    expected = generate(model, "good morning", strategy="top_p", p=0.9, seed=5, max_len=4)
    line = f"{EN['gen.sentence']} SOS " + " ".join(expected.tokens)
    sentences = []
    for lang in ("en", "en"):
        page = new_page(lang)
        page.goto(url(server, "generate", **query))
        settle(page)
        no_exception(page)
        sentences.append(page.get_by_text(EN["gen.sentence"]).first.locator("xpath=..").inner_text())
    assert sentences[0] == sentences[1] == line, sentences
    first_prefix = page.get_by_text("Decoder input at this step (1 token, SOS first):")
    expect(first_prefix).to_be_visible()
    page.get_by_role("button", name=EN["gen.play"]).click()
    expect(page.get_by_role("button", name=EN["gen.pause"])).to_be_visible(timeout=30_000)
    expect(page.get_by_role("button", name=EN["gen.play"])).to_be_visible(timeout=30_000)  # back to Play at the end
    settle(page)
    n = len(expected.steps)
    assert n > 2  # Play was offered, and a step back is not the first
    expect(page.get_by_text(f"Decoder input at this step ({n} tokens, SOS first):")).to_be_visible()
    expect(page.get_by_text(f"Chosen next token: {expected.steps[-1].token}").first).to_be_visible()
    expect(page).to_have_url(re.compile(rf"[?&]position={n}(&|$)"))
    page.locator('[data-testid="stSlider"]').last.locator("input[type=range]").focus()
    page.keyboard.press("ArrowLeft")
    expect(page).to_have_url(re.compile(rf"[?&]position={n - 1}(&|$)"))  # n is 4: not the first step, the default
    no_exception(page)


def start_training(server, new_page):
    page = new_page()
    page.goto(url(server, "train"))
    settle(page)
    click_tab(page, EN["train.corpus_title"])
    page.get_by_role("button", name=EN["train.start"], exact=True).click()
    return page


def click_tab(page, label):
    """Choose one of a page's sections (pickers.section_tabs: a row of buttons, st.segmented_control)."""
    page.locator("[data-testid='stButtonGroup'] button").filter(has_text=re.compile(f"^{re.escape(label)}$")).click()
    settle(page)


def test_training_can_be_stopped_and_its_weights_shared(server, new_page):
    page = start_training(server, new_page)
    expect(page.get_by_text(re.compile(r"Step \d+ of 300: loss"))).to_be_visible(timeout=60_000)
    page.get_by_role("button", name=EN["train.stop"], exact=True).click()
    done = page.get_by_text(re.compile(r"^Stopped after \d+ steps; last loss"))
    expect(done).to_be_visible(timeout=60_000)
    settle(page)
    no_exception(page)
    steps = int(re.search(r"after (\d+) steps", done.inner_text()).group(1))
    assert 0 < steps < 300
    weights = re.search(r"weights=([0-9a-f]{12})", page.url).group(1)
    other = new_page()
    other.goto(page.url.replace("/train", "/output"))
    settle(other)
    no_exception(other)
    expect(other.get_by_text(f"weights={weights}", exact=False)).to_be_visible()  # the sidebar's model card


def test_training_to_the_end_reproduces_the_corpus_and_a_bad_upload_is_refused(server, new_page):
    page = start_training(server, new_page)
    expect(page.get_by_text(re.compile(r"^Trained for 300 steps"))).to_be_visible(timeout=240_000)
    settle(page)
    n = len(pairs("en-es"))
    expect(page.get_by_text(f"Greedy decoding reproduces {n} of {n} training targets exactly.")).to_be_visible()
    click_tab(page, EN["train.files"])
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
        files=[{"name": "broken.npz", "mimeType": "application/octet-stream", "buffer": b"PK\x03\x04 not really"}])
    expect(page.get_by_text(re.compile(r"^broken\.npz could not be loaded: "))).to_be_visible(timeout=30_000)
    no_exception(page)


SLIDES = [  # page, the editor, the grid's row whose sliders to use (None: the one-cell editor), the cell, a step
    ("attention", "enc.0.attn.W_Q", None, (0, 0, 0), "enc.0.attn.scores"),  # editors show their code names
    ("qkv", "enc.0.attn.W_Q", "3", (0, 2, 0), "enc.0.attn.q"),  # the row buttons count from 1
]


def open_the_editor(page, title, row):
    """Opens a weight editor (its expander reruns the page) and, for a grid, picks the row to slide."""
    editor = page.locator('[data-testid="stExpander"]', has_text=title)
    editor.locator("summary").click()
    thumb_input = editor.locator('[data-testid="stSlider"] input[type="range"]').first
    if row is not None:
        rows = editor.locator('[data-testid="stButtonGroup"]')
        rows.wait_for()  # drawn by the rerun that opening the expander caused
        settle(page)
        rows.get_by_role("radio", name=row, exact=True).click()
    thumb_input.wait_for()
    settle(page)
    return thumb_input


def drag(page, thumb_input, dx):
    thumb = thumb_input.locator("xpath=../..")  # the thumb: its input is visually hidden
    thumb.scroll_into_view_if_needed()
    box = thumb.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + dx, y, steps=6)
    page.mouse.up()


@pytest.mark.parametrize("name, title, row, index, step", SLIDES, ids=[s[0] for s in SLIDES])
def test_drag_a_weights_slider_and_the_link_keeps_it(server, new_page, name, title, row, index, step):
    """The one-cell editor (attention page) and a grid's row of sliders (Q, K, V page): W_Q's cell of head 1 is
    dragged and let go; the page shows the engine's numbers for the new weight, and its link shows them again."""
    page = new_page()
    page.goto(url(server, name))
    settle(page)
    drag(page, open_the_editor(page, title, row), 60)
    cell = re.escape(".".join(map(str, index)))
    edited = re.compile(rf"edit=enc\.0\.attn\.W_Q%3A{cell}%3D([-0-9.]+)")
    page.wait_for_url(edited, timeout=30_000)
    settle(page)
    no_exception(page)
    slid = float(edited.search(page.url).group(1))
    model = engine.preset("hello-world")
    W = model.params["enc.0.attn.W_Q"].copy()
    assert W[index] + 0.1 < slid < W[index] + 2, (W[index], slid)  # 60 px right on a slider of ±max(1, 2|w|)
    W[index] = slid
    before = [fmt(x, DIGITS) for x in model.run("Hello World")[step][0].ravel()]
    after = [fmt(x, DIGITS) for x in model.with_params({"enc.0.attn.W_Q": W}).run("Hello World")[step][0].ravel()]
    changed = [new for new, old in zip(after, before) if new != old]
    assert changed

    def shows_the_edited_numbers(page):
        texts = katex_texts(page)
        return all(any(number.replace("-", "−") in t or number in t for t in texts) for number in changed)

    assert shows_the_edited_numbers(page), (changed, katex_texts(page))
    other = new_page()
    other.goto(page.url)
    settle(other)
    no_exception(other)
    assert f"%3D{slid!r}" in other.url or f"%3D{slid}" in other.url
    assert shows_the_edited_numbers(other), (changed, katex_texts(other))
    slider = open_the_editor(other, title, row)  # drawn around the new value
    expect(slider).to_have_attribute("aria-valuetext", f"{slid:.2f}")
    assert float(slider.get_attribute("min")) < slid < float(slider.get_attribute("max"))


# ---- presenter mode -----------------------------------------------------------------------------------------

TYPE_PARTS = ['[data-testid="stMain"] .katex-display .katex', '[data-testid="stMain"] .main-svg .xtick text',
              '[data-testid="stMain"] .main-svg g.heatmaplayer text',
              '[data-testid="stMain"] [data-testid="stMarkdownContainer"] p']
TYPE_SIZES = """() => {
    const px = selector => parseFloat(getComputedStyle(document.querySelector(selector)).fontSize);
    return {formula: px('[data-testid="stMain"] .katex-display .katex'),
            label: px('[data-testid="stMain"] .main-svg .xtick text'),
            number: px('[data-testid="stMain"] .main-svg g.heatmaplayer text'),
            text: px('[data-testid="stMain"] [data-testid="stMarkdownContainer"] p')};
}"""


def presenter_where(page):
    return page.locator(".present-where")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_presenter_mode_is_larger_and_its_keys_move_through_the_pass(server, new_page, lang):
    """present=1: formulas, numbers and chart labels at least 1.5 times their normal size, the sidebar closed; the
    keys move slide by slide (navigation.slides) over a page boundary and back; the link reopens the slide."""
    catalog = EN if lang == "en" else ZH
    sizes = {}
    for mode, query in (("normal", {}), ("present", {"present": "1"})):
        page = new_page(lang)
        page.goto(url(server, "attention", step="scaled", **query))
        settle(page)
        no_exception(page)
        for part in TYPE_PARTS:  # a loaded machine may mount a chart after the page has settled
            page.locator(part).first.wait_for(state="attached", timeout=30_000)
        sizes[mode] = page.evaluate(TYPE_SIZES)
    assert all(sizes["present"][part] >= 1.5 * sizes["normal"][part] for part in sizes["normal"]), sizes
    assert sizes["normal"] == {"formula": 19.36, "label": 12, "number": 14, "text": 16}  # measured, so not vacuous
    assert page.locator('[data-testid="stSidebar"]').get_attribute("data-collapsed") == "true"
    deck = slides(engine.preset("hello-world").config)
    expect(presenter_where(page)).to_have_text(
        re.compile(rf"^{slide_at(deck, 'attention', {'step': 'scaled'}) + 1} / {len(deck)} · "))
    moves = [("ArrowRight", "attention", "weights"), ("PageDown", "attention", "heads"),
             (" ", "multihead", "concat"), ("ArrowRight", "multihead", "out"),  # over a page boundary
             ("PageDown", "add_norm", "add1"), ("ArrowLeft", "multihead", "out"),
             ("PageUp", "multihead", "concat"), ("Shift+Space", "attention", "heads")]
    first = {path: view.get("step") for _, path, view in reversed(deck)}  # the step each page opens on
    for key, path, step in moves:
        said = None if step == first[path] else step  # the step the link says: none where the page opens
        page.keyboard.press(key)
        shown = slide_at(deck, path, {"step": step, "sublayer": 0}) + 1  # an add & norm page: its first sub-layer
        expect(presenter_where(page)).to_have_text(re.compile(rf"^{shown} / {len(deck)} · "), timeout=30_000)
        link = rf"/{path}\?.*present=1" + (rf".*step={said}$" if said else r"(?!.*step=)")
        expect(page).to_have_url(re.compile(link), timeout=30_000)
        settle(page)
        no_exception(page)
    title = presenter_where(page).inner_text()
    again = new_page(lang)
    again.goto(page.url)  # the link the address bar holds, copied
    settle(again)
    expect(presenter_where(again)).to_have_text(title)
    assert again.locator("h5").first.inner_text() == page.locator("h5").first.inner_text()
    if SCREENSHOTS:
        SHOTS.mkdir(parents=True, exist_ok=True)
        for shown, screen in ((again, {"width": 1920, "height": 1080}), (page, {"width": 1280, "height": 720})):
            shown.set_viewport_size(screen)
            settle(shown)
            shown.screenshot(path=str(SHOTS / f"presenter-{screen['width']}-{lang}.png"))
    assert catalog["present.part.encoder"] in page.locator(".present-rail").inner_text()
