// The animation page's player (ui/lessons/animation_views.py): draws the frames of ui/lessons/animation.py in an SVG and plays them
// in the browser. Every word comes from the catalog and every token from the trace; both are written as text
// (textContent), never as markup.
const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 1000;
const HEIGHT = 600;
const MAIN_TOP = 118; // under the rail and its arcs
const MAIN_BOTTOM = 540; // above the line of written tokens
const FRAME_MS = 2000; // one frame at speed 1
const SPEEDS = [0.5, 1, 2, 4];
const TYPE = 1.25; // the SVG is drawn 1000 wide and shown about 800 wide: its type is this much larger
const SHOWN = 800; // narrower (a phone's ~350 px), the type grows as the picture shrinks: the same size on screen
const LARGE = 1.5; // "Large type" for a projector
const LABEL_CHARS = 14; // a longer token is cut, with its whole text on hover
const COLOURS = {enc: "#1f77b4", self: "#ff7f0e", cross: "#9467bd", chosen: "#d62728"};
const memory = new WeakMap(); // per mounted player: the frame shown, the speed and the type size across reruns

function svg(parent, tag, attrs = {}, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
    if (text !== undefined) node.textContent = text;
    parent.appendChild(node);
    return node;
}

function html(parent, tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    parent.appendChild(node);
    return node;
}

function fill(template, values) { // the catalog's "{name}" placeholders, and "{n:token|tokens}": "1 token", "2 tokens"
    return template.replace(/\{(\w+)(?::([^|{}]*)\|([^|{}]*))?\}/g, (whole, name, one, other) => {
        if (!(name in values)) return whole;
        const value = values[name];
        return one === undefined ? String(value) : `${value} ${value === 1 ? one : other}`;
    });
}

function short(token) {
    return token.length > LABEL_CHARS ? token.slice(0, LABEL_CHARS - 1) + "…" : token;
}

function appear(node, delay) { // fades in from nothing to the opacity the node was given
    node.classList.add("appear");
    node.style.animationDelay = `${delay}ms`;
    return node;
}

function colour(value, largest) { // blue for negative, red for positive, white for 0
    const t = largest > 0 ? Math.max(-1, Math.min(1, value / largest)) : 0;
    const [r, g, b] = t >= 0 ? [214, 39, 40] : [31, 119, 180];
    const mix = (c) => Math.round(255 + (c - 255) * Math.abs(t));
    return `rgb(${mix(r)}, ${mix(g)}, ${mix(b)})`;
}

function fit(node, room) { // a text longer than its room is narrowed into it (on a phone the type is larger)
    if (node.getComputedTextLength() > room) {
        node.setAttribute("textLength", room);
        node.setAttribute("lengthAdjust", "spacingAndGlyphs");
    }
    return node;
}

function label(parent, x, y, text, size, room, attrs = {}) {
    const node = svg(parent, "text", {x, y, "font-size": size, "dominant-baseline": "middle", ...attrs}, short(text));
    if (text.length > LABEL_CHARS) svg(node, "title", {}, text);
    return fit(node, room);
}

function stageLabel(stage, L) {
    const [part, layer] = stage.split(".");
    if (stage === "enc.out") return L["rail.enc_out"];
    if (part === "enc" || part === "dec") return fill(L[`rail.${part}`], {layer: Number(layer) + 1});
    return L[`rail.${stage}`];
}

function rail(root, frame, data, s) {
    const stages = data.stages;
    const width = WIDTH / stages.length;
    const current = stages.indexOf(frame.stage);
    const centre = (i) => i * width + width / 2;
    const out = stages.indexOf("enc.out");
    stages.forEach((stage, i) => {
        if (!stage.startsWith("dec.")) return;
        const cross = frame.block && frame.block.endsWith("cross_attn") && frame.stage === stage;
        const x0 = centre(out), x1 = centre(i);
        svg(root, "path", {d: `M ${x0} 50 C ${x0} ${96 + 4 * (i - out)}, ${x1} ${96 + 4 * (i - out)}, ${x1} 50`,
                           class: cross ? "arc flow" : "arc"});
    });
    stages.forEach((stage, i) => {
        const state = i < current ? "done" : i === current ? "current" : "later";
        const side = stage.startsWith("dec") || stage === "output" ? "dec" : "enc";
        svg(root, "rect", {x: i * width + 3, y: 8, width: width - 6, height: 42, rx: 6, class: `box ${side} ${state}`});
        const text = stageLabel(stage, data.labels);
        const size = 13 * s;
        fit(svg(root, "text", {x: centre(i), y: 30, "font-size": size, "text-anchor": "middle",
                               "dominant-baseline": "middle", class: `rail-text ${state}`}, text), width - 10);
    });
}

function tokensScene(root, frame, L, s) {
    const n = frame.tokens.length;
    const box = Math.min(170, (WIDTH - 40) / n - 10);
    const left = (WIDTH - n * (box + 10) + 10) / 2;
    const y = (MAIN_TOP + MAIN_BOTTOM) / 2 - 40;
    frame.tokens.forEach((token, i) => {
        const group = appear(svg(root, "g", {}), 250 * i);
        const x = left + i * (box + 10);
        svg(group, "rect", {x, y, width: box, height: 80, rx: 8, class: "token-box"});
        label(group, x + box / 2, y + 30, token, Math.min(24 * s, box / 4), box - 8,
              {"text-anchor": "middle", class: "strong"});
        label(group, x + box / 2, y + 62, fill(L.id, {id: frame.ids[i]}), Math.min(14 * s, box / 5), box - 8,
              {"text-anchor": "middle", class: "muted"});
    });
}

function vectorBlocks(root, frame, blocks, L, s) { // rows: tokens; columns: a vector's components, coloured
    const n = frame.tokens.length;
    const shown = frame[blocks[0][0]][0].length;
    const labelWidth = 120;
    const gap = 36;
    const blockWidth = (WIDTH - labelWidth - 20 - gap * (blocks.length - 1)) / blocks.length;
    const cell = blockWidth / shown;
    const top = MAIN_TOP + 40;
    const row = Math.min(56 * s, (MAIN_BOTTOM - top - 30) / n);
    const largest = Math.max(...blocks.flatMap(([key]) => frame[key].flat().map(Math.abs))); // null (inf, NaN): 0
    const digits = Math.min(12 * s, cell / 4);
    const numbers = cell >= 36 && row >= 20 && digits >= 0.7 * 12 * s; // room for "-0.12" (a phone's cells: colour only)
    frame.tokens.forEach((token, i) => {
        label(root, labelWidth - 10, top + i * row + row / 2, token, Math.min(17 * s, row * 0.7), labelWidth - 20,
              {"text-anchor": "end", class: "strong"});
    });
    blocks.forEach(([key, operator], b) => {
        const x0 = labelWidth + b * (blockWidth + gap);
        fit(svg(root, "text", {x: x0 + blockWidth / 2, y: top - 18, "font-size": 15 * s, "text-anchor": "middle",
                               class: "strong"}, L[`vec.${key}`]), blockWidth + gap - 6);
        if (operator) {
            svg(root, "text", {x: x0 - gap / 2, y: top + (n * row) / 2, "font-size": 26 * s, "text-anchor": "middle",
                               "dominant-baseline": "middle", class: "strong"}, operator);
        }
        const group = appear(svg(root, "g", {}), 500 * b);
        frame[key].forEach((values, i) => values.forEach((value, j) => {
            const rect = svg(group, "rect", {x: x0 + j * cell, y: top + i * row + 2, width: cell - 2, height: row - 4,
                                             fill: colour(value, largest), class: "cell"});
            svg(rect, "title", {}, `${frame.tokens[i]} [${j}] = ${value}`);
            if (numbers) {
                svg(group, "text", {x: x0 + j * cell + cell / 2, y: top + i * row + row / 2, "font-size": digits,
                                    "text-anchor": "middle", "dominant-baseline": "middle"}, value === null ? "—" : value.toFixed(2));
            }
        }));
    });
    if (frame.dims > shown) {
        fit(svg(root, "text", {x: WIDTH / 2, y: MAIN_BOTTOM - 6, "font-size": 13 * s, "text-anchor": "middle",
                               class: "muted"}, fill(L.first_dims, {shown, d: frame.dims})), WIDTH - 20);
    }
}

function column(n, top, height, gap) { // n positions centred in [top, top + height]
    const start = top + (height - (n - 1) * gap) / 2;
    return Array.from({length: n}, (_, i) => start + i * gap);
}

function attentionScene(root, frame, L, s) {
    const heads = frame.weights.length;
    const across = Math.min(heads, 4);
    const down = Math.ceil(heads / across);
    const panelWidth = WIDTH / across;
    const panelHeight = (MAIN_BOTTOM - MAIN_TOP) / down;
    const kind = frame.block.startsWith("enc") ? "enc" : frame.block.endsWith("cross_attn") ? "cross" : "self";
    const longest = Math.max(frame.queries.length, frame.keys.length);
    const sides = 12 + 20 * s; // the baseline of "token" and "attends to", under the head's name at any type size
    const first = sides + 8 + 7.5 * s; // the first token's row, its label clear of theirs
    const lowest = MAIN_TOP + (down - 1) * panelHeight; // the last row of panels ends above the written tokens' chips
    const height = Math.min(panelHeight - 12, MAIN_BOTTOM + 26 - 22.5 * s - lowest) - first;
    const gap = Math.min(48 * s, height / Math.max(longest - 1, 1));
    const size = Math.min(15 * s, Math.max(gap * 0.8, 9));
    frame.weights.forEach((matrix, h) => {
        const px = (h % across) * panelWidth;
        const py = MAIN_TOP + Math.floor(h / across) * panelHeight;
        const left = px + panelWidth * 0.3, right = px + panelWidth * 0.7;
        svg(root, "text", {x: px + panelWidth / 2, y: py + 12, "font-size": 14 * s, "text-anchor": "middle",
                           class: "strong"}, fill(L.head, {head: h + 1}));
        if (heads === 1 || h === 0) {
            fit(svg(root, "text", {x: left + 4, y: py + sides, "font-size": 12 * s, "text-anchor": "end", class: "muted"},
                    L[`side.${kind}.q`]), left + 4 - px - 4);
            fit(svg(root, "text", {x: right - 4, y: py + sides, "font-size": 12 * s, "text-anchor": "start", class: "muted"},
                    L[`side.${kind}.k`]), px + panelWidth - right);
        }
        const ys = (n) => column(n, py + first, height, gap);
        const yq = ys(frame.queries.length), yk = ys(frame.keys.length);
        matrix.forEach((row, i) => row.forEach((w, j) => {
            if (w === null) return; // inf or NaN: no weight to draw
            const line = svg(root, "line", {x1: left, y1: yq[i], x2: right, y2: yk[j], stroke: COLOURS[kind],
                                            "stroke-width": 1 + 7 * w, "stroke-linecap": "round", opacity: w});
            svg(line, "title", {}, `${frame.queries[i]} → ${frame.keys[j]}: ${w}`);
            appear(line, 180 * i + 120 * h);
        }));
        frame.queries.forEach((token, i) => {
            svg(root, "circle", {cx: left, cy: yq[i], r: 4, class: "dot"});
            label(root, left - 8, yq[i], token, size, left - 12 - px, {"text-anchor": "end"});
        });
        frame.keys.forEach((token, j) => {
            svg(root, "circle", {cx: right, cy: yk[j], r: 4, class: kind === "cross" ? "dot cross" : "dot"});
            label(root, right + 8, yk[j], token, size, px + panelWidth - right - 12, {"text-anchor": "start"});
        });
    });
}

function outputScene(root, frame, L, s) {
    const top = MAIN_TOP + 30;
    const row = Math.min(58 * s, (MAIN_BOTTOM - top - 20) / frame.top.length);
    const x0 = 380, barWidth = 460;
    svg(root, "text", {x: WIDTH / 2, y: top - 10, "font-size": 15 * s, "text-anchor": "middle", class: "strong"},
        fill(L.probs, {k: frame.top.length}));
    frame.top.forEach(([token, p], i) => {
        const y = top + i * row + 8;
        const chosen = token === frame.chosen && i === 0;
        label(root, x0 - 12, y + row / 2 - 4, token, Math.min(17 * s, row * 0.6), x0 - 22,
              {"text-anchor": "end", class: chosen ? "strong chosen" : ""});
        appear(svg(root, "rect", {x: x0, y, width: Math.max(barWidth * p, 1), height: row - 8, rx: 3,
                                  fill: chosen ? COLOURS.chosen : "#9aa5b1"}), 120 * i);
        svg(root, "text", {x: x0 + barWidth * p + 8, y: y + row / 2 - 4, "font-size": 14 * s,
                           "dominant-baseline": "middle"}, p.toFixed(4));
    });
}

function writtenLine(root, frame, L, s) {
    const y = MAIN_BOTTOM + 30;
    if (!frame.written) {
        fit(svg(root, "text", {x: 10, y, "font-size": 14 * s, "dominant-baseline": "middle", class: "muted"},
                L.encoding), WIDTH - 20);
        return;
    }
    const title = svg(root, "text", {x: 10, y, "font-size": 14 * s, "dominant-baseline": "middle", class: "strong"},
                      L.written);
    let x = 22 + title.getComputedTextLength();
    frame.written.forEach((token, i) => {
        const newest = frame.kind === "output" && i === frame.written.length - 1;
        const group = svg(root, "g", {});
        const chip = svg(group, "rect", {y: y - 15 * s, height: 30 * s, rx: 5, class: newest ? "chip new" : "chip"});
        const text = label(group, 0, y, token, 15 * s, WIDTH, {"text-anchor": "middle"});
        const width = text.getComputedTextLength() + 16;
        chip.setAttribute("x", x);
        chip.setAttribute("width", width);
        text.setAttribute("x", x + width / 2);
        if (newest) appear(group, 300);
        x += width + 6;
    });
    const passes = svg(root, "text", {x: WIDTH - 10, y: y, "font-size": 13 * s, "text-anchor": "end",
                                      "dominant-baseline": "middle", class: "muted"}, fill(L.passes, {step: frame.step}));
    const room = WIDTH - 30 - x;  // right of the chips; a phone's larger type may leave too little (the caption says it)
    if (room < 0.8 * passes.getComputedTextLength()) passes.remove(); else fit(passes, room);
}

const SCENES = {
    tokens: tokensScene,
    embed: (root, frame, L, s) => vectorBlocks(root, frame, [["embed"], ["pos", "+"], ["input", "="]], L, s),
    vectors: (root, frame, L, s) => vectorBlocks(root, frame, [["values"]], L, s),
    attention: attentionScene,
    output: outputScene,
};

function caption(frame, data) {
    const L = data.labels;
    const base = {n: (frame.tokens || []).length, d: frame.dims, step: frame.step, heads: data.heads,
                  token: frame.chosen || (frame.queries || [""])[0]};
    if (frame.kind === "attention") {
        const kind = frame.block.startsWith("enc") ? "enc_attn" : frame.block.endsWith("cross_attn") ? "cross" : "self";
        return fill(L[`f.${kind}`], {...base, layer: Number(frame.stage.split(".")[1]) + 1});
    }
    return fill(L[`f.${frame.kind}`], {...base, p: frame.prob === undefined ? "" : frame.prob.toFixed(4)});
}

// parentElement -> the last draw's stop. New data draws the player again without the stop it returned (that runs on
// unmount only): a pending `say` of the old draw then wrote its stale frame over a key pressed since, and lost it.
const stops = new WeakMap();

export default function ({parentElement, data, setStateValue}) {
    stops.get(parentElement)?.();
    const root = parentElement.querySelector(".anim");
    const L = data.labels;
    const frames = data.frames;
    const kept = memory.get(parentElement) ||  // presenter mode: large; a new player starts on the page's frame
        {index: data.frame, said: data.frame, speed: 1, large: Boolean(data.large), goto: data.goto ? data.goto.id : 0};
    const moved = data.goto && data.goto.id !== kept.goto; // a link's frame (a followed teacher's): once per move
    let index = Math.min(moved ? data.goto.frame : kept.index, frames.length - 1);
    const applied = data.goto ? data.goto.id : kept.goto;
    let said = moved ? index : kept.said, saying = null; // the frame the page's link holds
    let speed = kept.speed;
    let large = kept.large;
    let timer = null;

    root.replaceChildren();
    const bar = html(root, "div", "bar");
    const button = (name, text, title, action) => {
        const b = html(bar, "button", name, text);
        b.type = "button";
        b.title = title;
        b.tabIndex = -1;
        b.onmousedown = (event) => event.preventDefault(); // the keys stay with the player
        b.onclick = () => { action(); root.focus({preventScroll: true}); };
        return b;
    };
    button("first", "|◀", L.first, () => show(0, true));
    button("prev", "◀", L.prev, () => show(index - 1, true));
    const play = button("play", "", L.play, () => toggle());
    button("next", "▶|", L.next, () => show(index + 1, true));
    const pace = button("speed", "", L.speed_help, () => faster(1));
    const size = button("large", L.large, L.large_help, () => { large = !large; show(index, false); });
    const counter = html(bar, "span", "counter");
    const slider = html(root, "input", "slider");
    slider.type = "range";
    slider.min = 1;
    slider.max = frames.length;
    slider.tabIndex = -1;
    slider.setAttribute("aria-label", L.slider);
    slider.oninput = () => show(Number(slider.value) - 1, true);
    const text = html(root, "div", "caption");
    const picture = svg(root, "svg", {viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img"});
    html(root, "div", "keys", L.keys);

    function show(i, stop) {
        if (stop) pause();
        index = Math.max(0, Math.min(frames.length - 1, i));
        memory.set(parentElement, {index, speed, large, goto: applied, said});
        if (timer === null) say();
        const frame = frames[index];
        const s = TYPE * (large ? LARGE : 1) * Math.max(1, SHOWN / (picture.getBoundingClientRect().width || SHOWN));
        root.classList.toggle("large", large);
        size.setAttribute("aria-pressed", String(large));
        counter.textContent = fill(L.frame, {i: index + 1, n: frames.length});
        counter.dataset.frame = index + 1;
        counter.dataset.frames = frames.length;
        slider.value = index + 1;
        text.textContent = caption(frame, data);
        picture.replaceChildren();
        picture.setAttribute("aria-label", text.textContent);
        rail(picture, frame, data, s);
        SCENES[frame.kind](picture, frame, L, s);
        writtenLine(picture, frame, L, s);
        play.textContent = timer === null ? `▶ ${L.play}` : `|| ${L.pause}`;
        pace.textContent = fill(L.speed, {x: speed});
    }
    function say() { // the frame it stopped on, to the page's link; a slider's drag says its last frame only
        clearTimeout(saying);
        saying = setTimeout(() => {
            if (timer !== null || index === said) return;
            said = index;
            memory.set(parentElement, {index, speed, large, goto: applied, said});
            setStateValue("frame", index);
        }, 300);
    }
    function pause() {
        clearTimeout(timer);
        timer = null;
    }
    function tick() {
        if (index >= frames.length - 1) { pause(); show(index, false); return; }
        show(index + 1, false);
        timer = setTimeout(tick, FRAME_MS / speed);
    }
    function toggle() {
        if (timer !== null) { pause(); show(index, false); return; }
        if (index >= frames.length - 1) index = 0;
        timer = setTimeout(tick, FRAME_MS / speed);
        show(index, false);
    }
    function faster(step) {
        const at = SPEEDS.indexOf(speed);
        speed = step > 0 ? SPEEDS[(at + 1) % SPEEDS.length] : SPEEDS[Math.max(at - 1, 0)];
        show(index, false);
    }
    const KEYS = {
        " ": toggle, ArrowRight: () => show(index + 1, true), ArrowLeft: () => show(index - 1, true),
        PageDown: () => show(index + 1, true), PageUp: () => show(index - 1, true), // a presenter's clicker
        Home: () => show(0, true), End: () => show(frames.length - 1, true), "+": () => faster(1),
        "=": () => faster(1), "-": () => faster(-1),
    };
    root.onkeydown = (event) => {
        const action = KEYS[event.key];
        if (!action || event.altKey || event.ctrlKey || event.metaKey) return;
        event.preventDefault();
        action();
    };
    if (data.large && !memory.has(parentElement)) root.focus({preventScroll: true}); // presenter mode: the clicker's keys
    show(index, false);
    const stop = () => { pause(); clearTimeout(saying); };
    stops.set(parentElement, stop);
    return stop;
}
