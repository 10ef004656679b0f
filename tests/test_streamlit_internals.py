"""The guard of ui/core/streamlit_internals.py: its workarounds run on the Streamlit they were written for only. Why
each is needed: tests/test_app.py (test_a_session_does_not_keep_the_widgets_it_no_longer_shows, run with the workaround
and without it) and tests/test_follow.py (students woken by the server). The tests' own uses of Streamlit's privates
(tests/streamlit_privates.py) are under the same guard."""
import logging
import sys
from pathlib import Path

import pytest
import streamlit

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import streamlit_privates  # noqa: E402
from ui.core import streamlit_internals  # noqa: E402


def test_the_installed_streamlit_is_the_one_the_workarounds_were_written_for():
    assert streamlit.__version__.startswith(streamlit_internals.WRITTEN_FOR)
    assert streamlit_internals.in_use()


def test_another_version_turns_the_workarounds_off_with_one_warning(caplog):
    caplog.set_level(logging.WARNING, logger=streamlit_internals.__name__)
    streamlit_internals.in_use.cache_clear()  # the warning is logged once per process and version
    assert streamlit_internals.in_use("1.67.9")
    assert not streamlit_internals.in_use("1.68.0") and not streamlit_internals.in_use("1.68.0")
    assert [record.getMessage().split(" is not ")[0] for record in caplog.records] == ["Streamlit 1.68.0"]


def test_waking_another_session_is_off_on_another_version_and_outside_a_server(monkeypatch):
    assert streamlit_internals.this_session() is None  # no script run in this thread
    assert streamlit_internals.rerun_session("no-such-session") is False  # no runtime in this process
    monkeypatch.setattr(streamlit_internals, "in_use", lambda: False)
    assert streamlit_internals.rerun_session("no-such-session") is False


def test_the_tests_own_uses_of_streamlits_privates_are_under_the_same_guard(monkeypatch):
    assert streamlit_privates.events_id("x") == "$$STREAMLIT_INTERNAL_KEY_x__events"
    monkeypatch.setattr(streamlit, "__version__", "1.68.0")
    with pytest.raises(pytest.fail.Exception, match=r"written for Streamlit 1\.67\.x, this is 1\.68\.0: check"):
        streamlit_privates.events_id("x")
