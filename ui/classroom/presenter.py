"""Presenter mode (the link's present=1): type sized for a projector, and a rail of the whole forward pass
(navigation.slides) at the foot of every step page, whose keys move the class from step to step across pages.

One st.components.v2 element, drawn only in presenter mode: its fixed style sheet (not isolated, so it sizes the
page's type; no user text in it), the rail built with textContent from the catalog's words, and a key listener
on the page. In a stack of several layers the keys walk every layer in turn; the rail shows the layer being
presented as its steps' dots and every other layer as one button that opens its first step. Right, PageDown and
Space go forward, Left, PageUp and Shift+Space back. In a field, arrows and Space are the field's, but a clicker's
PageDown/PageUp still move the slides and Escape leaves the field; the rail says so while the focus is in one.

Every press counts, however slow the server: a move sends the position of the slide it asks for (the server checks
it), counted in the browser from the slide asked for last while the page has not shown it yet. The page keeps one
listener across its rails (a switch to another page mounts a new one), so a press made during the switch is kept and
sent by the next rail, and once the server's run is over on another slide than the one asked for, it asks again (a
press that reached the server during a switch was dropped with its rail). The rail carries the room's code for
students who come in late.

The rail lies over the sidebar when it is open. A screen 640 px wide or less (a student's phone that follows a
presenting teacher) keeps the normal type, and its rail is one line: the moves and the slide's name.

Which page's rail was drawn and the slide a key asked for are one value, ui/classroom/presenting.py's `Presenting`,
whose pure functions the callbacks here (`_go`, `open_slide`, `_leave`) and `follow` (at the start of a page) call.
"""
import functools
from itertools import groupby

import streamlit as st

from ui.classroom import presenting as moves
from ui.classroom.presenting import RERUN, Presenting
from ui.core import session, session_store, sidebar
from ui.core.figures import PROJECTOR
from ui.core.i18n import plain_math
from ui.core.labels import SUBLAYER_WORDS, step_name_key
from ui.core.navigation import (ENCODER_SECTIONS, PAGES, RAIL, STACK_SECTIONS, VISION_RAIL, slide_at, slides,
                                 vision_slides, vision_step)
from ui.core.session_store import LINK_VIEW, PRESENT_VIEW, STATE
from ui.core.state import encode, encode_view

KEY = "present.rail"  # the rail's component: what it sent
PRESENTING = "presenting"  # session_state: this session's Presenting
DRAWN = "present.drawn"  # session_state: this run drew the rail (ui/views/frame.run draws it for a page that did not)
STACKS = {"add_norm": "enc", "dec_add_norm": "dec"}  # an add & norm page's stack
BLOCK = {"positional": "src", "qkv": "enc.0.attn", "attention": "enc.0.attn", "multihead": "enc.0.attn",
         "add_norm": "enc.0", "ffn": "enc.0.ffn", "decoder_input": "tgt", "masked_attention": "dec.0.self_attn",
         "dec_add_norm": "dec.0", "cross_attention": "dec.0.cross_attn", "dec_ffn": "dec.0.ffn"}  # a flow's block

CSS = f"""
html {{ font-size: {100 * PROJECTOR:g}% !important; }}
[data-testid="stMainBlockContainer"] {{ padding-top: 2.5rem; padding-bottom: 9rem; }}  /* top: the header's */
@media (max-width: 1400px) {{  /* a projector's 1280 or 1024 px: the width for the step, not for margins */
  [data-testid="stMainBlockContainer"] {{ padding-left: 2rem !important; padding-right: 2rem !important; }}
}}
[data-testid="stSidebarContent"] {{ padding-bottom: 4rem; }}  /* its foot scrolls above the rail */
@media (min-width: 641px) {{  /* the sidebar as much wider as its type is larger: its pages' names whole */
  [data-testid="stSidebar"] {{ width: {300 * PROJECTOR:g}px !important; }}
}}
/* a slide is the screen between the header and the rail: the header's strip as thin as its button, a step's heading
   scrolled to just under it, and less room around headings and formulas than a page read up close */
[data-testid="stHeader"] {{ height: 2.5rem; min-height: 2.5rem; }}
[data-testid="stMain"] :is(h1, h5) {{ scroll-margin-top: 2.5rem !important; }}
[data-testid="stMain"] h5 {{ padding: 0.25rem 0 0.5rem !important; }}
[data-testid="stMain"] .katex-display {{ margin: 0.5em 0 !important; }}
.present-rail {{ position: fixed; left: 0; right: 0; bottom: 0; z-index: 999992; display: flex; gap: 0.5rem;
  align-items: center; padding: 0.15rem 1rem; background: rgba(255, 255, 255, 0.96);
  border-top: 1px solid rgba(49, 51, 63, 0.2); font-size: 0.5rem; line-height: 1.1; }}
.present-rail button {{ font: inherit; cursor: pointer; border-radius: 0.3rem; color: rgb(49, 51, 63);
  border: 1px solid rgba(49, 51, 63, 0.25); background: white; }}
.present-rail .present-move {{ padding: 0.1rem 0.6rem; font-size: 0.9rem; }}
.present-parts {{ flex: 1; display: flex; gap: 0.8rem; min-width: 0; }}
.present-part {{ display: flex; flex-direction: column; gap: 0.1rem; min-width: 0; }}
.present-dots {{ display: flex; flex-wrap: wrap; gap: 3px; }}  /* dots small enough for two rows in a thin rail */
.present-dots button {{ width: 0.6rem; height: 0.6rem; padding: 0; background: rgba(49, 51, 63, 0.12); }}
.present-dots button.present-done {{ background: rgba(255, 75, 75, 0.35); }}
.present-dots button.present-here {{ background: rgb(255, 75, 75); border-color: rgb(255, 75, 75); }}
.present-dots button.present-layer {{ width: auto; height: 0.6rem; padding: 0 0.3rem; font-size: 0.45rem;
  line-height: 1; }}
.present-dots .present-layer-here {{ font-size: 0.45rem; line-height: 0.6rem; padding: 0 0.1rem 0 0.3rem;
  border-left: 2px solid rgb(255, 75, 75); }}
.present-where {{ font-size: 0.8rem; white-space: nowrap; overflow: hidden; text-overflow: ellipsis;
  flex: none; width: 26%; }}  /* a fixed width: the dots stay where they are whatever the slide's title */
.present-where.present-off {{ white-space: normal; font-size: 0.7rem; }}  /* off the pass: how to reach it, whole */
.present-typing {{ display: none; font-size: 0.7rem; flex: 1; }}
.present-in-field .present-typing {{ display: block; }}  /* the focus in a field: which keys still move the slides, in
   the dots' place */
.present-in-field .present-parts {{ display: none; }}
.present-room {{ flex: none; font-size: 0.7rem; white-space: nowrap; font-weight: 600; }}  /* for latecomers */
@media (max-width: 640px) {{  /* a phone following the class: normal type, and one line of moves and the slide's name */
  html {{ font-size: 100% !important; }}
  .present-parts {{ display: none; }}
  .present-where {{ flex: 1; width: auto; }}
}}
"""
HTML = "<nav class='present-rail'></nav>"
JS = """
const FORWARD = ["ArrowRight", "PageDown"], BACK = ["ArrowLeft", "PageUp"], CLICKER = ["PageDown", "PageUp"];
const TYPING = "input:not([type=checkbox]), textarea, select, [role=slider]";  // keys typed here are the field's
const PAGE_LINK = "[data-testid='stSidebarNav'] a", CLOSE_SIDEBAR = "[data-testid='stSidebarCollapseButton'] button";
const IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']";  // the server's run is over
// A slide asked for and not shown once the server is idle is asked for again, a second apart, a few times, for this
// long after the last press
const PENDING_MS = 60000, RESEND_MS = 1000, RESENDS = 10, LOOK_MS = 100;

function button(text, title, onclick) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = text;
    b.title = title;
    b.onclick = onclick;
    return b;
}

// The page's one set of keys, kept across its rails (a switch to another page unmounts the rail and mounts the next
// one, and a press in between used to reach no listener): the rail shown (its slide, its sender, its element), the
// slide asked for last and not shown yet, from which the next press counts, and since when no rail is mounted.
function keys() {
    if (!window.presentKeys) {
        window.presentKeys = {here: null, count: 0, send: null, rail: null, asked: null, unmounted: null,
                              watching: false};
        window.addEventListener("keydown", onFieldKey, true);  // capture: before a field's own handler
        document.addEventListener("keydown", onKey);
        document.addEventListener("focusin", showHint);
        document.addEventListener("focusout", () => setTimeout(showHint));
        document.addEventListener("click", closeSidebarOnPick, true);
    }
    return window.presentKeys;
}

function typing(target) {
    return target && target.nodeType === 1 && (target.isContentEditable || target.closest(TYPING));
}

function showHint() {
    const rail = keys().rail;
    if (rail) {
        rail.classList.toggle("present-in-field", Boolean(typing(document.activeElement)));
    }
}

function closeSidebarOnPick(event) {  // a page picked in the sidebar: the projector's whole width for it again
    const picked = event.target.closest && event.target.closest(PAGE_LINK);
    const close = document.querySelector(CLOSE_SIDEBAR);
    if (picked && close && keys().send) {
        setTimeout(() => close.click());
    }
}

function pending(state) {
    const asked = state.asked;
    return asked && asked.count === state.count && Date.now() - asked.at < PENDING_MS ? asked : null;
}

function go(position) {  // a slide by its position in the pass, sent now or by the next rail mounted
    const state = keys();
    const to = Math.max(0, Math.min(state.count - 1, position));
    state.asked = {to: to, count: state.count, at: Date.now(), sent: Date.now(), resends: 0, queued: !state.send};
    if (state.send) {
        state.send(to);
    }
    if (!state.watching) {
        state.watching = true;
        setTimeout(askAgain, LOOK_MS);
    }
}

function askAgain() {  // a press that reached the server during a page switch was dropped with its rail: the run is
    // over and shows another slide than the one asked for: ask again (not during a run, which a message would restart)
    const state = keys(), asked = pending(state);
    if (!asked || asked.resends >= RESENDS) {
        state.watching = false;
        return;
    }
    const now = Date.now();
    if (state.send && asked.to !== state.here && now - asked.sent > RESEND_MS && document.querySelector(IDLE)) {
        asked.resends += 1;
        asked.sent = now;
        state.send(asked.to);
    }
    setTimeout(askAgain, LOOK_MS);
}

function move(by) {  // from the slide asked for last if the page has not shown it yet: every press counts
    const state = keys(), asked = pending(state), last = state.count - 1;
    const at = asked ? asked.to : state.here;
    go(at === null ? (by > 0 ? 0 : last) : at + by);  // off the pass: forward to its first step, back to its last
}

function onFieldKey(event) {  // in a field, before its own handler: a clicker's keys move the slides still (not the
    // field's page step); Escape leaves the field for the other keys
    const target = event.target;
    if (!typing(target)) {
        return;
    }
    if (event.key === "Escape") {
        target.blur();
        showHint();
    }
    if (CLICKER.includes(event.key) && take(event)) {
        event.stopPropagation();
    }
}

function onKey(event) {  // elsewhere, after the element's own handler: a key the animation's player took is its own
    if (!typing(event.target)) {
        take(event);
    }
}

function take(event) {  // whether the key moved the slides
    const state = keys();
    const switching = !state.send && state.unmounted !== null && Date.now() - state.unmounted < PENDING_MS;
    if (!(state.send || switching) || event.defaultPrevented || event.ctrlKey || event.altKey || event.metaKey) {
        return false;
    }
    const space = event.key === " ";
    const forward = FORWARD.includes(event.key) || (space && !event.shiftKey);
    if (!forward && !BACK.includes(event.key) && !space) {
        return false;
    }
    event.preventDefault();
    move(forward ? 1 : -1);
    return true;
}

export default function({parentElement, data, setTriggerValue}) {
    const rail = parentElement.querySelector(".present-rail");
    const here = data.here, state = keys();
    const send = (to) => setTriggerValue("go", to);
    Object.assign(state, {here: here, count: data.count, send: send, rail: rail, unmounted: null});
    const asked = pending(state);
    if (!asked || asked.to === here) {  // shown: the next press counts from it
        state.asked = null;
    } else if (asked.queued) {  // pressed while no rail was mounted (a page switch): sent by this one
        asked.queued = false;
        setTimeout(() => send(asked.to));
    } else {
        asked.sent = Date.now();  // this run's: the next look waits for the server to be idle a while
    }
    const parts = document.createElement("div");
    parts.className = "present-parts";
    const passed = (at) => here !== null && at < here;
    let position = 0;
    for (const part of data.parts) {
        const box = document.createElement("div");
        box.className = "present-part";
        const label = document.createElement("span");
        label.textContent = part.label;
        const dots = document.createElement("div");
        dots.className = "present-dots";
        for (const run of part.runs) {  // slides outside a layer, or one layer's: its dots if shown, else one button
            const first = position, end = position + run.slides.length;
            position = end;
            if (run.layer !== null && !(here !== null && first <= here && here < end)) {
                const layer = button(run.layer, run.name, () => go(first));
                layer.className = "present-layer" + (passed(end - 1) ? " present-done" : "");
                dots.appendChild(layer);
                continue;
            }
            if (run.layer !== null) {
                const name = document.createElement("span");
                name.className = "present-layer-here";
                name.textContent = run.layer;
                name.title = run.name;
                dots.appendChild(name);
            }
            run.slides.forEach((title, i) => {
                const at = first + i;
                const dot = button("", title, () => go(at));
                dot.className = at === here ? "present-here" : (passed(at) ? "present-done" : "");
                dots.appendChild(dot);
            });
        }
        box.append(label, dots);
        parts.appendChild(box);
    }
    const where = document.createElement("span");
    where.className = "present-where" + (here === null ? " present-off" : "");
    where.textContent = data.where;
    const back = button("\\u2190", data.back, () => move(-1));
    const next = button("\\u2192", data.next, () => move(1));
    back.className = next.className = "present-move";
    let leaving = false;
    const leave = button("\\u2715", data.leave, () => {
        leaving = true;
        state.asked = null;
        setTriggerValue("leave", true);
    });
    const hint = document.createElement("span");
    hint.className = "present-typing";
    hint.textContent = data.typing;
    const room = document.createElement("span");
    room.className = "present-room";
    room.textContent = data.room;
    rail.replaceChildren(back, next, where, parts, hint, room, leave);
    showHint();
    return () => {  // unmounted: a page switch, whose next rail takes the keys pressed meanwhile, or the exit
        if (state.send === send) {
            Object.assign(state, {send: null, rail: null, unmounted: leaving ? null : Date.now()});
        }
    };
}
"""
_rail = st.components.v2.component("presenter", html=HTML, css=CSS, js=JS, isolate_styles=False)


def rail(ctx, page: str, shown: dict, room_code: str | None = None) -> None:
    """The rail under a step page: every slide of the pass, the one shown (found from what the page's widgets show)
    marked, and the room's code for students who come in late."""
    t, deck = ctx.t, _deck(ctx)
    session_store.put(PRESENTING, moves.drawn_on(_presenting(), page))
    session_store.put(DRAWN, True)
    here = slide_at(deck, page, shown)
    titles = [_vision_title(t, slide) if ctx.vision else _title(t, slide, ctx.config) for slide in deck]
    where = t("present.where", n=here + 1, count=len(deck), title=titles[here]) if here is not None else \
        t("present.elsewhere", count=len(deck))
    _rail(key=KEY, data={"parts": _parts(t, deck, titles, VISION_RAIL if ctx.vision else RAIL), "here": here,
                         "count": len(deck), "where": where, "back": t("present.back"), "next": t("present.next"),
                         "leave": t("present.leave"), "typing": t("present.typing"),
                         "room": t("present.room", code=room_code) if room_code else ""},
          on_go_change=functools.partial(_go, ctx), on_leave_change=_leave)


def _deck(ctx) -> list[tuple[str, str, dict]]:
    """The slides of the model the page draws: the text model's forward pass, or the Vision Transformer's."""
    return vision_slides(list(ctx.trace), ctx.model.settings.n_layers) if ctx.vision else slides(ctx.config)


def _parts(t, deck, titles, rail_parts) -> list[dict]:
    """The rail's parts in the order data flows (a decoder-only model has no encoder), each as runs of slides: those
    outside any layer, or one layer's (its number, and its name for the button's tip)."""
    parts = []
    for part in rail_parts:
        shown = [(view.get("layer"), title) for (at, _, view), title in zip(deck, titles) if at == part]
        runs = [{"layer": None if layer is None else str(layer + 1),
                 "name": None if layer is None else t("present.layer", n=layer + 1),
                 "slides": [title for _, title in run]} for layer, run in groupby(shown, key=lambda item: item[0])]
        if runs:
            parts.append({"label": t(f"present.part.{part}"), "runs": runs})
    return parts


def _title(t, slide, config) -> str:
    """A slide's words: its stack where another page has the same name (the encoder's and the decoder's
    "Feed-forward"), its page, its layer in a stack of several, an add & norm's sub-layer (three slides would
    otherwise share "Add & LayerNorm · Residual add"), and the step or section it shows."""
    part, page, view = slide
    name = t(f"page.{page}")
    words = [t(f"present.part.{part}"), name] if _names_shared(t, name) else [name]
    if "layer" in view:
        words.append(t("present.layer", n=view["layer"] + 1))
    if "sublayer" in view:  # the step's number is the sub-layer's (add2: sub-layer 2), whatever the picker's position
        block = config.sublayers[STACKS[page]][int(view["step"][-1])]
        words.append(t(f"sublayer.{SUBLAYER_WORDS[block]}"))
    if "step" in view:
        block = BLOCK.get(page)
        words.append(t(step_name_key(f"{block}.{view['step']}" if block else view["step"])))
    elif "section" in view:
        words.append(t({number: label for label, number in STACK_SECTIONS.items()}[view["section"]]))
    once = [word for i, word in enumerate(words) if word not in words[:i]]  # a step named as its page: once
    return plain_math(" · ".join(once))


def _vision_title(t, slide) -> str:
    """A Vision Transformer slide's words: its page, its layer in a stack of several, and the step it shows (or the
    encoder page's first section, the class token's attention over the image)."""
    _, page, view = slide
    words = [t(f"page.{page}")]
    if "layer" in view:
        words.append(t("present.layer", n=view["layer"] + 1))
    section = {number: block for block, number in ENCODER_SECTIONS.items()}.get(view.get("section"), "image")
    if "section" in view:  # the sub-layer: its LayerNorm and residual add are named alike in both
        words.append(t(f"vit_encoder.section.{section}"))
    step = vision_step(page, view)
    if step is not None:
        words.append(t(step_name_key(step)))
    return plain_math(" · ".join(words))


def _names_shared(t, name: str) -> bool:
    """Whether two pages have this name in this language."""
    return sum(t(f"page.{page}") == name for pages in PAGES.values() for page in pages) > 1


def _presenting() -> Presenting:
    return session_store.load(PRESENTING, Presenting)


def _sent(event: str):
    """What the rail sent; None once its page is left: a second key pressed on the page being left arrives after
    the switch to the next page, whose run holds no state of that rail."""
    return (session_store.get(KEY) or {}).get(event)


def _go(ctx):
    """A key or a click on the rail drawn from the page's context ctx: open its slide, on this page or (follow) on
    another; a forged position (not a whole number within the pass) is ignored."""
    position = _sent("go")
    if isinstance(position, bool) or not isinstance(position, int) or not 0 <= position < len(_deck(ctx)):
        return
    open_slide(ctx, position)


def open_slide(ctx, position: int) -> None:
    """From a callback: open the slide at this position of the deck of the model of the page's context ctx (the
    rail's keys, the overview's Start)."""
    slide, presenting = _deck(ctx)[position], _presenting()
    session_store.put(PRESENTING, moves.asked(presenting, slide))  # follow() opens it
    if moves.leaves_page(presenting, slide):
        sidebar.adopt(session_store.get(STATE))  # st.switch_page's run starts the sidebar's inputs empty: refill them


def _leave():
    """The rail's exit, which sends true; anything else is a forged message, ignored."""
    if _sent("leave") is not True:
        return
    sidebar.adopt(session_store.get(STATE).replace(present=False))
    session_store.put(PRESENTING, moves.exited(_presenting()))


def follow(t) -> None:
    """At the start of a step page: after the rail's exit, the whole app again (the sidebar's toggle); after a move,
    its view for this page's widgets, or a switch to its page, with the view (sidebar.start hands it to that page's
    widgets) and the link that page will show; t: the translator, whose words name the navigation's pages."""
    presenting, opening = moves.opened(_presenting())
    session_store.put(PRESENTING, presenting)
    if opening == RERUN:
        st.rerun(scope="app")
    if opening is None:
        return
    if not opening.switch:
        session_store.put(LINK_VIEW, opening.view)  # this page's widgets take it (ui/views/drawn.py)
        return
    session_store.put(PRESENT_VIEW, opening.view)  # (ui/core/sidebar.py: start)
    st.switch_page(session.page_entry(t, opening.page),
                   query_params=encode(session_store.get(STATE)) | encode_view(opening.view))
