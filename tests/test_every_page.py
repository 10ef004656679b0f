"""Every page in AppTest, once per language at the app's first settings, with every per-page check of that setting in
the one run: it runs cleanly, with its title, intro and sidebar in the reader's language and the link unchanged
(tests/test_app.py's helpers); it opens on the first choice of each of its rows of buttons; in each of its sections
nothing a reader sees counts from 0 (tests/test_counting.py's `shown_zeros`); on a Chinese screen, no English in any
choice of its rows of buttons (tests/test_no_english.py's `english_in_choices`; its other settings are its own
tests). In English, the fast tier's app run of every page, also checking a step page's steps against the engine and
its editors' places (tests/test_app.py's `assert_steps_are_the_engines`, `assert_editors_under_their_formulas`)."""
import pytest

from conftest import page_title
from test_app import (ALL_PAGES, CJK, DEFAULT_QUERY, PASS_PAGES, STEP_PAGES, assert_clean,
                      assert_editors_under_their_formulas, assert_steps_are_the_engines, open_page, query)
from test_counting import other_sections, shown_zeros
from test_no_english import english_in_choices
from ui.core.i18n import EN, ZH, translator
from ui.core.labels import intro_values
from ui.core.navigation import PAGES


def not_on_first_choice(at) -> dict:
    """The page's rows of buttons (its step, sub-layer, section, layer, head, ...) that it did not open on their first
    choice, which is where its lesson starts (docs/ARCHITECTURE.md, "Where a page opens"): {key: chosen positions}."""
    return {w.key: w.indices for w in at.main.button_group if w.indices != [0]}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", ALL_PAGES)
def test_every_page_runs_cleanly(page, lang):
    at = open_page(page, lang=lang)
    assert_clean(at)
    assert not at.warning, [w.value for w in at.warning]
    catalog = ZH if lang == "zh" else EN
    assert page_title(at) == catalog[f"page.{page}"]
    intro = translator(lang)(f"intro.{page}", **intro_values(page, at.session_state["context"].model))
    assert any(m.value.startswith(f"# {catalog[f'page.{page}']}\n\n{intro}")
               for m in at.markdown)  # with the settings' sentences (and the model's start and end tokens)
    if lang == "zh":
        assert CJK.search(page_title(at))
    sidebar = [w.label for w in at.sidebar.text_input] + [c.value for c in at.sidebar.caption]
    if page in PAGES["vision"]:  # the text model's controls are on its pages, as the sidebar says
        assert catalog["ctl.text_model_elsewhere"] in sidebar and catalog["ctl.src"] not in sidebar
    else:
        assert catalog["ctl.src"] in sidebar and catalog["ctl.text_model_elsewhere"] not in sidebar
    assert query(at) == {**DEFAULT_QUERY, "lang": lang}
    assert not_on_first_choice(at) == {}
    assert shown_zeros(at) == {}
    if lang == "en" and page in PASS_PAGES:
        assert_steps_are_the_engines(at)
    if lang == "en" and page in STEP_PAGES:
        assert_editors_under_their_formulas(at, page)
    if lang == "zh":  # from the page as it opened: each other choice of each row
        assert english_in_choices(at, page) == {}
    for key, label in other_sections(at, translator(lang)("view.section")):
        at.session_state[key] = label
        at.run()
        assert_clean(at)
        assert shown_zeros(at) == {}, label
