"""The step in view: a page that a presenter's key or the teacher's move opened shows the step being presented (its
heading at the top of the screen), not the page's title and intro 1,200 px above it.

One st.components.v2 element with no markup, no style and no text: its data is the view's name (page and the values
its widgets show), and its script scrolls the main area's first step heading (h5) under the header when that name
changes. It waits for the page's run to end, so a page change's new heading is the one scrolled to. Drawn on a step
page in presenter mode (ui/views/frame.py) and on a student's page that follows the teacher; a reader's own page
never moves under them. The same script brings a page's top into view (`to_top`: a student who left the teacher's
page reads the note above it), the step again after the class quiz's panel above it changed (`again`), that panel
where the teacher asked the question (`to_panel`), or another element (`to_element`: the animation's player, whose
drawing lay under the rail at 1280 x 720, and below a following phone's screen)."""
import json

import streamlit as st

from ui.core import session_store

KEY = "step.scroll"
TOP_KEY = "step.scroll.top"
PANEL_KEY = "step.scroll.panel"
SCROLLED = "step.scroll.view"  # session_state: the view this session's page last scrolled to
AGAIN = "step.scroll.again"  # session_state: how many times the same step was asked into view again
JS = """
const MAIN = "[data-testid='stMain']", HEADING = MAIN + " h5", HEADER = "[data-testid='stHeader']";
const SETTLED = "[data-testid='stApp'][data-test-script-state='notRunning']";
const UNDRAWN = "[data-testid='stSkeleton'], [data-testid='stPlotlyChart']:not(:has(.main-svg))";
const WAIT = 100, GIVE_UP = 30000;  // ms: look for the run's end this often; once over, look for the heading this long
const AGAIN = 250, STILL = 2000, LONGEST = 60000;  // ms: charts mount after the run, above the heading too, and move
// it down (seconds later on a busy machine): put it back this often, until every chart is drawn and the page has held
// still this long (or LONGEST after the run's end)
if (!window.readerWatched) {  // the reader's own scroll (or click, or key) stops the placing
    window.readerWatched = true;
    for (const input of ["wheel", "touchmove", "keydown", "mousedown"]) {
        window.addEventListener(input, () => { window.readerMovedAt = Date.now(); }, {capture: true, passive: true});
    }
}

function inMain(selector) {  // the element, in the page or in a component's shadow root (the animation's player)
    const main = document.querySelector(MAIN);
    const hosts = main
        ? [main, ...[...main.querySelectorAll("*")].filter(e => e.shadowRoot).map(e => e.shadowRoot)]
        : [];
    return hosts.map(host => host.querySelector(selector)).find(Boolean) || null;
}

export default function({data}) {
    if (window.stepInView === data.view) {  // the same step again (an edit, a rerun): the reader's scroll stays
        return;
    }
    window.stepInView = data.view;
    const start = Date.now();
    let over = null, layout = null, stillSince = null;
    const show = () => {  // once the run is over and its heading drawn (a new page's first runs are the old page's)
        const main = document.querySelector(MAIN);
        const heading = data.top ? main : (data.target ? inMain(data.target) : document.querySelector(HEADING));
        const settled = document.querySelector(SETTLED);
        over = settled ? over || Date.now() : null;
        if (window.stepInView !== data.view || !main || (window.readerMovedAt || 0) > start ||
            (over !== null && Date.now() - over > (heading ? LONGEST : GIVE_UP))) {  // a newer step, or the reader's
            return;
        }
        if (!settled || !heading) {  // a busy server's run lasts seconds
            setTimeout(show, WAIT);
            return;
        }
        if (data.top) {
            main.scrollTop = 0;
        } else if (data.target && !data.block) {  // under the header (a component's element: its own styles, which the
            // page's scroll margin does not reach)
            const header = document.querySelector(HEADER);
            main.scrollTop += heading.getBoundingClientRect().top
                - (header ? header.getBoundingClientRect().bottom : 0);
        } else {
            heading.scrollIntoView({block: data.block || "start"});
        }
        const now = [main.scrollHeight, main.scrollTop, document.querySelectorAll(UNDRAWN).length].join();
        stillSince = now === layout && !document.querySelector(UNDRAWN) ? stillSince : Date.now();
        layout = now;
        if (Date.now() - stillSince < STILL) {
            setTimeout(show, AGAIN);
        }
    };
    setTimeout(show, WAIT);
}
"""
_scroll = st.components.v2.component("step_scroll", js=JS)


def to_step(page: str, shown: dict) -> None:
    """Bring the step this page shows (shown: its widgets' values) into view when it is another than the last; a
    drill-down's cell is not another step (a click on the heatmap leaves the page where it is). Drawn only then:
    another number on the same step (a following student's usual update) sends nothing, and the element drawn
    again later finds the last view it scrolled to in the browser's window."""
    step = {part: value for part, value in shown.items() if part != "cell"}
    again = session_store.get(AGAIN, 0)
    view = json.dumps([page, step] + ([again] if again else []), sort_keys=True, default=str)
    if session_store.get(SCROLLED) != view:
        session_store.put(SCROLLED, view)
        _scroll(key=KEY, data={"view": view})


def again() -> None:
    """The step back into view on the next run, though it is the same: the class quiz's panel above the page grew or
    went (the teacher revealed the answer or put the question away), and moved the step's heading off the screen."""
    session_store.put(AGAIN, session_store.get(AGAIN, 0) + 1)


def to_panel(view: str, key: str, block: str = "nearest") -> None:
    """Bring the element of this key (a container's) into view once the run is over: no further than needed, or
    (block "start") at the top of the screen. The class quiz's panel where the teacher asked the question, and the
    question once put away: the runs that drew them moved the page (view: what is shown, told apart)."""
    _scroll(key=PANEL_KEY, data={"view": json.dumps(["panel", view]), "target": f".st-key-{key.replace('.', '-')}",
                                 "block": block})


def to_top(page: str) -> None:
    """Bring the page's top into view, once the run is over: the page a following student opened on its own kept the
    step scroll of the teacher's page now and then, with the note that says following is off out of sight."""
    session_store.pop(SCROLLED)  # following again scrolls to the teacher's step
    _scroll(key=TOP_KEY, data={"view": json.dumps(["top", page]), "top": True})


def to_element(page: str, selector: str) -> None:
    """Bring the page's element that the CSS selector names to the top of the screen, once the run is over, once per
    visit of the page (another run leaves the reader's scroll alone)."""
    session_store.pop(SCROLLED)  # the step page opened next scrolls to its step
    _scroll(key=f"{KEY}.element", data={"view": json.dumps(["element", page, selector]), "target": selector})
