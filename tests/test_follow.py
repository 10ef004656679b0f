"""Follow the teacher (ui/classroom/follow.py), at the protocol level (bench/protocol.py, no browser): a teacher opens a
room from the sidebar; a student who opens the room's link is on the teacher's page with the teacher's state, asks
the server nothing while the room does not move, and after each change of the teacher gets a run the server starts
itself (ui/classroom/room_watch.py) that shows the teacher's page and view, defaults included; a student who
detaches stays detached, after a reload too; a following student's own change turns following off, with a note; a
forged key and a student's own changes never reach the room."""
import asyncio
import os
import random
import sys
import urllib.parse
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from conftest import app_server, in_own_thread  # noqa: E402
from engine import digits  # noqa: E402
from load import Editor, Target, open_editor  # noqa: E402
from protocol import ForwardMsg, Session  # noqa: E402
from streamlit.proto.Common_pb2 import DoubleArray, StringArray  # noqa: E402
from ui.classroom.follow import POLL_SECONDS  # noqa: E402
from ui.core.i18n import literal, translator  # noqa: E402
from ui.stores import rooms  # noqa: E402

TIMEOUT = 60
T = translator("en")
DIGITS = digits.split("test")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    directory = tmp_path_factory.mktemp("follow")
    database = directory / "rooms.sqlite3"
    with app_server(directory / "streamlit.log", {"TRANSFORMER_ROOMS_DB": str(database)}) as url:
        yield url, rooms.SqliteRooms(database)


def query(session: Session) -> dict:
    return dict(urllib.parse.parse_qsl(session.query_string or ""))


async def type_text(session: Session, key: str, text: str):
    kind, proto = session.last.widget(key)
    session.set_widget(proto.id, string_value=text)
    return await session.rerun(TIMEOUT)


async def click(session: Session, key: str, _=None):
    return await session.click(key, TIMEOUT)


async def toggle(session: Session, key: str, on: bool):
    session.set_widget(session.last.widget(key)[1].id, bool_value=on)
    return await session.rerun(TIMEOUT)


async def slide(session: Session, key: str, value: float):
    session.set_widget(session.last.widget(key)[1].id, double_array_value=DoubleArray(data=[value]))
    return await session.rerun(TIMEOUT)


async def woken(student: Session):
    """The run the server starts for a student whose room moved: the page asks nothing itself (no poll; the hourly
    timer of the copy-link button is there for a reconnect, ui/classroom/follow.py)."""
    assert POLL_SECONDS not in student.auto_reruns.values()
    return await asyncio.wait_for(student.server_run(), TIMEOUT)


def done(run) -> bool:
    """A run that ended well: of the whole page, or of a step page's fragment alone (a following student's page
    woken by the watcher, which takes the teacher's link there)."""
    finished = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
    return run.status in finished and not run.exceptions


def state(session: Session) -> dict:
    """The state a session's address holds, without the room, the key and a student's id."""
    return {name: value for name, value in query(session).items() if name not in ("room", "key", "me")}


async def open_room(url: str) -> tuple[Session, str, str]:
    teacher = await Session.open(url, "attention", timeout=TIMEOUT)
    assert await teacher.open_expander(r"room\.panel", TIMEOUT)
    await click(teacher, r"room\.open")
    link = query(teacher)
    return teacher, link["room"], link["key"]


def shown(session: Session) -> str:
    return " ".join(session.last.texts())


def test_a_student_follows_the_teacher_and_can_detach(server):
    url, store = server

    async def scenario():
        teacher, code, key = await open_room(url)
        student = await Session.open(url, "", query_string=f"room={code}", timeout=TIMEOUT)
        try:
            assert store.latest(code).page == "attention"
            assert student.page_script_hash == teacher.page_script_hash  # moved to the teacher's page
            assert "key" not in query(student) and query(student)["room"] == code
            await type_text(teacher, r"ctl\.src", "Good morning class")
            run = await woken(student)  # the same page: taken in one run, of the page's fragment alone
            assert done(run) and run.status == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY
            assert query(student)["src"] == "Good morning class" and "key" not in query(student)
            assert student.page_script_hash == teacher.page_script_hash

            teacher.page, teacher.page_script_hash = "qkv", ""  # the teacher goes to another page
            await teacher.rerun(TIMEOUT)
            run = await woken(student)
            assert done(run) and store.latest(code).page == "qkv"
            assert student.page_script_hash == teacher.page_script_hash and state(student) == state(teacher)
            version = store.version(code)

            await toggle(student, r"room\.attached\.\w+", False)  # detach, and experiment
            assert POLL_SECONDS not in student.auto_reruns.values() and T("room.detached") in shown(student)
            await type_text(student, r"ctl\.src", "My own sentence")
            assert store.version(code) == version and store.latest(code).query["src"] == "Good morning class"
            await type_text(teacher, r"ctl\.src", "Second sentence")
            assert query(student)["src"] == "My own sentence"  # detached: nothing follows
            reloaded = await Session.open(url, student.page, query_string=student.query_string, timeout=TIMEOUT)
            await reloaded.close()  # a reload stays detached (its link says follow=0), with the student's sentence
            assert query(reloaded)["src"] == "My own sentence" and query(reloaded)["follow"] == "0"
            assert T("room.detached") in shown(reloaded)
            await toggle(student, r"room\.attached\.\w+", True)  # follow again: the teacher's state at once
            assert query(student)["src"] == "Second sentence"
        finally:
            await asyncio.gather(teacher.close(), student.close())

    in_own_thread(scenario)


EDITING = (r"ctl\.src", r"ctl\.tgt", r"ctl\.preset", r"ctl\.options", r"open\.enc\.0\.attn\.W_Q\.1",
           r"cell\.enc\.0\.attn\.\w+\.1", r"plain\.enc\.0\.attn\.\w+\.1", r"heads\.attention\.0", r"attention\.1",
           r"view\.compare", r"derive\.softmax", r"paper\.\w+\.enc\.0\.attn\.\w+")  # widgets that edit or pick


def main_formulas(session: Session) -> list[str]:
    """The main area's formulas (st.latex, and the markdown that is a formula only), without their $$."""
    return [proto.body.strip("$\n") for path, (kind, proto) in session.last.elements.items()
            if path[0] == 0 and kind == "markdown" and proto.body.startswith("$$")]


def chart(session: Session):
    return next(proto for kind, proto in session.last.elements.values() if kind == "plotly_chart")


def test_a_following_students_page_is_read_only_and_shows_the_teachers_view(server):
    """A following student's own change turns following off, so while it follows its page needs nothing to edit or
    pick with, and each of the teacher's changes costs a run of it per student (issue 29): no sentence, option or
    weight editors, no drill-down pickers, no head or step buttons (a line names the chosen one), a heatmap that
    takes no clicks, and a line saying editing needs Follow off. It shows the teacher's view: the same head, step,
    formulas, heatmap and drill-down cell. Follow off brings the whole page back at once, in that view."""
    url, store = server

    async def scenario():
        teacher, code, key = await open_room(url)
        student = await Session.open(url, "", query_string=f"room={code}", timeout=TIMEOUT)
        try:
            for move in (press(teacher, r"heads\.attention\.0", 1), press(teacher, r"attention\.1", 1)):
                await move  # head 2, its scaled scores
                await woken(student)
            kind, cells = teacher.last.widget(r"cell\.enc\.0\.attn\.\w+\.1")  # a cell of the drill-down
            teacher.set_widget(cells.id, string_value=cells.options[-1])  # the last: not the default
            await teacher.rerun(TIMEOUT)
            run = await woken(student)
            assert not run.exceptions and state(student) == state(teacher) and "cell" in state(teacher)
            assert [key for key in EDITING if student.last.widget(key)] == []
            assert all(teacher.last.widget(key) for key in EDITING[:9])  # the teacher's page has them
            assert T("view.read_only") in shown(student) and T("view.read_only") not in shown(teacher)
            assert f"**{T('view.head')} 2**" in shown(student) and f"**2. {T('step.attn.scaled')}**" in shown(student)
            assert chart(student).spec == chart(teacher).spec and not chart(student).selection_mode  # one heatmap
            assert main_formulas(teacher) and all(formula in shown(student) for formula in main_formulas(teacher))

            await toggle(student, r"room\.attached\.\w+", False)  # the whole page, at once, in the same view
            assert [key for key in EDITING[:9] if not student.last.widget(key)] == []
            assert state(student) == state(teacher) | {"follow": "0"} and T("view.read_only") not in shown(student)
            assert chart(student).selection_mode and main_formulas(student) == main_formulas(teacher)
        finally:
            await asyncio.gather(teacher.close(), student.close())

    in_own_thread(scenario)


def test_a_presenting_teachers_students_keep_their_own_screen(server):
    """Presenter mode is the teacher's projector: a student who followed into it had the sidebar (and the follow
    toggle) hidden, and the keys moved the student's own slide away from the room's."""
    url, store = server

    async def scenario():
        teacher, code, key = await open_room(url)
        student = await Session.open(url, "", query_string=f"room={code}", timeout=TIMEOUT)
        try:
            await toggle(teacher, r"ctl\.present", True)
            await type_text(teacher, r"ctl\.src", "Good morning class")
            run = await woken(student)
            assert done(run) and query(teacher)["present"] == "1"
            assert query(student)["src"] == "Good morning class" and "present" not in query(student)
            assert "present" not in store.latest(code).query
        finally:
            await asyncio.gather(teacher.close(), student.close())

    in_own_thread(scenario)


def test_every_student_of_a_room_takes_the_teachers_weight_edit(server):
    url, store = server

    async def scenario():
        teacher, code, key = await open_room(url)
        students = [await Session.open(url, "", query_string=f"room={code}", timeout=TIMEOUT) for _ in range(4)]
        try:
            target = Target.app("attention", "enc.0.attn.W_Q", "0")
            await open_editor(teacher, target, TIMEOUT)
            Editor(teacher, target.editor_key, random.Random(0)).change(row=1, column=2, value=1.25)
            await teacher.rerun(TIMEOUT)
            assert store.latest(code).query["edit"].endswith("=1.25")  # the room holds the edit
            runs = await asyncio.gather(*(woken(student) for student in students))
            assert all(done(run) for run in runs)
            assert all(state(student) == state(teacher) for student in students)
        finally:
            await asyncio.gather(teacher.close(), *(student.close() for student in students))

    in_own_thread(scenario)


def test_students_follow_the_teacher_onto_the_vision_transformers_pages(server):
    """The teacher goes to a ViT page and picks another test image: a following student's page takes both, and its
    address holds the teacher's ViT part (vimg)."""
    url, store = server

    async def scenario():
        teacher, code, key = await open_room(url)
        student = await Session.open(url, "", query_string=f"room={code}", timeout=TIMEOUT)
        try:
            teacher.page, teacher.page_script_hash = "vit_patches", ""
            await teacher.rerun(TIMEOUT)
            assert done(await woken(student)) and student.page_script_hash == teacher.page_script_hash
            teacher.set_widget(teacher.last.widget(r"vit\.image\.0")[1].id, int_value=12)
            await teacher.rerun(TIMEOUT)
            assert query(teacher)["vimg"] == "12" and store.latest(code).query["vimg"] == "12"
            assert done(await woken(student))
            assert query(student)["vimg"] == "12" and state(student) == state(teacher)
            assert T("vit.image_is", n=12, digit=DIGITS.labels[11]) in shown(student)
        finally:
            await asyncio.gather(teacher.close(), student.close())

    in_own_thread(scenario)


def test_when_the_teacher_leaves_the_room_ends_and_its_students_are_told(server):
    url, store = server

    async def scenario():
        teacher, code, key = await open_room(url)
        student = await Session.open(url, "", query_string=f"room={code}", timeout=TIMEOUT)
        try:
            assert state(student) == state(teacher) and T("room.following") in shown(student)
            await click(teacher, r"room\.leave")
            assert "room" not in query(teacher) and store.version(code) is None  # the room ended with its teacher
            run = await woken(student)
            assert done(run) and "room" not in query(student)
            assert T("room.gone", code=code) in shown(student) and T("room.following") not in shown(student)
        finally:
            await asyncio.gather(teacher.close(), student.close())

    in_own_thread(scenario)


def test_where_the_internals_are_off_a_students_page_polls_the_room(tmp_path):
    """Another Streamlit version (ui/core/streamlit_internals.py off): no watcher, the sidebar's fragment asks every
    second (its timer's tick is sent here at once, as the browser's would be a second later)."""
    (tmp_path / "sitecustomize.py").write_text("import streamlit\nstreamlit.__version__ = '0.0.0'\n")
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    env = {"TRANSFORMER_ROOMS_DB": str(tmp_path / "rooms.sqlite3"), "PYTHONPATH": path}

    async def scenario(url):
        teacher, code, key = await open_room(url)
        student = await Session.open(url, "", query_string=f"room={code}", timeout=TIMEOUT)
        try:
            (fragment,) = student.auto_reruns
            assert student.auto_reruns[fragment] == POLL_SECONDS and state(student) == state(teacher)
            idle = await student.auto_rerun(fragment, TIMEOUT)  # the room has not moved: the fragment only, no page
            assert idle.status == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY and state(student) == state(teacher)
            await type_text(teacher, r"ctl\.src", "A polled sentence")
            run = await student.auto_rerun(fragment, TIMEOUT)
            assert not run.exceptions and query(student)["src"] == "A polled sentence"
            assert state(student) == state(teacher) and student.page_script_hash == teacher.page_script_hash
        finally:
            await asyncio.gather(teacher.close(), student.close())

    with app_server(tmp_path / "streamlit.log", env) as url:
        in_own_thread(lambda: scenario(url))
    assert "is not 1.67.x" in (tmp_path / "streamlit.log").read_text()  # the server ran with the internals off


@pytest.mark.parametrize("forged", ["A" * 22, "not-a-key", "'><script>", "Ä" * 22, "' OR '1'='1", "A" * 5000])
def test_a_forged_key_is_refused_and_changes_nothing(server, forged):
    url, store = server

    async def scenario():
        teacher, code, key = await open_room(url)
        before = store.latest(code)
        forger = await Session.open(url, "attention", query_string=f"room={code}&key={urllib.parse.quote(forged)}",
                                    timeout=TIMEOUT)
        try:
            assert not forger.last.exceptions and T("room.wrong_key", code=code) in shown(forger)
            assert "key" not in query(forger) and query(forger)["room"] == code  # now a student of the room
            await toggle(forger, r"room\.attached\.\w+", False)  # a following student's page has nothing to edit
            await type_text(forger, r"ctl\.src", "Forged sentence")
            assert store.latest(code) == before
        finally:
            await asyncio.gather(teacher.close(), forger.close())

    in_own_thread(scenario)


@pytest.mark.parametrize("code", ["HKMN", "ZZZZ", "abc", "A" * 5000, "ACEF'", "ÄBCD", "'; DROP TABLE rooms; --",
                                  "hkmn", "ACEF\x00"])
def test_a_bad_or_unknown_room_code_gets_a_message(server, code):
    url, store = server

    async def scenario():
        session = await Session.open(url, "", query_string=f"room={urllib.parse.quote(code)}", timeout=TIMEOUT)
        await session.close()
        return session

    session = in_own_thread(scenario)
    assert session.last.status == 0 and not session.last.exceptions and "room" not in query(session)
    normal = rooms.normal_code(code)
    expected = T("room.gone", code=normal) if normal else T("room.bad_code", code=literal(code[:12]),
                                                             alphabet=rooms.ALPHABET)  # a code span, not Markdown
    assert expected in shown(session)


async def press(session: Session, key: str, position: int):
    """Press the button at `position` of a row (st.segmented_control) whose user key matches, as the browser does: it
    sends the button's label."""
    _, proto = session.last.widget(key)
    session.set_widget(proto.id, string_array_value=StringArray(data=[proto.options[position].content]))
    return await session.rerun(TIMEOUT)


async def goto(session: Session, page: str):
    session.page, session.page_script_hash = page, ""
    return await session.rerun(TIMEOUT)


def test_going_back_is_followed_to_every_default(server):
    """The teacher walks heads, steps, layers, sections, sub-layers and the other pages' views (a stack's measure, a
    dropout, the training and generation pages' sections, the training page's gradients and label smoothing, the
    generation player's step) forward and back to their defaults (which the teacher's link leaves out); after each
    move the student's page shows the teacher's view (its address: what its widgets show)."""
    url, store = server
    moves = [("attention", r"layer\.enc", 1), ("attention", r"heads\.attention\.1", 1),
             ("attention", r"attention\.1", 2), ("attention", r"attention\.1", 0),
             ("attention", r"heads\.attention\.1", 0), ("attention", r"layer\.enc", 0),
             ("attention", r"attention\.0", 3), ("attention", r"attention\.0", 0),
             ("add_norm", r"add_norm\.sublayer", 1), ("add_norm", r"add_norm\.sublayer", 0),
             ("positional", r"pos\.tab", 1), ("positional", r"pos\.tab", 0),
             ("encoder_stack", r"layer\.enc_stack", 1), ("encoder_stack", r"layer\.enc_stack", 0),
             ("encoder_stack", r"enc\.section", 1), ("encoder_stack", r"enc\.measure", 2),
             ("encoder_stack", r"enc\.measure", 0), ("encoder_stack", r"enc\.section", 0),
             ("dropout", r"dropout\.place", 3), ("dropout", r"dropout\.which\.dec", 2),
             ("dropout", r"dropout\.place", 0),
             ("train", r"train\.tab", 3), ("train", r"train\.tab", 0),
             ("generate", r"gen\.tab", 1), ("generate", r"gen\.tab", 0)]
    moves = [(page, press, key, position) for page, key, position in moves] + [
        ("train", type_text, r"train\.grad_step", "grad.dec.0.ffn.hidden"),
        ("train", toggle, r"train\.grad_param_open", True),
        ("train", type_text, r"train\.grad_param", "enc.0.attn.W_V"),
        ("train", type_text, r"train\.grad_param_head", "2"), ("train", toggle, r"train\.grad_param_open", False),
        ("train", type_text, r"train\.grad_step", "grad.logits"), ("train", slide, r"train\.view_smoothing", 0.1),
        ("train", slide, r"train\.view_smoothing", 0.0),
        ("generate", click, r"gen\.next", None), ("generate", click, r"gen\.prev", None)]

    async def scenario():
        teacher = await Session.open(url, "attention", query_string="cfg=n_layers:2", timeout=TIMEOUT)
        assert await teacher.open_expander(r"room\.panel", TIMEOUT)
        await click(teacher, r"room\.open")
        code = query(teacher)["room"]
        student = await Session.open(url, "", query_string=f"room={code}", timeout=TIMEOUT)
        try:
            for page, move, key, value in moves:
                if teacher.page != page:
                    await goto(teacher, page)
                    await woken(student)
                await move(teacher, key, value)
                run = await woken(student)
                assert done(run)
                assert student.page_script_hash == teacher.page_script_hash
                assert state(student) == state(teacher), (page, key, value)
        finally:
            await asyncio.gather(teacher.close(), student.close())

    in_own_thread(scenario)


async def nothing_comes(session: Session, seconds: float = 1.5) -> bool:
    """No run reaches the session within the time (a woken run would)."""
    try:
        await asyncio.wait_for(session.server_run(), seconds)
    except TimeoutError:
        return True
    return False


def test_a_followers_own_change_turns_following_off_with_a_note_and_a_reload_keeps_it_off(server):
    """A following student who opens another page (its page is read-only while it follows: the sentences, heads
    and steps are the teacher's to change) is told in one line that following is off (it was silent, and the
    teacher's next move wiped the student's work); its link says so (follow=0), so that a reload stays detached,
    with the student's own state."""
    url, store = server
    note = T("room.wandered")

    async def scenario():
        teacher, code, key = await open_room(url)
        wanderer = await Session.open(url, "", query_string=f"room={code}", timeout=TIMEOUT)
        try:
            assert note not in shown(wanderer) and "follow" not in query(wanderer)
            await goto(wanderer, "qkv")
            assert note in shown(wanderer) and T("room.detached") in shown(wanderer)
            assert query(wanderer)["follow"] == "0" and query(wanderer)["room"] == code
            assert wanderer.page_script_hash != teacher.page_script_hash
            assert "follow" not in store.latest(code).query
            await type_text(wanderer, r"ctl\.src", "My own sentence")  # on its own: the whole page
            await press(wanderer, r"heads\.qkv\.0", 1)

            await type_text(teacher, r"ctl\.src", "The teacher moves on")
            assert await nothing_comes(wanderer)
            assert query(wanderer)["src"] == "My own sentence" and query(wanderer)["head"] == "2"

            reloaded = await Session.open(url, "qkv", query_string=wanderer.query_string, timeout=TIMEOUT)
            try:  # the same link in a new tab: still on its own, with its own sentence
                assert query(reloaded)["src"] == "My own sentence" and query(reloaded)["follow"] == "0"
                assert T("room.detached") in shown(reloaded) and note not in shown(reloaded)
                assert await nothing_comes(reloaded)
                await toggle(reloaded, r"room\.attached\.\w+", True)  # following again: the teacher's page at once
                assert query(reloaded)["src"] == "The teacher moves on" and "follow" not in query(reloaded)
                await type_text(teacher, r"ctl\.src", "Back together")
                run = await woken(reloaded)
                assert not run.exceptions and query(reloaded)["src"] == "Back together"
                assert note not in shown(reloaded) and T("room.following") in shown(reloaded)
            finally:
                await reloaded.close()
        finally:
            await asyncio.gather(teacher.close(), wanderer.close())

    in_own_thread(scenario)

