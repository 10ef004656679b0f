"""Security rules, each enforced by a test:

* no project code evaluates, unpickles or parses as code anything (no eval/exec, sympify/parse_expr, pickle and
  friends, pandas' eval/query); every np.load passes allow_pickle=False. Read with `ast`, not grep, in engine/,
  ui/, app_pages/ and app.py;
* no raw HTML: no unsafe_allow_html, st.html, iframes or components in ui/, app_pages/ and app.py, but the sidebar's
  copy-link button (ui/classroom/share.py), the animation's player (ui/lessons/animation_views.py) and presenter
  mode's rail (ui/classroom/presenter.py): fixed markup and code that write only the catalog's words and the
  trace's tokens and numbers, as text; the step scroll (ui/classroom/scroll.py), which writes nothing; and the
  page's style sheet (ui/views/style.py), a fixed style sheet alone;
* the server's settings (.streamlit/config.toml), as Streamlit itself reads them: XSRF protection and CORS on,
  uploads capped at the uploader's 50 MB, error details hidden from students; and no launch command turns them off;
* in a real browser against a real server with that config: user text from a link is shown as text, never as
  HTML, and an upload request without the page's XSRF token is refused.
"""
import ast
import re
import tomllib
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest
from streamlit import config as streamlit_config
from streamlit.testing.v1 import AppTest
from streamlit.web.server.server_util import is_xsrf_enabled

import streamlit_privates
from test_app import open_page
from test_app_train import open_tab
from test_browser import click_tab, no_exception, server, settle, url  # noqa: F401 (server: a fixture)
from ui.core.i18n import EN
from ui.core.navigation import PAGE_FOLDER
from ui.lessons import training_views

ROOT = Path(__file__).resolve().parents[1]
UI = [ROOT / "app.py", *sorted((ROOT / "ui").rglob("*.py")), *sorted((ROOT / PAGE_FOLDER).glob("*.py"))]
PROJECT = UI + sorted((ROOT / "engine").glob("*.py"))
CONFIG = ROOT / ".streamlit" / "config.toml"
MAX_UPLOAD_MB = 50
GENERIC_ERROR = "This app has encountered an error."  # how Streamlit's redacted message starts

# Calls that run text as code or rebuild Python objects from bytes, by dotted name or by their last part.
CODE_CALLS = {"eval", "exec", "compile", "__import__", "os.system", "os.popen"}
CODE_ENDINGS = {"sympify", "parse_expr", "read_pickle", "unsafe_load"}
UNPICKLERS = {"pickle", "cPickle", "_pickle", "cloudpickle", "dill", "marshal", "shelve", "joblib", "jsonpickle"}
EVAL_METHODS = {"eval", "query"}  # pandas' DataFrame.eval/query and pd.eval evaluate their text argument
SYMPY_NAMES = {"Symbol", "symbols"}  # the sympy calls that read a string as names; the others sympify (eval) it


# ---- reading the code ------------------------------------------------------------------------------------------

def dotted(node) -> str:
    """The dotted name of a call's function, e.g. "np.load", "st.sidebar.markdown"; "?" for computed parts."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    return "?"


def code_findings(source: str, where: str = "<code>") -> list[str]:
    """Every place in the source that could run text as code or unpickle bytes."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for module in modules:
                if module.split(".")[0] in UNPICKLERS or module.startswith("sympy.parsing"):
                    found.append(f"{where}:{node.lineno} imports {module}")
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("numpy", "sympy", "yaml"):
                for alias in node.names:
                    if alias.name in ("load", "sympify", "parse_expr", "unsafe_load", "S"):
                        found.append(f"{where}:{node.lineno} imports {alias.name} from {node.module}")
        if not isinstance(node, ast.Call):
            continue
        name = dotted(node.func)
        last = name.rsplit(".", 1)[-1]
        if name in CODE_CALLS or last in CODE_ENDINGS:
            found.append(f"{where}:{node.lineno} calls {name}")
        elif name.split(".")[0] in ("sp", "sympy") and last not in SYMPY_NAMES and any(
                isinstance(arg, ast.Constant) and isinstance(arg.value, str) for arg in node.args):
            found.append(f"{where}:{node.lineno} passes text to {name} (sympy reads it with eval)")
        elif isinstance(node.func, ast.Attribute) and last in EVAL_METHODS:
            found.append(f"{where}:{node.lineno} calls .{last}() (pandas evaluates its text)")
        elif name.split(".")[0] in UNPICKLERS or name in ("yaml.load", "torch.load"):
            found.append(f"{where}:{node.lineno} calls {name}")
        elif name in ("np.load", "numpy.load"):
            pickles = [k.value for k in node.keywords if k.arg == "allow_pickle"]
            if not (len(pickles) == 1 and isinstance(pickles[0], ast.Constant) and pickles[0].value is False):
                found.append(f"{where}:{node.lineno} calls {name} without allow_pickle=False")
    return found


def html_findings(source: str, where: str = "<code>") -> list[str]:
    """Every place in the source that could put raw HTML on a page."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [f"{where}:{node.lineno} imports {m}" for m in modules if m.startswith("streamlit.components")]
        if not isinstance(node, ast.Call):
            continue
        name = dotted(node.func)
        if name.rsplit(".", 1)[-1] in ("html", "iframe", "declare_component") or ".components." in f".{name}.":
            found.append(f"{where}:{node.lineno} calls {name}")
        for keyword in node.keywords:
            if keyword.arg == "unsafe_allow_html" and not (
                    isinstance(keyword.value, ast.Constant) and keyword.value.value is False):
                found.append(f"{where}:{node.lineno} {name}(unsafe_allow_html=...)")
    return found


def _sources(paths):
    return [(path.relative_to(ROOT), path.read_text()) for path in paths]


@pytest.mark.parametrize("snippet", [
    "eval(text)", "exec(text)", "x = compile(text, 'f', 'exec')", "import pickle", "from pickle import loads",
    "pickle.loads(data)", "import dill", "np.load(f)", "np.load(f, allow_pickle=True)", "numpy.load(f, allow_pickle=x)",
    "from numpy import load", "sympy.sympify(text)", "from sympy.parsing.sympy_parser import parse_expr",
    "parse_expr(text)", "sp.S('x + 1')", "sympy.simplify('x**2')", "from sympy import S", "sp.Matrix('[1]')",
    "pd.read_pickle(f)", "frame.query(text)", "pd.eval(text)", "yaml.load(f)", "os.system(c)",
])
def test_the_code_scanner_finds(snippet):
    assert code_findings(snippet), snippet


@pytest.mark.parametrize("snippet", [
    "st.html(text)", "st.markdown(text, unsafe_allow_html=True)", "st.write(x, unsafe_allow_html=flag)",
    "import streamlit.components.v1 as components", "components.html(text)", "st.components.v1.iframe(u)",
    "st.sidebar.caption(t, unsafe_allow_html=True)",
])
def test_the_html_scanner_finds(snippet):
    assert html_findings(snippet), snippet


def test_the_scanners_let_the_safe_forms_through():
    assert code_findings("np.load(f, allow_pickle=False); re.compile(p); json.loads(s); ast.literal_eval(s)") == []
    assert code_findings("sp.Symbol('x_1'); sp.symbols('a b'); sp.latex(e, order='none'); sp.Float(x, 3)") == []
    assert html_findings("st.markdown(text); st.markdown(t, unsafe_allow_html=False); st.latex(s)") == []


def test_no_code_runs_or_unpickles_what_a_user_sent():
    found = [f for path, source in _sources(PROJECT) for f in code_findings(source, path)]
    assert found == []


def test_every_np_load_refuses_pickles():
    """Not vacuous: the project does load .npz files (engine/checkpoint.py), always with allow_pickle=False."""
    loads = [(path, node) for path, source in _sources(PROJECT) for node in ast.walk(ast.parse(source))
             if isinstance(node, ast.Call) and dotted(node.func) in ("np.load", "numpy.load")]
    assert loads, "the scan found no np.load at all: is it looking at the right files?"
    for path, node in loads:
        pickles = [(k.arg, k.value.value) for k in node.keywords if k.arg == "allow_pickle"]
        assert pickles == [("allow_pickle", False)], f"{path}:{node.lineno}"


COPY_LINK = Path("ui") / "classroom" / "share.py"  # st.components.v2.component(..., html=HTML, css=CSS, js=JS)
PLAYER = Path("ui") / "lessons" / "animation_views.py"  # the same, its script in ui/lessons/animation_player.js
NOT_AS_TEXT = r"innerHTML|outerHTML|insertAdjacent|document\.write|eval|Function\(|href\s*=|setAttribute\(\s*[\"']on"
PRESENTER = Path("ui") / "classroom" / "presenter.py"
STEP_SCROLL = Path("ui") / "classroom" / "scroll.py"  # st.components.v2.component(..., js=JS): no markup, no style
PIXEL_PAD = Path("ui") / "vision" / "pixel_pad.py"  # the same as the copy-link button's: html, css, js
PAGE_STYLE = Path("ui") / "views" / "style.py"  # st.components.v2.component(..., css=CSS, ...): a style sheet alone


def test_no_raw_html_in_the_app():
    sources = _sources(UI)
    assert sum(source.count("st.markdown") for _, source in sources) > 5, "the scan is not reading the pages"
    assert sorted(f for path, source in sources for f in html_findings(source, path)) == sorted(
        f"{path}:{_component_line(path)} calls st.components.v2.component"
        for path in (PLAYER, PRESENTER, COPY_LINK, STEP_SCROLL, PIXEL_PAD, PAGE_STYLE))


def _component_line(path):
    source = (ROOT / path).read_text()
    return next(node.lineno for node in ast.walk(ast.parse(source))
                if isinstance(node, ast.Call) and dotted(node.func) == "st.components.v2.component")


def test_the_copy_link_button_writes_no_html():
    """Its markup is fixed; its code puts the catalog's words (the mount's only data) in as text, and the link only
    into the clipboard."""
    from ui.classroom import share
    assert share.HTML == "<button type='button'></button><span></span>"
    assert not re.search(NOT_AS_TEXT, share.JS)
    assert re.findall(r"\.(textContent|title|value) =", share.JS) == ["textContent", "title", "value", "textContent"]


def test_the_animation_player_writes_no_html():
    """Its markup is fixed; its code builds elements one by one and writes the catalog's words and the frames'
    tokens and numbers as text (textContent) or as attributes of its own names, never as markup or handlers."""
    from ui.lessons import animation_views
    assert animation_views.HTML == "<div class='anim' tabindex='0'></div>"
    script = (ROOT / "ui" / "lessons" / "animation_player.js").read_text()
    assert not re.search(NOT_AS_TEXT, script)
    assert re.findall(r"\.textContent =", script) and "createElementNS(SVG, tag)" in script
    assert re.search(NOT_AS_TEXT, "node.setAttribute('onclick', x)") and re.search(NOT_AS_TEXT, "a.innerHTML = t")


def test_the_presenters_rail_writes_no_html():
    """Its markup and style sheet are fixed (the style sheet, not isolated, sizes the page's type: no data in it); its
    code builds the rail from the catalog's words as text and sends back only a position or leaving."""
    from ui.classroom import presenter
    assert presenter.HTML == "<nav class='present-rail'></nav>"
    assert presenter.CSS.lstrip().startswith("html { font-size: 150% !important; }")  # figures.PROJECTOR, no more
    assert not re.search(r"innerHTML|outerHTML|insertAdjacent|document\.write|eval|Function\(|href\s*=|location",
                         presenter.JS)
    assert re.findall(r"\.(textContent|title|value) =", presenter.JS) == ["textContent", "title", "textContent",
                                                                           "textContent", "title", "textContent",
                                                                           "textContent", "textContent"]  # hint, room
    assert re.findall(r"setTriggerValue\(\"(\w+)\"", presenter.JS) == ["go", "leave"]


def test_the_pixel_pad_writes_no_html_and_sends_only_strokes():
    """Its markup is fixed; its code builds the squares as elements, writes the catalog's words as text and colours
    from numbers it clamps, and sends back only a stroke, which the server reads with ui.vision.pixels.read_strokes."""
    from ui.vision import pixel_pad
    assert pixel_pad.HTML == "<div class='pad'></div><div class='tools'></div>"
    assert not re.search(NOT_AS_TEXT + r"|location", pixel_pad.JS)
    assert re.findall(r"\.(textContent|title|value) =", pixel_pad.JS) == ["title", "textContent"]
    assert re.findall(r"setTriggerValue\(\"(\w+)\"", pixel_pad.JS) == ["drawn"]
    assert "Math.max(0, Math.min(1, Number(value) || 0))" in pixel_pad.JS  # a colour from a number, never from text


def test_the_step_scroll_writes_nothing_and_sends_nothing():
    """The follower's and the presenter's scroll to the step: no markup, no style sheet, no text of any kind written,
    nothing sent back; it reads the page's own heading and scrolls it into view."""
    from ui.classroom import scroll
    call = next(node for node in ast.walk(ast.parse((ROOT / STEP_SCROLL).read_text()))
                if isinstance(node, ast.Call) and dotted(node.func) == "st.components.v2.component")
    assert [k.arg for k in call.keywords] == ["js"]
    assert not re.search(NOT_AS_TEXT + r"|textContent|setTriggerValue|setStateValue|location", scroll.JS)
    assert scroll.JS.count("scrollIntoView") == 1


def test_the_page_style_is_a_fixed_style_sheet_alone():
    """The page's style sheet (not isolated: it styles the page's formulas): no markup, no script, no data, and no
    rule that fetches anything or hides what the page writes but its own empty element."""
    from ui.views import style
    call = next(node for node in ast.walk(ast.parse((ROOT / PAGE_STYLE).read_text()))
                if isinstance(node, ast.Call) and dotted(node.func) == "st.components.v2.component")
    assert [k.arg for k in call.keywords] == ["css", "isolate_styles"]
    assert not re.search(r"url\(|@import|expression|content\s*:", style.CSS)
    assert re.findall(r"display:\s*none", style.CSS) == ["display: none"]
    assert ".st-key-page-style { display: none; }" in style.CSS  # its own element, which holds nothing


# ---- the server's settings ----------------------------------------------------------------------------------

def test_the_config_file_keeps_the_protections():
    settings = tomllib.loads(CONFIG.read_text())
    server, client = settings.get("server", {}), settings.get("client", {})
    assert server.get("enableXsrfProtection") is True
    assert server.get("enableCORS") is True
    assert server.get("maxUploadSize") == training_views.MAX_UPLOAD_MB <= MAX_UPLOAD_MB
    assert client.get("showErrorDetails") == "none"
    assert settings.get("global", {}).get("developmentMode", False) is False
    assert server.get("enableStaticServing", False) is False


@pytest.fixture
def project_config(monkeypatch):
    """Streamlit's options as it reads them when started in the project's folder (and back to before, after)."""
    monkeypatch.chdir(ROOT)
    streamlit_config.get_config_options(force_reparse=True)
    yield streamlit_config
    streamlit_config.get_config_options(force_reparse=True)


def test_streamlit_reads_the_protections(project_config):
    assert project_config.get_option("server.enableXsrfProtection") is True and is_xsrf_enabled()
    assert project_config.get_option("server.enableCORS") is True
    assert project_config.get_option("server.maxUploadSize") == MAX_UPLOAD_MB
    details = project_config.get_option("client.showErrorDetails")
    assert details == project_config.ShowErrorDetailsConfigOptions.NONE  # the value Streamlit 1.67 knows
    assert project_config.get_where_defined("client.showErrorDetails").endswith("config.toml")


def test_no_element_is_sent_as_a_reference_to_the_browsers_copy(project_config):
    """Streamlit 1.67 sends an element of 10 kB or more as a reference when the browser said it held it, and the
    browser may have forgotten it by then; the project sends every element whole (.streamlit/config.toml)."""
    assert not streamlit_privates.sent_by_reference("x" * 1_000_000)
    project_config.set_option("global.minCachedMessageSize", 10e3)  # Streamlit's default: what the test would see
    assert streamlit_privates.sent_by_reference("x" * 1_000_000)


def test_an_unexpected_error_shows_no_details(project_config):
    """With the project's config, an uncaught exception reaches the browser as Streamlit's generic message:
    no type, no message, no traceback (they go to the server's log)."""
    at = AppTest.from_string("raise ValueError('secret /home/teacher/grades.csv')").run()
    (error,) = at.exception
    assert error.message.startswith(GENERIC_ERROR)
    assert "secret" not in str(error.proto) and not error.stack_trace and not error.proto.type


def test_the_uploader_is_capped(project_config):
    """The server refuses bigger requests (server.maxUploadSize); the uploader says the same limit to the browser,
    which checks it before sending."""
    at = open_tab(open_page("train"), "train.files")
    (uploader,) = at.file_uploader
    assert uploader.proto.max_upload_size_mb == MAX_UPLOAD_MB
    calls = [node for _, source in _sources(UI) for node in ast.walk(ast.parse(source))
             if isinstance(node, ast.Call) and dotted(node.func).endswith("file_uploader")]
    assert calls and all(any(k.arg == "max_upload_size" for k in node.keywords) for node in calls)


LAUNCHERS = ["Makefile", "Dockerfile", "README.md", ".ci/*", "deploy/*", "bench/*.py"]
SWITCHED_OFF = re.compile(r"(enableXsrfProtection|enableCORS|ENABLE_XSRF_PROTECTION|ENABLE_CORS)\W{1,4}(false|0)\b",
                          re.IGNORECASE)
ERROR_DETAILS = re.compile(r"(showErrorDetails|SHOW_ERROR_DETAILS)\W{1,4}(\w+)")
UPLOAD_SIZE = re.compile(r"(maxUploadSize|MAX_UPLOAD_SIZE)\W{1,4}(\d+)")


def test_no_launch_command_turns_the_protections_off():
    """`streamlit run` flags and STREAMLIT_* environment variables override config.toml: none of the ways this
    repository starts the app may switch a protection off, show error details or raise the upload cap."""
    found = []
    for path in sorted(p for pattern in LAUNCHERS for p in ROOT.glob(pattern) if p.is_file()):
        text = path.read_text(errors="replace")
        found += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in SWITCHED_OFF.finditer(text)]
        found += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in ERROR_DETAILS.finditer(text)
                  if m.group(2) != "none"]
        found += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in UPLOAD_SIZE.finditer(text)
                  if int(m.group(2)) > MAX_UPLOAD_MB]
    assert found == []


# ---- the running server, in a browser ---------------------------------------------------------------------

HOSTILE_LINK = {"preset": '<img src=x onerror="window.pwned=1">', "lang": "<b>bold</b>",
                "cfg": "d_model:[x](javascript:window.pwned=2)", "src": "<script>window.pwned=3</script> Hello",
                "gen": "x\n\n[sign in](//ev.il)"}  # an empty line ended the note's code span: a link to ev.il


def test_user_text_from_a_link_is_shown_as_text(server, new_page):  # noqa: F811
    page = new_page()
    page.on("dialog", lambda dialog: pytest.fail(f"a dialog opened: {dialog.message}"))
    query = "&".join(f"{k}={quote(v)}" for k, v in HOSTILE_LINK.items())
    page.goto(f"{url(server, 'tokens')}?{query}")
    settle(page)
    no_exception(page)
    notes = " ".join(page.locator('[data-testid="stSidebar"] [data-testid="stAlert"]').all_inner_texts())
    assert '<img src=x onerror="window.pwned=1">' in notes and "<b>bold</b>" in notes  # written out, as text
    assert "x\\n\\n[sign in](//ev.il)" in notes and page.locator('a[href*="ev.il"]').count() == 0
    assert page.evaluate("window.pwned") is None
    injected = """() => [...document.querySelectorAll('img[src="x"], script, a[href^="javascript"]')]
        .filter(e => e.tagName !== 'SCRIPT' || e.textContent.includes('pwned')).length"""
    assert page.evaluate(injected) == 0
    assert page.locator("b", has_text="bold").count() == 0


def test_an_upload_without_the_xsrf_token_is_refused(server, new_page):  # noqa: F811
    page = new_page()
    page.goto(url(server, "train"))
    settle(page)
    click_tab(page, EN["train.files"])
    assert "_streamlit_xsrf" in {c["name"] for c in page.context.cookies()}
    assert page.get_by_text(f"{MAX_UPLOAD_MB}MB per file").count() == 1  # the uploader tells the browser its cap
    request = urllib.request.Request(f"{server}/_stcore/upload_file/any-session/any-file", data=b"x" * 10,
                                     method="PUT")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 403 and b"XSRF" in refused.value.read()


def test_a_links_ignored_part_is_shown_as_code_not_markdown():
    """The note on an ignored part of a link quotes it; inside a code span a hostile link's "[sign in](//elsewhere)"
    is no link, $x$ no math, <b> no tag (Chromium: tests/test_presenter.py), whatever backticks it holds."""
    from ui.core.i18n import literal
    assert literal("present='[sign in](//ev.il)'") == "` present='[sign in](//ev.il)' `"
    assert literal("a`b``c") == "``` a`b``c ```" and literal("") == "`  `"
    assert literal("x\r\n\n[sign in](//ev.il)") == "` x\\r\\n\\n[sign in](//ev.il) `"  # an empty line ended the span
