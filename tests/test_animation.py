"""The animation's frames (ui/lessons/animation.py) hold the trace's numbers and the engine's greedy output, unchanged;
the page (AppTest) sends them to its player in both languages and sends new ones after a weight edit; in Chromium the
player plays the whole forward pass of the opening example by itself, answers its keys and draws the edited numbers.
Screenshots at its start, middle and end go to build/screenshots/animation-{start,middle,end}-{lang}.png."""
import json
import re
import time

import numpy as np
import pytest
from playwright.sync_api import expect

import engine
from engine.generate import generate
from conftest import page_title
from test_app import assert_clean, open_page
from test_browser import SHOTS, no_exception, server, settle, url  # noqa: F401 (server: a fixture)
from ui.core.i18n import EN, ZH, translator
from ui.core.state import DEFAULT_SOURCE, DEFAULT_TARGET
from ui.lessons import animation

EXAMPLES = [  # the opening example; two layers in pre-norm with 4 heads; the paper's sizes, smaller, 3 + 2 layers
    ("hello-world", {}, "Hello World"),
    ("hello-world", {"n_layers": 2, "n_heads": 4, "norm_placement": "pre"}, "hello world how are you"),
    ("paper", {"d_model": 32, "n_heads": 4, "d_ff": 48, "n_enc_layers": 3, "n_dec_layers": 2},
     "the cat sat on the mat"),
]


def example(preset, overrides, src, tgt="hola mundo"):
    model = engine.preset(preset, **overrides)
    trace = model.run(src, tgt)
    generated = animation.greedy(model, src)
    return model, trace, generated, animation.frames(trace, generated)


def opening_frames() -> int:
    """How many frames the page plays at the app's first state: the encoder's, then each generated token's."""
    return len(example("hello-world", {}, DEFAULT_SOURCE, DEFAULT_TARGET)[3])


@pytest.fixture(params=EXAMPLES, ids=[f"{p}-{len(o)}" for p, o, _ in EXAMPLES])
def made(request):
    return example(*request.param)


def by_block(frames, block):
    return [f for f in frames if f.get("block") == block]


def test_the_encoder_frames_hold_the_traces_numbers(made):
    model, trace, _, frames = made
    tokens, embed = frames[0], frames[1]
    assert tokens["tokens"] == list(trace.src_tokens) and tokens["ids"] == list(trace.src_ids)
    for key, name in (("embed", "src.embed"), ("pos", "src.pos"), ("input", "src.input")):
        assert np.array_equal(embed[key], trace[name]), key
    for layer in range(model.config.depth("enc")):
        (attention,) = by_block(frames, f"enc.{layer}.attn")
        assert np.array_equal(attention["weights"], trace[f"enc.{layer}.attn.weights"])
        assert attention["weights"].shape == (model.config.n_heads, len(trace.src_tokens), len(trace.src_tokens))
    (output,) = [f for f in frames if f["stage"] == "enc.out"]
    assert np.array_equal(output["values"], trace["enc.out"])


def test_the_decoder_writes_the_engines_greedy_tokens(made):
    model, trace, generated, frames = made
    chosen = [f["chosen"] for f in frames if f["kind"] == "output"]
    greedy = generate(model, generated.src, max_len=animation.MAX_GENERATED)
    assert chosen == list(greedy.tokens) == list(generated.tokens)
    assert 1 <= len(chosen) <= animation.MAX_GENERATED
    last = [f for f in frames if f["kind"] == "output"][-1]
    assert last["written"] == ["SOS", *greedy.tokens]
    assert last["top"][0] == (greedy.tokens[-1], pytest.approx(greedy.steps[-1].prob))


def test_each_decoder_frame_shows_the_newest_positions_row_of_its_step(made):
    """A step's frame is the last step's pass at the step's position: its own pass's newest row (the mask hides the
    later tokens), which the frames do not compute: one decoder pass, not one a step."""
    model, trace, generated, frames = made
    last = generated.steps[-1].trace
    for layer in range(model.config.depth("dec")):
        for kind, keys in (("self_attn", None), ("cross_attn", list(trace.src_tokens))):
            shown = by_block(frames, f"dec.{layer}.{kind}")
            assert len(shown) == len(generated.steps)
            for row, (frame, step) in enumerate(zip(shown, generated.steps)):
                assert frame["queries"] == [step.prefix_tokens[-1]]
                assert frame["keys"] == (keys or list(step.prefix_tokens))
                name = f"dec.{layer}.{kind}.weights"  # (h, t, n_k)
                assert np.array_equal(frame["weights"], last[name][:, row:row + 1, :len(frame["keys"])])
                assert np.allclose(frame["weights"], step.trace[name][:, -1:, :], rtol=0, atol=1e-12)
                assert np.allclose(frame["weights"].sum(axis=-1), 1.0)


def test_the_decoder_frames_cost_one_forward_pass(made):
    """Each step's trace is lazy: the frames run the last one's decoder only (a translator's pass is 0.5 s)."""
    model, trace, generated, _ = made
    fresh = animation.greedy(model, generated.src)  # traces no test has read yet
    animation.frames(trace, fresh)
    ran = [any(name.startswith("dec.") for name in step.trace._recorded()) for step in fresh.steps]
    assert ran == [False] * (len(ran) - 1) + [True]


def test_what_the_captions_say_about_reuse_is_true(made):
    """The encoder's output is the same at every step ("f.cross"), and at each step the earlier positions' rows of
    the masked self-attention are the step before's ("f.self"): only the newest row is new."""
    model, trace, generated, _ = made
    for step in generated.steps:
        assert np.allclose(step.trace["enc.out"], trace["enc.out"], rtol=0, atol=1e-12)
    for before, after in zip(generated.steps, generated.steps[1:]):
        for layer in range(model.config.depth("dec")):
            name = f"dec.{layer}.self_attn.weights"
            assert np.allclose(after.trace[name][:, :-1, :-1], before.trace[name], rtol=0, atol=1e-12)


def test_the_frames_follow_the_rail_in_the_order_data_flows(made):
    model, _, generated, frames = made
    enc, dec = model.config.depth("enc"), model.config.depth("dec")
    assert len(frames) == 3 + enc + len(generated.steps) * (2 * dec + 1)
    rail = animation.stages(model.config)
    assert [f["stage"] for f in frames[:3 + enc]] == rail[:3 + enc]  # the encoder, once
    per_token = [f["stage"] for f in frames[3 + enc:3 + enc + 2 * dec + 1]]
    assert per_token == [s for s in rail[3 + enc:-1] for _ in range(2)] + ["output"]
    assert {f["stage"] for f in frames} == set(rail)


def test_the_payload_is_the_frames_rounded_for_the_browser():
    _, trace, _, frames = example("paper", {"d_model": 32, "n_heads": 4, "d_ff": 48, "n_layers": 2}, "the cat sat")
    sent = animation.payload(frames)
    json.dumps(sent, allow_nan=False)
    assert sent[1]["dims"] == 32 and len(sent[1]["embed"][0]) == animation.MAX_DIMS
    assert np.array_equal(sent[1]["embed"], np.round(trace["src.embed"][:, :animation.MAX_DIMS], animation.DIGITS))
    assert np.array_equal(sent[3]["weights"], np.round(trace["enc.1.attn.weights"], animation.DIGITS))
    assert sent[2]["queries"] == list(trace.src_tokens)
    broken = {**frames[3], "weights": np.array([[[np.nan, np.inf]]])}
    assert animation.payload([broken])[0]["weights"] == [[[None, None]]]  # JSON has no NaN: the browser gets null
    output = sent[-1]
    assert output["prob"] == round(frames[-1]["prob"], animation.DIGITS) and len(output["top"]) == animation.TOP


# ---- the page ----------------------------------------------------------------------------------------------

EDIT = "enc.0.attn.W_Q:0.0.0=3"  # one weight of the first head's queries: the encoder's attention, and all after


def players(at):
    return [c for c in at.get("bidi_component") if c.proto.component_name == "forward_pass"]


def sent_frames(at):
    (player,) = players(at)
    return json.loads(player.proto.json)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_sends_the_frames_in_both_languages(lang):
    at = open_page("animation", lang=lang)
    assert_clean(at)
    catalog = ZH if lang == "zh" else EN
    assert page_title(at) == catalog["page.animation"]
    data = sent_frames(at)
    model = engine.preset("hello-world")
    trace = model.run("Hello World", "Hola Mundo")
    assert data["frames"] == animation.payload(animation.frames(trace, animation.greedy(model, "Hello World")))
    assert data["labels"]["play"] == catalog["anim.play"] and data["labels"]["f.cross"] == catalog["anim.f.cross"]
    assert data["stages"] == ["tokens", "embed", "enc.0", "enc.out", "dec.0", "output"] and data["heads"] == 2


def test_a_weight_edit_changes_the_frames():
    """In one session: an edit (as an editor's callback writes it into the state) and a rerun send new frames, the
    edited model's; the edited head's weights change, the other head's do not."""
    at = open_page("animation", lang="en")
    before = sent_frames(at)["frames"]
    at.session_state["state"] = at.session_state["state"].with_edit("enc.0.attn.W_Q", (0, 0, 0), 3.0)
    at.run()
    assert_clean(at)
    assert at.query_params["edit"] == EDIT + ".0"  # the link holds it
    after = sent_frames(at)["frames"]
    assert after[2]["weights"][0] != before[2]["weights"][0] and after[2]["weights"][1] == before[2]["weights"][1]
    edited = engine.preset("hello-world").with_cells({"enc.0.attn.W_Q": [((0, 0, 0), 3.0)]})
    trace = edited.run("Hello World", "Hola Mundo")
    assert after == animation.payload(animation.frames(trace, animation.greedy(edited, "Hello World")))


def test_an_unchanged_state_does_not_make_its_frames_again(monkeypatch):
    made = []
    make = animation.frames
    monkeypatch.setattr(animation, "frames", lambda *args: made.append(args) or make(*args))
    at = open_page("animation", lang="en", seed="31")  # a state no other test has made frames for
    at.run()
    at.run()
    assert len(made) == 1 and len(sent_frames(at)["frames"]) > 4


def test_a_sentence_too_long_to_draw_is_refused_with_a_note():
    at = open_page("animation", lang="en", src=" ".join(["hello"] * (animation.MAX_TOKENS + 1)))
    assert_clean(at)
    assert not players(at)
    assert at.info[0].value == EN["anim.too_long"].format(n=animation.MAX_TOKENS + 1, high=animation.MAX_TOKENS)


# ---- in the browser ----------------------------------------------------------------------------------------

# Streamlit's client first asks for its health and host config under the page's own path (/animation/_stcore/...),
# which answer 404 on every page of every app, and then at the root: the only failed loads a page may log.
PROBES = re.compile(r"/[a-z_]+/_stcore/(health|host-config)$")


def console_errors(page) -> list:
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(f"{message.text} {message.location.get('url', '')}")
            if message.type == "error" and not PROBES.search(message.location.get("url", "")) else None)
    return errors


def frame_number(page) -> int:
    return int(page.locator(".anim .counter").get_attribute("data-frame"))


def wait_for_frame(page, at_least: int, timeout=120):
    """Until the player shows frame `at_least` or a later one (it advances by itself while playing)."""
    deadline = time.monotonic() + timeout
    while frame_number(page) < at_least:
        assert time.monotonic() < deadline, f"the animation stopped at frame {frame_number(page)}"
        page.wait_for_timeout(100)


def screenshot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(".anim").screenshot(path=str(SHOTS / f"animation-{name}.png"))


def drawn_weights(page) -> list:
    """The opacities of the lines of the frame shown: its attention weights, as the browser drew them."""
    return [float(o) for o in
            page.locator(".anim svg line").evaluate_all("ls => ls.map(l => l.getAttribute('opacity'))")]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_animation_plays_the_whole_forward_pass(server, new_page, lang):  # noqa: F811 (server)
    page = new_page(lang)
    errors = console_errors(page)
    page.goto(url(server, "animation"))
    settle(page)
    no_exception(page)
    catalog = ZH if lang == "zh" else EN
    counter, caption = page.locator(".anim .counter"), page.locator(".anim .caption")
    frames = int(counter.get_attribute("data-frames"))
    assert frame_number(page) == 1 and frames == opening_frames()
    assert caption.text_content() == translator(lang)("anim.f.tokens", n=2)  # "2 tokens": the player's plurals
    screenshot(page, f"start-{lang}")
    speed = page.locator(".anim button.speed")
    assert speed.text_content() == catalog["anim.speed"].format(x=1)
    speed.click()
    speed.click()
    assert speed.text_content() == catalog["anim.speed"].format(x=4)  # a frame every 0.5 s
    page.locator(".anim button.play").click()
    wait_for_frame(page, frames // 2)
    screenshot(page, f"middle-{lang}")
    assert page.locator(".anim .box.current").count() == 1
    wait_for_frame(page, frames)
    expect(page.locator(".anim button.play")).to_have_text(f"▶ {catalog['anim.play']}")  # it stops at the end
    assert frame_number(page) == frames
    assert caption.text_content().startswith(catalog["anim.f.output"].split("{")[0])
    screenshot(page, f"end-{lang}")
    assert errors == []


def test_the_players_keys_and_large_type(server, new_page):  # noqa: F811 (server)
    page = new_page("en")
    errors = console_errors(page)
    page.goto(url(server, "animation"))
    settle(page)
    page.locator(".anim svg").click()  # the keys go to the player once it has the focus
    for _ in range(2):
        page.keyboard.press("ArrowRight")
    assert frame_number(page) == 3  # the encoder's attention: one line per pair of tokens and head
    model = engine.preset("hello-world")
    weights = model.run("Hello World")["enc.0.attn.weights"]  # (2, 2, 2)
    assert drawn_weights(page) == np.round(weights, animation.DIGITS).ravel().tolist()
    page.keyboard.press("ArrowLeft")
    assert frame_number(page) == 2
    page.keyboard.press("End")
    assert frame_number(page) == 22
    page.keyboard.press("Home")
    settle(page)  # a jump writes its frame into the link: the rerun lays the player out anew, which a key pressed
    page.locator(".anim svg").click()  # meanwhile could miss (once in CI, loaded); the focus back on the player
    page.keyboard.press(" ")
    expect(page.locator(".anim button.play")).to_have_text(f"|| {EN['anim.pause']}")
    page.keyboard.press(" ")
    expect(page.locator(".anim button.play")).to_have_text(f"▶ {EN['anim.play']}")
    settle(page)  # the pause wrote the frame into the link: the rerun it starts lays the player out anew
    caption = page.locator(".anim .caption")
    expect(caption).to_have_css("font-size", "16.8px")  # 1.05rem (animation_player.css)
    page.locator(".anim button.large").click()
    expect(caption).to_have_css("font-size", "25.2px")  # 1.5 times
    shown = frame_number(page)
    page.get_by_text(ZH["lang.name"]).click()  # a rerun with new data (the words): the player keeps its place
    expect(page.locator(".anim .counter")).to_have_text(ZH["anim.frame"].format(i=shown, n=opening_frames()))
    assert page.locator(".anim.large").count() == 1
    assert errors == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_in_presenter_mode_the_player_is_large_and_takes_the_clickers_keys(server, new_page, lang):  # noqa: F811
    """present=1: the player opens in large type with the focus, so a clicker's Page Down and Page Up step it
    without a click first; screenshots of its start, middle and end at a projector's 1280 x 720."""
    page = new_page(lang)
    page.set_viewport_size({"width": 1280, "height": 720})
    errors = console_errors(page)
    page.goto(url(server, "animation", present="1", lang=lang))
    settle(page)
    no_exception(page)
    assert page.locator(".anim.large").count() == 1
    assert page.locator(".anim button.large").get_attribute("aria-pressed") == "true"
    intro = page.locator('[data-testid="stMain"] [data-testid="stMarkdownContainer"] p').first
    expect(intro).to_have_css("font-size", "24px")  # the page's intro in presenter type too (the rail's style sheet)
    page.locator(".anim svg").scroll_into_view_if_needed()

    def seen(name):  # what the room sees: the screen, once the frame's fade-in (0.6 s) is over
        page.wait_for_timeout(700)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"animation-present-{name}-{lang}.png"))

    seen("start")
    frames = int(page.locator(".anim .counter").get_attribute("data-frames"))
    for _ in range(frames // 2):
        page.keyboard.press("PageDown")
    assert frame_number(page) == frames // 2 + 1
    seen("middle")
    page.keyboard.press("PageUp")
    assert frame_number(page) == frames // 2
    page.keyboard.press("End")
    assert frame_number(page) == frames
    seen("end")
    assert errors == []


def test_keys_pressed_as_the_frame_is_written_are_all_taken(server, new_page):  # noqa: F811 (server)
    """A key about 300 ms after the last (when the player writes its frame into the link, and the rerun draws it
    again) was lost 1 time in 11 at 280 ms: the old draw's pending write set the stale frame over it."""
    page = new_page("en")
    page.goto(url(server, "animation", present="1"))
    settle(page)
    for gap in [260, 280, 300, 320] * 4 + [280]:
        page.keyboard.press("PageDown")
        page.wait_for_timeout(gap)
    expect(page.locator(".anim .counter")).to_have_attribute("data-frame", "18")
    expect(page).to_have_url(re.compile(r"[?&]frame=18(&|$)"))


# The diagram's smallest type as the screen shows it: each text's font size (SVG units) times the picture's scale, read
# from one picture once it is laid out. A rerun's new data (a frame's stop writes the link) draws the player anew, and
# under load its picture can be 0 px wide for a frame or two: read then, every word would be 0 px.
SMALLEST_DRAWN_TYPE = """anim => new Promise((resolve, reject) => {
    const started = performance.now();
    const measure = () => {
        const svg = anim.querySelector('svg');
        const width = svg ? svg.getBoundingClientRect().width : 0;
        if (width === 0) {
            return performance.now() - started > 30000
                ? reject(new Error('never laid out'))
                : requestAnimationFrame(measure);
        }
        const scale = width / svg.viewBox.baseVal.width;
        const sizes = [...svg.querySelectorAll('text')].map(t => [parseFloat(t.getAttribute('font-size')) * scale,
                                                                  t.textContent]);
        resolve(sizes.reduce((least, size) => size[0] < least[0] ? size : least, [Infinity, '']));
    };
    measure();
})"""


def drawn_type(page) -> list:
    """The smallest word the player's picture draws, once it is laid out."""
    return page.locator(".anim").evaluate(SMALLEST_DRAWN_TYPE)


def test_on_a_phone_the_diagrams_words_are_10_px_or_more(server, new_page):  # noqa: F811 (server)
    """A 400 px phone shows the 1000-wide diagram about 350 px wide: its words were ~5 px. Its type grows as the
    picture shrinks (a phone's heatmap cells, too narrow for numbers, keep their colour); every frame, walked with
    the keys, draws its words at 10 px or more, and the page is no wider than the phone."""
    page = new_page("en")
    page.set_viewport_size({"width": 400, "height": 800})
    page.goto(url(server, "animation"))
    settle(page)
    page.locator(".anim svg").click()
    frames, smallest = int(page.locator(".anim .counter").get_attribute("data-frames")), []
    for frame in range(1, frames + 1):
        assert frame_number(page) == frame
        smallest.append(drawn_type(page))
        page.keyboard.press("ArrowRight")
    assert min(smallest)[0] >= 10, min(smallest)
    assert page.evaluate("() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
                         " return m.scrollWidth <= m.clientWidth; }")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(".anim").screenshot(path=str(SHOTS / "animation-phone-400x800-en.png"))


def test_a_weight_edit_changes_what_the_player_draws(server, new_page):  # noqa: F811 (server)
    page = new_page("en")
    page.goto(url(server, "animation", edit=EDIT))
    settle(page)
    page.locator(".anim svg").click()
    for _ in range(2):
        page.keyboard.press("ArrowRight")
    model = engine.preset("hello-world").with_cells({"enc.0.attn.W_Q": [((0, 0, 0), 3.0)]})
    edited = np.round(model.run("Hello World")["enc.0.attn.weights"], animation.DIGITS).ravel().tolist()
    unedited = np.round(engine.preset("hello-world").run("Hello World")["enc.0.attn.weights"], animation.DIGITS)
    assert drawn_weights(page) == edited != unedited.ravel().tolist()
