"""Presenter mode (the link's present=1): type sized for a projector, and a rail of the whole forward pass
(navigation.slides) at the foot of every step page, whose keys move the class from step to step across pages.

One st.components.v2 element, drawn only in presenter mode: its fixed style sheet (not isolated, so it sizes the
page's type; no user text in it), the rail built with textContent from the catalog's words, and a key listener
on the page. In a stack of several layers the keys walk every layer in turn; the rail shows the layer being
presented as its steps' dots and every other layer as one button that opens its first step. Right, PageDown and Space go forward, Left, PageUp and Shift+Space back (a presenter's clicker sends
PageDown/PageUp); keys typed into a field are the field's. A move sends the slide's position; the server checks it.
The rail lies over the sidebar when it is open. A screen 640 px wide or less (a student's phone that follows a
presenting teacher) keeps the normal type, and its rail is one line: the moves and the slide's name.

Which page's rail was drawn and the slide a key asked for are one value, ui/classroom/presenting.py's `Presenting`,
whose pure functions the callbacks here (`_go`, `open_slide`, `_leave`) and `follow` (at the start of a page) call.
"""
from itertools import groupby

import streamlit as st

from ui.classroom import presenting as moves
from ui.classroom.presenting import RERUN, Presenting
from ui.core import session, session_store, sidebar
from ui.core.figures import PROJECTOR
from ui.core.i18n import plain_math
from ui.core.labels import SUBLAYER_WORDS, step_name_key
from ui.core.navigation import (ENCODER_SECTIONS, PAGES, RAIL, VISION_RAIL, slide_at, slides, vision_slides,
                                 vision_step)
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
[data-testid="stMain"] h1, [data-testid="stMain"] h5 {{ scroll-margin-top: 2.5rem !important; }}
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
.present-where.present-off {{ white-space: normal; font-size: 0.55rem; }}  /* off the pass: how to reach it, whole */
@media (max-width: 640px) {{  /* a phone following the class: normal type, and one line of moves and the slide's name */
  html {{ font-size: 100% !important; }}
  .present-parts {{ display: none; }}
  .present-where {{ flex: 1; width: auto; }}
}}
"""
HTML = "<nav class='present-rail'></nav>"
JS = """
const FORWARD = ["ArrowRight", "PageDown"], BACK = ["ArrowLeft", "PageUp"];

function button(text, title, onclick) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = text;
    b.title = title;
    b.onclick = onclick;
    return b;
}

export default function({parentElement, data, setTriggerValue}) {
    const rail = parentElement.querySelector(".present-rail");
    const here = data.here, last = data.count - 1;
    const go = (position) => {
        const to = Math.max(0, Math.min(last, position));
        parentElement.presentGoing = {from: here, to: to};
        setTriggerValue("go", to);
    };
    const move = (by) => {  // from the slide asked for last if the page has not shown it yet: a quick second key counts
        const asked = parentElement.presentGoing;
        const at = asked && asked.from === here ? asked.to : here;
        go(at === null ? (by > 0 ? 0 : last) : at + by);  // off the pass: forward to its first step, back to its last
    };
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
    const back = button("\u2190", data.back, () => move(-1));
    const next = button("\u2192", data.next, () => move(1));
    back.className = next.className = "present-move";
    const leave = button("\u2715", data.leave, () => setTriggerValue("leave", true));
    rail.replaceChildren(back, next, where, parts, leave);
    const onKey = (event) => {
        const target = event.target;
        // Not while text is typed or a value slid; a checkbox takes the keys as a button does (the sidebar's
        // presenter toggle keeps the focus once it has turned presenter mode on)
        const typing = "input:not([type=checkbox]), textarea, select, [role=slider]";
        if (event.defaultPrevented || event.ctrlKey || event.altKey || event.metaKey ||
            (target && (target.isContentEditable || target.closest(typing)))) {
            return;
        }
        const space = event.key === " ";
        const forward = FORWARD.includes(event.key) || (space && !event.shiftKey);
        if (!forward && !BACK.includes(event.key) && !space) {
            return;
        }
        event.preventDefault();
        move(forward ? 1 : -1);
    };
    document.removeEventListener("keydown", parentElement.presentKeys);  // a rerun's new data: one listener, its own
    parentElement.presentKeys = onKey;
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
}
"""
_rail = st.components.v2.component("presenter", html=HTML, css=CSS, js=JS, isolate_styles=False)


def rail(ctx, page: str, shown: dict) -> None:
    """The rail under a step page: every slide of the pass, the one shown (found from what the page's widgets show)
    marked."""
    t, deck = ctx.t, _deck(ctx)
    session_store.put(PRESENTING, moves.drawn_on(_presenting(), page))
    session_store.put(DRAWN, True)
    here = slide_at(deck, page, shown)
    titles = [_vision_title(t, slide) if ctx.vision else _title(t, slide, ctx.config) for slide in deck]
    where = t("present.where", n=here + 1, count=len(deck), title=titles[here]) if here is not None else \
        t("present.elsewhere", count=len(deck))
    _rail(key=KEY, data={"parts": _parts(t, deck, titles, VISION_RAIL if ctx.vision else RAIL), "here": here, "count": len(deck), "where": where, "back": t("present.back"),
                         "next": t("present.next"), "leave": t("present.leave")},
          on_go_change=_go, on_leave_change=_leave)


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
        words.append(t(("stack.changes", "stack.one_layer")[view["section"]]))
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


def _go():
    """A key or a click on the rail: open its slide, on this page or (follow) on another; a forged position (not a
    whole number within the pass) is ignored."""
    position = _sent("go")
    if isinstance(position, bool) or not isinstance(position, int) or not 0 <= position < len(_deck(session.get())):
        return
    open_slide(position)


def open_slide(position: int) -> None:
    """From a callback: open the slide at this position of the deck of the page's model (the rail's keys, the
    overview's Start)."""
    slide, presenting = _deck(session.get())[position], _presenting()
    session_store.put(PRESENTING, moves.asked(presenting, slide))  # follow() opens it
    if moves.leaves_page(presenting, slide):
        sidebar.adopt(session_store.get(STATE))  # st.switch_page's run starts the sidebar's inputs empty: refill them


def _leave():
    """The rail's exit, which sends true; anything else is a forged message, ignored."""
    if _sent("leave") is not True:
        return
    sidebar.adopt(session_store.get(STATE).replace(present=False))
    session_store.put(PRESENTING, moves.exited(_presenting()))


def follow() -> None:
    """At the start of a step page: after the rail's exit, the whole app again (the sidebar's toggle); after a move,
    its view for this page's widgets, or a switch to its page, with the view (sidebar.start hands it to that page's
    widgets) and the link that page will show."""
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
    st.switch_page(session.page_entry(session.get().t, opening.page),
                   query_params=encode(session_store.get(STATE)) | encode_view(opening.view))
