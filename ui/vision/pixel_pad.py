"""The pixel pad: the image's 8 x 8 pixels as squares to ink, grey or erase by clicking or dragging, a st.components.v2
element in the app's own page (no iframe). Its markup is fixed; its script builds the squares one by one, writes
the catalog's words as text and sends back only a stroke, [[row, col, value], ...], when the pointer is lifted. The
server reads it with ui.vision.pixels.read_strokes, which refuses a forged one whole."""
import streamlit as st

from ui.core import session, session_store
from ui.core.session_store import STATE
from ui.vision import pixels

KEY = "vit.pad"
REFUSED = "vit.pad.refused"  # a refused stroke or pixel, said on the page's next run
JS = """
const memory = new WeakMap();  // per mounted pad: the tool chosen, across reruns

export default function({parentElement, data, setTriggerValue}) {
    const pad = parentElement.querySelector(".pad"), tools = parentElement.querySelector(".tools");
    const kept = memory.get(parentElement) || {tool: 1};
    memory.set(parentElement, kept);
    const height = data.pixels.length, width = data.pixels[0].length;
    pad.style.gridTemplateColumns = `repeat(${width}, 1fr)`;
    pad.title = data.help;
    const strokes = new Map();
    const cells = [];
    for (let row = 0; row < height; row++) {
        for (let col = 0; col < width; col++) {
            const cell = document.createElement("div");
            cell.className = "px";
            cell.style.background = grey(data.pixels[row][col]);
            cells.push(cell);
        }
    }
    pad.replaceChildren(...cells);
    const paintAt = (event) => {  // the square under the pointer (a finger's too: no per-square events)
        const box = pad.getBoundingClientRect();
        const col = Math.floor((event.clientX - box.left) / box.width * width);
        const row = Math.floor((event.clientY - box.top) / box.height * height);
        if (row < 0 || row >= height || col < 0 || col >= width) return;
        cells[row * width + col].style.background = grey(kept.tool);
        strokes.set(`${row}.${col}`, [row, col, kept.tool]);
    };
    let drawing = false;
    pad.onpointerdown = (event) => {
        event.preventDefault();
        pad.setPointerCapture(event.pointerId);
        drawing = true;
        paintAt(event);
    };
    pad.onpointermove = (event) => { if (drawing) paintAt(event); };
    pad.onpointerup = pad.onpointercancel = () => {
        if (!drawing) return;
        drawing = false;
        if (strokes.size) setTriggerValue("drawn", [...strokes.values()]);
        strokes.clear();
    };
    const buttons = [[1, data.ink], [0.5, data.grey], [0, data.erase]].map(([value, label]) => {
        const button = document.createElement("button");
        button.type = "button";
        button.textContent = label;
        button.dataset.chosen = String(kept.tool === value);
        button.onclick = () => {
            kept.tool = value;
            buttons.forEach((b) => { b.dataset.chosen = String(b === button); });
        };
        return button;
    });
    tools.replaceChildren(...buttons);
}

function grey(value) {  // 0 white to 1 black, as the image is drawn
    const level = Math.round(255 * (1 - Math.max(0, Math.min(1, Number(value) || 0))));
    return `rgb(${level}, ${level}, ${level})`;
}
"""
CSS = """
.pad { display: grid; gap: 1px; width: 100%; max-width: 320px; aspect-ratio: 1; background: #ccc;
       border: 1px solid #999; touch-action: none; cursor: crosshair; user-select: none; }
.px { width: 100%; height: 100%; }
.tools { margin-top: 0.5rem; display: flex; gap: 0.4rem; }
button { font: inherit; font-size: 0.875rem; padding: 0.25rem 0.75rem; border-radius: 0.5rem; cursor: pointer;
         border: 1px solid rgba(49, 51, 63, 0.2); background: white; color: rgb(49, 51, 63); }
button[data-chosen="true"] { border-color: rgb(255, 75, 75); color: rgb(255, 75, 75); }
"""
HTML = "<div class='pad'></div><div class='tools'></div>"
_pad = st.components.v2.component("pixel_pad", html=HTML, css=CSS, js=JS)


def pad(t, image) -> None:
    """The pad showing the image (H, W) the pages read, with its tools: ink (1), grey (0.5) and erase (0)."""
    words = {tool: t(f"vit.pad.{tool}") for tool in ("ink", "grey", "erase", "help")}
    _pad(key=KEY, data={"pixels": [[float(v) for v in row] for row in image], **words}, on_drawn_change=_drawn)


def _drawn() -> None:
    """A stroke: its pixels into state.vit; a forged one (not a list of [row, col, value] inside the image with
    finite values within ±engine.vit.MAX_PIXEL) is refused whole, and the page says so."""
    state = session_store.get(STATE)
    settings = state.vit.settings()
    try:
        strokes = pixels.read_strokes((session_store.get(KEY) or {}).get("drawn"), settings.height, settings.width)
    except ValueError:
        refuse()
        return
    session.set_state(state.replace(vit=pixels.drawn(state.vit, strokes)))


def refuse() -> None:
    """A drawn or typed pixel refused: the page says so on its next run."""
    session_store.put(REFUSED, True)


def refused_note(t) -> None:
    """The sentence for a stroke the last callback refused, once."""
    if session_store.pop(REFUSED, False):
        st.warning(t("vit.pad.refused"))
