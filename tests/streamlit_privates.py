"""Every use the tests make of Streamlit's private internals, in one place, under the guard of
ui/core/streamlit_internals.py: written for the Streamlit its WRITTEN_FOR names. On any other version each helper fails
its test with a message saying what to check, instead of testing through internals no one has read for it.

Why each is needed (the public API has no way to do it):

* `send`: AppTest's widgets set only values their browser widget can hold, through checks of their own; a data
  editor's typed JSON, a row of buttons' label, a forged value of another shape or type, a slider's NaN are what a
  browser or a hand-made websocket message sends. `AppTest._tree.get_widget_states()` is what the page as drawn
  would send, `AppTest._run(states)` reruns with exactly those states.
* `trigger`: a custom component (st.components.v2: presenter mode's rail, the animation's player) sends an event
  as a trigger value under Streamlit's internal key `$$STREAMLIT_INTERNAL_KEY_<id>__events`; AppTest has no
  element class for such components.
* `nodes`: every element of the page, in the sidebar or the main area, components too (AppTest's `_tree`).
* `kept_widgets`: the entries a session keeps for its widgets (its SessionState's `_new_widget_state.widget_metadata`
  and `_key_id_mapper.id_key_mapping`, AppTest's `_session_state`), which
  ui/core/streamlit_internals.forget_stale_widgets prunes.
* `number_input_warnings`: Streamlit logs a number input's type/format mismatch through the module's `_LOGGER`.
* `cache_hash`: the hash st.cache_resource gives a key (`streamlit.runtime.caching.hashing.update_hash`), to show
  that two states that differ by one ulp of one weight are two cache entries.
* `sent_by_reference`: whether Streamlit would send an element as a reference to the browser's copy
  (`streamlit.runtime.forward_msg_cache.populate_hash_if_needed` marks it cacheable), which .streamlit/config.toml
  turns off (tests/test_presenter.py::test_two_quick_keys_move_two_slides shows why).
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest
import streamlit
from streamlit.proto.WidgetStates_pb2 import WidgetState

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from ui.core import streamlit_internals  # noqa: E402


def _checked() -> None:
    if not streamlit.__version__.startswith(streamlit_internals.WRITTEN_FOR):
        pytest.fail(f"tests/streamlit_privates.py was written for Streamlit {streamlit_internals.WRITTEN_FOR}x, "
                    f"this is {streamlit.__version__}: check each use against its source, then WRITTEN_FOR")


def events_id(widget_id: str) -> str:
    """The id under which a component's events (trigger values) are sent."""
    _checked()
    return f"$$STREAMLIT_INTERNAL_KEY_{widget_id}__events"


def send(at, *states: WidgetState):
    """Rerun as the browser would after these widget states: the page's other widgets keep what they hold."""
    _checked()
    sent = at._tree.get_widget_states()
    ids = {state.id for state in states}
    kept = [state for state in sent.widgets if state.id not in ids]
    del sent.widgets[:]
    sent.widgets.extend(kept + list(states))
    at._run(sent)
    return at


def forged_state(element, value) -> WidgetState:
    """What a forged message sends for a widget the page draws disabled, which AppTest's set_value refuses to set."""
    _checked()
    element._value = value
    return element._widget_state


def send_value(at, widget_id: str, **value):
    """Send one widget's value as a websocket message would, e.g. string_value=..., double_value=math.nan."""
    return send(at, WidgetState(id=widget_id, **value))


def nodes(at):
    """Every element of the page AppTest ran, depth first."""
    _checked()

    def walk(node):
        for child in getattr(node, "children", {}).values():
            yield child
            yield from walk(child)

    yield from walk(at._tree)


def component(at, key: str):
    """The custom component (st.components.v2) drawn with this key, or None."""
    return next((n for n in nodes(at) if getattr(n, "type", None) == "bidi_component" and n.key == key), None)


def trigger(at, key: str, event: str, value, state: str = "{}"):
    """What a component sends on an event: its state (JSON) and the event as a trigger."""
    node = component(at, key)
    return send(at, WidgetState(id=node.proto.id, json_value=state),
                WidgetState(id=events_id(node.proto.id),
                            json_trigger_value=json.dumps([{"event": event, "value": value}])))


def kept_widgets(at) -> int:
    """The entries the session keeps for its widgets (metadata, and ids its keys named): the figure that grows by one
    each rerun with the leak."""
    _checked()
    session = at._session_state._state
    return len(session._new_widget_state.widget_metadata) + len(session._key_id_mapper.id_key_mapping)


def number_input_warnings(monkeypatch) -> list:
    """The warnings Streamlit's number input logs from now on (a value's type against its format)."""
    _checked()
    from streamlit.elements.widgets import number_input

    logged = []
    monkeypatch.setattr(number_input._LOGGER, "warning", lambda *args, **kwargs: logged.append(args))
    return logged


def cache_hash(key, hash_funcs) -> str:
    """The hash st.cache_resource gives `key`, with the cache's hash_funcs."""
    _checked()
    from streamlit.runtime.caching.cache_type import CacheType
    from streamlit.runtime.caching.hashing import update_hash

    hasher = hashlib.new("md5")
    update_hash(key, hasher, CacheType.RESOURCE, hash_funcs=hash_funcs)
    return hasher.hexdigest()


def sent_by_reference(markdown: str) -> bool:
    """Whether an element showing `markdown` is one Streamlit sends as a reference when the browser holds it."""
    _checked()
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from streamlit.runtime.forward_msg_cache import populate_hash_if_needed

    message = ForwardMsg()
    message.delta.new_element.markdown.body = markdown
    populate_hash_if_needed(message)
    return message.metadata.cacheable
