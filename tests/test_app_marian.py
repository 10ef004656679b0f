"""A real translator (a Marian checkpoint, marian/) in the app: loaded from the sidebar's box or a `model=` link out of
the server's models directory (ui/stores/models.py), run by every page, its SentencePiece pieces on the tokens page;
names that lead out of the directory, unknown or broken folders and an offline Hub id refused in the reader's language
with the model in use kept. The checkpoint is written with NumPy (tests/marian_checkpoint.py), once per process, into
a temporary models directory. On a server of this checkout: a student following the teacher's room gets the
teacher's translator (protocol level), and one Chromium pass per language loads it from the box."""
import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from marian_checkpoint import LANGUAGES, write_numpy_checkpoint  # noqa: E402
from test_app import TEXT_PAGES, assert_clean, goto, open_link, open_page, query  # noqa: E402
from ui.core.i18n import EN, ZH, literal, translator  # noqa: E402
from ui.core.runs import marian_model  # noqa: E402

MODEL = "tiny-en-zh"  # the test-built checkpoint's folder


@pytest.fixture(scope="session")
def models_root(tmp_path_factory) -> Path:
    """models/ with the checkpoint, a copy lacking target.spm, a link to a folder outside and a folder whose weights
    file links outside; beside it outside/, a good checkpoint the server must not read. Made once per process."""
    root = tmp_path_factory.mktemp("app-marian")
    models, outside = root / "models", root / "outside"
    write_numpy_checkpoint(models / MODEL) if (models / MODEL).mkdir(parents=True) is None else None
    shutil.copytree(models / MODEL, outside / MODEL)
    shutil.copytree(models / MODEL, models / "broken")
    (models / "broken" / "target.spm").unlink()
    os.symlink(outside / MODEL, models / "escape")
    shutil.copytree(models / MODEL, models / "leaky")
    (models / "leaky" / "model.safetensors").unlink()
    os.symlink(outside / MODEL / "model.safetensors", models / "leaky" / "model.safetensors")
    return models


@pytest.fixture
def models_dir(models_root, monkeypatch) -> Path:
    monkeypatch.setenv("TRANSFORMER_MODELS_DIR", str(models_root))
    return models_root


def load(at, name: str):
    """Type a name into the sidebar's box and load it."""
    at.sidebar.text_input(key="ctl.marian").input(name)
    at.sidebar.button(key="ctl.marian_load").click()
    return at.run()


def uses_translator(at) -> bool:
    model = marian_model(MODEL)[0]
    return query(at).get("model") == MODEL and at.session_state["state"].config() == model.config


def test_the_box_loads_a_translator_that_every_page_runs(models_dir):
    at = load(open_page("overview"), MODEL)
    assert_clean(at)
    assert uses_translator(at)
    card = next(c.value for c in at.sidebar.caption if c.value.startswith("**"))
    assert f"`{MODEL}`" in card and "d_model = 16" in card
    for page in ("tokens", "attention", "cross_attention", "output", "generate", "sizes"):
        goto(at, page)
        assert_clean(at)
        assert uses_translator(at), page


def test_a_model_link_opens_the_translator_on_a_new_session(models_dir):
    """Each process loads the named folder itself (the link carries the name): a new session, as a following student's
    catch-up (ui/classroom/follow.py takes the teacher's link through the same start_from_link), gets the model."""
    teacher = load(open_page("overview"), MODEL)
    link = query(teacher)
    assert link["model"] == MODEL and "weights" not in link
    student = open_link("attention", **link)
    assert_clean(student)
    assert not student.sidebar.warning, [w.value for w in student.sidebar.warning]
    assert uses_translator(student)
    assert query(student) == link


@pytest.mark.parametrize("lang, name", [("en", "opus-mt-en-fr"), ("zh", "Helsinki-NLP/opus-mt-en-zh")])
def test_a_link_to_a_model_this_server_lacks_says_so_and_opens_the_preset(models_dir, monkeypatch, lang, name):
    """A link loads only a folder the models directory holds: it never makes the server download (the box does)."""
    import marian

    monkeypatch.setattr(marian, "fetch", lambda *args, **kwargs: pytest.fail("a link fetched a model"))
    at = open_link("overview", lang=lang, model=name, cfg="d_model:16")
    assert_clean(at)
    t = translator(lang)
    why = t("msg.marian_not_here", name=literal(name))
    assert [w.value for w in at.sidebar.warning] == [t("msg.url", detail=t("msg.marian_gone", name=literal(name),
                                                                           error=why))]
    assert "model" not in query(at) and query(at)["cfg"] == "d_model:16"  # the rest of the link is kept


THERE = literal(f"broken, leaky, {MODEL}")  # the folders the directory lists: not the link out of it
REFUSED = {  # a name typed into the box: (the refusal's catalog key, its values as shown)
    "../outside/" + MODEL: ("msg.marian_name", {"name": literal(f"../outside/{MODEL}")}),
    "escape": ("msg.marian_outside", {"name": literal("escape")}),
    "leaky": ("msg.marian_outside", {"name": literal("leaky/model.safetensors")}),
    "broken": ("msg.marian_missing_files", {"files": literal("target.spm")}),
    "opus-mt-en-fr": ("msg.marian_unknown", {"name": literal("opus-mt-en-fr"), "names": THERE}),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_bad_name_or_folder_is_refused_in_the_readers_words_and_the_model_stays(models_dir, lang):
    at = load(open_page("overview", lang=lang), MODEL)
    t = translator(lang)
    outside = str(models_dir.parent / "outside" / MODEL)  # an absolute path out of the directory
    for name, (key, values) in {**REFUSED, outside: ("msg.marian_name", {"name": literal(outside)})}.items():
        load(at, name)
        assert [e.value for e in at.sidebar.error] == [t("marian.refused", error=t(key, **values))], name
        assert uses_translator(at), name


def test_an_absolute_path_inside_the_directory_loads_its_folder(models_dir):
    at = load(open_page("overview"), str(models_dir / MODEL))
    assert_clean(at)
    assert uses_translator(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_hub_id_offline_says_how_to_fetch_it_elsewhere(models_dir, monkeypatch, tmp_path, lang):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    at = load(open_page("overview", lang=lang), "Helsinki-NLP/opus-mt-en-zh")
    (said,) = [e.value for e in at.sidebar.error]
    catalog = ZH if lang == "zh" else EN
    assert catalog["msg.marian_offline"].split("{repo}")[0] in said
    assert "snapshot_download('Helsinki-NLP/opus-mt-en-zh'" in said
    assert not (models_dir / "Helsinki-NLP").exists()  # nothing written: the directory lists no half model
    assert "model" not in query(at)


def test_the_tokens_page_shows_the_pieces_and_picks_the_language(models_dir):
    at = open_link("tokens", **{"model": MODEL, "src": "Hello world."})
    vocab = marian_model(MODEL)[0].vocab
    table = at.main.dataframe[0].value
    pieces = vocab.pieces("Hello world.") + ["</s>"]
    assert list(table[EN["tokens.piece"]]) == pieces and pieces[0].startswith("▁")
    assert list(table[EN["tokens.id"]]) == vocab.encode("Hello world.")[0]
    picker = at.main.selectbox(key="tokens.language")
    assert picker.options == [EN["tokens.language.none"], *LANGUAGES]
    picker.select(LANGUAGES[0]).run()
    assert_clean(at)
    assert query(at)["src"] == f"{LANGUAGES[0]} Hello world."
    assert at.sidebar.text_input(key="ctl.src").value == f"{LANGUAGES[0]} Hello world."
    assert list(at.main.dataframe[0].value[EN["tokens.piece"]])[0] == LANGUAGES[0]
    at.main.selectbox(key="tokens.language").select(EN["tokens.language.none"]).run()
    assert query(at)["src"] == "Hello world."
    at.sidebar.text_input(key="ctl.src").input(f"{LANGUAGES[1]} Hello").run()  # typed: the picker follows
    assert at.main.selectbox(key="tokens.language").value == LANGUAGES[1]


# ---- in Chromium ----------------------------------------------------------------------------------------------------

SCREEN = {"width": 1280, "height": 720}  # a classroom projector's
SHOTS = ROOT / "build" / "screenshots"


@pytest.fixture(scope="module")
def server(models_root, tmp_path_factory):
    """`streamlit run app.py` of this checkout reading the test's models directory, with rooms of its own."""
    from conftest import app_server

    directory = tmp_path_factory.mktemp("marian-server")
    with app_server(directory / "server.log", {"TRANSFORMER_MODELS_DIR": str(models_root),
                                               "TRANSFORMER_ROOMS_DB": str(directory / "rooms.sqlite3")}) as url:
        yield url


def test_a_following_student_gets_the_teachers_translator(server):
    """At the protocol level (bench/protocol.py): a teacher who loads the translator from the box and opens a room;
    a student who opens the room's link runs the teacher's model, which the student's session loads by its name."""
    import asyncio
    import urllib.parse

    sys.path.insert(0, str(ROOT / "bench"))
    from conftest import in_own_thread
    from protocol import Session

    def link(session) -> dict:
        return dict(urllib.parse.parse_qsl(session.query_string or ""))

    async def scenario():
        teacher = await Session.open(server, "attention", timeout=60)
        student = None
        try:
            assert await teacher.open_expander(r"room\.panel", 60)
            await teacher.click(r"room\.open", 60)
            teacher.set_widget(teacher.last.widget(r"ctl\.marian")[1].id, string_value=MODEL)
            await teacher.click(r"ctl\.marian_load", 60)  # loaded; the next run takes it
            assert link(teacher).get("model") == MODEL
            student = await Session.open(server, "", query_string=f"room={link(teacher)['room']}", timeout=60)
            assert link(student)["model"] == MODEL and link(student)["cfg"] == link(teacher)["cfg"]
            assert student.page_script_hash == teacher.page_script_hash
            assert f"`{MODEL}`" in " ".join(student.last.texts())  # the learned line names the translator
        finally:
            await asyncio.gather(teacher.close(), *([student.close()] if student else []))

    in_own_thread(scenario)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_in_chromium_the_box_loads_the_translator_and_its_pages_draw(chromium, server, lang):
    """Typed into the box and loaded with Enter: the model card names it and the link holds it; the overview, the
    tokens page (its pieces) and the attention page draw with it, without an error; a screenshot of each in
    build/screenshots/marian-{page}-{lang}.png."""
    from test_browser import LOCALES, no_exception, settle, url

    catalog, shots = ZH if lang == "zh" else EN, []
    context = chromium.new_context(viewport=SCREEN, locale=LOCALES[lang])
    try:
        page = context.new_page()
        page.goto(url(server, "overview"))
        settle(page)
        sidebar = page.locator('[data-testid="stSidebar"]')
        sidebar.get_by_text(catalog["marian.box"]).click()
        sidebar.get_by_label(catalog["marian.name"]).fill(MODEL)
        sidebar.get_by_label(catalog["marian.name"]).press("Enter")
        page.wait_for_url(f"**model={MODEL}**", timeout=60_000)
        settle(page)
        assert f"{MODEL}" in sidebar.inner_text() and "d_model = 16" in sidebar.inner_text()
        link = page.url.split("?", 1)[1]
        for name in ("overview", "tokens", "attention"):
            if name != "overview":
                page.goto(f"{url(server, name)}?{link}")
                settle(page)
            no_exception(page)
            assert page.locator('[data-testid="stAlertContentError"]').count() == 0
            assert f"model={MODEL}" in page.url
            SHOTS.mkdir(parents=True, exist_ok=True)
            shots.append(SHOTS / f"marian-{name}-{lang}.png")
            page.screenshot(path=str(shots[-1]))
            main = page.locator('[data-testid="stMain"]')
            if name == "tokens":  # its lookup is the pieces' (the table itself is drawn on a canvas)
                assert catalog["tokens.pieces"].split("(")[0].split("（")[0] in main.inner_text()
                assert main.get_by_text(catalog["tokens.language"]).count() == 1
        assert main.locator('[data-testid="stPlotlyChart"]').count() > 0  # the attention's heatmaps
    finally:
        context.close()


@pytest.mark.parametrize("page", TEXT_PAGES)
def test_every_text_page_runs_the_translator(models_dir, page):
    at = open_link(page, model=MODEL)
    assert_clean(at)
    assert not at.warning, [w.value for w in at.warning]
    assert uses_translator(at)


def test_the_handout_names_the_translator(models_dir):
    from ui.core.model_card import translator_origin
    from ui.handout.document import Settings, handout

    model = marian_model(MODEL)[0]
    settings = Settings("paper", 0, "Hello world.", "", 4, weights=MODEL, origin=translator_origin(MODEL, model))
    blocks = handout(model.run("Hello world."), translator("en"), settings)
    assert translator("en")("model.from.marian", name=f"`{MODEL}`", mb="< 1") in blocks[1].text
