"""The handout (ui/handout): every step of the trace in the order data flows, with its formula, shape and numbers as
the trace holds them, the settings that produced it and the post's differences; HTML whose math is MathML (Chromium
draws it with every network request refused) and Markdown with $…$ math; the same from the command line; a 64-token
paper-size state within HANDOUT_BYTES (its time: bench/handout_bench.py). In Chromium: tests/test_handout_browser.py."""
import io
import re

import numpy as np
import pytest
from PIL import Image

import engine
from engine.blog import DIFFERENCES
from ui.core.i18n import CATALOGS, translator
from ui.core.labels import description_key, step_name_key
from ui.handout.__main__ import main
from ui.handout.document import Settings
from ui.handout.heatmap import MASKED, MAX_HEIGHT, MAX_WIDTH, heatmap
from ui.handout.render import FORMATS, handout_file, mathml

from test_app import assert_clean, open_page

HANDOUT_BYTES = 8_000_000  # the HTML handout of the paper's base model on 64 source and 64 decoder tokens
DIGITS = 8  # the tests' handouts print 8 significant digits, so a number read back is the trace's to 1e-7
HEADING = re.compile(r"^### .* · `([^`]+)`$", re.M)
MATRIX = re.compile(r"\$\$\n(?:[^\n]*) = \\begin\{bmatrix\}(.*?)\\end\{bmatrix\}\n\$\$")
RAW_LATEX = re.compile(r"\\[A-Za-z]+|[_^]\{|\$\$")  # what a formula left as LaTeX would show: \frac, _{, $$
# settings of every formula variant the handout writes (tests/test_katex.py's, in inference)
VARIANTS = [("hello-world", {}), ("hello-world", dict(pos_encoding="sinusoidal", attn_divisor="sqrt_dk",
                                                      layer_norm="paper", norm_placement="pre", activation="gelu",
                                                      softmax="naive", attn_bias=True, embed_scale=True)),
            ("hello-world", dict(pos_encoding="blog")), ("hello-world", dict(pos_encoding="learned")),
            ("hello-world", dict(pos_encoding="none", d_model=1, n_heads=1, d_ff=2, eps=0.0)),
            ("hello-world", dict(decoder_only=True)),
            ("paper", dict(n_layers=1, layer_norm="blog", attn_divisor=8.0, tied_output=False))]


def make_handout(preset="hello-world", lang="en", format_="md", src="Hello World", tgt="hola mundo", **overrides):
    trace = engine.preset(preset, **overrides).run(src, tgt)
    settings = Settings(preset, 0, src, tgt, DIGITS, edits=(("enc.0.attn.W_Q", (0, 1, 2), 1.5),))
    return trace, handout_file(trace, translator(lang), settings, format_)


def _number(cell: str) -> float:
    """A cell as ui.core.format.fmt_tex writes it: 1.5, -3, -\\infty, 1.2 \\times 10^{-5}."""
    cell = cell.strip()
    if cell.endswith(r"\infty"):
        return -np.inf if cell.startswith("-") else np.inf
    mantissa, _, exponent = cell.partition(r" \times 10^")
    return float(mantissa) * 10.0 ** int(exponent.strip("{}") or 0)


def _matrices(markdown: str) -> dict[str, list[np.ndarray]]:
    """Each step's written-out matrices (a head's each), read back from the Markdown."""
    parts = HEADING.split(markdown)  # text, name, its section, name, its section, ...
    return {name: [np.array([[_number(c) for c in row.split("&")] for row in body.split(r"\\")])
                   for body in MATRIX.findall(section)]
            for name, section in zip(parts[1::2], parts[2::2])}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_step_comes_in_the_order_data_flows_with_its_formula_and_shape(lang):
    trace, markdown = make_handout(lang=lang)
    t = translator(lang)
    assert HEADING.findall(markdown) == [step.name for step in trace.steps()]
    for step, section in zip(trace.steps(), HEADING.split(markdown)[2::2]):
        assert f"### {t(step_name_key(step.name))} · `{step.name}`" in markdown
        assert section.startswith(f"\n\n{t(description_key(step.name))}\n\n"), step.name
        assert f"$$\n{t.words(step.formula)}\n$$" in section, step.name
        assert t("view.shape", axes=", ".join(step.axes), sizes=", ".join(map(str, step.shape))) in section


def test_written_out_numbers_are_the_traces():
    trace, markdown = make_handout()
    matrices = _matrices(markdown)
    written = 0
    for step in trace.steps():
        value = np.atleast_2d(step.value)
        if max(value.shape[-2:]) > 8:
            assert matrices[step.name] == [], step.name  # a heatmap instead
            continue
        expected = list(value) if value.ndim == 3 else [value]
        assert len(matrices[step.name]) == len(expected), step.name
        for got, want in zip(matrices[step.name], expected):
            np.testing.assert_allclose(got, np.atleast_2d(want), rtol=1e-7, atol=1e-300, err_msg=step.name)
            written += 1
    assert written > 60  # the hello-world example writes out nearly every step (all but the output's 11 columns)
    scores = matrices["enc.0.attn.scores"][0]
    assert scores[0, 1] == pytest.approx(105.21)  # the post's S_1[1, 2] (engine/blog.py PRINTED)
    assert np.isneginf(matrices["dec.0.self_attn.masked"][0][0, 1])  # a masked score, written −∞


def test_settings_and_the_differences_are_listed():
    trace, markdown = make_handout(preset="paper", n_layers=1, d_ff=64)
    config, t = trace.model.config, translator("en")
    for row in (f"| {t('ctl.preset')} | {t('preset.paper')} |", f"| {t('ctl.seed')} | 0 |",
                f"| {t('ctl.src')} | ` Hello World ` |", f"| {t('ctl.digits')} | {DIGITS} |",
                "`enc.0.attn.W_Q[0, 1, 2]` = 1.5"):
        assert row in markdown
    options = next(line for line in markdown.splitlines() if line.startswith(f"| {t('handout.options')}"))
    changed = f" ({t('handout.changed')})"
    assert f"`n_layers = 1`{changed}" in options and f"`d_ff = 64`{changed}" in options
    assert "`d_model = 512`," in options and options.count(changed) == 2
    assert len(re.findall(r"`\w+ = [^`]+`", options)) == len(config.as_dict())
    for difference in DIFFERENCES:
        assert t(f"diff.{difference['key']}.why") in markdown
    assert markdown.index(t("handout.settings")) < markdown.index("`src.embed`") < markdown.index(
        t("handout.differences"))


def test_a_large_matrix_is_a_heatmap_of_its_numbers():
    values = np.arange(2 * 3 * 20, dtype=float).reshape(2, 3, 20) - 60  # (h, rows, cols), signed
    values[1, 0, 0] = -np.inf
    image = Image.open(io.BytesIO(heatmap(values).png))
    pixels = np.array(image)
    assert image.mode == "P" and pixels.shape == (3, 20 + 2 + 20)  # two heads side by side, a gap between
    left, right = pixels[:, :20], pixels[:, 22:]
    assert right[0, 0] == MASKED and (pixels[:, 20:22] == MASKED).all()
    shade = 1 + np.rint((values + 60) / 120 * 254)  # −60 (the largest size) the darkest blue, 1; 0 white, 128
    np.testing.assert_array_equal(left, shade[0])
    np.testing.assert_array_equal(right.ravel()[1:], shade[1].ravel()[1:])
    wide = heatmap(np.ones((300, 2048)))
    assert Image.open(io.BytesIO(wide.png)).size == (MAX_WIDTH, 150) and wide.block == (2, 4)
    assert max(Image.open(io.BytesIO(heatmap(np.ones((8, 64, 64))).png)).size) <= max(MAX_WIDTH, MAX_HEIGHT)


@pytest.mark.parametrize("preset, overrides", VARIANTS)
def test_every_formula_becomes_mathml_in_both_languages(preset, overrides):
    for lang in CATALOGS:
        trace, page = make_handout(preset, lang, "html", **overrides)
        assert "<merror" not in page and "<script" not in page
        text = re.sub(r"<code>.*?</code>|<style>.*?</style>", "", page, flags=re.S)  # code: names, typed text
        assert RAW_LATEX.findall(re.sub(r"<[^>]+>", "", text)) == [], (preset, lang)
        written = sum(len(v) if v.ndim == 3 else 1 for v in map(np.atleast_2d, trace.values())
                      if max(v.shape[-2:]) <= 8)
        assert page.count('<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">') == len(trace) + written
        assert re.findall(r'(?:src|href)="(?!data:image/png;base64,)', page) == []  # nothing to fetch


def test_a_sentence_is_shown_as_typed_never_as_markup():
    typed = "<script>alert(1)</script> $\\frac{1}{0}$ **bold** `tick`"
    _, page = make_handout(format_="html", src=typed)
    assert "<script>" not in page and "alert(1)" in page and "<strong>bold" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; $\\frac{1}{0}$ **bold** `tick`" in page
    assert mathml(r"\text{<b>x</b> & y}").count("&lt;b&gt;x&lt;/b&gt;") == 1  # a formula's text too
    _, markdown = make_handout(src=typed)
    assert f"| {translator('en')('ctl.src')} | `` {typed} `` |" in markdown


def test_the_command_line_writes_the_apps_handout(tmp_path, capsys):
    out = tmp_path / "handout.html"
    assert main(["--preset", "hello-world", "--tgt", "hola mundo", "--lang", "zh", "--digits", "8",
                 "--out", str(out)]) == 0
    trace = engine.preset("hello-world").run("Hello World", "hola mundo")
    settings = Settings("hello-world", 0, "Hello World", "hola mundo", DIGITS)
    assert out.read_text(encoding="utf-8") == handout_file(trace, translator("zh"), settings, "html")
    assert main(["--preset", "hello-world", "--format", "md"]) == 0
    assert capsys.readouterr().out.startswith(f"# {translator('en')('handout.title')}\n")
    with pytest.raises(SystemExit) as refused:
        main(["--preset", "hello-world", "--set", "d_model=5"])
    assert refused.value.code == 2 and capsys.readouterr().err.count("\n") == 1
    assert set(FORMATS) == {"html", "md"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_overview_offers_both_files_made_only_when_clicked(lang):
    at = open_page(lang=lang, preset="hello-world", src="Hello World", tgt="hola mundo")
    assert_clean(at)
    t = translator(lang)
    buttons = at.get("download_button")
    assert [(b.key, b.label, b.help) for b in buttons] == [
        (f"handout.{format_}", t(f"handout.download.{format_}"), t("handout.download.help")) for format_ in FORMATS]
    assert all(b.proto.deferred_file_id and b.proto.ignore_rerun for b in buttons)  # no file until a click


@pytest.mark.slow  # ~5 s: the paper's model on 128 tokens
def test_a_64_token_paper_handout_stays_within_its_size():
    src, tgt = " ".join(["hello", "world"] * 32), " ".join(["hola"] * 63)
    trace, page = make_handout("paper", "en", "html", src=src, tgt=tgt)
    assert (len(trace.src_tokens), len(trace.tgt_tokens)) == (64, 64)
    assert len(page.encode()) <= HANDOUT_BYTES
    assert page.count("<figure>") + page.count("<mtable") >= len(trace)  # every step has its numbers
