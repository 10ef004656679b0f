"""Two students on one server never see each other's weights: two concurrent sessions over Streamlit's own
websocket protocol (bench/protocol.py, no browser), each editing a different weight of the attention page.

Each session's runs are checked for its own numbers (the scores its edit gives, computed here with the
engine, and its edit in the address) and never the other's, during and after the concurrent edits.
"""
import asyncio
import json
import random
import re
import sys
import urllib.parse
from pathlib import Path

import pytest
from streamlit.proto.Common_pb2 import StringArray
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import streamlit_privates  # noqa: E402
from conftest import app_server, in_own_thread  # noqa: E402
from load import Editor, Target, open_editor  # noqa: E402
from protocol import Session  # noqa: E402
from ui.core import state as app_state  # noqa: E402
from ui.core.format import DIGITS, fmt_tex  # noqa: E402

TIMEOUT = 60  # seconds for a page load or a rerun on a busy machine; nothing here is timed
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
EDITS = {"a": ("enc.0.attn.W_Q", 7.125), "b": ("enc.0.attn.W_K", -3.375)}  # row 0, column 0 of head 1


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with app_server(tmp_path_factory.mktemp("server") / "streamlit.log") as url:
        yield url


def numbers(texts) -> set[str]:
    return set(NUMBER.findall(" ".join(texts).replace("−", "-")))


def expected_scores(param, value) -> set[str]:
    """The attention scores of head 1 as the app writes them, after one edited weight on the default state."""
    state = app_state.AppState().with_edit(param, (0, 0, 0), value)
    base = app_state.base_model(state.preset, state.seed, state.overrides)
    model, _ = app_state.apply_edits(base, state.edits)
    return {fmt_tex(x, DIGITS) for x in model.run(state.src, None)["enc.0.attn.scores"][0].ravel()}


async def edit(session: Session, param: str, value: float):
    """Type a value into row 0, column 0 of the head-1 editor of param, as the grid or the number input does."""
    target = Target.app("attention", param, "0")
    await open_editor(session, target, TIMEOUT)
    editor = Editor(session, target.editor_key, random.Random(0))
    kind = editor.kind()
    assert kind, f"no editor for {param} on the attention page"
    typed = editor.change(row=0, column=0, value=value)
    assert kind == "grid" or "(0, 0, 0)" in typed, typed  # the single-cell editor starts on cell 0, 0
    return await session.rerun(timeout=TIMEOUT)


def test_two_sessions_see_only_their_own_edit(server):
    async def scenario():
        a, b = await asyncio.gather(*(Session.open(server, "attention", timeout=TIMEOUT) for _ in "ab"))
        try:
            first = {"a": a.last, "b": b.last}
            edited = dict(zip("ab", await asyncio.gather(edit(a, *EDITS["a"]), edit(b, *EDITS["b"]))))
            again = dict(zip("ab", await asyncio.gather(a.rerun(TIMEOUT), b.rerun(TIMEOUT))))  # a plain rerun
            return first, edited, again, {"a": a.query_string, "b": b.query_string}  # each one's address now
        finally:
            await asyncio.gather(a.close(), b.close())

    first, edited, again, addresses = in_own_thread(scenario)
    base = numbers(first["a"].texts()) | numbers(first["b"].texts())
    scores = {name: expected_scores(*EDITS[name]) for name in "ab"}
    for own, other in (("a", "b"), ("b", "a")):
        for run in (first[own], edited[own], again[own]):
            assert run.status == 0 and not run.exceptions and not run.page_not_found
        own_param, own_value = EDITS[own]
        other_param, other_value = EDITS[other]
        foreign = scores[other] - scores[own] - base
        assert foreign, "the two edits must give scores that tell them apart"
        assert numbers(first[own].texts()).isdisjoint(scores[own] - base)  # the edit is what brings them
        for run in (first[own], edited[own], again[own]):
            assert numbers(run.texts()).isdisjoint(foreign), f"session {own} shows numbers of the other's edit"
            assert other_param not in (run.query_string or "") and repr(abs(other_value)) not in " ".join(run.texts())
        # the edit's run writes the address; a plain rerun leaves it as it is (the app writes it only when it changes)
        for address in (edited[own].query_string, addresses[own]):
            assert other_param not in address and f"{own_param}:0.0.0={own_value!r}" in urllib.parse.unquote(address)
        assert again[own].query_string is None
        for run in (edited[own], again[own]):
            assert scores[own] <= numbers(run.texts()), f"session {own} does not show the scores of its own edit"


# an empty line and a Markdown link (ui/core/i18n.literal writes it on one line)
HOSTILE_PART = "x\n\n[sign in](//ev.il)"


def test_forged_values_over_the_websocket_keep_the_view(server):
    """What only a hand-made client sends, to a server run as a class runs it: a link part with an empty line and a
    link in it, a section the page's control does not offer and none at all, a drill-down cell that is none of its
    list's, and a presenter's rail told to leave with false. No run raises; the note names the part on one line; the
    view stays (the page writes its address only when it changes: None), but for the emptied section (the first)."""
    async def scenario():
        tokens = await Session.open(server, "tokens", timeout=TIMEOUT,
                                    query_string=f"cfg={urllib.parse.quote(HOSTILE_PART)}&section=3")
        attention = await Session.open(server, "attention", query_string="present=1&cell=1.1", timeout=TIMEOUT)
        try:
            runs = [tokens.last, attention.last]
            _, control = tokens.last.widget(r"tokens\.tab")
            for sent in (["zzz"], ["x" * 10_000], []):
                tokens.set_widget(control.id, string_array_value=StringArray(data=sent))
                runs.append(await tokens.rerun(TIMEOUT))
            _, cells = attention.last.widget(r"cell\.enc\.0\.attn\.scores\.0")
            attention.set_widget(cells.id, string_value="-1")
            runs.append(await attention.rerun(TIMEOUT))
            _, rail = attention.last.widget(r"present\.rail")
            attention.set_widget(rail.id, json_value="{}")
            attention.set_widget(streamlit_privates.events_id(rail.id),
                                 json_trigger_value=json.dumps([{"event": "leave", "value": False}]))
            runs.append(await attention.rerun(TIMEOUT))
            return runs
        finally:
            await asyncio.gather(tokens.close(), attention.close())

    runs = in_own_thread(scenario)
    for run in runs:  # a widget of a step page reruns its fragment (frame.page)
        assert run.status in (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
        assert not run.exceptions and not run.page_not_found
    first, opened, unknown, long, emptied, cell, leave = runs
    note = f"Part of the link was ignored: ` {HOSTILE_PART.replace(chr(10), chr(92) + 'n')} `"
    assert note in first.texts() and "section=3" in first.query_string and "cfg" not in first.query_string
    assert unknown.query_string is None and long.query_string is None  # still section=3
    assert "section" not in emptied.query_string and "preset=hello-world" in emptied.query_string
    assert "present=1" in opened.query_string and "cell=1.1" in opened.query_string
    assert cell.query_string is None and leave.query_string is None  # still present=1&cell=1.1
    assert leave.widget(r"present\.rail") is not None
