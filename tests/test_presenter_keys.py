"""Presenter mode's keys in Chromium at a projector's 1280 x 720, in English and Chinese: every press counts however
slow the server, a clicker's keys work with the focus in a field (and the rail says so), and the room's code is on
the rail for students who come in late."""
import re
import subprocess
import sys
import urllib.parse

import pytest
from playwright.sync_api import expect

from test_app import EN_T, open_link
from test_browser import SHOTS, no_exception, server, settle, url  # noqa: F401 (server: a fixture)
from test_presenter import PROJECTOR_SCREEN, slides_of
from ui.classroom import reach
from ui.core.i18n import translator

LANGS = ["en", "zh"]
SCORES = 7  # the attention page's scores: slide 8 of the pass (the default model's)
PRESSES = SCORES  # back to the first slide, across three pages
PRESS_GAP_MS = 120  # a presenter's quick clicks


def _where(page):
    return page.locator(".present-where")


def _at(n: int):
    return re.compile(rf"^{n} / {len(slides_of('post'))} · ")


@pytest.fixture
def busy_cpu():
    """A process that keeps one core busy while the test runs: a loaded server, whose runs take longer than the gap
    between two presses."""
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    yield
    hog.kill()
    hog.wait()


@pytest.mark.parametrize("lang", LANGS)
def test_quick_presses_on_a_loaded_server_all_count(server, new_page, busy_cpu, lang):  # noqa: F811 (server)
    """Seven ← pressed 120 ms apart from the scores land on the first slide, across the pages the presses cross (a
    press sent during a run or a page switch was lost: the class stopped on slide 4), and stay there."""
    page = new_page(lang)
    page.set_viewport_size(PROJECTOR_SCREEN)
    page.goto(url(server, "attention", present="1", lang=lang))
    settle(page)
    expect(_where(page)).to_have_text(_at(SCORES + 1))
    for _ in range(PRESSES):
        page.keyboard.press("ArrowLeft")
        page.wait_for_timeout(PRESS_GAP_MS)
    expect(_where(page)).to_have_text(_at(SCORES + 1 - PRESSES), timeout=60_000)
    settle(page)
    expect(_where(page)).to_have_text(_at(SCORES + 1 - PRESSES))
    no_exception(page)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"presenter-keys-1280x720-{lang}.png"))


@pytest.mark.parametrize("lang", LANGS)
def test_a_clickers_keys_move_the_slides_with_the_focus_in_a_field(server, new_page, lang):  # noqa: F811 (server)
    """With the focus in a field, Page Down and Page Up (a clicker's keys) still move the slides and the rail says
    which keys work; → stays the field's until Esc leaves it. They did nothing, with no cue."""
    t = translator(lang)
    page = new_page(lang)
    page.set_viewport_size(PROJECTOR_SCREEN)
    page.goto(url(server, "attention", present="1", lang=lang))
    settle(page)
    hint = page.locator(".present-typing")
    expect(hint).to_be_hidden()
    field = page.locator('[data-testid="stMain"] [data-testid="stSelectbox"] input').first
    field.focus()
    expect(hint).to_have_text(t("present.typing"))
    expect(hint).to_be_visible()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"presenter-typing-1280x720-{lang}.png"))
    page.keyboard.press("PageDown")
    expect(_where(page)).to_have_text(_at(SCORES + 2), timeout=30_000)
    settle(page)
    page.locator('[data-testid="stMain"] [data-testid="stSelectbox"] input').first.focus()
    page.keyboard.press("ArrowRight")  # the field's: the caret, not the slide
    page.wait_for_timeout(1500)
    expect(_where(page)).to_have_text(_at(SCORES + 2))
    page.keyboard.press("Escape")
    expect(hint).to_be_hidden()
    page.keyboard.press("ArrowLeft")
    expect(_where(page)).to_have_text(_at(SCORES + 1), timeout=30_000)
    no_exception(page)


@pytest.mark.parametrize("lang", LANGS)
def test_the_rooms_code_is_on_the_rail_for_latecomers(server, new_page, lang):  # noqa: F811 (server)
    """A teacher who opened a room and started presenting: its code is on every slide's rail (it was 2,528 px down
    the sidebar)."""
    t = translator(lang)
    page = new_page(lang)
    page.set_viewport_size(PROJECTOR_SCREEN)
    page.goto(url(server, "overview", lang=lang))
    settle(page)
    expect(page.locator(".present-room")).to_have_count(0)
    page.get_by_role("button", name=t("room.open")).first.click()
    settle(page)
    link = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(page.url).query))
    page.goto(url(server, "attention", **link | {"present": "1"}))
    settle(page)
    room = page.locator(".present-room")
    expect(room).to_have_text(t("present.room", code=link["room"]))
    box = room.bounding_box()
    assert (box["y"] + box["height"] <= PROJECTOR_SCREEN["height"]
            and box["x"] + box["width"] <= PROJECTOR_SCREEN["width"])
    no_exception(page)
    page.screenshot(path=str(SHOTS / f"presenter-room-1280x720-{lang}.png"))


# ---- a student joins, and is told what was refused, on the first screen ------------------------------------------

def _room_opened():
    """A teacher's session that opened a room from the overview: its code and key."""
    teacher = open_link("overview")
    teacher.button(key="overview.room.open").click().run()
    return teacher.session_state["room"].code, teacher.session_state["room"].key


def test_a_student_joins_a_room_from_the_overview():
    """A student's first screen had "Open a room" only, joining ~1,400 px down the sidebar: the overview has the
    field for the room's code beside it."""
    code, _ = _room_opened()
    student = open_link("overview")
    field = [field for field in student.main.text_input if field.key == "overview.room.join"]
    assert [f.label for f in field] == [EN_T("room.section")]
    field[0].input(code.lower()).run()
    assert student.session_state["room"].code == code and not student.session_state["room"].key
    assert not [field for field in student.main.text_input if field.key == "overview.room.join"]  # in a room now


def test_a_refused_key_is_said_above_the_page_which_presenter_mode_shows():
    """A student who opens a copied teacher's link with another key: the warning is in the main area (it was in the
    sidebar, which present=1 keeps closed)."""
    code, key = _room_opened()
    wrong = key[:-1] + ("A" if key[-1] != "A" else "B")
    student = open_link("attention", room=code, key=wrong, present="1")
    assert EN_T("room.wrong_key", code=code) in [warning.value for warning in student.main.warning]
    assert EN_T("room.wrong_key", code=code) not in [warning.value for warning in student.sidebar.warning]


@pytest.mark.parametrize("lang", LANGS)
def test_a_teacher_at_localhost_is_told_and_the_qr_code_names_an_address_phones_open(server, new_page, lang):  # noqa
    """A teacher who opened http://localhost:PORT projected http://localhost:PORT/?room=..., which no phone opens,
    with no warning: the room's card says so, and its link (the QR code's) is on this computer's network address,
    which opens the room."""
    t = translator(lang)
    address = reach.machine_address()
    page = new_page(lang)
    page.set_viewport_size(PROJECTOR_SCREEN)
    page.goto(url(server, "overview", lang=lang))
    settle(page)
    assert reach.local_only(page.url)
    page.get_by_role("button", name=t("room.open")).first.click()
    settle(page)
    card = page.locator(".st-key-room-card")
    warning = page.locator('[data-testid="stMain"] [data-testid="stAlert"]').filter(
        has_text=t("room.local_only") if address is None else t("room.local", host=address).split(address)[0])
    expect(warning).to_contain_text(t("room.local", host=address).split(address)[0] if address else
                                    t("room.local_only"))
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"room-localhost-1280x720-{lang}.png"))
    if address is None:
        return
    link = card.locator('[data-testid="stCode"]').inner_text().strip()
    code = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(page.url).query))["room"]
    assert link == f"http://{address}:{urllib.parse.urlparse(server).port}/?room={code}"
    student = new_page(lang)
    student.goto(link)
    settle(student)
    no_exception(student)
    assert f"room={code}" in student.url


# ---- the animation in view ----------------------------------------------------------------------------------------

ANIMATION_DRAWING = """() => {  // the player's drawing, inside its component's shadow root
    const host = [...document.querySelectorAll('[data-testid="stMain"] *')]
        .find(e => e.shadowRoot && e.shadowRoot.querySelector('.anim svg'));
    const box = host.shadowRoot.querySelector('.anim svg').getBoundingClientRect();
    return {top: box.top, header: document.querySelector('[data-testid="stHeader"]').getBoundingClientRect().bottom};
}"""
LEGIBLE_PX = 16  # the rail's line off the pass was 13 px on a projector


@pytest.mark.parametrize("lang", LANGS)
def test_the_animations_drawing_is_scrolled_into_view_on_a_projector(server, new_page, lang):  # noqa: F811 (server)
    """In presenter mode at 1280 x 720 the player's drawing lay under the rail, 770 px down: its top is now under the
    header, the whole screen's height below it; the rail's line off the pass is legible."""
    page = new_page(lang)
    page.set_viewport_size(PROJECTOR_SCREEN)
    page.goto(url(server, "animation", present="1", lang=lang))
    settle(page)
    page.wait_for_function(f"() => ({ANIMATION_DRAWING})().top < {PROJECTOR_SCREEN['height']} / 4", timeout=30_000)
    drawing = page.evaluate(ANIMATION_DRAWING)
    assert drawing["header"] - 1 <= drawing["top"], drawing
    off = page.locator(".present-where.present-off")
    assert float(off.evaluate("e => getComputedStyle(e).fontSize")[:-2]) >= LEGIBLE_PX
    no_exception(page)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"presenter-animation-1280x720-{lang}.png"))


def test_a_slide_names_the_head_it_shows_in_its_heading():
    """The head picker is scrolled above a slide's heading: the heading names the head (it was invisible)."""
    at = open_link("attention", present="1", step="scores")
    headings = [m.value.split("\n")[0] for m in at.main.markdown if m.value.startswith("##### ")]
    assert headings and all(heading.endswith(f" · {EN_T('view.head')} 1") for heading in headings), headings


def test_a_page_picked_in_the_sidebar_closes_it_in_presenter_mode(server, new_page):  # noqa: F811 (server)
    """The sidebar stayed open over ~450 px of the projector after a page was picked in it: it closes."""
    page = new_page()
    page.set_viewport_size(PROJECTOR_SCREEN)
    page.goto(url(server, "attention", present="1"))
    settle(page)
    sidebar = page.locator('[data-testid="stSidebar"]')
    page.locator('[data-testid="stExpandSidebarButton"]').click()
    expect(sidebar).to_have_attribute("data-collapsed", "false")
    page.locator('[data-testid="stSidebarNav"] a[href$="/qkv"]').click()
    expect(_where(page)).to_have_text(_at(SCORES - 2), timeout=30_000)  # the Q, K, V page's first slide
    expect(sidebar).to_have_attribute("data-collapsed", "true")
