"""The sidebar's Export section (ui/views/exports.py) and the charts' download button (ui/views/draw.py): through
AppTest in both languages, and in Chromium, where the PyTorch check downloaded from the app runs and agrees."""
import json
import subprocess
import sys
import zipfile

import pytest

import engine

from test_app import open_page
from test_browser import no_exception, server, settle, url  # noqa: F401 (server: a fixture)
from ui.core.i18n import translator

LABELS = ("export.json", "export.csv", "export.npz", "export.torch")


def download_labels(at):
    """The sidebar's download buttons (the overview's handout has its own, ui/handout)."""
    return [button.proto.label for button in at.sidebar.get("download_button")]


def chart_config(at):
    return json.loads(at.get("plotly_chart")[0].proto.config)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_export_section_offers_every_file_when_opened(lang):
    t = translator(lang)
    at = open_page(preset="hello-world", src="Hello World", lang=lang)
    assert download_labels(at) == []  # closed: nothing drawn, nothing made
    at.session_state["export.open"] = True
    at.run()
    assert not at.exception
    assert download_labels(at) == [t(key) for key in LABELS]
    # 84 weights: JSON and CSV hold them
    assert t("export.no_weights", n="") not in "".join(c.value for c in at.caption)


def test_the_paper_models_text_files_leave_its_44_million_weights_to_the_npz():
    at = open_page(preset="paper", src="hello world")
    at.session_state["export.open"] = True
    at.run()
    weights = sum(value.size for value in engine.preset("paper").params.values())
    assert weights > 44e6 and translator("en")("export.no_weights", n=f"{weights:,}") in [c.value for c in at.caption]


@pytest.mark.parametrize("lang, fmt", [("en", "png"), ("zh", "svg")])
def test_a_charts_mode_bar_is_its_download_button_in_the_chosen_format(lang, fmt):
    at = open_page("qkv", preset="hello-world", src="Hello World", lang=lang)
    at.session_state["chart_format"] = fmt
    at.run()
    config = chart_config(at)
    assert config["modeBarButtons"] == [["toImage"]] and config["toImageButtonOptions"]["format"] == fmt
    tip = translator(lang)("export.chart_tip", format=fmt.upper())
    assert set(config["locales"][lang]["dictionary"].values()) == {tip} and config["locale"] == lang


def test_the_pytorch_check_downloaded_from_the_app_agrees(server, new_page, tmp_path):  # noqa: F811 (server)
    page = new_page("zh")
    page.goto(url(server, "overview", preset="hello-world", src="Hello+World", tgt="Hola+Mundo"))
    settle(page)
    t = translator("zh")
    page.locator('[data-testid="stSidebar"] summary', has_text=t("export.title")).click()
    with page.expect_download(timeout=120_000) as download:
        page.get_by_role("button", name=t("export.torch")).click()
    download.value.save_as(tmp_path / download.value.suggested_filename)
    assert download.value.suggested_filename == "transformer-hello-world-check-in-pytorch.zip"
    with zipfile.ZipFile(tmp_path / download.value.suggested_filename) as archive:
        archive.extractall(tmp_path)
    result = subprocess.run([sys.executable, "-I", "check_in_pytorch.py"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "hello-world: hello world -> SOS hola mundo" in result.stdout
    steps = list(engine.preset("hello-world").run("Hello World", "Hola Mundo").steps())
    assert f"over {len(steps)} steps: OK" in result.stdout  # every step the file holds
    no_exception(page)
