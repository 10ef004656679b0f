"""Every use of Streamlit's private internals, in one place: written for Streamlit 1.67.x and used only there.

On any other version each workaround is off, with one logged warning, until someone has checked it against that
version's source: `forget_stale_widgets` reads and writes private attributes of a session's state,
and `rerun_session` reaches another session through the runtime's private session manager (off, the students'
pages poll instead: ui/classroom/follow.py). Why each is needed, and the test that fails without it on 1.67:
docs/streamlit-widget-leak.md, tests/test_app.py (test_a_session_does_not_keep_the_widgets_it_no_longer_shows) and
tests/test_follow.py (test_a_student_follows_the_teacher_and_can_detach).
"""
from __future__ import annotations

import functools
import logging

import streamlit
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime import Runtime
from streamlit.runtime.app_session import AppSessionState
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState
from streamlit.runtime.state import get_session_state

WRITTEN_FOR = "1.67."  # the Streamlit versions whose source these workarounds were checked against
RERUN_LATER_SECONDS = 0.05  # rerun_session on a session busy with a run of its own: asked again this much later

log = logging.getLogger(__name__)


@functools.cache
def in_use(version: str = streamlit.__version__) -> bool:
    """Whether the workarounds run: on the version they were written for only, else one warning and never."""
    if version.startswith(WRITTEN_FOR):
        return True
    log.warning("Streamlit %s is not %sx, for which ui/core/streamlit_internals.py was written: its workarounds are "
                "off (the widget-metadata leak is not handled)", version, WRITTEN_FOR)
    return False


def forget_stale_widgets() -> None:
    """Drop what Streamlit 1.67 keeps of widgets a session no longer shows: after each run it forgets a stale
    widget's value but not its metadata (docs/streamlit-widget-leak.md). A clickable heatmap gets a new widget id
    whenever its numbers or its marked cell change, so a session grew by ~1.4 kB per rerun for as long as it lived.
    A widget is live while it has a value (sent by the browser or kept from the last run) or is the one its key
    names."""
    if not in_use():
        return
    session = get_session_state()._state
    widgets, keys = session._new_widget_state, session._key_id_mapper
    live = widgets.states.keys() | session._old_state.keys() | set(keys._key_id_mapping.values())
    for stale in widgets.widget_metadata.keys() - live:
        del widgets.widget_metadata[stale]
    for stale in keys.id_key_mapping.keys() - live:  # the key's earlier ids
        del keys.id_key_mapping[stale]


def this_session() -> str | None:
    """The id of the session whose script runs in this thread, for rerun_session; None if off."""
    run = get_script_run_ctx() if in_use() else None
    return None if run is None else run.session_id


def this_fragment() -> str | None:
    """The id of the st.fragment running in this thread, for rerun_session; None outside one, or if off."""
    return ThreadState.get().fragment_id if in_use() else None


def fragment_run() -> bool:
    """Whether this run is one of fragments alone (not of the whole app); False if off."""
    run = get_script_run_ctx() if in_use() else None
    return bool(run is not None and run.fragment_ids_this_run)


def rerun_session(session_id: str, fragment_id: str | None = None) -> bool:
    """From any thread: rerun the whole page of a session of this process (or only its fragment `fragment_id`, if the
    session still holds it), with the page and address of its last run and no widget changed (what Streamlit's own
    rerun-on-save asks). False if the session is gone, or the workaround is off."""
    if not in_use() or not Runtime.exists():
        return False
    found = Runtime.instance()._session_mgr.get_active_session_info(session_id)
    if found is None:
        return False
    fragment_id = fragment_id if fragment_id and found.session.has_fragment(fragment_id) else ""
    loop = found.session._event_loop
    loop.call_soon_threadsafe(_rerun, found.session, fragment_id)  # on the server's event loop, as a BackMsg
    return True


def _rerun(session, fragment_id: str) -> None:
    if session._state == AppSessionState.SHUTDOWN_REQUESTED:
        return
    if session._state == AppSessionState.APP_IS_RUNNING:  # a run of its own, which a rerun now would stop: after it
        session._event_loop.call_later(RERUN_LATER_SECONDS, _rerun, session, fragment_id)
        return
    last = session._client_state
    state = ClientState(query_string=last.query_string, page_script_hash=last.page_script_hash,
                        page_name=last.page_name, fragment_id=fragment_id)
    if last.HasField("context_info"):
        state.context_info.CopyFrom(last.context_info)
    session.request_rerun(state)

