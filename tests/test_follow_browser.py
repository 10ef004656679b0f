"""Following the teacher in Chromium (issue 29's bar): one teacher and two students, in English and in Chinese, at
1280 x 720, on one server, and on two processes behind nginx with the rooms in Redis, the students on the other
process than the teacher's. The teacher walks layers, heads, steps, sub-layers and sections forward and back to their
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

import pytest  # noqa: E402

from conftest import app_server  # noqa: E402
from test_browser import LOCALES, READY  # noqa: E402
from test_deploy import LOG_LINE, classroom, needs_nginx  # noqa: E402, F401  (classroom: the fixture)
from test_failover import placement  # noqa: E402
from ui.core.i18n import translator  # noqa: E402
from ui.stores import rooms  # noqa: E402

SCREEN = {"width": 1280, "height": 720}
FOLLOWED_WITHIN = 15  # seconds: a few, on a machine shared with other work
BUTTON = 'button[data-variant="segmented_control"]'  # a button of a row (st.segmented_control)
OWN = {"room", "key", "lang", "follow", "present", "me"}  # each participant's own, or the room's
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


def wait_until(page, condition, what, timeout: float = FOLLOWED_WITHIN) -> None:
    """Wait for condition(); what: the awaited, said if it does not come (a callable: asked then)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout} s: {what() if callable(what) else what}"
        page.wait_for_timeout(100)


def walk_the_class(chromium, url: str, routes=(None, None, None)) -> tuple[str, float]:
    """The teacher (English) opens a room and walks MOVES, then the animation's frames; two students (English,
    Chinese) join by the room's code and must show the teacher's view within FOLLOWED_WITHIN of each move. routes:
    the classroom_route cookie (nginx's choice of process) of the teacher and of each student, or None for none.
    The room's code, and the slowest student's delay over MOVES."""
    contexts = [chromium.new_context(viewport=SCREEN, locale=LOCALES[lang]) for lang in ("en", "en", "zh")]
    try:
        for context, route in zip(contexts, routes):
            if route is not None:
                context.add_cookies([{"name": "classroom_route", "value": route, "url": url}])
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
            row = teacher.locator(f".st-key-{key.replace('.', '-')} {BUTTON}")
            row.first.wait_for()  # the page drawn and its run ended (its link written), as a teacher sees it before
            teacher.wait_for_selector(READY)  # clicking: `before` is then the page's link, and a change the move's
            before = where(teacher)
            row.nth(button).click()
            wait_until(teacher, lambda: where(teacher) != before, lambda: f"the teacher's {key} → {button + 1} (the "
                       f"button checked in the browser: {row.nth(button).get_attribute('aria-checked')})")
            moved = time.monotonic()
            for lang, student in zip(("en", "zh"), students):
                wait_until(student, lambda: where(student) == where(teacher),
                           f"the {lang} student at {key} → {button + 1}: {where(student)} != {where(teacher)}")
            slowest = max(slowest, time.monotonic() - moved)
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
        return code, slowest
    finally:
        for context in contexts:
            context.close()


def test_two_students_in_two_languages_follow_the_teacher_forward_and_back(chromium, tmp_path):
    env = {"TRANSFORMER_ROOMS_DB": str(tmp_path / "rooms.sqlite3")}
    with app_server(tmp_path / "streamlit.log", env) as url:
        _, slowest = walk_the_class(chromium, url)
    print(f"\n{len(MOVES)} moves followed by both students, the slowest in {slowest:.2f} s after the teacher's "
          "address changed")


@pytest.fixture(scope="module")
def classroom_env(redis_url) -> dict:
    """This module's classroom (test_deploy.py) keeps its rooms in Redis."""
    return {"TRANSFORMER_REDIS_URL": redis_url}


def upstreams_of(run_dir, routes) -> dict[str, set[str]]:
    """Each route's processes in nginx's access log, once a closed websocket's line is there for every route."""
    deadline = time.monotonic() + FOLLOWED_WITHIN
    while True:  # nginx writes a websocket's line when it closes
        found, streams = {route: set() for route in routes}, set()
        for line in (run_dir / "access.log").read_text().splitlines():
            entry = LOG_LINE.search(line)
            if entry and entry["route"] in found:
                found[entry["route"]].add(entry["upstream"])
                if "_stcore/stream" in entry["request"]:
                    streams.add(entry["route"])
        if streams == set(routes):
            return found
        assert time.monotonic() < deadline, f"no websocket line for {set(routes) - streams}"
        time.sleep(0.1)


@needs_nginx
def test_two_students_on_the_other_process_follow_the_teacher_through_redis(chromium, classroom, redis_url):
    url, pids, run_dir = classroom
    candidates = ["teacher", *(f"student-{i}" for i in range(8))]  # fixed: nginx's hash places them alike every run
    place = placement(url, run_dir, candidates)
    students = [route for route in candidates[1:] if place[route] != place["teacher"]][:2]
    assert len(students) == 2, place
    code, slowest = walk_the_class(chromium, url, ("teacher", *students))
    print(f"\n2 processes, Redis: {len(MOVES)} moves followed by both students, the slowest in {slowest:.2f} s after "
          "the teacher's address changed")
    assert upstreams_of(run_dir, ["teacher", *students]) == {
        "teacher": {place["teacher"]}, **{student: {place[student]} for student in students}}
    assert {place[student] for student in students} | {place["teacher"]} == {
        f"127.0.0.1:{port}" for port in pids["streamlit"]}  # the two processes, each the only one of its browsers
    latest = rooms.RedisRooms(rooms.redis_client({"TRANSFORMER_REDIS_URL": redis_url})).latest(code)
    assert latest is not None and latest.page == "animation" and latest.version >= len(MOVES), latest
    assert not (run_dir / "rooms.sqlite3").exists()  # the processes' default store, had they not used Redis
