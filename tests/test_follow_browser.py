"""Following the teacher in Chromium (issue 29's bar): one teacher and two students, in English and in Chinese, at
1280 x 720 on one server. The teacher walks layers, heads, steps, sub-layers and sections forward and back to their
defaults with clicks, then the animation's frames with the player's keys, as in class; after each move every student's
page shows the teacher's page and view (its address: what its widgets show; the player's frame) within a few
seconds."""
import sys
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from conftest import app_server  # noqa: E402
from test_browser import LOCALES  # noqa: E402
from ui.core.i18n import translator  # noqa: E402

SCREEN = {"width": 1280, "height": 720}
FOLLOWED_WITHIN = 15  # seconds: a few, on a machine shared with other work
BUTTON = 'button[data-variant="segmented_control"]'  # a button of a row (st.segmented_control)
OWN = {"room", "key", "lang", "follow", "present"}  # each participant's own, or the room's
T = translator("en")
MOVES = [  # (page, widget key, button): forward, then back to the default
    ("attention", "layer.enc", 1), ("attention", "heads.attention.1", 1), ("attention", "attention.1", 2),
    ("attention", "attention.1", 0), ("attention", "heads.attention.1", 0), ("attention", "layer.enc", 0),
    ("add_norm", "add_norm.sublayer", 1), ("add_norm", "add_norm.sublayer", 0),
    ("encoder_stack", "enc.section", 1), ("encoder_stack", "enc.section", 0),
]


def where(page) -> tuple:
    """The page a tab shows and its link's view and state, without what is each participant's own."""
    address = urllib.parse.urlsplit(page.url)
    query = {key: value for key, value in urllib.parse.parse_qsl(address.query) if key not in OWN}
    return address.path.strip("/") or "overview", query


def shown_frame(page) -> int | None:
    """The frame the animation player shows, if the page has one."""
    counter = page.locator(".anim .counter")
    return int(counter.get_attribute("data-frame")) if counter.count() else None


def wait_until(page, condition, what: str, timeout: float = FOLLOWED_WITHIN) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout} s: {what}"
        page.wait_for_timeout(100)


def test_two_students_in_two_languages_follow_the_teacher_forward_and_back(chromium, tmp_path):
    env = {"TRANSFORMER_ROOMS_DB": str(tmp_path / "rooms.sqlite3")}
    with app_server(tmp_path / "streamlit.log", env) as url:
        contexts = [chromium.new_context(viewport=SCREEN, locale=LOCALES[lang]) for lang in ("en", "en", "zh")]
        try:
            teacher, *students = (context.new_page() for context in contexts)
            teacher.goto(f"{url}/attention?cfg=n_layers:2")
            teacher.get_by_text(T("room.section")).click()
            teacher.get_by_role("button", name=T("room.open")).click()
            wait_until(teacher, lambda: "key=" in teacher.url, "the teacher's room")
            code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(teacher.url).query))["room"]
            for student in students:
                student.goto(f"{url}/?room={code}")
            slowest = 0.0
            for page, key, button in MOVES:
                if where(teacher)[0] != page:
                    teacher.locator(f'[data-testid="stSidebarNav"] a[href$="/{page}"]').click()
                    wait_until(teacher, lambda: where(teacher)[0] == page, f"the teacher on {page}")
                before = where(teacher)
                teacher.locator(f".st-key-{key.replace('.', '-')} {BUTTON}").nth(button).click()
                wait_until(teacher, lambda: where(teacher) != before, f"the teacher's {key} → {button + 1}")
                moved = time.monotonic()
                for lang, student in zip(("en", "zh"), students):
                    wait_until(student, lambda: where(student) == where(teacher),
                               f"the {lang} student at {key} → {button + 1}: {where(student)} != {where(teacher)}")
                slowest = max(slowest, time.monotonic() - moved)
            print(f"\n{len(MOVES)} moves followed by both students, the slowest in {slowest:.2f} s after the teacher's "
                  "address changed")
            teacher.locator('[data-testid="stSidebarNav"] a[href$="/animation"]').click()
            teacher.locator(".anim svg").click()  # the player's keys: forward three frames, then back to the first
            for keys, frame in ((["ArrowRight"] * 3, 4), (["Home"], 1)):
                for key in keys:
                    teacher.keyboard.press(key)
                wait_until(teacher, lambda: where(teacher)[1].get("frame", "1") == str(frame),
                           f"the teacher's frame {frame}")
                for lang, student in zip(("en", "zh"), students):
                    wait_until(student, lambda: where(student) == where(teacher) and shown_frame(student) == frame,
                               f"the {lang} student's frame {frame}")
        finally:
            for context in contexts:
                context.close()
