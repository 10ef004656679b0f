"""A Streamlit session spoken over the websocket the browser uses, without a browser (Streamlit 1.67).

The browser opens `ws://HOST/_stcore/stream` (subprotocol "streamlit") and sends `BackMsg`s; the server
answers with `ForwardMsg`s. A script run is asked for with a `rerun_script` BackMsg carrying a
`ClientState`: the query string, the page (`page_name` = the page's url path, and after the first run the
`page_script_hash` the server reported in its `navigation` message), `context_info` (locale, timezone,
url) and the `WidgetStates` of the widgets the user has set (the server keeps the others' values). The server
replies with `new_session`, the deltas of the run (each element at its `metadata.delta_path`) and `script_finished`.
A run ended with FINISHED_EARLY_FOR_RERUN is followed by another one (st.rerun()); the rerun is done at the next
status.

Like the browser, a session keeps the messages the server marked cacheable and lists their hashes in
`cached_message_hashes`, so the server may send a `ref_hash` instead of the message.
"""
from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Common_pb2 import StringArray
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import connect

EARLY_FOR_RERUN = ForwardMsg.FINISHED_EARLY_FOR_RERUN
TEXT_FIELDS = {"markdown": "body", "heading": "body", "code": "code_text", "text": "body", "alert": "body",
               "exception": "message"}


class RerunTimeout(Exception):
    """The server did not finish a run in time."""


@dataclass
class Run:
    """What one script run rendered: its elements by delta path, and what else the server sent."""
    elements: dict = field(default_factory=dict)  # delta path -> (element type, element proto)
    fragments: dict = field(default_factory=dict)  # delta path -> id of the st.fragment that drew it
    query_string: str | None = None  # the address the run set (st.query_params), if it changed it
    status: int | None = None  # the ForwardMsg script_finished status of the last run
    page_not_found: bool = False
    messages: int = 0
    bytes: int = 0

    @property
    def exceptions(self) -> list:
        return [proto for kind, proto in self.elements.values() if kind == "exception"]

    def widget(self, key_pattern: str):
        """The (type, proto) of the element whose widget id ends with a user key matching the regex."""
        pattern = re.compile(rf"-(?:{key_pattern})$")
        for kind, proto in self.elements.values():
            if pattern.search(getattr(proto, "id", "") or ""):
                return kind, proto
        return None

    def texts(self) -> list[str]:
        """Everything the run wrote as text: markdown and LaTeX, headings, code, alerts, exceptions, the
        values of number inputs, and the address it set."""
        found = [getattr(proto, TEXT_FIELDS[kind]) for kind, proto in self.elements.values() if kind in TEXT_FIELDS]
        found += [repr(proto.value) for kind, proto in self.elements.values()
                  if kind == "number_input" and proto.HasField("value")]
        return found + ([self.query_string] if self.query_string is not None else [])


class Session:
    """One browser tab: `await Session.open(url, page)`, then `await session.rerun({widget_id: state})`."""

    def __init__(self, websocket, url: str, page: str, query_string: str, locale: str, headers: dict | None = None):
        self.websocket = websocket
        self.url, self.page, self.query_string, self.locale, self.headers = url, page, query_string, locale, headers
        self.page_script_hash = ""
        self.widgets: dict[str, WidgetState] = {}  # what the user has set, re-sent with every rerun
        self.cache: dict[str, ForwardMsg] = {}
        self.last: Run | None = None
        self.fragment: str | None = None  # the fragment of the widgets set since the last rerun ("" = several)
        self.auto_reruns: dict[str, float] = {}  # fragment id -> seconds: st.fragment(run_every) of the last run

    @classmethod
    async def open(cls, url: str, page: str = "", query_string: str = "", locale: str = "en-US",
                   timeout: float = 60.0, headers: dict | None = None) -> "Session":
        """Connect to the server at url (http://host:port) and load a page (its url path) like a browser;
        headers go with the websocket's HTTP request (a Cookie, an Origin)."""
        session = cls(await _connect(url, headers, timeout), url, page, query_string, locale, headers)
        await session.rerun(timeout=timeout)
        return session

    async def reconnect(self, timeout: float = 60.0) -> Run:
        """After the websocket dropped: a new one (same headers), and a run of the page shown, as the browser asks
        when it reconnects (ui/classroom/follow.py: _copy_link_on_a_timer): that page's hash, the address and the widget
        states. If the process died, a balancer sends it to another process, where it is a new session."""
        self.websocket = await _connect(self.url, self.headers, timeout)
        self.fragment = None
        return await self.rerun(timeout)

    @property
    def compression(self) -> str:
        return self.websocket.response.headers.get("Sec-WebSocket-Extensions", "") or "none"

    def set_widget(self, widget_id: str, **value) -> None:
        """Remember a widget's new value, e.g. set_widget(id, string_value=...) or double_value=...

        As in the browser, a change to a widget inside an st.fragment reruns that fragment only."""
        self.widgets[widget_id] = WidgetState(id=widget_id, **value)
        paths = [path for path, (_, proto) in self.last.elements.items() if getattr(proto, "id", "") == widget_id]
        fragment = self.last.fragments.get(paths[0], "") if paths else ""
        self.fragment = fragment if self.fragment in (None, fragment) else ""

    async def click(self, key_pattern: str, timeout: float = 60.0) -> Run:
        """A click on the button whose user key matches, sent once: as in the browser, the next rerun does not send
        it again."""
        widget = self.last.widget(key_pattern)[1].id
        self.set_widget(widget, trigger_value=True)
        run = await self.rerun(timeout)
        self.widgets.pop(widget, None)
        return run

    async def auto_rerun(self, fragment_id: str, timeout: float = 60.0) -> Run:
        """Rerun a fragment that asked for it (st.fragment(run_every)), as the browser's timer does."""
        self.fragment = fragment_id
        return await self.rerun(timeout, auto=True)

    async def rerun(self, timeout: float = 60.0, auto: bool = False) -> Run:
        """Send the widget states (a rerun, as after a user's change) and wait for the run to finish."""
        message = BackMsg()
        state = message.rerun_script
        state.is_auto_rerun = auto
        state.query_string = self.query_string
        state.page_script_hash = self.page_script_hash
        state.page_name = self.page
        fragment, self.fragment = self.fragment or "", None
        state.fragment_id = fragment
        state.widget_states.widgets.extend(self.widgets.values())
        state.cached_message_hashes.extend(self.cache)
        state.context_info.locale = self.locale
        state.context_info.timezone = "UTC"
        state.context_info.url = f"{self.url.rstrip('/')}/{self.page}"  # as the browser sends it: without the query
        await self.websocket.send(message.SerializeToString())
        try:
            async with asyncio.timeout(timeout):
                run = await self._receive_run(self.last, fragment) if fragment else await self._receive_run()
        except TimeoutError:
            raise RerunTimeout(f"no script_finished within {timeout:g} s") from None
        return self._shown(run)

    async def server_run(self) -> Run:
        """Wait for a run the server starts on its own (nothing sent), e.g. a fragment it reruns for the session."""
        return self._shown(await self._receive_run(self.last, fragment=None))

    def _shown(self, run: Run) -> Run:
        # The browser forgets the states of widgets that left the page.
        shown = {getattr(proto, "id", "") for _, proto in run.elements.values()}
        self.widgets = {wid: value for wid, value in self.widgets.items() if wid in shown}
        self.last = run
        return run

    async def _receive_run(self, before: Run | None = None, fragment: str | None = "") -> Run:
        """The next run's messages; a fragment's run redraws its part of `before`, the page's last run (fragment
        None: a run the server started, which keeps all of `before` until a run of the whole page starts)."""
        run = Run()
        if before is not None:  # what the fragment does not draw this time is gone, the rest stays
            kept = [path for path in before.elements if before.fragments.get(path) != fragment]
            run.elements = {path: before.elements[path] for path in kept}
            run.fragments = {path: before.fragments[path] for path in kept}
        while True:
            data = await self.websocket.recv()
            message = ForwardMsg()
            message.ParseFromString(data)
            run.messages += 1
            run.bytes += len(data)
            if message.HasField("ref_hash"):
                cached = self.cache[message.ref_hash]
                cached.metadata.CopyFrom(message.metadata)
                message = cached
            elif message.metadata.cacheable and message.hash:
                self.cache[message.hash] = message
            kind = message.WhichOneof("type")
            if kind == "new_session" and (before is None or not message.metadata.run.fragment_ids):
                run.elements.clear()  # a (re)run of the whole page starts: what came before was a finished run
                run.fragments.clear()
                self.auto_reruns.clear()  # the page's fragments ask again
            elif kind == "auto_rerun":
                self.auto_reruns[message.auto_rerun.fragment_id] = message.auto_rerun.interval
            elif kind == "stop_auto_rerun":
                for fragment_id in message.stop_auto_rerun.fragment_ids:
                    self.auto_reruns.pop(fragment_id, None)
            elif kind == "delta" and message.delta.WhichOneof("type") == "new_element":
                element = message.delta.new_element
                element_kind = element.WhichOneof("type")
                run.elements[tuple(message.metadata.delta_path)] = (element_kind, getattr(element, element_kind))
                run.fragments[tuple(message.metadata.delta_path)] = message.delta.fragment_id
            elif kind == "delta" and message.delta.WhichOneof("type") == "add_block":
                block = message.delta.add_block  # an expander or tabs with a key: a widget (what is open)
                block_kind = block.WhichOneof("type")
                if block_kind in ("expandable", "tab_container") and getattr(block, block_kind).id:
                    run.elements[tuple(message.metadata.delta_path)] = (block_kind, getattr(block, block_kind))
                    run.fragments[tuple(message.metadata.delta_path)] = message.delta.fragment_id
            elif kind == "page_info_changed":
                run.query_string = self.query_string = message.page_info_changed.query_string
            elif kind == "navigation":
                self.page_script_hash = message.navigation.page_script_hash
            elif kind == "page_not_found":
                run.page_not_found = True
            elif kind == "script_finished":
                run.status = message.script_finished
                if message.script_finished != EARLY_FOR_RERUN:
                    return run

    async def open_tab(self, key_pattern: str, label: str, timeout: float = 60.0) -> bool:
        """Open a page's section (pickers.section_tabs: a row of buttons, st.segmented_control) whose user key
        matches, as a click on its label does (the browser sends the label; it reruns); False if the page has
        none."""
        return await self._open(key_pattern, "button_group", timeout, string_array_value=StringArray(data=[label]))

    async def open_expander(self, key_pattern: str, timeout: float = 60.0) -> bool:
        """Open the first expander whose user key matches, as a click on its label does (it reruns); False if
        the page has none."""
        return await self._open(key_pattern, "expandable", timeout, bool_value=True)

    async def _open(self, key_pattern: str, kind: str, timeout: float, **value) -> bool:
        found = self.last.widget(key_pattern)
        if found is None or found[0] != kind:
            return False
        self.set_widget(found[1].id, **value)
        await self.rerun(timeout)
        return True

    async def close(self) -> None:
        await self.websocket.close()


async def _connect(url: str, headers: dict | None, timeout: float):
    stream = re.sub(r"^http", "ws", url.rstrip("/")) + "/_stcore/stream"
    # Browsers send no pings of their own; the server pings, and the client answers.
    return await connect(stream, subprotocols=["streamlit"], max_size=None, ping_interval=None, open_timeout=timeout,
                         additional_headers=headers)


async def timed_rerun(session: Session, timeout: float) -> tuple[float, Run]:
    """A rerun and its latency in seconds, from sending the BackMsg to receiving script_finished."""
    start = time.perf_counter()
    run = await session.rerun(timeout=timeout)
    return time.perf_counter() - start, run
